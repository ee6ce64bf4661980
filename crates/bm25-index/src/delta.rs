//! Incremental refresh: a new delta from the current view and the units
//! that changed, costing in proportion to what changed since the base was
//! built, or a merged base when the delta has grown too large.

use std::collections::BTreeMap;

use crate::format::sec;
use crate::search::View;
use crate::segment::{build, distinct_terms, Damaged, DeltaInfo, Kind, Unit};
use crate::tokenize::Tokenizer;

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
    /// A new delta over the same base.
    Delta(Vec<u8>),
    /// The delta grew past the merge threshold: a new base, no delta.
    Base(Vec<u8>),
}

/// The delta is merged into a new base once it holds more documents (added
/// plus deleted) than this fraction of the base, and at least
/// [`MERGE_MIN`]; or more text (added plus deleted, in bytes) than this
/// fraction of the base's bytes, and at least [`MERGE_MIN_BYTES`]. Every
/// refresh rebuilds the delta from all that changed since the base, so
/// both bounds keep its cost a fraction of the workspace: a few huge
/// documents cannot make every later write pay for them again.
pub const MERGE_FRACTION: f64 = 0.125;
/// See [`MERGE_FRACTION`].
pub const MERGE_MIN: u64 = 4096;
/// See [`MERGE_FRACTION`].
pub const MERGE_MIN_BYTES: u64 = 4 << 20;

/// Applies `changes` to `view` (later changes to a path win).
pub fn refresh(view: &View, changes: Vec<Change>) -> Result<Refreshed, Damaged> {
    let base = view.base();
    let config = base.config();
    // Everything changed since the base: the old delta's units, then these.
    let mut changed: BTreeMap<(Kind, String), Option<Unit>> = BTreeMap::new();
    if let Some(d) = view.delta() {
        for u in 0..d.unit_count() {
            let info = d.unit(u)?;
            let key = (info.kind, info.path.to_owned());
            if info.removed {
                changed.insert(key, None);
            } else {
                changed.insert(key, Some(d.unit_with_docs(u)?));
            }
        }
    }
    for c in changes {
        match c {
            Change::Put(u) => changed.insert((u.kind, u.path.clone()), Some(u)),
            Change::Remove(k, p) => changed.insert((k, p), None),
        };
    }
    // Base units that the changes replace or remove.
    let mut base_units: BTreeMap<(Kind, &str), (u32, u32)> = BTreeMap::new();
    for u in 0..base.unit_count() {
        let info = base.unit(u)?;
        base_units.insert((info.kind, info.path), (info.first, info.count));
    }
    changed.retain(|(k, p), unit| unit.is_some() || base_units.contains_key(&(*k, p.as_str())));
    let mut tomb_ranges = Vec::new();
    for (k, p) in changed.keys() {
        if let Some(&r) = base_units.get(&(*k, p.as_str())) {
            tomb_ranges.push(r);
        }
    }
    let tombstoned: u64 = tomb_ranges.iter().map(|r| u64::from(r.1)).sum();
    let added: u64 = changed.values().flatten().map(|u| u.docs.len() as u64).sum();
    let limit = (f64::from(base.len()) * MERGE_FRACTION) as u64;
    let mut text_bytes: u64 =
        changed.values().flatten().flat_map(|u| &u.docs).map(|d| d.text.len() as u64).sum();
    for &(first, count) in &tomb_ranges {
        for d in first..first + count {
            text_bytes += base.stored(d)?.text.len() as u64;
        }
    }
    let byte_limit = (base.byte_len() as f64 * MERGE_FRACTION) as u64;
    if added + tombstoned > limit.max(MERGE_MIN) || text_bytes > byte_limit.max(MERGE_MIN_BYTES) {
        // Merge: every live base unit plus the changed ones, as one base.
        let mut units = Vec::new();
        for u in 0..base.unit_count() {
            let info = base.unit(u)?;
            if !changed.contains_key(&(info.kind, info.path.to_owned())) {
                units.push(base.unit_with_docs(u)?);
            }
        }
        units.extend(changed.into_values().flatten());
        return Ok(Refreshed::Base(build(units, config, None)));
    }
    let tok = Tokenizer::new(config);
    let lengths = base.section(sec::LENGTHS)?;
    let mut tombstones = vec![0u8; (base.len() as usize).div_ceil(8)];
    let mut adjust: BTreeMap<String, i32> = BTreeMap::new();
    let mut dead_total = 0u64;
    for (first, count) in tomb_ranges {
        for d in first..first + count {
            tombstones[d as usize / 8] |= 1 << (d % 8);
            let at = d as usize * 4;
            let len = lengths.get(at..at + 4).ok_or_else(|| Damaged("length out of range".into()))?;
            dead_total += u64::from(u32::from_le_bytes([len[0], len[1], len[2], len[3]]));
            for t in distinct_terms(&tok, base.stored(d)?.text) {
                *adjust.entry(t).or_default() -= 1;
            }
        }
    }
    let mut removed = Vec::new();
    let mut units = Vec::new();
    for ((k, p), u) in changed {
        match u {
            Some(u) => units.push(u),
            None => removed.push((k, p)),
        }
    }
    let info = DeltaInfo {
        base_id: base.id(),
        tombstones,
        adjust: adjust.into_iter().collect(),
        base_live_docs: base.len() - tombstoned as u32,
        base_live_total: base.total() - dead_total,
        removed,
    };
    Ok(Refreshed::Delta(build(units, config, Some(&info))))
}
