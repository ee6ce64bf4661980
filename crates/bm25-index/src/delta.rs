//! Incremental refresh: a stack of segments, as in a log-structured merge
//! tree. Each refresh writes one new delta (the *head*) holding the changed
//! units, and merges into it the newest deltas that hold at most twice what
//! it holds so far. Going down the stack each delta is then more than twice
//! the next, so there are at most log₂ of the deltas' documents of them,
//! a document is copied a logarithmic number of times, and most refreshes
//! copy little besides their change. The head carries the deletions of every segment below it
//! (one bit per document, copied forward and amended) and the per-term
//! document-frequency adjustments they make (carried forward, amended only
//! for the documents this refresh deletes), so scores equal a full
//! rebuild's. When the deltas grow past a fraction of the base, everything
//! is merged into a new base. Merges copy built postings and stored bytes
//! ([`crate::segment::merge`]); only the changed units are tokenized.

use std::collections::{BTreeMap, HashSet};

use crate::search::View;
use crate::segment::merge::{merge, Source};
use crate::segment::{
    build, distinct_terms, Damaged, DeltaInfo, Kind, Origin, PostingCursor, Segment, Stored, Unit, UnitInfo,
};
use crate::tokenize::{Tokenizer, TokenizerConfig};

/// One changed file: its new unit, or its removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The file was added or changed: these are its documents now.
    Put(Unit),
    /// The file is gone.
    Remove(Kind, String),
}

/// What a refresh produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refreshed {
    /// A new head: a delta over the segments its stack names (the view's
    /// oldest segments; those above them were merged into it).
    Delta(Vec<u8>),
    /// The deltas grew past the merge threshold: a new base, no delta.
    Base(Vec<u8>),
}

/// Everything is merged into a new base once the deltas hold more
/// documents (plus the base documents deleted) than this fraction of the
/// base, and at least [`MERGE_MIN`]; or more bytes than this fraction of
/// the base's bytes, and at least [`MERGE_MIN_BYTES`]. Such a merge copies
/// the whole index (it re-tokenizes nothing) and comes once per that
/// fraction of the workspace changed.
pub const MERGE_FRACTION: f64 = 0.125;
/// See [`MERGE_FRACTION`].
pub const MERGE_MIN: u64 = 4096;
/// See [`MERGE_FRACTION`].
pub const MERGE_MIN_BYTES: u64 = 4 << 20;

/// The changes by path (later changes to a path win); a removal of a path
/// the view does not hold is dropped.
fn by_path(view: &View, changes: Vec<Change>) -> Result<BTreeMap<(Kind, String), Option<Unit>>, Damaged> {
    let mut changed = BTreeMap::new();
    for c in changes {
        match c {
            Change::Put(mut u) => {
                // In anchor order, as the segment numbers them.
                u.docs.sort_by(|a, b| a.anchor.cmp(&b.anchor));
                changed.insert((u.kind, u.path.clone()), Some(u))
            }
            Change::Remove(k, p) => changed.insert((k, p), None),
        };
    }
    let mut out = BTreeMap::new();
    for ((k, p), u) in changed {
        let live = matches!(view.locate(k, &p)?, Some((_, info)) if !info.removed);
        if u.is_some() || live {
            out.insert((k, p), u);
        }
    }
    Ok(out)
}

fn set_bits(bits: &mut [u8], first: u32, count: u32) {
    for d in first..first + count {
        if let Some(b) = bits.get_mut(d as usize / 8) {
            *b |= 1 << (d % 8);
        }
    }
}

fn is_set(bits: Option<&[u8]>, d: u32) -> bool {
    bits.and_then(|b| b.get(d as usize / 8)).is_some_and(|x| x & (1 << (d % 8)) != 0)
}

fn popcount(bits: &[u8]) -> u64 {
    bits.iter().map(|b| u64::from(b.count_ones())).sum()
}

fn negative() -> Damaged {
    Damaged("the live statistics do not match the segments".into())
}

