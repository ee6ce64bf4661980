//! Random three-way merges: a base of blocks and evidence definitions, and
//! two sides made from it by adding, changing and deleting blocks and
//! definitions.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use super::merge;
use crate::parse::TopicFile;

const FM: &str = "---\ndescription: A topic.\nkind: theme\n---\n";

/// What one side does to a base block.
#[derive(Debug, Clone)]
enum Op {
    Keep,
    Change(u8),
    Delete,
}

/// One side's edits.
#[derive(Debug, Clone)]
struct Side {
    /// Per base block (cycled when shorter).
    ops: Vec<Op>,
    /// New blocks: where (modulo the length) and id number and variant.
    inserts: Vec<(usize, u16, u8)>,
    /// Per base definition (cycled): whether it is deleted.
    drop_defs: Vec<bool>,
    /// Definitions added (label numbers).
    add_defs: Vec<u8>,
    /// Headings added: where (modulo the length) and number.
    headings: Vec<(usize, u8)>,
    /// A new description, if the side changes it.
    description: Option<u8>,
}

fn label(k: u8) -> String {
    format!("e-{k:010x}")
}

fn def(k: u8) -> String {
    let l = label(k);
    format!("[^{l}]: Time: `2024-03-15`; Sources: [chat/t/m{k}](../../sources/chat/_v2/t.md#source-{k:08x})")
}

fn block(id: &str, says: &str, k: u8) -> String {
    format!("Block {id} says {says}.[^{}] ^{id}", label(k))
}

/// A file of front matter (with the description `description`, if any),
/// a heading, blocks and definitions.
fn file(blocks: &[(String, String)], defs: &[u8], description: Option<u8>) -> String {
    let fm = match description {
        Some(d) => FM.replace("A topic.", &format!("Topic number {d}.")),
        None => FM.to_owned(),
    };
    let mut s = format!("{fm}# Topic\n");
    for (_, text) in blocks {
        s.push('\n');
        s.push_str(text);
        s.push('\n');
    }
    s.push('\n');
    for &k in defs {
        s.push_str(&def(k));
        s.push('\n');
    }
    s
}

/// The side's blocks and definitions.
fn apply(
    base: &[(String, String)],
    defs: &[u8],
    side: &Side,
    name: &str,
) -> (Vec<(String, String)>, Vec<u8>) {
    let mut blocks = Vec::new();
    for (k, (id, text)) in base.iter().enumerate() {
        match side.ops.get(k % side.ops.len().max(1)).unwrap_or(&Op::Keep) {
            Op::Keep => blocks.push((id.clone(), text.clone())),
            Op::Change(c) => blocks.push((id.clone(), block(id, &format!("{name} {c}"), *c % 4))),
            Op::Delete => {}
        }
    }
    for &(at, n, variant) in &side.inserts {
        let id = format!("{n:03x}");
        if !blocks.iter().any(|(b, _)| *b == id) {
            let at = at % (blocks.len() + 1);
            blocks.insert(at, (id.clone(), block(&id, &format!("new {variant}"), variant % 4)));
        }
    }
    for &(at, n) in &side.headings {
        let at = at % (blocks.len() + 1);
        blocks.insert(at, (String::new(), format!("## Part {n}")));
    }
    let mut out: Vec<u8> = defs
        .iter()
        .enumerate()
        .filter(|(k, _)| !side.drop_defs.get(k % side.drop_defs.len().max(1)).copied().unwrap_or(false))
        .map(|(_, d)| *d)
        .collect();
    for &d in &side.add_defs {
        if !out.contains(&d) && !defs.contains(&d) {
            out.push(d);
        }
    }
    (blocks, out)
}

fn side() -> impl Strategy<Value = Side> {
    let op = prop_oneof![3 => Just(Op::Keep), 1 => (0u8..3).prop_map(Op::Change), 1 => Just(Op::Delete)];
    (
        prop::collection::vec(op, 0..8),
        prop::collection::vec((0usize..10, 0u16..24, 0u8..2), 0..4),
        prop::collection::vec(prop::bool::weighted(0.2), 0..6),
        prop::collection::vec(0u8..40, 0..4),
        prop::collection::vec((0usize..10, 0u8..3), 0..2),
        prop::option::weighted(0.2, 0u8..2),
    )
        .prop_map(|(ops, inserts, drop_defs, add_defs, headings, description)| Side {
            ops,
            inserts,
            drop_defs,
            add_defs,
            headings,
            description,
        })
}

