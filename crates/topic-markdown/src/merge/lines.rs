//! Three-way merge of line runs: each side's change to the base is a list
//! of hunks (from the alignment in `align`); hunks of the two sides that
//! overlap in the base are resolved together.

use super::align::matches;
use super::model::token_block;
use crate::parse::{definition_line, is_blank};

/// A clash: both sides changed the same base lines differently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Clash {
    /// Where in the merged lines ours' lines (which were kept) start.
    pub(super) at: usize,
    /// Ours' lines.
    pub(super) ours: Vec<String>,
    /// Theirs' lines.
    pub(super) theirs: Vec<String>,
}

/// One side's change to `base`: lines `start..end` replaced by `lines`
/// (`start == end`: an insertion before line `start`).
#[derive(Debug)]
struct Hunk<'s> {
    start: usize,
    end: usize,
    lines: &'s [String],
    ours: bool,
}

/// The hunks that turn `base` into `side`, in order.
fn hunks<'s>(base: &[String], side: &'s [String], ours: bool) -> Vec<Hunk<'s>> {
    let m = matches(base, side);
    let pairs = m.iter().enumerate().filter_map(|(i, j)| Some((i + 1, (*j)? + 1)));
    let (mut out, mut prev) = (Vec::new(), (0, 0));
    for (i, j) in pairs.chain(std::iter::once((base.len() + 1, side.len() + 1))) {
        if i > prev.0 + 1 || j > prev.1 + 1 {
            out.push(Hunk { start: prev.0, end: i - 1, lines: &side[prev.1..j - 1], ours });
        }
        prev = (i, j);
    }
    out
}

/// Merges `ours` and `theirs`, two versions of `base`; where they clash the
/// result holds ours, and the clash is returned. Each side's change is a
/// list of hunks; hunks of the two sides that overlap in base, or insert
/// at one place, are resolved together, the others apply as they are.
pub(super) fn merge3(base: &[String], ours: &[String], theirs: &[String]) -> (Vec<String>, Vec<Clash>) {
    let mut all = hunks(base, ours, true);
    all.extend(hunks(base, theirs, false));
    all.sort_by_key(|h| (h.start, h.end, !h.ours));
    let (mut out, mut clashes, mut at, mut k) = (Vec::new(), Vec::new(), 0, 0);
    while k < all.len() {
        let (start, mut end, first) = (all[k].start, all[k].end, k);
        k += 1;
        while k < all.len()
            && (all[k].start < end || (all[k].start == start && all[k].end == start && end == start))
        {
            end = end.max(all[k].end);
            k += 1;
        }
        out.extend_from_slice(&base[at..start]);
        let group = &all[first..k];
        let side = |ours: bool| apply(base, start, end, group.iter().filter(|h| h.ours == ours));
        let (o, t) = (side(true), side(false));
        match resolve(&base[start..end], &o, &t) {
            Some(lines) => out.extend(lines),
            None => {
                clashes.push(Clash { at: out.len(), ours: o.clone(), theirs: t });
                out.extend(o);
            }
        }
        at = end;
    }
    out.extend_from_slice(&base[at..]);
    (out, clashes)
}

/// `base[start..end]` with `hunks` (which lie inside it) applied.
fn apply<'h, 's: 'h>(
    base: &[String],
    start: usize,
    end: usize,
    hunks: impl Iterator<Item = &'h Hunk<'s>>,
) -> Vec<String> {
    let (mut out, mut at) = (Vec::new(), start);
    for h in hunks {
        out.extend_from_slice(&base[at..h.start]);
        out.extend_from_slice(h.lines);
        at = h.end;
    }
    out.extend_from_slice(&base[at..end]);
    out
}

/// One unstable stretch: base lines `b`, replaced by `o` in ours and `t` in
/// theirs. `None` is a clash.
fn resolve(b: &[String], o: &[String], t: &[String]) -> Option<Vec<String>> {
    if o == t || t == b {
        return Some(o.to_vec());
    }
    if o == b {
        return Some(t.to_vec());
    }
    if b.is_empty() {
        return Some(union(o, t));
    }
    let (ko, kt) = (kept(b, o), kept(b, t));
    let merged = match (ko, kt) {
        // Both only deleted: what both kept.
        (Some(ko), Some(kt)) => Some(
            b.iter()
                .zip(ko.iter().zip(&kt))
                .filter(|(_, (x, y))| **x && **y)
                .map(|(l, _)| l.clone())
                .collect(),
        ),
        // One only deleted: the other's change, less those deletions.
        (Some(ko), None) => Some(drop_from(b, &ko, t)),
        (None, Some(kt)) => Some(drop_from(b, &kt, o)),
        (None, None) => None,
    };
    merged.or_else(|| definitions(b, o, t)).or_else(|| insert_into(b, o, t)).or_else(|| insert_into(b, t, o))
}

