//! Folding changed files into the index: which files changed (by their
//! stamps, or by a writer's word), which units they and their dependants
//! make anew, and the refreshed segment, not yet written.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use scriptorium_source_archive::{fsio, trust, Error, SourceId};

use super::documents::{legacy_unit, source_parts, topic_units, v2_unit, Sources};
use super::files::{recorded_revision, reflected_promotions};
use super::listing::{list_files, listing_after, read, Listed, Listing};
use super::{same_file, Action, Commit, Report, TopicScope};
use crate::delta::{self, Change, Refreshed};
use crate::search::View;
use crate::segment::{Damaged, Document, Kind, Stamp, Unit, UnitInfo};

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
    let index = Index::new(root, view, &indexed, &listing);
    let mut work = Work::default();
    index.find_changed(&mut work)?;
    index.reread_promotions(&promoted, &reflected, &mut work.changed);
    let gone = index.gone();
    if work.changed.is_empty() && gone.is_empty() && work.settled.is_empty() {
        return Ok(if promoted != reflected { Folded::Promotions(promoted) } else { Folded::Nothing });
    }
    let mut sources = Sources { fresh: HashMap::new(), gone: HashSet::new(), old: Some(view) };
    for (k, p) in &gone {
        if *k == Kind::Source {
            sources.gone.insert(p.clone());
        }
    }
    let mut touched_sources: BTreeSet<String> = sources.gone.iter().cloned().collect();
    index.fold_v2(&mut work, &promoted, &mut sources, &mut touched_sources)?;
    index.fold_legacy(&mut work, &mut sources, &mut touched_sources)?;
    let mut changes: Vec<Change> = Vec::new();
    index.fold_topics(scope, &mut work, &gone, &touched_sources, &sources, &mut changes)?;
    changes.extend(sources.fresh.into_values().map(Change::Put));
    index.record_settled(work.settled, &mut changes)?;
    changes.extend(gone.into_iter().map(|(k, p)| Change::Remove(k, p)));
    let units_changed = changes.len();
    let refreshed = delta::refresh_reading(view, changes, &mut super::reread::Files::whole(root))?;
    let action = match refreshed {
        Refreshed::Delta(_) => Action::Refreshed,
        Refreshed::Base(_) => Action::Merged,
    };
    let report = Report::of_work(action, work.reads.files_read, units_changed);
    Ok(Folded::Changes { refreshed, promoted, report })
}

/// The index as it is and the files as they are now.
struct Index<'a> {
    root: &'a Path,
    view: &'a View,
    /// The units of the index.
    indexed: &'a [UnitInfo<'a>],
    /// The same, by kind and path.
    old: HashMap<(Kind, &'a str), &'a UnitInfo<'a>>,
    /// The files of the workspace.
    listing: &'a Listing,
}

/// What folding has found and read so far.
#[derive(Default)]
struct Work<'a> {
    /// Files whose bytes may differ from what was indexed.
    changed: BTreeSet<(Kind, String)>,
    /// Files read within a timestamp tick of their last change that proved
    /// unchanged long enough after it: recorded again with the new read
    /// time, so they are not re-hashed on every open.
    settled: Vec<(&'a UnitInfo<'a>, Stamp)>,
    reads: Reads,
}

/// The files read so far.
#[derive(Default)]
struct Reads {
    /// How many.
    files_read: usize,
    /// Changed files already read (while checking their stamps).
    reread: HashMap<(Kind, String), (Vec<u8>, Stamp)>,
}

impl Reads {
    /// The bytes and stamp of the file `key`, read now unless they were
    /// already.
    fn take(&mut self, root: &Path, key: &(Kind, String), listed: Listed) -> Result<(Vec<u8>, Stamp), Error> {
        match self.reread.remove(key) {
            Some(x) => Ok(x),
            None => {
                self.files_read += 1;
                read(root, &key.1, listed)
            }
        }
    }
}