/// The block ids of `text`, in order, checking that every paragraph has one.
fn ids_of(text: &str) -> Vec<String> {
    let (file, _) = TopicFile::parse_lenient(text);
    file.blocks.iter().map(|b| b.id.clone().unwrap_or_default()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_merges_keep_every_block_once(
        base_ids in prop::collection::btree_set(0x1000u16..0x1100, 0..7),
        base_defs in prop::collection::btree_set(0u8..40, 0..6),
        o in side(),
        t in side(),
        crlf in prop::bool::weighted(0.2),
    ) {
        let base_blocks: Vec<(String, String)> = base_ids
            .iter()
            .enumerate()
            .map(|(k, n)| { let id = format!("{n:04x}"); let text = block(&id, "base", k as u8 % 4); (id, text) })
            .collect();
        let base_defs: Vec<u8> = base_defs.into_iter().collect();
        let (ob, od) = apply(&base_blocks, &base_defs, &o, "ours");
        let (tb, td) = apply(&base_blocks, &base_defs, &t, "theirs");
        let b = file(&base_blocks, &base_defs, None);
        let (mut ours, theirs) = (file(&ob, &od, o.description), file(&tb, &td, t.description));
        if crlf {
            ours = ours.replace('\n', "\r\n");
        }
        let m = merge(Some(&b), &ours, &theirs);

        let map = |v: &[(String, String)]| v.iter().filter(|(id, _)| !id.is_empty()).cloned().collect::<BTreeMap<_, _>>();
        let (bm, om, tm) = (map(&base_blocks), map(&ob), map(&tb));
        let expected: BTreeSet<&String> = om
            .keys()
            .chain(tm.keys())
            .filter(|id| match (om.get(*id), tm.get(*id)) {
                (Some(_), Some(_)) => true,
                (Some(x), None) | (None, Some(x)) => bm.get(*id) != Some(x),
                (None, None) => false,
            })
            .collect();
        let got = ids_of(&m.text);
        prop_assert!(got.iter().all(|id| !id.is_empty()), "a paragraph without id:\n{}", m.text);
        prop_assert_eq!(got.len(), expected.len(), "{}", m.text);
        prop_assert_eq!(got.iter().collect::<BTreeSet<_>>(), expected, "{}", m.text);
        for id in om.keys().chain(tm.keys()).filter(|id| !bm.contains_key(*id)) {
            prop_assert!(got.contains(id));
        }
        for (id, text) in &bm {
            if om.get(id) == Some(text) && tm.get(id) == Some(text) {
                prop_assert_eq!(m.text.matches(text.as_str()).count(), 1);
            }
        }
        // Definitions: kept unless a side dropped them, added ones once.
        for d in od.iter().chain(&td) {
            let dropped = base_defs.contains(d) && (!od.contains(d) || !td.contains(d));
            prop_assert_eq!(m.text.matches(&def(*d)).count(), usize::from(!dropped), "{}", m.text);
        }
        prop_assert_eq!(&merge(Some(&b), &ours, &ours).text, &ours);
        prop_assert_eq!(&merge(Some(&b), &b, &theirs).text, &theirs);
        prop_assert_eq!(&merge(Some(&b), &ours, &b).text, &ours);
        // Line endings are ours'; the description is merged by key.
        prop_assert_eq!(m.text.matches("\r\n").count(), if crlf { m.text.matches('\n').count() } else { 0 });
        let fm_clash = o.description.is_some() && t.description.is_some() && o.description != t.description;
        prop_assert_eq!(m.conflicts.iter().any(|c| matches!(c.kind, super::ConflictKind::FrontMatter { .. })), fm_clash);
        if let Some(d) = o.description.or(t.description) {
            prop_assert!(m.text.contains(&format!("description: Topic number {d}.")), "{}", m.text);
        }
        if m.conflicts.is_empty() && !crlf {
            let swapped = merge(Some(&b), &theirs, &ours);
            prop_assert_eq!(swapped.conflicts.len(), 0);
            prop_assert_eq!(&swapped.text, &m.text);
        }
        prop_assert_eq!(merge(Some(&b), &ours, &theirs), m);
    }
}
