//! Invariant checks driven by arbitrary bytes: the body of the `index_open`
//! fuzz target and of the corpus replay in this crate's tests.

use crate::search::{Bm25, Filters, View};
use crate::segment::{build, Document, Kind, Segment, Stamp, Unit};
use crate::tokenize::TokenizerConfig;

fn small_index() -> Vec<u8> {
    let units = (0..4)
        .map(|i| Unit {
            kind: if i % 2 == 0 { Kind::Topic } else { Kind::Source },
            path: format!("topics/{i}.md"),
            stamp: Stamp::default(),
            deps: Vec::new(),
            docs: vec![Document {
                anchor: format!("a{i}"),
                key: String::new(),
                day: Some(i),
                pending: i == 3,
                speakers: vec!["ada".into()],
                text: format!("budget {i} tea ada"),
                payload: format!("{{\"n\":{i}}}"),
            }],
        })
        .collect();
    build(units, TokenizerConfig::default(), None)
}

fn answers(view: &View) -> Option<Vec<(u32, f64, String)>> {
    let f = Filters { include_pending: true, ..Filters::default() };
    let hits = view.search("budget tea", &f, 5, Bm25::default()).ok()?;
    hits.iter().map(|h| Some((h.doc, h.score, view.stored(h).ok()?.payload.to_owned()))).collect()
}

/// `index_open`: arbitrary bytes, and a small valid index with arbitrary
/// bytes overwritten, never panic on open or search; an opened corrupted
/// index either fails or answers exactly like the original.
pub fn check_index_open(data: &[u8]) {
    let config = TokenizerConfig::default();
    if let Ok(seg) = Segment::open_vec(data.to_vec(), config) {
        for d in 0..seg.len().min(64) {
            let _ = seg.stored(d);
        }
        for u in 0..seg.unit_count().min(64) {
            let _ = seg.unit(u);
        }
        if let Ok(view) = View::new(seg, None) {
            let f = Filters { speaker: Some("ada".into()), day_from: Some(1), ..Filters::default() };
            let _ = view.search("budget ada tea", &f, 5, Bm25::default());
            let _ = answers(&view);
        }
    }
    let good_bytes = small_index();
    let good = View::new(Segment::open_vec(good_bytes.to_vec(), config).expect("a built index opens"), None)
        .unwrap();
    let want = answers(&good).expect("a built index answers");
    let mut bytes = good_bytes.clone();
    for pair in data.chunks_exact(3) {
        let pos = usize::from(u16::from_le_bytes([pair[0], pair[1]])) % bytes.len();
        bytes[pos] = pair[2];
    }
    if let Ok(seg) = Segment::open_vec(bytes.to_vec(), config) {
        if let Ok(view) = View::new(seg, None) {
            if let Some(got) = answers(&view) {
                assert_eq!(got, want, "a corrupted index answered differently");
            }
        }
    }
}
