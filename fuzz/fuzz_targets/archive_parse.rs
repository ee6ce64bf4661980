//! Fuzz target `archive_parse`: see `scriptorium_source_archive::check::check_archive_parse`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| scriptorium_source_archive::check::check_archive_parse(data));
