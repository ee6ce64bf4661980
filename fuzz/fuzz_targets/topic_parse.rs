//! Fuzz target `topic_parse`: see `scriptorium_topic_markdown::check::check_topic_parse`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| scriptorium_topic_markdown::check::check_topic_parse(data));
