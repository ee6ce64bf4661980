//! Fuzz target `tokenize`: see `scriptorium_bm25_index::check::check_tokenize`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| scriptorium_bm25_index::check::check_tokenize(data));
