//! Invariant checks driven by arbitrary bytes: the bodies of the
//! `index_open` and `tokenize` fuzz targets and of the corpus replays in
//! this crate's tests.

use crate::search::{Bm25, Filters, View};
use crate::segment::{build, Document, Kind, Segment, Span, Stamp, Unit};
use crate::tokenize::{Tokenizer, TokenizerConfig, MAX_WORD_CHARS};

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
                // Half the documents point into their file instead.
                span: (i % 2 == 1).then_some(Span { offset: i as u64, len: 7, hash: 42 }),
                time: (i == 1).then(|| "2026-01-02".to_owned()),
                aliases: if i == 1 { "\n(aliases: Ada)".to_owned() } else { String::new() },
            }],
        })
        .collect();
    build(units, TokenizerConfig::default(), None)
}

fn answers(view: &View) -> Option<Vec<(u32, f64, Document)>> {
    let f = Filters { include_pending: true, ..Filters::default() };
    let hits = view.search("budget tea", &f, 5, Bm25::default()).ok()?;
    hits.iter().map(|h| Some((h.doc, h.score, view.stored(h).ok()?.to_document()))).collect()
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

/// `tokenize`: for any text (arbitrary bytes, read as lossy UTF-8, split
/// at the first byte `0xFF` into two texts `a` and `b`), under every
/// configuration, the tokenizer never panics; no term is longer than
/// [`MAX_WORD_CHARS`] characters or empty; tokenizing is deterministic;
/// a line feed between two texts separates their terms exactly
/// (`terms(a + "\n" + b) == terms(a) ++ terms(b)`); and a snippet is at most
/// the characters asked for, on one line.
pub fn check_tokenize(data: &[u8]) {
    let (a, b) = match data.iter().position(|&x| x == 0xFF) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    for (stem, stop_words) in [(true, true), (false, false)] {
        let tok = Tokenizer::new(TokenizerConfig { stem, stop_words });
        let terms = |text: &str| {
            let mut out = Vec::new();
            tok.terms(text, &mut out);
            out
        };
        let (ta, tb) = (terms(&a), terms(&b));
        for t in ta.iter().chain(&tb) {
            assert!(!t.is_empty(), "an empty term from {a:?} / {b:?}");
            assert!(t.chars().count() <= MAX_WORD_CHARS, "a term of {} characters", t.chars().count());
        }
        assert_eq!(terms(&a), ta, "the same text gave other terms");
        let joined = terms(&format!("{a}\n{b}"));
        assert_eq!(joined, [ta.clone(), tb].concat(), "a line feed did not separate the terms");
        let snippet = tok.snippet(&a, &ta, 40);
        assert!(snippet.chars().count() <= 40);
        assert!(!snippet.contains(['\n', '\r', '\u{2028}', '\u{2029}']));
    }
}

#[cfg(test)]
mod tests {
    //! Opening hostile bytes.
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn any_bytes_open_safely(bytes in proptest::collection::vec(any::<u8>(), 0..800)) {
            check_index_open(&bytes);
        }
    }
}
