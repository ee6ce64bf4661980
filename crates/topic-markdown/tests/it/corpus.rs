//! Replays the committed `topic_parse` fuzz corpus on stable Rust.

use std::path::Path;

#[test]
fn topic_parse_corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/topic_parse");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let ok =
            std::panic::catch_unwind(|| scriptorium_topic_markdown::check::check_topic_parse(&bytes)).is_ok();
        assert!(ok, "{} broke an invariant", path.display());
        n += 1;
    }
    assert!(n > 0);
}
