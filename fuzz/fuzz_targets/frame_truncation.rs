//! Fuzz target `frame_truncation`: see `scriptorium_source_archive::check::check_frame_truncation`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| scriptorium_source_archive::check::check_frame_truncation(data));
