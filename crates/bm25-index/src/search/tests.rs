//! The index against a brute-force BM25 over the same tokens, filters
//! against brute-force filtering, refreshes against full rebuilds, and
//! opening hostile bytes.

use std::collections::BTreeMap;

use super::*;
use crate::delta::{refresh, refresh_with, Change, Refreshed, MERGE_MIN, MERGE_MIN_BYTES};
use crate::segment::{build, Document, Stamp, Unit};
use crate::tokenize::TokenizerConfig;
use proptest::prelude::*;

type Row = (Kind, String, String, f64);

fn brute(
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

fn rows(view: &View, query: &str, f: &Filters, limit: usize, p: Bm25) -> Vec<Row> {
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

fn doc_strategy() -> impl Strategy<Value = Document> {
    let words = prop::sample::select(vec![
        "budget", "ada", "tea", "running", "runs", "東京", "the", "plan", "Ada", "BUDGET", "cat",
    ]);
    (
        "[a-z0-9]{1,3}",
        proptest::option::of(0i32..20),
        any::<bool>(),
        proptest::collection::vec(prop::sample::select(vec!["7391", "ada", "ada (7391)", "bo"]), 0..2),
        proptest::collection::vec(words, 0..12),
    )
        .prop_map(|(anchor, day, pending, speakers, words)| Document {
            anchor,
            key: String::new(),
            day,
            pending,
            speakers: speakers.into_iter().map(str::to_owned).collect(),
            text: words.join(" "),
            payload: String::new(),
        })
}

fn unit_strategy() -> impl Strategy<Value = Unit> {
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

fn units_strategy() -> impl Strategy<Value = Vec<Unit>> {
    proptest::collection::vec(unit_strategy(), 0..6).prop_map(|us| {
        let mut by: BTreeMap<String, Unit> = BTreeMap::new();
        for u in us {
            by.insert(u.path.clone(), u);
        }
        by.into_values().collect()
    })
}

fn filter_strategy() -> impl Strategy<Value = Filters> {
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

const QUERY: &str = "(budget|ada|tea|run|東京|the|plan|nothing|cat| ){1,8}";

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

    #[test]
    fn refresh_equals_rebuild(initial in units_strategy(),
                              steps in proptest::collection::vec(
                                  proptest::collection::vec((unit_strategy(), any::<bool>()), 0..4), 1..40),
                              merge_min in prop_oneof![Just(MERGE_MIN), 1u64..12],
                              query in QUERY, f in filter_strategy(), limit in 1usize..12) {
        let config = TokenizerConfig::default();
        let p = Bm25::default();
        let mut model: BTreeMap<String, Unit> = initial.iter().map(|u| (u.path.clone(), u.clone())).collect();
        let mut stack = vec![build(initial, config, None)];
        for step in steps {
            let mut changes = Vec::new();
            for (unit, remove) in step {
                if remove {
                    model.remove(&unit.path);
                    changes.push(Change::Remove(unit.kind, unit.path.clone()));
                } else {
                    model.insert(unit.path.clone(), unit.clone());
                    changes.push(Change::Put(unit));
                }
            }
            let view = open_stack(&stack, config);
            let out = refresh_with(&view, changes, merge_min, MERGE_MIN_BYTES).unwrap();
            apply(&mut stack, out, config);
            // After every refresh: the same live units as the model, and
            // the statistics of a fresh build.
            let view = open_stack(&stack, config);
            let units: Vec<Unit> = model.values().cloned().collect();
            let fresh = View::new(Segment::open_vec(build(units, config, None), config).unwrap(), None).unwrap();
            prop_assert_eq!(view.len(), fresh.len());
            prop_assert_eq!(view.head().live(), fresh.head().live());
            let mut live: Vec<(Kind, String)> =
                view.units().unwrap().iter().map(|u| (u.kind, u.path.to_owned())).collect();
            live.sort();
            let mut want: Vec<(Kind, String)> = model.values().map(|u| (u.kind, u.path.clone())).collect();
            want.sort();
            prop_assert_eq!(live, want);
            prop_assert_eq!(rows(&view, &query, &f, limit, p), rows(&fresh, &query, &f, limit, p));
        }
        let view = open_stack(&stack, config);
        let units: Vec<Unit> = model.into_values().collect();
        let full = build(units.clone(), config, None);
        let fresh = View::new(Segment::open_vec(full.to_vec(), config).unwrap(), None).unwrap();
        prop_assert_eq!(view.len(), fresh.len());
        for u in &units {
            let info = view.units().unwrap().into_iter().find(|i| i.path == u.path).unwrap();
            let mut docs = u.docs.clone();
            docs.sort_by(|a, b| a.anchor.cmp(&b.anchor));
            prop_assert_eq!(view.unit_docs(&info).unwrap(), docs);
        }
        let got = rows(&view, &query, &f, limit, p);
        prop_assert_eq!(&got, &rows(&fresh, &query, &f, limit, p));
        prop_assert_eq!(got, brute(&units, &query, &f, limit, p, config));
    }

    #[test]
    fn any_bytes_open_safely(bytes in proptest::collection::vec(any::<u8>(), 0..800)) {
        crate::check::check_index_open(&bytes);
    }
}

/// The view over a stack of segment bytes, the base first.
fn open_stack(stack: &[Vec<u8>], config: TokenizerConfig) -> View {
    View::stack(stack.iter().map(|b| Segment::open_vec(b.clone(), config).unwrap()).collect()).unwrap()
}

/// The stack after a refresh: a new base alone, or the segments the new
/// head stands on and the head.
fn apply(stack: &mut Vec<Vec<u8>>, out: Refreshed, config: TokenizerConfig) {
    match out {
        Refreshed::Base(b) => *stack = vec![b],
        Refreshed::Delta(d) => {
            let below = Segment::open_vec(d.clone(), config).unwrap().stack().unwrap().len();
            assert!(below >= 1 && below <= stack.len());
            stack.truncate(below);
            stack.push(d);
        }
    }
}

fn unit(kind: Kind, path: &str, docs: Vec<Document>) -> Unit {
    Unit { kind, path: path.into(), stamp: Stamp::default(), deps: Vec::new(), docs }
}

fn doc(anchor: &str, text: &str) -> Document {
    Document {
        anchor: anchor.into(),
        key: String::new(),
        day: Some(1),
        pending: false,
        speakers: Vec::new(),
        text: text.into(),
        payload: String::new(),
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
fn a_large_refresh_merges_into_a_new_base() {
    let config = TokenizerConfig::default();
    let base = build(vec![unit(Kind::Topic, "topics/a.md", vec![doc("x", "tea")])], config, None);
    let view = View::new(Segment::open_vec(base.to_vec(), config).unwrap(), None).unwrap();
    let many: Vec<Document> = (0..=MERGE_MIN).map(|i| doc(&format!("d{i}"), "tea budget")).collect();
    let out = refresh(&view, vec![Change::Put(unit(Kind::Source, "sources/p/_v2/t.md", many))]).unwrap();
    let Refreshed::Base(b) = out else { panic!("expected a merge") };
    assert_eq!(Segment::open_vec(b.to_vec(), config).unwrap().len(), MERGE_MIN as u32 + 2);
}

#[test]
fn a_few_huge_documents_merge_into_a_new_base() {
    let config = TokenizerConfig::default();
    let base = build(vec![unit(Kind::Topic, "topics/a.md", vec![doc("x", "tea")])], config, None);
    let view = View::new(Segment::open_vec(base.to_vec(), config).unwrap(), None).unwrap();
    // One document under the byte bound stays in the delta …
    let small = "tea budget ".repeat(1000);
    let out =
        refresh(&view, vec![Change::Put(unit(Kind::Source, "sources/p/_v2/t.md", vec![doc("s", &small)]))]);
    assert!(matches!(out.unwrap(), Refreshed::Delta(_)));
    // … one past it is merged: later refreshes never rebuild it again.
    let huge = "tea budget ".repeat(MERGE_MIN_BYTES as usize / 10);
    let out =
        refresh(&view, vec![Change::Put(unit(Kind::Source, "sources/p/_v2/t.md", vec![doc("h", &huge)]))]);
    let Refreshed::Base(b) = out.unwrap() else { panic!("expected a merge") };
    assert_eq!(Segment::open_vec(b.to_vec(), config).unwrap().len(), 2);
}

#[test]
fn small_refreshes_copy_little_and_keep_few_deltas() {
    // A base of 40 units × 100 documents; 300 refreshes each replacing one
    // unit by 10 documents, merges into the base held off. The stack stays
    // logarithmic, and the documents written over the run stay within a
    // logarithmic factor of the documents changed.
    let config = TokenizerConfig::default();
    let words = ["budget", "tea", "plan", "ada", "garden", "music", "travel", "paris", "dog", "code"];
    let text = |i: usize, k: usize| format!("{} {} {i} {k}", words[(i + k) % 10], words[(i * 7 + k) % 10]);
    let unit_of = |u: usize, n: usize, salt: usize| {
        let docs = (0..n).map(|k| doc(&format!("b{k:03}"), &text(u + salt, k))).collect();
        unit(Kind::Topic, &format!("topics/{u:02}.md"), docs)
    };
    let mut model: BTreeMap<String, Unit> = BTreeMap::new();
    for u in 0..40 {
        let x = unit_of(u, 100, 0);
        model.insert(x.path.clone(), x);
    }
    let mut stack = vec![build(model.values().cloned().collect(), config, None)];
    let (mut written, mut changed, mut deepest) = (0u64, 0u64, 0usize);
    let mut x = 11u64;
    for step in 0..300 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let u = (x >> 33) as usize % 40;
        let put = unit_of(u, 10, step + 1);
        model.insert(put.path.clone(), put.clone());
        let view = open_stack(&stack, config);
        let out = refresh_with(&view, vec![Change::Put(put)], u64::MAX / 2, MERGE_MIN_BYTES).unwrap();
        let Refreshed::Delta(head) = &out else { panic!("refresh {step} merged into the base") };
        written += u64::from(Segment::open_vec(head.clone(), config).unwrap().len());
        changed += 10;
        apply(&mut stack, out, config);
        deepest = deepest.max(stack.len() - 1);
    }
    // 3,000 documents changed, at most 400 of them live in the deltas at
    // once: deltas at least double going down (4 deep here), and about 4
    // documents are written per document changed.
    assert!(deepest <= 8, "{deepest} deltas");
    assert!(written <= changed * 8, "{written} documents written for {changed} changed");
    let view = open_stack(&stack, config);
    let units: Vec<Unit> = model.into_values().collect();
    let fresh = View::new(Segment::open_vec(build(units, config, None), config).unwrap(), None).unwrap();
    let p = Bm25::default();
    for q in ["budget paris", "tea 7", "code dog travel"] {
        assert_eq!(rows(&view, q, &Filters::default(), 10, p), rows(&fresh, q, &Filters::default(), 10, p));
    }
}
