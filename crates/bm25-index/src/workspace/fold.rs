//! Folding changed files into the index: which files changed (by their
//! stamps, or by a writer's word), which units they and their dependants
//! make anew, and the refreshed segment, not yet written.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use scriptorium_source_archive::{fsio, trust, Error, SourceId};

use super::documents::{legacy_unit, source_parts, topic_units, v2_unit, Sources};
use super::files::{recorded_revision, reflected_promotions};
use super::listing::{list_files, listing_after, read, Listed};
use super::{same_file, Action, Commit, Report, TopicScope};
use crate::delta::{self, Change, Refreshed};
use crate::search::View;
use crate::segment::{self, Damaged, Kind, Stamp, Unit};

/// What [`refresh`] found.
pub(super) enum Folded {
    /// The index is current.
    Nothing,
    /// The index is current, but the promotions it reflects are to be
    /// recorded again (none of their files is in the workspace).
    Promotions(BTreeSet<String>),
    /// The index with the changed files folded in, not yet written.
    Changes { refreshed: Refreshed, promoted: BTreeSet<String>, report: Report },
}

pub(super) enum RefreshError {
    Damaged(Damaged),
    Other(Error),
}

impl From<Damaged> for RefreshError {
    fn from(d: Damaged) -> RefreshError {
        RefreshError::Damaged(d)
    }
}

impl From<Error> for RefreshError {
    fn from(e: Error) -> RefreshError {
        RefreshError::Other(e)
    }
}

