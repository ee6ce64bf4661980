//! The body: its lines and block tokens merged three-way, then each block
//! given its merged text.

use std::collections::{HashMap, HashSet};

use super::lines::{label, merge3, Clash};
use super::model::{block_token, token_block, Segment, Version};
use super::{Conflict, ConflictKind};

/// What becomes of one block: its lines (`None`: deleted) and the conflict
/// it raises, if any.
struct Fate {
    lines: Option<Vec<String>>,
    conflict: Option<Conflict>,
}

/// The merged body, gaps and blocks in order.
pub(super) fn merge(
    b: Option<&Version>,
    o: &Version,
    t: &Version,
    conflicts: &mut Vec<Conflict>,
) -> Vec<Segment> {
    let mut fates: HashMap<&str, Fate> = HashMap::new();
    for id in o.order.iter().chain(&t.order) {
        fates.entry(id).or_insert_with(|| {
            fate(id, b.and_then(|v| v.blocks.get(id)), o.blocks.get(id), t.blocks.get(id))
        });
    }
    // A block both sides deleted is gone: it is no line of the base either
    // side changed.
    let gone = |tok: &&String| {
        token_block(tok).is_some_and(|id| !o.blocks.contains_key(id) && !t.blocks.contains_key(id))
    };
    let base: Vec<String> =
        b.map_or(Vec::new(), |b| b.tokens.iter().filter(|tok| !gone(tok)).cloned().collect());
    let (merged, clashes) = merge3(&base, &o.tokens, &t.tokens);
    let kept = |id: &str| fates.get(id).is_some_and(|f| f.lines.is_some());
    for c in clashes {
        push_clash(conflicts, &merged, c, &kept);
    }
    // Each kept block once, where the merge put it first; deleted ones out;
    // a footnote definition line once (both sides may add one next to
    // where the other changed lines).
    let (mut seen, mut defs) = (HashSet::new(), HashSet::new());
    let mut tokens: Vec<String> = merged
        .into_iter()
        .filter(|tok| match token_block(tok) {
            Some(id) => fates.get(id).is_some_and(|f| f.lines.is_some()) && seen.insert(id.to_owned()),
            None => label(tok).is_none() || defs.insert(tok.clone()),
        })
        .collect();
    // A kept block a clash left out goes after the block it follows on its side.
    for side in [o, t] {
        for (k, id) in side.order.iter().enumerate() {
            if fates[id.as_str()].lines.is_some() && seen.insert(id.clone()) {
                let placed = |p: &String| tokens.iter().position(|tok| token_block(tok) == Some(p.as_str()));
                let at = side.order[..k].iter().rev().find_map(|p| placed(p).map(|i| i + 1));
                let at = at.or_else(|| side.order[k + 1..].iter().find_map(placed)).unwrap_or(tokens.len());
                tokens.insert(at, block_token(id));
            }
        }
    }
    let mut out = Vec::new();
    let mut gap = Vec::new();
    for tok in tokens {
        match token_block(&tok) {
            Some(id) => {
                let fate = fates.remove(id).expect("a kept block has a fate");
                conflicts.extend(fate.conflict);
                out.push(Segment::Gap(std::mem::take(&mut gap)));
                out.push(Segment::Block(fate.lines.unwrap_or_default()));
            }
            None => gap.push(tok),
        }
    }
    out.push(Segment::Gap(gap));
    // What is left was deleted, and a deletion that loses nothing raises
    // no conflict.
    debug_assert!(fates.values().all(|f| f.lines.is_none() && f.conflict.is_none()));
    out
}

/// Records a clash of lines as a conflict naming the kept block before it;
/// blocks in it are not lines (they are merged on their own).
fn push_clash(conflicts: &mut Vec<Conflict>, merged: &[String], clash: Clash, kept: &dyn Fn(&str) -> bool) {
    let lines = |v: &[String]| v.iter().filter(|l| token_block(l).is_none()).cloned().collect::<Vec<_>>();
    let (ours, theirs) = (lines(&clash.ours), lines(&clash.theirs));
    if ours == theirs {
        return;
    }
    let after = merged[..clash.at].iter().rev().filter_map(|tok| token_block(tok)).find(|id| kept(id));
    conflicts.push(Conflict {
        kind: ConflictKind::Lines { after: after.map(str::to_owned) },
        ours: ours.join("\n"),
        theirs: theirs.join("\n"),
    });
}

/// What becomes of block `id`, given its versions' lines.
fn fate(id: &str, b: Option<&Vec<String>>, o: Option<&Vec<String>>, t: Option<&Vec<String>>) -> Fate {
    let text = |p: Option<&Vec<String>>| p.map(|p| p.join("\n")).unwrap_or_default();
    let clash = |kept: &Vec<String>| Fate {
        lines: Some(kept.clone()),
        conflict: Some(Conflict {
            kind: ConflictKind::Block { id: id.to_owned() },
            ours: text(o),
            theirs: text(t),
        }),
    };
    let keep = |p: &Vec<String>| Fate { lines: Some(p.clone()), conflict: None };
    match (o, t) {
        (Some(op), Some(_)) if o == t || b == t => keep(op),
        (Some(_), Some(tp)) if b == o => keep(tp),
        (Some(op), Some(_)) => clash(op),
        (Some(p), None) | (None, Some(p)) => match b {
            None => keep(p),
            Some(bp) if bp == p => Fate { lines: None, conflict: None },
            Some(_) => clash(p),
        },
        (None, None) => Fate { lines: None, conflict: None },
    }
}