fn length(seg: &Segment, d: u32) -> Result<u64, Damaged> {
    if d >= seg.len() {
        return Err(Damaged("length out of range".into()));
    }
    Ok(u64::from(seg.lengths()?.get(d)))
}

/// The indexed text of a document a refresh deletes whose text the index
/// does not store (it has a span of its file): read back when the file
/// still holds those bytes, `None` when it does not (the terms are then
/// taken from the segment's postings).
pub trait DeletedText {
    /// The text `stored` was indexed with, if it can still be read.
    fn text(&mut self, stored: &Stored<'_>) -> Option<String>;
}

/// Reads no text back: every deleted document with a span has its terms
/// taken from the postings.
struct FromPostings;

impl DeletedText for FromPostings {
    fn text(&mut self, _: &Stored<'_>) -> Option<String> {
        None
    }
}

/// Applies `changes` to `view` (later changes to a path win).
pub fn refresh(view: &View, changes: Vec<Change>) -> Result<Refreshed, Damaged> {
    refresh_with(view, changes, MERGE_MIN, MERGE_MIN_BYTES)
}

/// [`refresh`], reading the text of deleted documents with a span from
/// `texts` where it can.
pub fn refresh_reading(
    view: &View,
    changes: Vec<Change>,
    texts: &mut dyn DeletedText,
) -> Result<Refreshed, Damaged> {
    refresh_using(view, changes, (MERGE_MIN, MERGE_MIN_BYTES), texts)
}

/// [`refresh`] with other floors than [`MERGE_MIN`] and [`MERGE_MIN_BYTES`]
/// for merging into a new base (tests use small ones).
pub fn refresh_with(
    view: &View,
    changes: Vec<Change>,
    merge_min: u64,
    merge_min_bytes: u64,
) -> Result<Refreshed, Damaged> {
    refresh_using(view, changes, (merge_min, merge_min_bytes), &mut FromPostings)
}

fn refresh_using(
    view: &View,
    changes: Vec<Change>,
    (merge_min, merge_min_bytes): (u64, u64),
    texts: &mut dyn DeletedText,
) -> Result<Refreshed, Damaged> {
    let segs = view.segments();
    let base = view.base();
    let config = base.config();
    let changed = by_path(view, changes)?;
    let units: Vec<Unit> = changed.values().flatten().cloned().collect();
    let added: u64 = units.iter().map(|u| u.docs.len() as u64).sum();
    let added_bytes: u64 = units.iter().flat_map(|u| &u.docs).map(|d| d.text.len() as u64).sum();
    let fresh = Segment::open_vec(build(units, config, None), config)?;
    // The base documents deleted, with this change.
    let mut base_dead = view.tombstones(0)?.map_or(0, popcount);
    for (k, p) in changed.keys() {
        if let Some((0, info)) = view.locate(*k, p)? {
            base_dead += u64::from(info.count);
        }
    }
    let delta_docs: u64 = segs[1..].iter().map(|s| u64::from(s.len())).sum();
    let delta_bytes: u64 = segs[1..].iter().map(|s| s.byte_len() as u64).sum();
    let limit = ((f64::from(base.len()) * MERGE_FRACTION) as u64).max(merge_min);
    let byte_limit = ((base.byte_len() as f64 * MERGE_FRACTION) as u64).max(merge_min_bytes);
    if delta_docs + added + base_dead > limit || delta_bytes + added_bytes > byte_limit {
        return merge_all(view, &changed, &fresh, config).map(Refreshed::Base);
    }
    // The newest deltas up to twice as large as what the head holds so far
    // join it: below the head, each delta is more than twice the next.
    let mut keep = segs.len();
    let mut acc = added;
    while keep > 1 && u64::from(segs[keep - 1].len()) <= 2 * acc {
        keep -= 1;
        acc += u64::from(segs[keep].len());
    }
    head(view, &changed, &fresh, keep, config, texts).map(Refreshed::Delta)
}

/// The sources of a merge and the removal records among their newest.
type Newest<'v> = (Vec<Source<'v>>, Vec<(Kind, String)>);

