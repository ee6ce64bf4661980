//! Fuzz target `index_open`: see `scriptorium_bm25_index::check::check_index_open`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| scriptorium_bm25_index::check::check_index_open(data));
