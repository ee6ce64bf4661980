//! Replays the committed fuzz corpora (`fuzz/corpus/<target>/`) on stable
//! Rust, so every seed and every minimised crash stays a regression test.

use std::path::Path;

use scriptorium_source_archive::check;

fn replay(target: &str, f: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus").join(target);
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let result = std::panic::catch_unwind(|| f(&bytes));
        assert!(result.is_ok(), "{target}: {} broke an invariant", path.display());
        n += 1;
    }
    assert!(n > 0, "{target}: the corpus is empty");
}

#[test]
fn archive_parse_corpus() {
    replay("archive_parse", check::check_archive_parse);
}

#[test]
fn forged_label_corpus() {
    replay("forged_label", check::check_forged_label);
}

#[test]
fn frame_truncation_corpus() {
    replay("frame_truncation", check::check_frame_truncation);
}

/// Found by the fuzz smoke: a mutation undone by a later one left the bytes
/// equal to a plain truncation, which the check then judged by the earlier
/// change.
#[test]
fn regression_mutation_undone() {
    check::check_frame_truncation(b"\x16\xfa\x00\x00\x00\x00\x00\x00\x00\x00\x3c");
}
