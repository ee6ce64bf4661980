//! Integration tests of the index layer: the `index_open` and `tokenize`
//! fuzz corpora replayed on stable Rust, the workspace index on disk, and
//! query heap.

use std::path::Path;

/// Runs `check` on every file of the committed corpus of fuzz target `target`.
fn replay(target: &str, check: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus").join(target);
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let ok = std::panic::catch_unwind(|| check(&bytes)).is_ok();
        assert!(ok, "{} broke an invariant", path.display());
        n += 1;
    }
    assert!(n > 0);
}

#[test]
fn index_open_corpus() {
    replay("index_open", scriptorium_bm25_index::check::check_index_open);
}

#[test]
fn tokenize_corpus() {
    replay("tokenize", scriptorium_bm25_index::check::check_tokenize);
}

mod aliases;
mod heap;
mod workspace;

#[global_allocator]
static ALLOC: heap::Counting = heap::Counting;
mod speaker;