/// When `ins` only inserted lines into `b`: `other`'s change with those
/// insertions added at their places (one at or inside a stretch `other`
/// replaced goes after the replacement).
fn insert_into(b: &[String], ins: &[String], other: &[String]) -> Option<Vec<String>> {
    let ih = hunks(b, ins, true);
    if ih.iter().any(|h| h.start != h.end) {
        return None;
    }
    let oh = hunks(b, other, false);
    let (mut out, mut i, mut a, mut c) = (Vec::new(), 0, 0, 0);
    loop {
        while a < ih.len() && ih[a].start <= i {
            out.extend_from_slice(ih[a].lines);
            a += 1;
        }
        if c < oh.len() && oh[c].start == i {
            out.extend_from_slice(oh[c].lines);
            i = oh[c].end;
            c += 1;
            continue;
        }
        if i >= b.len() {
            break;
        }
        out.push(b[i].clone());
        i += 1;
    }
    Some(out)
}

/// The label of a footnote definition line.
pub(super) fn label(l: &str) -> Option<&str> {
    definition_line(l).ok().map(|(_, (label, _))| label)
}

/// When every base line either side removed is a footnote definition, a
/// block token or blank (each stands for itself, so removing it changes
/// nothing else): the base lines both sides kept, then the lines either
/// side added (each once, side independent). A label both sides added
/// with different lines is a clash.
fn definitions(b: &[String], o: &[String], t: &[String]) -> Option<Vec<String>> {
    let keyed = |l: &String| is_blank(l) || label(l).is_some() || token_block(l).is_some();
    if !b.iter().filter(|l| !o.contains(l) || !t.contains(l)).all(keyed) {
        return None;
    }
    let added = |side: &[String]| side.iter().filter(|l| !b.contains(l)).cloned().collect::<Vec<_>>();
    let (ao, at) = (added(o), added(t));
    if ao.iter().any(|x| at.iter().any(|y| label(x).is_some() && label(x) == label(y) && x != y)) {
        return None;
    }
    let mut out: Vec<String> = b.iter().filter(|l| o.contains(l) && t.contains(l)).cloned().collect();
    out.extend(union(&ao, &at));
    Some(out)
}

/// When `side` is `b` with some lines deleted: per line of `b`, whether
/// `side` kept it.
fn kept(b: &[String], side: &[String]) -> Option<Vec<bool>> {
    let mut flags = vec![false; b.len()];
    let mut k = 0;
    for l in side {
        while k < b.len() && &b[k] != l {
            k += 1;
        }
        if k == b.len() {
            return None;
        }
        flags[k] = true;
        k += 1;
    }
    Some(flags)
}

/// `other` (a change of `b`) without the lines of `b` that `keep` says the
/// deleting side removed: the deletion applies, and every line `other`
/// wrote stays.
fn drop_from(b: &[String], keep: &[bool], other: &[String]) -> Vec<String> {
    let mut base_of = vec![None; other.len()];
    for (k, j) in matches(b, other).into_iter().enumerate() {
        if let Some(j) = j {
            base_of[j] = Some(k);
        }
    }
    other.iter().zip(base_of).filter(|(_, k)| k.is_none_or(|k| keep[k])).map(|(l, _)| l.clone()).collect()
}

/// Both sides' insertions at one place: first the side whose first block
/// token sorts lower (lines without a block before any with one, then by
/// the lines), then the other's lines that the first lacks (in a longest
/// common subsequence), so the result does not depend on which side is
/// ours.
pub(super) fn union(a: &[String], b: &[String]) -> Vec<String> {
    let key = |r: &[String]| (r.iter().find(|l| token_block(l).is_some()).cloned(), r.to_vec());
    let (x, y) = if key(a) <= key(b) { (a, b) } else { (b, a) };
    let m = matches(y, x);
    let mut out = x.to_vec();
    out.extend(y.iter().zip(&m).filter(|(_, m)| m.is_none()).map(|(l, _)| l.clone()));
    out
}
