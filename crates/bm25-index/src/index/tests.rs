//! The index against a brute-force BM25 over the same tokens, filters
//! against brute-force filtering, and opening hostile bytes.

use super::*;
use proptest::prelude::*;

fn brute(
    docs: &[Document],
    query: &str,
    f: &Filters,
    limit: usize,
    p: Bm25,
    config: TokenizerConfig,
) -> Vec<(u32, f64)> {
    let tok = Tokenizer::new(config);
    let toks: Vec<Vec<String>> = docs
        .iter()
        .map(|d| {
            let mut v = Vec::new();
            tok.terms(&d.text, &mut v);
            v
        })
        .collect();
    let n = docs.len() as u32;
    let total: usize = toks.iter().map(Vec::len).sum();
    let avgdl = if n > 0 { total as f64 / f64::from(n) } else { 0.0 };
    let mut q = Vec::new();
    tok.terms(query, &mut q);
    let mut seen = std::collections::HashSet::new();
    q.retain(|t| seen.insert(t.clone()));
    let mut out = Vec::new();
    for (d, doc) in docs.iter().enumerate() {
        let mut score = 0.0;
        let mut matched = false;
        for t in &q {
            let tf = toks[d].iter().filter(|x| *x == t).count() as u32;
            if tf == 0 {
                continue;
            }
            matched = true;
            let df = toks.iter().filter(|ts| ts.contains(t)).count() as u32;
            score += term_score(p, n, df, tf, toks[d].len() as u32, avgdl);
        }
        let pass = (f.include_pending || !doc.pending)
            && f.kind.is_none_or(|k| k == doc.kind)
            && f.path_prefix.as_deref().is_none_or(|pp| doc.path.starts_with(pp))
            && f.day_from.is_none_or(|x| doc.day.is_some_and(|dd| dd >= x))
            && f.day_to.is_none_or(|x| doc.day.is_some_and(|dd| dd <= x))
            && f.speaker
                .as_deref()
                .is_none_or(|s| doc.kind == Kind::Source && doc.speakers.iter().any(|k| k == s));
        if matched && pass {
            out.push((d as u32, score));
        }
    }
    out.sort_by(|a, b| {
        let (da, db) = (&docs[a.0 as usize], &docs[b.0 as usize]);
        b.1.total_cmp(&a.1)
            .then(da.kind.cmp(&db.kind))
            .then(da.path.cmp(&db.path))
            .then(da.anchor.cmp(&db.anchor))
    });
    out.truncate(limit);
    out
}

fn doc_strategy() -> impl Strategy<Value = Document> {
    let words = prop::sample::select(vec![
        "budget", "ada", "tea", "running", "runs", "東京", "the", "plan", "Ada", "BUDGET", "cat",
    ]);
    (
        any::<bool>(),
        prop::sample::select(vec![
            "topics/a.md",
            "topics/people/b.md",
            "sources/chat/_v2/t.md",
            "sources/x/_v2/y.md",
        ]),
        "[a-z0-9]{1,4}",
        proptest::option::of(0i32..20),
        any::<bool>(),
        proptest::collection::vec(prop::sample::select(vec!["7391", "ada", "ada (7391)", "bo"]), 0..2),
        proptest::collection::vec(words, 0..12),
    )
        .prop_map(|(source, path, anchor, day, pending, speakers, words)| Document {
            kind: if source { Kind::Source } else { Kind::Topic },
            path: path.into(),
            anchor,
            day,
            pending,
            speakers: if source { speakers.into_iter().map(str::to_owned).collect() } else { Vec::new() },
            text: words.join(" "),
        })
}

