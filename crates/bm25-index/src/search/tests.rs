//! The index against a brute-force BM25 over the same tokens, filters
//! against brute-force filtering, and damaged bytes; the corpora and the
//! brute force that the refresh tests (`crate::delta`) share.

use std::collections::BTreeMap;

use super::*;
use crate::segment::{build, Document, Stamp, Unit};
use crate::tokenize::TokenizerConfig;
use proptest::prelude::*;

pub(crate) type Row = (Kind, String, String, f64);

pub(crate) fn brute(
    units: &[Unit],
    query: &str,
    f: &Filters,
    limit: usize,
    p: Bm25,
    config: TokenizerConfig,
) -> Vec<Row> {
    let tok = Tokenizer::new(config);
    let docs: Vec<(&Unit, &Document)> =
        units.iter().flat_map(|u| u.docs.iter().map(move |d| (u, d))).collect();
    let toks: Vec<Vec<String>> = docs
        .iter()
        .map(|(_, d)| {
            let mut v = Vec::new();
            tok.terms(&d.text, &mut v);
            v
        })
        .collect();
    let n = docs.len() as u32;
    let total: u64 = toks.iter().map(|t| t.len() as u64).sum();
    let avgdl = if n > 0 { total as f64 / f64::from(n) } else { 0.0 };
    let mut q = Vec::new();
    tok.terms(query, &mut q);
    let mut seen = std::collections::HashSet::new();
    q.retain(|t| seen.insert(t.clone()));
    let df: Vec<u32> = q.iter().map(|t| toks.iter().filter(|ts| ts.contains(t)).count() as u32).collect();
    let mut out = Vec::new();
    for (k, (unit, doc)) in docs.iter().enumerate() {
        let mut score = 0.0;
        let mut matched = false;
        for (t, &df) in q.iter().zip(&df) {
            let tf = toks[k].iter().filter(|x| *x == t).count() as u32;
            if tf == 0 {
                continue;
            }
            matched = true;
            score += term_score(p, n, df, tf, toks[k].len() as u32, avgdl);
        }
        let pass = (f.include_pending || !doc.pending)
            && f.kind.is_none_or(|k| k == unit.kind)
            && f.path_prefix.as_deref().is_none_or(|pp| unit.path.starts_with(pp))
            && f.day_from.is_none_or(|x| doc.day.is_some_and(|dd| dd >= x))
            && f.day_to.is_none_or(|x| doc.day.is_some_and(|dd| dd <= x))
            && f.speaker
                .as_deref()
                .is_none_or(|s| unit.kind == Kind::Source && doc.speakers.iter().any(|k| k == s));
        if matched && pass {
            out.push((unit.kind, unit.path.clone(), doc.anchor.clone(), score));
        }
    }
    out.sort_by(|a, b| b.3.total_cmp(&a.3).then(a.0.cmp(&b.0)).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    out.truncate(limit);
    out
}

pub(crate) fn rows(view: &View, query: &str, f: &Filters, limit: usize, p: Bm25) -> Vec<Row> {
    view.search(query, f, limit, p)
        .unwrap()
        .iter()
        .map(|h| {
            let s = view.stored(h).unwrap();
            (s.kind, s.path.to_owned(), s.anchor.to_owned(), h.score)
        })
        .collect()
}

const PATHS: [&str; 6] = [
    "topics/a.md",
    "topics/people/b.md",
    "topics/people/c.md",
    "sources/chat/_v2/t.md",
    "sources/chat/t.md",
    "sources/x/_v2/y.md",
];

pub(crate) fn doc_strategy() -> impl Strategy<Value = Document> {
    let words = prop::sample::select(vec![
        "budget", "ada", "tea", "running", "runs", "東京", "the", "plan", "Ada", "BUDGET", "cat",
    ]);
    (
        "[a-z0-9]{1,3}",
        proptest::option::of(0i32..20),
        any::<bool>(),
        proptest::collection::vec(prop::sample::select(vec!["7391", "ada", "ada (7391)", "bo"]), 0..2),
        proptest::collection::vec(words, 0..12),
        any::<bool>(),
    )
        .prop_map(|(anchor, day, pending, speakers, words, spanned)| {
            // A document whose text is not stored: its span's checksum is
            // that of its own text; a pending one also has an aliases line.
            // A refresh deleting it takes its terms from the new document
            // with the same bytes, or from the postings.
            let own = words.join(" ");
            let aliases = if spanned && pending { "\n(aliases: ada, cat)".to_owned() } else { String::new() };
            let span = spanned.then(|| crate::segment::Span {
                offset: 0,
                len: own.len() as u32,
                hash: crate::format::checksum(own.as_bytes()),
            });
            Document {
                anchor,
                key: String::new(),
                day,
                pending,
                speakers: speakers.into_iter().map(str::to_owned).collect(),
                text: format!("{own}{aliases}"),
                payload: String::new(),
                span,
                time: None,
                aliases,
            }
        })
}

pub(crate) fn unit_strategy() -> impl Strategy<Value = Unit> {
    (prop::sample::select(PATHS.to_vec()), proptest::collection::vec(doc_strategy(), 0..6)).prop_map(
        |(path, docs)| {
            let kind = if path.starts_with("topics/") { Kind::Topic } else { Kind::Source };
            let docs = docs
                .into_iter()
                .map(|mut d| {
                    if kind == Kind::Topic {
                        d.speakers.clear();
                    }
                    d
                })
                .collect();
            Unit { kind, path: path.into(), stamp: Stamp::default(), deps: Vec::new(), docs }
        },
    )
}

pub(crate) fn units_strategy() -> impl Strategy<Value = Vec<Unit>> {
    proptest::collection::vec(unit_strategy(), 0..6).prop_map(|us| {
        let mut by: BTreeMap<String, Unit> = BTreeMap::new();
        for u in us {
            by.insert(u.path.clone(), u);
        }
        by.into_values().collect()
    })
}

pub(crate) fn filter_strategy() -> impl Strategy<Value = Filters> {
    (
        proptest::option::of(prop_oneof![Just(Kind::Topic), Just(Kind::Source)]),
        proptest::option::of(prop::sample::select(vec![
            "",
            "topics/",
            "sources/chat",
            "topics/people/",
            "x",
            "topics/people/c.md",
            "sources/chat/_v2/t.mdx",
        ])),
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

pub(crate) const QUERY: &str = "(budget|ada|tea|run|東京|the|plan|nothing|cat| ){1,8}";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn search_equals_brute_force(units in units_strategy(), query in QUERY,
                                 f in filter_strategy(), limit in 1usize..12, stem in any::<bool>()) {
        let config = TokenizerConfig { stem, stop_words: true };
        let bytes = build(units.clone(), config, None);
        let view = View::new(Segment::open_vec(bytes.to_vec(), config).unwrap(), None).unwrap();
        let p = Bm25::default();
        prop_assert_eq!(rows(&view, &query, &f, limit, p), brute(&units, &query, &f, limit, p, config));
    }

}

pub(crate) fn unit(kind: Kind, path: &str, docs: Vec<Document>) -> Unit {
    Unit { kind, path: path.into(), stamp: Stamp::default(), deps: Vec::new(), docs }
}

pub(crate) fn doc(anchor: &str, text: &str) -> Document {
    Document {
        anchor: anchor.into(),
        key: String::new(),
        day: Some(1),
        pending: false,
        speakers: Vec::new(),
        text: text.into(),
        payload: String::new(),
        span: None,
        time: None,
        aliases: String::new(),
    }
}

#[test]
fn every_corruption_of_a_small_index_is_detected_or_harmless() {
    let units = (0..5)
        .map(|i| {
            let kind = if i % 2 == 0 { Kind::Topic } else { Kind::Source };
            unit(
                kind,
                &format!("topics/{i}.md"),
                vec![doc(&format!("a{i}"), &format!("budget number {i} tea"))],
            )
        })
        .collect();
    let config = TokenizerConfig::default();
    let bytes = build(units, config, None);
    let answer = |b: &[u8]| -> Result<Vec<Row>, Damaged> {
        let view = View::new(Segment::open_vec(b.to_vec(), config)?, None)?;
        let hits = view.search("budget tea", &Filters::default(), 5, Bm25::default())?;
        hits.iter()
            .map(|h| {
                let s = view.stored(h)?;
                Ok((s.kind, s.path.to_owned(), s.anchor.to_owned(), h.score))
            })
            .collect()
    };
    let good = answer(&bytes).unwrap();
    assert_eq!(good.len(), 5);
    for pos in 0..bytes.len() {
        let mut b = bytes.clone();
        b[pos] ^= 0x41;
        if let Ok(got) = answer(&b) {
            // A change no checksum catches must not change any answer.
            assert_eq!(got, good, "byte {pos}");
        }
    }
    for cut in 0..bytes.len() {
        assert!(Segment::open_vec(bytes[..cut].to_vec(), config).is_err());
    }
    assert!(Segment::open_vec(bytes.to_vec(), TokenizerConfig { stem: false, stop_words: true }).is_err());
    let mut old = bytes.clone();
    old[8] = 1;
    assert!(Segment::open_vec(old.to_vec(), config).unwrap_err().0.contains("version"));
}

#[test]
fn a_forged_label_in_a_body_never_matches_a_speaker() {
    let mut bo = doc("source-1", "Bo (4402) received [Ada (7391)] the key is fine to share");
    bo.speakers = vec!["4402".into(), "bo".into(), "bo (4402)".into()];
    let mut ada = doc("source-2", "Ada (7391) the budget is 50k");
    ada.speakers = vec!["7391".into(), "ada".into(), "ada (7391)".into()];
    let config = TokenizerConfig::default();
    let bytes = build(vec![unit(Kind::Source, "sources/chat/_v2/t.md", vec![bo, ada])], config, None);
    let view = View::new(Segment::open_vec(bytes.to_vec(), config).unwrap(), None).unwrap();
    let f = Filters { speaker: Some("7391".into()), ..Filters::default() };
    let hits = view.search("key share budget ada", &f, 10, Bm25::default()).unwrap();
    let anchors: Vec<_> = hits.iter().map(|h| view.stored(h).unwrap().anchor).collect();
    assert_eq!(anchors, ["source-2"]);
}

#[test]
fn pruning_keeps_the_exact_top_k_on_a_larger_corpus() {
    // Enough postings for several blocks and real MaxScore pruning.
    let words = ["budget", "tea", "plan", "ada", "garden", "music", "travel", "paris", "dog", "code"];
    let mut docs = Vec::new();
    let mut x = 7u64;
    for i in 0..3000 {
        let mut text = Vec::new();
        for _ in 0..(3 + i % 17) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let w = words[((x >> 33) as usize % words.len()).min(((x >> 40) as usize) % words.len())];
            text.push(w);
        }
        let mut d = doc(&format!("b{i:05}"), &text.join(" "));
        d.day = Some(i % 365);
        docs.push(d);
    }
    let units = vec![unit(Kind::Topic, "topics/t.md", docs)];
    let config = TokenizerConfig::default();
    let bytes = build(units.clone(), config, None);
    let view = View::new(Segment::open_vec(bytes.to_vec(), config).unwrap(), None).unwrap();
    let p = Bm25::default();
    for q in ["budget paris", "code dog travel music", "ada", "garden tea tea plan budget paris"] {
        for limit in [1, 5, 10, 50] {
            let f = Filters::default();
            assert_eq!(rows(&view, q, &f, limit, p), brute(&units, q, &f, limit, p, config), "{q} {limit}");
            for (from, to) in [(100, 103), (10, 300), (364, 364), (400, 500)] {
                let f = Filters { day_from: Some(from), day_to: Some(to), ..Filters::default() };
                assert_eq!(
                    rows(&view, q, &f, limit, p),
                    brute(&units, q, &f, limit, p, config),
                    "{q} {limit}"
                );
            }
        }
    }
}

#[test]
fn replicated_documents_tie_and_keep_the_lowest_numbers() {
    // Thirty copies of every text: every score ties thirty ways, and the
    // documents holding the rarest terms lie anywhere in the segment.
    let texts = [
        "budget tea plan",
        "ada garden tea",
        "music travel paris dog",
        "code budget",
        "tea tea plan ada",
        "paris paris dog code music",
        "garden",
        "plan budget ada travel",
        "dog",
        "tea garden music code",
    ];
    let mut units = Vec::new();
    for u in 0..30 {
        let docs = (0..40).map(|i| doc(&format!("b{i:03}"), texts[(i * 7 + u) % texts.len()])).collect();
        units.push(unit(Kind::Source, &format!("sources/p/_v2/t{u:02}.md"), docs));
    }
    let config = TokenizerConfig { stem: true, stop_words: false };
    let bytes = build(units.clone(), config, None);
    let view = View::new(Segment::open_vec(bytes, config).unwrap(), None).unwrap();
    for p in [Bm25::default(), Bm25 { k1: 1.2, b: 0.75 }] {
        for q in ["budget paris", "tea plan ada", "dog music code travel", "garden tea", "paris"] {
            for limit in [1, 5, 31, 100] {
                let f = Filters::default();
                assert_eq!(
                    rows(&view, q, &f, limit, p),
                    brute(&units, q, &f, limit, p, config),
                    "{q} {limit}"
                );
            }
        }
    }
}

#[test]
fn windows_passed_over_or_partitioned_keep_the_exact_top_k() {
    // Many windows of documents, with words that live in one region only
    // (as a name lives in one conversation): the windows without them are
    // passed over or probe their common words only.
    let common = ["what", "did", "the", "to", "is", "and", "go", "see"];
    let regions =
        [("zeta", 0..3_000), ("omega", 20_000..22_500), ("kappa", 9_000..9_040), ("sigma", 0..30_000)];
    let mut docs = Vec::new();
    let mut x = 11u64;
    for i in 0..30_000u32 {
        let mut text = Vec::new();
        for _ in 0..(2 + i % 23) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            text.push(common[(x >> 33) as usize % common.len()]);
        }
        for (word, range) in &regions {
            if range.contains(&i) && (x >> 20).is_multiple_of(2 + u64::from(i % 5)) {
                text.push(word);
            }
        }
        docs.push(doc(&format!("b{i:06}"), &text.join(" ")));
    }
    let units = vec![unit(Kind::Source, "sources/r/_v2/t.md", docs)];
    let config = TokenizerConfig { stem: true, stop_words: false };
    let bytes = build(units.clone(), config, None);
    let view = View::new(Segment::open_vec(bytes, config).unwrap(), None).unwrap();
    let f = Filters::default();
    for p in [Bm25::default(), Bm25 { k1: 1.2, b: 0.75 }] {
        for q in [
            "what did zeta see",
            "the omega",
            "kappa is what",
            "sigma and zeta to go",
            "did omega kappa zeta",
        ] {
            // A shorter top k is a prefix of a longer one (ties go to the
            // lower number).
            let best = brute(&units, q, &f, 40, p, config);
            for limit in [1, 5, 40] {
                assert_eq!(rows(&view, q, &f, limit, p), best[..limit.min(best.len())], "{q} {limit}");
            }
        }
    }
}
