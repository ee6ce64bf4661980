//! The body: blocks merged by id, put in order, each with its gap of lines
//! merged three-way.

use std::collections::{HashMap, HashSet};

use super::lines::{matches, merge3, Clash};
use super::model::{Piece, Segment, Version};
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
    for p in o.pieces.iter().chain(&t.pieces) {
        fates
            .entry(&p.id)
            .or_insert_with(|| fate(&p.id, b.and_then(|v| v.piece(&p.id)), o.piece(&p.id), t.piece(&p.id)));
    }
    let order = order(o, t, &|id| fates[id].lines.is_some());
    let no_gap: &[String] = &[];
    let (mut out, mut carry, mut after) = (Vec::new(), Vec::new(), None::<String>);
    for id in order {
        let (lines, clashes) = merge_gap(gap(b, id), gap(Some(o), id), gap(Some(t), id));
        push_clashes(conflicts, clashes, &after);
        carry.extend(lines);
        let fate = fates.remove(id).expect("every ordered id has a fate");
        conflicts.extend(fate.conflict);
        if let Some(lines) = fate.lines {
            out.push(Segment::Gap(std::mem::take(&mut carry)));
            out.push(Segment::Block(lines));
            after = Some(id.to_owned());
        }
    }
    let (tail, clashes) = merge_gap(b.map_or(no_gap, |b| &b.tail[..]), &o.tail, &t.tail);
    push_clashes(conflicts, clashes, &after);
    carry.extend(tail);
    out.push(Segment::Gap(carry));
    drop_repeated_definitions(&mut out);
    out
}

/// Whether `line` is a footnote definition's first line.
fn is_definition(line: &str) -> bool {
    line.starts_with("[^") && line.contains("]:")
}

/// Merges a gap three-way; a clash of footnote definitions (and blank
/// lines) only is no clash: the definitions theirs adds follow ours'. A
/// block appended with its definitions after it carries the definitions
/// that ended the file into its gap, so two sides that each append one
/// replace the file's last lines differently.
fn merge_gap(base: &[String], ours: &[String], theirs: &[String]) -> (Vec<String>, Vec<Clash>) {
    let (mut lines, clashes) = merge3(base, ours, theirs);
    let mut kept = Vec::new();
    for (o, t) in clashes {
        let only_definitions = o.iter().chain(&t).all(|l| is_definition(l) || l.trim().is_empty());
        if !only_definitions {
            kept.push((o, t));
            continue;
        }
        for l in t {
            if is_definition(&l) && !lines.contains(&l) {
                lines.push(l);
            }
        }
    }
    (lines, kept)
}

/// Removes every copy but the last of a footnote definition line that the
/// merge put in the body more than once (each side carried it into the gap
/// of the block it appended), with the blank line before a removed copy
/// when one is left on either side of it.
fn drop_repeated_definitions(body: &mut [Segment]) {
    let mut left: HashMap<String, usize> = HashMap::new();
    for seg in body.iter() {
        if let Segment::Gap(gap) = seg {
            for l in gap.iter().filter(|l| is_definition(l)) {
                *left.entry(l.clone()).or_insert(0) += 1;
            }
        }
    }
    if left.values().all(|n| *n == 1) {
        return;
    }
    for seg in body.iter_mut() {
        let Segment::Gap(gap) = seg else { continue };
        let mut out: Vec<String> = Vec::with_capacity(gap.len());
        for l in gap.drain(..) {
            let n = left.get_mut(&l);
            match n {
                Some(n) if *n > 1 => {
                    *n -= 1;
                    if out.last().is_some_and(|p| p.trim().is_empty()) {
                        out.pop();
                    }
                }
                _ => out.push(l),
            }
        }
        *gap = out;
    }
}

/// The gap before block `id` in `v` (none when `v` lacks the block).
fn gap<'v>(v: Option<&'v Version>, id: &str) -> &'v [String] {
    v.and_then(|v| v.piece(id)).map_or(&[], |p| &p.gap[..])
}

