//! Fuzz target `forged_label`: see `scriptorium_source_archive::check::check_forged_label`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| scriptorium_source_archive::check::check_forged_label(data));