/// Folds changed files into the index, writing nothing.
pub(super) fn refresh(
    root: &Path,
    view: &View,
    scope: Option<&dyn TopicScope>,
    commit: Option<Commit<'_>>,
) -> Result<Folded, RefreshError> {
    let indexed = view.units()?;
    // A writer's word replaces the walk when the index describes the
    // revision its commit started from.
    let listing = match commit {
        Some(c) if recorded_revision(root).as_deref() == Some(c.before) => {
            listing_after(root, &indexed, c.changed)?
        }
        _ => list_files(root)?,
    };
    let promoted = trust::promoted(root)?;
    let reflected = reflected_promotions(root);
    let mut old: HashMap<(Kind, &str), &segment::UnitInfo<'_>> = HashMap::new();
    for u in &indexed {
        old.insert((u.kind, u.path), u);
    }
    let mut files_read = 0;
    // Files whose bytes may differ from what was indexed.
    let mut changed: BTreeSet<(Kind, String)> = BTreeSet::new();
    let mut reread: HashMap<(Kind, String), (Vec<u8>, Stamp)> = HashMap::new();
    // Files read within a timestamp tick of their last change that proved
    // unchanged long enough after it: recorded again with the new read time,
    // so they are not re-hashed on every open.
    let mut settled: Vec<(&segment::UnitInfo<'_>, Stamp)> = Vec::new();
    for (key, listed) in &listing {
        match old.get(&(key.0, key.1.as_str())) {
            Some(u) if listed.matches(&u.stamp) => {
                if listed.latest() >= u.stamp.read - fsio::racy_window(listed.modified) {
                    let (bytes, stamp) = read(root, &key.1, *listed)?;
                    files_read += 1;
                    if stamp.hash != u.stamp.hash {
                        changed.insert(key.clone());
                        reread.insert(key.clone(), (bytes, stamp));
                    } else if listed.latest() < stamp.read - fsio::racy_window(listed.modified) {
                        settled.push((u, stamp));
                    }
                }
            }
            _ => {
                changed.insert(key.clone());
            }
        }
    }
    // Records promoted (or, after a hand edit of the audit log, demoted)
    // since the index was written: their files are read again.
    for id in promoted.symmetric_difference(&reflected) {
        if let Ok(id) = SourceId::parse(id) {
            let key = (Kind::Source, id.v2_path());
            if listing.contains_key(&key) {
                changed.insert(key);
            }
        }
    }
    let gone: Vec<(Kind, String)> = indexed
        .iter()
        .filter(|u| !listing.contains_key(&(u.kind, u.path.to_owned())))
        .map(|u| (u.kind, u.path.to_owned()))
        .collect();
    if changed.is_empty() && gone.is_empty() && settled.is_empty() {
        return Ok(if promoted != reflected { Folded::Promotions(promoted) } else { Folded::Nothing });
    }
    let mut sources = Sources { fresh: HashMap::new(), gone: HashSet::new(), old: Some(view) };
    for (k, p) in &gone {
        if *k == Kind::Source {
            sources.gone.insert(p.clone());
        }
    }
    let mut take = |key: &(Kind, String), listed: Listed| -> Result<(Vec<u8>, Stamp), Error> {
        match reread.remove(key) {
            Some(x) => Ok(x),
            None => {
                files_read += 1;
                read(root, &key.1, listed)
            }
        }
    };
    // v2 files first: legacy shadowing and topic citations look them up.
    let mut touched_sources: BTreeSet<String> = sources.gone.iter().cloned().collect();
    for key in changed.iter().filter(|(k, p)| *k == Kind::Source && source_parts(p).is_some_and(|x| x.2)) {
        let (bytes, stamp) = take(key, listing[key])?;
        let mut unit = v2_unit(&key.1, &bytes, stamp, &promoted);
        unit.docs.sort_by(|a, b| a.anchor.cmp(&b.anchor));
        touched_sources.insert(key.1.clone());
        sources.fresh.insert(key.1.clone(), unit);
    }
    // Legacy files that changed, or whose v2 files did.
    let mut legacy_keys: BTreeSet<(Kind, String)> = changed
        .iter()
        .filter(|(k, p)| *k == Kind::Source && source_parts(p).is_some_and(|x| !x.2))
        .cloned()
        .collect();
    for u in &indexed {
        if u.kind == Kind::Source && u.deps.iter().any(|d| touched_sources.contains(*d)) {
            let key = (u.kind, u.path.to_owned());
            if listing.contains_key(&key) {
                legacy_keys.insert(key);
            }
        }
    }
    let mut legacy_units = Vec::new();
    for key in &legacy_keys {
        let (bytes, stamp) = take(key, listing[key])?;
        legacy_units.push(legacy_unit(&key.1, &bytes, stamp, &sources)?);
        touched_sources.insert(key.1.clone());
    }
    for unit in legacy_units {
        sources.fresh.insert(unit.path.clone(), unit);
    }
    let mut changes: Vec<Change> = Vec::new();
    let topics_changed =
        changed.iter().any(|(k, _)| *k == Kind::Topic) || gone.iter().any(|(k, _)| *k == Kind::Topic);
    let cited =
        indexed.iter().any(|u| u.kind == Kind::Topic && u.deps.iter().any(|d| touched_sources.contains(*d)));
    if topics_changed || cited {
        let mut dirty: BTreeSet<String> = changed
            .iter()
            .chain(gone.iter())
            .filter(|(k, _)| *k == Kind::Topic)
            .map(|(_, p)| p.clone())
            .collect();
        for u in &indexed {
            if u.kind == Kind::Topic && u.deps.iter().any(|d| touched_sources.contains(*d)) {
                dirty.insert(u.path.to_owned());
            }
        }
        let scoped = scope.and_then(|s| s.scope(&dirty));
        let topics = topic_units(root, &listing, &sources, &mut files_read, scoped.as_ref().map(|(_, l)| l))?;
        for unit in topics {
            if scoped.as_ref().is_some_and(|(s, _)| !s.contains(&unit.path)) {
                continue;
            }
            let same = match old.get(&(Kind::Topic, unit.path.as_str())) {
                Some(u) => {
                    same_file(&u.stamp, &unit.stamp)
                        && u.deps.iter().copied().eq(unit.deps.iter().map(String::as_str))
                        && view.unit_docs(u)? == unit.docs
                }
                None => false,
            };
            if !same {
                changes.push(Change::Put(unit));
            }
        }
    }
    changes.extend(sources.fresh.into_values().map(Change::Put));
    let put: HashSet<(Kind, String)> = changes
        .iter()
        .filter_map(|c| match c {
            Change::Put(u) => Some((u.kind, u.path.clone())),
            Change::Remove(..) => None,
        })
        .collect();
    for (u, stamp) in settled {
        if !put.contains(&(u.kind, u.path.to_owned())) {
            let docs = view.unit_docs(u)?;
            let deps = u.deps.iter().map(|d| (*d).to_owned()).collect();
            changes.push(Change::Put(Unit { kind: u.kind, path: u.path.to_owned(), stamp, deps, docs }));
        }
    }
    changes.extend(gone.into_iter().map(|(k, p)| Change::Remove(k, p)));
    let units_changed = changes.len();
    let refreshed = delta::refresh(view, changes)?;
    let action = match refreshed {
        Refreshed::Delta(_) => Action::Refreshed,
        Refreshed::Base(_) => Action::Merged,
    };
    let report = Report::of_work(action, files_read, units_changed);
    Ok(Folded::Changes { refreshed, promoted, report })
}