/// Records each clash of a gap after block `after` as a conflict.
fn push_clashes(
    conflicts: &mut Vec<Conflict>,
    clashes: Vec<(Vec<String>, Vec<String>)>,
    after: &Option<String>,
) {
    for (ours, theirs) in clashes {
        conflicts.push(Conflict {
            kind: ConflictKind::Lines { after: after.clone() },
            ours: ours.join("\n"),
            theirs: theirs.join("\n"),
        });
    }
}

/// What becomes of block `id`, given its versions.
fn fate(id: &str, b: Option<&Piece>, o: Option<&Piece>, t: Option<&Piece>) -> Fate {
    let text = |p: Option<&Piece>| p.map(|p| p.lines.join("\n")).unwrap_or_default();
    let clash = |kept: &Piece| Fate {
        lines: Some(kept.lines.clone()),
        conflict: Some(Conflict {
            kind: ConflictKind::Block { id: id.to_owned() },
            ours: text(o),
            theirs: text(t),
        }),
    };
    let same = |x: Option<&Piece>, y: Option<&Piece>| x.map(|p| &p.lines) == y.map(|p| &p.lines);
    let keep = |p: &Piece| Fate { lines: Some(p.lines.clone()), conflict: None };
    match (o, t) {
        (Some(op), Some(_)) if same(o, t) || same(b, t) => keep(op),
        (Some(_), Some(tp)) if same(b, o) => keep(tp),
        (Some(op), Some(_)) => clash(op),
        (Some(p), None) | (None, Some(p)) => match b {
            None => keep(p),
            Some(bp) if bp.lines == p.lines => Fate { lines: None, conflict: None },
            Some(_) => clash(p),
        },
        (None, None) => Fate { lines: None, conflict: None },
    }
}

/// Every id of either side, in merged order: the longest common
/// subsequence of the ids both have are sync points; between two, the run
/// of each side (a common id out of sync goes with ours); when both sides
/// have a run there, the one whose first kept id sorts lower comes first.
fn order<'v>(o: &'v Version, t: &'v Version, kept: &dyn Fn(&str) -> bool) -> Vec<&'v str> {
    let oids: Vec<&str> = o.pieces.iter().map(|p| p.id.as_str()).collect();
    let tids: Vec<&str> = t.pieces.iter().map(|p| p.id.as_str()).collect();
    let (oset, tset): (HashSet<&str>, HashSet<&str>) =
        (oids.iter().copied().collect(), tids.iter().copied().collect());
    let common = |ids: &[&str], other: &HashSet<&str>| -> Vec<String> {
        ids.iter().filter(|id| other.contains(*id)).map(|id| (*id).to_owned()).collect()
    };
    let (co, ct) = (common(&oids, &tset), common(&tids, &oset));
    let (x, y) = if co <= ct { (co, ct) } else { (ct, co) };
    let sync: Vec<String> =
        x.iter().zip(matches(&x, &y)).filter(|(_, m)| m.is_some()).map(|(id, _)| id.clone()).collect();
    let first = |run: &[&'v str]| run.iter().find(|id| kept(id)).or(run.first()).copied();
    let (mut out, mut io, mut it) = (Vec::new(), 0, 0);
    for s in sync.iter().map(|s| Some(s.as_str())).chain(std::iter::once(None)) {
        let (mut ro, mut rt) = (Vec::new(), Vec::new());
        while io < oids.len() && Some(oids[io]) != s {
            ro.push(oids[io]);
            io += 1;
        }
        while it < tids.len() && Some(tids[it]) != s {
            if !oset.contains(tids[it]) {
                rt.push(tids[it]);
            }
            it += 1;
        }
        if first(&rt).is_some_and(|f| first(&ro).is_none_or(|g| f < g)) {
            std::mem::swap(&mut ro, &mut rt);
        }
        out.extend(ro);
        out.extend(rt);
        if let Some(s) = s {
            out.push(oids[io]);
            debug_assert_eq!(oids[io], s);
            (io, it) = (io + 1, it + 1);
        }
    }
    out
}
