//! Invariant checks driven by arbitrary bytes: the body of the `index_open`
//! fuzz target and of the corpus replay in this crate's tests.

use crate::index::{build, Bm25, Document, Filters, Index, Kind};
use crate::tokenize::TokenizerConfig;

/// `index_open`: arbitrary bytes, and a small valid index with arbitrary
/// bytes overwritten, never panic on open or search; an opened corrupted
/// index either is refused or answers exactly like the original.
pub fn check_index_open(data: &[u8]) {
    let config = TokenizerConfig::default();
    let f = Filters::default();
    if let Ok(index) = Index::open(data, config) {
        let _ = index.search("budget ada tea", &f, 5, Bm25::default());
        for d in 0..index.len().min(64) {
            let _ = index.doc(d);
        }
    }
    let docs: Vec<Document> = (0..4)
        .map(|i| Document {
            kind: if i % 2 == 0 { Kind::Topic } else { Kind::Source },
            path: format!("topics/{i}.md"),
            anchor: format!("a{i}"),
            day: Some(i),
            pending: i == 3,
            speakers: vec!["ada".into()],
            text: format!("budget {i} tea ada"),
        })
        .collect();
    let good_bytes = build(&docs, config);
    let good = Index::open(&good_bytes, config).expect("a built index opens");
    let want = good.search("budget tea", &f, 5, Bm25::default());
    let mut bytes = good_bytes.clone();
    for pair in data.chunks_exact(3) {
        let pos = usize::from(u16::from_le_bytes([pair[0], pair[1]])) % bytes.len();
        bytes[pos] = pair[2];
    }
    if let Ok(index) = Index::open(&bytes, config) {
        assert_eq!(
            index.search("budget tea", &f, 5, Bm25::default()),
            want,
            "a corrupted index answered differently"
        );
    }
}