/// Per source, the units to keep: the newest record of each path, starting
/// with the changed paths (`fresh` holds their new units); removal records
/// and superseded units are left out. Sources are `fresh`, then
/// `segs[from..]` newest first.
fn newest<'v>(
    view: &'v View,
    changed: &BTreeMap<(Kind, String), Option<Unit>>,
    fresh: &'v Segment,
    from: usize,
) -> Result<Newest<'v>, Damaged> {
    let mut seen: HashSet<(Kind, String)> = changed.keys().cloned().collect();
    let mut removals: Vec<(Kind, String)> =
        changed.iter().filter(|(_, u)| u.is_none()).map(|(k, _)| k.clone()).collect();
    let mut sources = vec![Source { seg: fresh, units: (0..fresh.unit_count()).collect(), dead: None }];
    for k in (from..view.segments().len()).rev() {
        let seg = &view.segments()[k];
        let mut keep = Vec::new();
        for u in 0..seg.unit_count() {
            let info: UnitInfo<'_> = seg.unit(u)?;
            if seen.insert((info.kind, info.path.to_owned())) {
                if info.removed {
                    removals.push((info.kind, info.path.to_owned()));
                } else {
                    keep.push(u);
                }
            }
        }
        sources.push(Source { seg, units: keep, dead: view.tombstones(k)? });
    }
    Ok((sources, removals))
}

/// Every live unit, with the change, as one new base.
fn merge_all(
    view: &View,
    changed: &BTreeMap<(Kind, String), Option<Unit>>,
    fresh: &Segment,
    config: TokenizerConfig,
) -> Result<Vec<u8>, Damaged> {
    let (sources, _) = newest(view, changed, fresh, 0)?;
    merge(&sources, config, None, None)
}

/// The new head: the change and `segs[keep..]` merged, over `segs[..keep]`.
fn head(
    view: &View,
    changed: &BTreeMap<(Kind, String), Option<Unit>>,
    fresh: &Segment,
    keep: usize,
    config: TokenizerConfig,
    texts: &mut dyn DeletedText,
) -> Result<Vec<u8>, Damaged> {
    let segs = view.segments();
    let below = &segs[..keep];
    // Deletions below: the old head's, then this change's.
    let mut tombstones = Vec::new();
    let mut ranges = Vec::with_capacity(keep);
    for (k, s) in below.iter().enumerate() {
        let start = tombstones.len();
        match view.tombstones(k)? {
            Some(bits) => tombstones.extend_from_slice(bits),
            None => tombstones.resize(start + (s.len() as usize).div_ceil(8), 0),
        }
        ranges.push(start);
    }
    // This refresh's adjustments; the previous head's are copied as they are.
    let mut adjust: BTreeMap<String, i32> = BTreeMap::new();
    let (mut live_docs, mut live_total) = view.head().live();
    // The live documents of the merged segments leave the count below …
    for (k, s) in segs.iter().enumerate().skip(keep) {
        let dead = view.tombstones(k)?;
        for d in 0..s.len() {
            if !is_set(dead, d) {
                live_docs = live_docs.checked_sub(1).ok_or_else(negative)?;
                live_total = live_total.checked_sub(length(s, d)?).ok_or_else(negative)?;
            }
        }
    }
    // … and so do the ones this change deletes below.
    let tok = Tokenizer::new(config);
    let mut removed = Vec::new();
    // Per segment, the deleted documents whose text is not at hand.
    let mut unread: BTreeMap<usize, Vec<(u32, u32)>> = BTreeMap::new();
    for (kind, path) in changed.keys() {
        if let Some((k, info)) = view.locate(*kind, path)? {
            if k < keep && !info.removed {
                set_bits(&mut tombstones[ranges[k]..], info.first, info.count);
                for d in info.first..info.first + info.count {
                    live_docs = live_docs.checked_sub(1).ok_or_else(negative)?;
                    live_total = live_total.checked_sub(length(&segs[k], d)?).ok_or_else(negative)?;
                    let stored = segs[k].stored_in(info.path, d)?;
                    let new = changed.get(&(*kind, path.clone())).and_then(Option::as_ref);
                    match deleted_text(&stored, new, texts) {
                        Some(text) => {
                            for t in distinct_terms(&tok, &text) {
                                *adjust.entry(t).or_default() -= 1;
                            }
                        }
                        None => add_to_ranges(unread.entry(k).or_default(), d),
                    }
                }
            }
        }
    }
    for (k, docs) in &unread {
        for (t, n) in frequencies_in(&segs[*k], docs)? {
            *adjust.entry(t).or_default() -= n;
        }
    }
    let (sources, removals) = newest(view, changed, fresh, keep)?;
    for (kind, path) in removals {
        // A removal is recorded only over a segment that still names the path.
        let mut named = false;
        for s in below {
            named = named || s.find_unit(kind, &path)?.is_some();
        }
        if named {
            removed.push((kind, path));
        }
    }
    let info = DeltaInfo {
        stack: below.iter().map(|s| (s.id(), s.len())).collect(),
        tombstones,
        adjust: adjust.into_iter().collect(),
        below_live_docs: live_docs,
        below_live_total: live_total,
        removed,
    };
    merge(&sources, config, Some(info), view.delta())
}