impl<'a> Index<'a> {
    fn new(root: &'a Path, view: &'a View, indexed: &'a [UnitInfo<'a>], listing: &'a Listing) -> Index<'a> {
        let mut old: HashMap<(Kind, &str), &UnitInfo<'_>> = HashMap::new();
        for u in indexed {
            old.insert((u.kind, u.path), u);
        }
        Index { root, view, indexed, old, listing }
    }

    /// Compares every listed file with its unit: new files and files whose
    /// listing differs from their stamp changed; a file changed within a
    /// timestamp tick of its reading is read and compared by hash.
    fn find_changed(&self, work: &mut Work<'a>) -> Result<(), Error> {
        for (key, listed) in self.listing {
            match self.old.get(&(key.0, key.1.as_str())) {
                Some(&u) if listed.matches(&u.stamp) => {
                    if listed.latest() >= u.stamp.read - fsio::racy_window(listed.modified) {
                        let (bytes, stamp) = read(self.root, &key.1, *listed)?;
                        work.reads.files_read += 1;
                        if stamp.hash != u.stamp.hash {
                            work.changed.insert(key.clone());
                            work.reads.reread.insert(key.clone(), (bytes, stamp));
                        } else if listed.latest() < stamp.read - fsio::racy_window(listed.modified) {
                            work.settled.push((u, stamp));
                        }
                    }
                }
                _ => {
                    work.changed.insert(key.clone());
                }
            }
        }
        Ok(())
    }

    /// Records promoted (or, after a hand edit of the audit log, demoted)
    /// since the index was written: their files are read again.
    fn reread_promotions(
        &self,
        promoted: &BTreeSet<String>,
        reflected: &BTreeSet<String>,
        changed: &mut BTreeSet<(Kind, String)>,
    ) {
        for id in promoted.symmetric_difference(reflected) {
            if let Ok(id) = SourceId::parse(id) {
                let key = (Kind::Source, id.v2_path());
                if self.listing.contains_key(&key) {
                    changed.insert(key);
                }
            }
        }
    }

    /// The indexed files that are no longer listed.
    fn gone(&self) -> Vec<(Kind, String)> {
        self.indexed
            .iter()
            .filter(|u| !self.listing.contains_key(&(u.kind, u.path.to_owned())))
            .map(|u| (u.kind, u.path.to_owned()))
            .collect()
    }

    /// The changed v2 files as fresh units (first: legacy shadowing and
    /// topic citations look them up).
    fn fold_v2(
        &self,
        work: &mut Work<'a>,
        promoted: &BTreeSet<String>,
        sources: &mut Sources<'_>,
        touched_sources: &mut BTreeSet<String>,
    ) -> Result<(), Error> {
        let v2 =
            work.changed.iter().filter(|(k, p)| *k == Kind::Source && source_parts(p).is_some_and(|x| x.2));
        for key in v2 {
            let (bytes, stamp) = work.reads.take(self.root, key, self.listing[key])?;
            let mut unit = v2_unit(&key.1, &bytes, stamp, promoted);
            unit.docs.sort_by(|a, b| a.anchor.cmp(&b.anchor));
            touched_sources.insert(key.1.clone());
            sources.fresh.insert(key.1.clone(), unit);
        }
        Ok(())
    }

    /// The legacy files that changed, or whose v2 files did, as fresh
    /// units.
    fn fold_legacy(
        &self,
        work: &mut Work<'a>,
        sources: &mut Sources<'_>,
        touched_sources: &mut BTreeSet<String>,
    ) -> Result<(), RefreshError> {
        let mut legacy_keys: BTreeSet<(Kind, String)> = work
            .changed
            .iter()
            .filter(|(k, p)| *k == Kind::Source && source_parts(p).is_some_and(|x| !x.2))
            .cloned()
            .collect();
        for u in self.indexed {
            if u.kind == Kind::Source && u.deps.iter().any(|d| touched_sources.contains(*d)) {
                let key = (u.kind, u.path.to_owned());
                if self.listing.contains_key(&key) {
                    legacy_keys.insert(key);
                }
            }
        }
        let mut legacy_units = Vec::new();
        for key in &legacy_keys {
            let (bytes, stamp) = work.reads.take(self.root, key, self.listing[key])?;
            legacy_units.push(legacy_unit(&key.1, &bytes, stamp, sources)?);
            touched_sources.insert(key.1.clone());
        }
        for unit in legacy_units {
            sources.fresh.insert(unit.path.clone(), unit);
        }
        Ok(())
    }

