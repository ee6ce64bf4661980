//! Integration tests of the index layer: the `index_open` fuzz corpus
//! replayed on stable Rust, the workspace index on disk, and query heap.

use std::path::Path;

#[test]
fn index_open_corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/index_open");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let ok = std::panic::catch_unwind(|| scriptorium_bm25_index::check::check_index_open(&bytes)).is_ok();
        assert!(ok, "{} broke an invariant", path.display());
        n += 1;
    }
    assert!(n > 0);
}

mod heap;
mod workspace;

#[global_allocator]
static ALLOC: heap::Counting = heap::Counting;
mod speaker;