/// The indexed text of a document being deleted: stored; or, for one with
/// a span, the text of the unit's new document with the same anchor and
/// bytes (the checksum and length of its span), with the old document's
/// aliases line (the only part not derived from those bytes: a moved or
/// unchanged frame or block); or read back by `texts`; `None` when none
/// of these has it.
fn deleted_text(stored: &Stored<'_>, new: Option<&Unit>, texts: &mut dyn DeletedText) -> Option<String> {
    let (span, aliases) = match stored.origin {
        Origin::Inline { text, .. } => return Some(text.to_owned()),
        Origin::Span { span, aliases, .. } => (span, aliases),
    };
    let same = new.and_then(|u| {
        let k = u.docs.partition_point(|d| d.anchor.as_str() < stored.anchor);
        let doc = u.docs.get(k).filter(|d| d.anchor == stored.anchor)?;
        let own = doc.text.strip_suffix(doc.aliases.as_str())?;
        let bytes = doc.span.map(|s| (s.len, s.hash));
        (bytes == Some((span.len, span.hash))).then(|| format!("{own}{aliases}"))
    });
    same.or_else(|| texts.text(stored))
}

/// Adds document `d` (ascending) to sorted ranges `lo..hi`.
fn add_to_ranges(ranges: &mut Vec<(u32, u32)>, d: u32) {
    match ranges.last_mut() {
        Some((_, hi)) if *hi == d => *hi = d + 1,
        _ => ranges.push((d, d + 1)),
    }
}

/// Per term of `seg`, how many of its postings fall in `ranges` (sorted,
/// disjoint document ranges): one pass over the term table, a binary
/// seek per term and range. The terms of documents whose text cannot be
/// read back, whatever happened to their files.
fn frequencies_in(seg: &Segment, ranges: &[(u32, u32)]) -> Result<Vec<(String, i32)>, Damaged> {
    let mut out = Vec::new();
    for t in 0..seg.term_count() as usize {
        let (term, p) = seg.term_at(t)?;
        let mut c = PostingCursor::new(p);
        let mut n = 0usize;
        for &(lo, hi) in ranges {
            c.seek(lo);
            while c.doc() < hi {
                n += 1;
                c.advance();
            }
        }
        if let Some(e) = c.take_failure() {
            return Err(e);
        }
        if n > 0 {
            let term = String::from_utf8(term.to_vec()).map_err(|_| Damaged("a term is not UTF-8".into()))?;
            out.push((term, i32::try_from(n).map_err(|_| negative())?));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