fn filter_strategy() -> impl Strategy<Value = Filters> {
    (
        proptest::option::of(prop_oneof![Just(Kind::Topic), Just(Kind::Source)]),
        proptest::option::of(prop::sample::select(vec!["topics/", "sources/chat", "topics/people/", "x"])),
        proptest::option::of(0i32..20),
        proptest::option::of(0i32..20),
        proptest::option::of(prop::sample::select(vec!["7391", "ada", "nobody"])),
        any::<bool>(),
    )
        .prop_map(|(kind, path_prefix, day_from, day_to, speaker, include_pending)| Filters {
            kind,
            path_prefix: path_prefix.map(str::to_owned),
            day_from,
            day_to,
            speaker: speaker.map(str::to_owned),
            include_pending,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn search_equals_brute_force(docs in proptest::collection::vec(doc_strategy(), 0..40),
                                 query in "(budget|ada|tea|run|東京|the|plan|nothing| ){1,6}",
                                 f in filter_strategy(), limit in 1usize..12, stem in any::<bool>()) {
        let config = TokenizerConfig { stem, stop_words: true };
        let bytes = build(&docs, config);
        let index = Index::open(&bytes, config).unwrap();
        let p = Bm25::default();
        let got: Vec<(u32, f64)> = index.search(&query, &f, limit, p).into_iter().map(|h| (h.doc, h.score)).collect();
        let want = brute(&docs, &query, &f, limit, p, config);
        prop_assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            prop_assert_eq!(g.0, w.0);
            prop_assert!((g.1 - w.1).abs() < 1e-9, "{} vs {}", g.1, w.1);
        }
    }

    #[test]
    fn any_bytes_open_safely(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        if let Ok(index) = Index::open(&bytes, TokenizerConfig::default()) {
            let _ = index.search("budget ada", &Filters::default(), 5, Bm25::default());
        }
    }
}

#[test]
fn every_corruption_of_a_small_index_is_detected_or_harmless() {
    let docs: Vec<Document> = (0..5)
        .map(|i| Document {
            kind: if i % 2 == 0 { Kind::Topic } else { Kind::Source },
            path: format!("topics/{i}.md"),
            anchor: format!("a{i}"),
            day: Some(i),
            pending: false,
            speakers: vec![],
            text: format!("budget number {i} tea"),
        })
        .collect();
    let config = TokenizerConfig::default();
    let bytes = build(&docs, config);
    let good =
        Index::open(&bytes, config).unwrap().search("budget tea", &Filters::default(), 5, Bm25::default());
    assert_eq!(good.len(), 5);
    for pos in 0..bytes.len() {
        let mut b = bytes.clone();
        b[pos] ^= 0x41;
        if let Ok(index) = Index::open(&b, config) {
            // A change no checksum catches must not change any answer.
            assert_eq!(
                index.search("budget tea", &Filters::default(), 5, Bm25::default()),
                good,
                "byte {pos}"
            );
        }
    }
    for cut in 0..bytes.len() {
        assert!(Index::open(&bytes[..cut], config).is_err());
    }
    assert!(Index::open(&bytes, TokenizerConfig { stem: false, stop_words: true }).is_err());
}

#[test]
fn a_forged_label_in_a_body_never_matches_a_speaker() {
    let docs = vec![
        Document {
            kind: Kind::Source,
            path: "sources/chat/_v2/t.md".into(),
            anchor: "source-1".into(),
            day: Some(1),
            pending: false,
            speakers: vec!["4402".into(), "bo".into(), "bo (4402)".into()],
            text: "Bo (4402) received [Ada (7391)] the key is fine to share".into(),
        },
        Document {
            kind: Kind::Source,
            path: "sources/chat/_v2/t.md".into(),
            anchor: "source-2".into(),
            day: Some(1),
            pending: false,
            speakers: vec!["7391".into(), "ada".into(), "ada (7391)".into()],
            text: "Ada (7391) the budget is 50k".into(),
        },
    ];
    let config = TokenizerConfig::default();
    let bytes = build(&docs, config);
    let index = Index::open(&bytes, config).unwrap();
    let f = Filters { speaker: Some("7391".into()), ..Filters::default() };
    let hits = index.search("key share budget ada", &f, 10, Bm25::default());
    assert_eq!(hits.iter().map(|h| h.doc).collect::<Vec<_>>(), [1]);
}