    /// When a topic file changed or went, or a file a topic cites did: the
    /// topic units to put (those in `scope`, and only those that differ
    /// from the index).
    fn fold_topics(
        &self,
        scope: Option<&dyn TopicScope>,
        work: &mut Work<'a>,
        gone: &[(Kind, String)],
        touched_sources: &BTreeSet<String>,
        sources: &Sources<'_>,
        changes: &mut Vec<Change>,
    ) -> Result<(), RefreshError> {
        let cites_touched = |u: &UnitInfo<'_>| u.deps.iter().any(|d| touched_sources.contains(*d));
        let topics_changed = work.changed.iter().any(|(k, _)| *k == Kind::Topic)
            || gone.iter().any(|(k, _)| *k == Kind::Topic);
        let cited = self.indexed.iter().any(|u| u.kind == Kind::Topic && cites_touched(u));
        if !topics_changed && !cited {
            return Ok(());
        }
        let mut dirty: BTreeSet<String> = work
            .changed
            .iter()
            .chain(gone.iter())
            .filter(|(k, _)| *k == Kind::Topic)
            .map(|(_, p)| p.clone())
            .collect();
        for u in self.indexed {
            if u.kind == Kind::Topic && cites_touched(u) {
                dirty.insert(u.path.to_owned());
            }
        }
        let scoped = scope.and_then(|s| s.scope(&dirty));
        let only = scoped.as_ref().map(|(_, l)| l);
        let tok = crate::tokenize::Tokenizer::new(self.view.base().config());
        let topics = topic_units(self.root, self.listing, sources, &mut work.reads.files_read, only, &tok)?;
        for unit in topics {
            if scoped.as_ref().is_some_and(|(s, _)| !s.contains(&unit.path)) {
                continue;
            }
            let same = match self.old.get(&(Kind::Topic, unit.path.as_str())) {
                Some(u) => {
                    same_file(&u.stamp, &unit.stamp)
                        && u.deps.iter().copied().eq(unit.deps.iter().map(String::as_str))
                        && self.view.unit_docs(u)?.into_iter().eq(unit.docs.iter().map(Document::stored_form))
                }
                None => false,
            };
            if !same {
                changes.push(Change::Put(unit));
            }
        }
        Ok(())
    }

    /// The settled files not put anew, put again with their new stamps.
    fn record_settled(
        &self,
        settled: Vec<(&UnitInfo<'_>, Stamp)>,
        changes: &mut Vec<Change>,
    ) -> Result<(), Damaged> {
        let put: HashSet<(Kind, String)> = changes
            .iter()
            .filter_map(|c| match c {
                Change::Put(u) => Some((u.kind, u.path.clone())),
                Change::Remove(..) => None,
            })
            .collect();
        for (u, stamp) in settled {
            if !put.contains(&(u.kind, u.path.to_owned())) {
                // The file holds the bytes it was indexed from: its
                // documents are read back to be indexed again.
                let docs = super::reread::unit_documents(self.root, self.view, u)?
                    .into_iter()
                    .map(|(d, _)| d)
                    .collect();
                let deps = u.deps.iter().map(|d| (*d).to_owned()).collect();
                changes.push(Change::Put(Unit { kind: u.kind, path: u.path.to_owned(), stamp, deps, docs }));
            }
        }
        Ok(())
    }
}
