//! Refreshes against full rebuilds: a stack of deltas answers every query
//! as a fresh build of the same units would, merges into a new base when
//! they grow, and stays logarithmic.

use std::collections::BTreeMap;

use super::*;
use crate::search::tests::{brute, doc, filter_strategy, rows, unit, unit_strategy, units_strategy, QUERY};
use crate::search::{Bm25, Filters, View};
use crate::segment::{Document, Kind, Segment, Stored};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

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
            let mut docs: Vec<Document> = u.docs.iter().map(Document::stored_form).collect();
            docs.sort_by(|a, b| a.anchor.cmp(&b.anchor));
            prop_assert_eq!(view.unit_docs(&info).unwrap(), docs);
        }
        let got = rows(&view, &query, &f, limit, p);
        prop_assert_eq!(&got, &rows(&fresh, &query, &f, limit, p));
        prop_assert_eq!(got, brute(&units, &query, &f, limit, p, config));
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

/// Counts the deleted documents whose text the refresh asks for.
struct Asked(Vec<String>);

impl DeletedText for Asked {
    fn text(&mut self, stored: &Stored<'_>) -> Option<String> {
        self.0.push(stored.anchor.to_owned());
        None
    }
}

#[test]
fn deleted_documents_without_text_give_back_exactly_their_terms() {
    let config = TokenizerConfig::default();
    let spanned = |anchor: &str, own: &str, aliases: &str| {
        let hash = crate::format::checksum(own.as_bytes());
        Document {
            span: Some(crate::segment::Span { offset: 7, len: own.len() as u32, hash }),
            aliases: aliases.to_owned(),
            ..doc(anchor, &format!("{own}{aliases}"))
        }
    };
    let before = vec![
        spanned("a", "tea in the garden", "\n(aliases: Ada Lovelace)"),
        spanned("b", "the budget plan", ""),
        spanned("c", "gone soon: music", ""),
    ];
    let other = unit(Kind::Topic, "topics/z.md", vec![doc("z", "tea budget music lovelace plan trip")]);
    let base = build(vec![unit(Kind::Topic, "topics/a.md", before), other.clone()], config, None);
    // `a` keeps its bytes (moved: another offset), `b` changed, `c` is gone.
    let mut moved = spanned("a", "tea in the garden", "\n(aliases: Ada Lovelace)");
    moved.span = moved.span.map(|s| crate::segment::Span { offset: 99, ..s });
    let after = vec![moved, spanned("b", "the budget trip", ""), spanned("d", "new paris note", "")];
    let put = unit(Kind::Topic, "topics/a.md", after);
    let view = View::new(Segment::open_vec(base, config).unwrap(), None).unwrap();
    let mut asked = Asked(Vec::new());
    let out = refresh_using(&view, vec![Change::Put(put.clone())], (u64::MAX / 2, u64::MAX / 2), &mut asked);
    let Refreshed::Delta(head) = out.unwrap() else { panic!("a delta") };
    assert_eq!(asked.0, ["b", "c"], "the moved block's text comes from its new document");
    let view =
        View::stack(vec![view.base().reopen().unwrap(), Segment::open_vec(head, config).unwrap()]).unwrap();
    let fresh =
        View::new(Segment::open_vec(build(vec![put, other], config, None), config).unwrap(), None).unwrap();
    let p = Bm25::default();
    for q in ["lovelace", "ada", "tea garden", "budget plan", "music", "trip paris"] {
        assert_eq!(
            rows(&view, q, &Filters::default(), 10, p),
            rows(&fresh, q, &Filters::default(), 10, p),
            "{q}"
        );
    }
}
