//! The id and link index on disk as two layers, so that a save costs what
//! changed, not the size of the workspace: the base table
//! (`.scriptorium/topics.cache`), rewritten only when the delta has grown
//! to an eighth of it, and the delta (`.scriptorium/topics.delta`), the
//! table of the files changed since the base was written, rewritten at
//! every save (LSM-style, with one level).
//!
//! ```text
//! scriptorium topics delta 1\n
//! removed<TAB>path\n             one per file removed since the base
//! table\n
//! <a topics table of the changed files that exist>
//! ```
//!
//! The delta speaks for every path it names: their base lines are hidden.
//! Both layers are caches checked like the table always was: the loader
//! compares each file's hash with the revision's and re-reads what differs,
//! so a delta lost, stale (from before the base it now sits beside) or
//! damaged costs re-reading, never a wrong answer; a damaged delta is
//! ignored.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use scriptorium_source_archive::fsio;

use crate::topic_facts::FileFacts;
use crate::topic_table::{self, Damaged, FileRow, Sec, Table};

/// The id and link index's table (the base layer), relative to the
/// workspace root.
pub const TOPICS_CACHE: &str = ".scriptorium/topics.cache";
/// The delta over the id and link index's table: the files changed since
/// the table was written.
pub const TOPICS_DELTA: &str = ".scriptorium/topics.delta";

const MAGIC: &[u8] = b"scriptorium topics delta 1\n";
const REMOVED: &[u8] = b"removed\t";
const TABLE: &[u8] = b"table\n";
/// The delta is merged into the base once it holds this fraction of it.
const MERGE_FRACTION: usize = 8;

/// The base table with the delta over it.
#[derive(Debug)]
pub(crate) struct Layers {
    base: Table,
    delta: Table,
    /// Files removed since the base was written.
    removed: BTreeSet<String>,
    /// The paths the delta speaks for: its files and `removed`.
    over: BTreeSet<String>,
    /// The base on disk is not `base` (it was built in memory): the next
    /// save writes it whole.
    unsaved: bool,
}

fn empty() -> Table {
    Table::build(std::iter::empty())
}

/// The delta in `bytes`.
fn decode(bytes: &[u8]) -> Result<(Table, BTreeSet<String>), Damaged> {
    let mut rest = bytes.strip_prefix(MAGIC).ok_or(Damaged)?;
    let mut removed = BTreeSet::new();
    while let Some(line) = rest.strip_prefix(REMOVED) {
        let end = memchr::memchr(b'\n', line).ok_or(Damaged)?;
        removed.insert(topic_table::dec(&line[..end])?);
        rest = &line[end + 1..];
    }
    let table = Table::from_vec(rest.strip_prefix(TABLE).ok_or(Damaged)?.to_vec())?;
    Ok((table, removed))
}

impl Layers {
    /// The layers of workspace `root`; `Err` when the base is missing or
    /// damaged (a missing or damaged delta is no delta).
    pub(crate) fn open(root: &Path) -> Result<Layers, Damaged> {
        let base = Table::open(&root.join(TOPICS_CACHE))?;
        // Never written larger than the base (it is merged at an eighth of
        // it): a larger one is not read.
        let path = root.join(TOPICS_DELTA);
        let delta = std::fs::metadata(&path)
            .ok()
            .filter(|m| m.len() <= base.len() as u64)
            .and_then(|_| std::fs::read(&path).ok())
            .ok_or(Damaged)
            .and_then(|b| decode(&b));
        match delta {
            Ok((delta, removed)) => match Layers::of(base, delta, removed, false) {
                Ok(layers) => Ok(layers),
                Err(Damaged) => {
                    Layers::of(Table::open(&root.join(TOPICS_CACHE))?, empty(), BTreeSet::new(), false)
                }
            },
            Err(Damaged) => Layers::of(base, empty(), BTreeSet::new(), false),
        }
    }

    /// A base built in memory, with no delta.
    pub(crate) fn built(base: Table) -> Layers {
        Layers::of(base, empty(), BTreeSet::new(), true).expect("a built table is whole")
    }

    fn of(base: Table, delta: Table, removed: BTreeSet<String>, unsaved: bool) -> Result<Layers, Damaged> {
        let mut over: BTreeSet<String> = delta.files()?.into_keys().collect();
        over.extend(removed.iter().cloned());
        Ok(Layers { base, delta, removed, over, unsaved })
    }

    /// The files section of both layers, decoded.
    pub(crate) fn files(&self) -> Result<BTreeMap<String, FileRow>, Damaged> {
        let mut rows = self.base.files()?;
        rows.retain(|p, _| !self.over.contains(p));
        rows.extend(self.delta.files()?);
        Ok(rows)
    }

    /// The facts of `path`.
    pub(crate) fn facts(&self, path: &str) -> Result<Option<FileFacts>, Damaged> {
        if self.over.contains(path) {
            self.delta.facts(path)
        } else {
            self.base.facts(path)
        }
    }

    /// Every file's facts, in path order.
    pub(crate) fn all_facts(&self) -> Result<Vec<(String, FileFacts)>, Damaged> {
        let mut all: BTreeMap<String, FileFacts> =
            self.base.all_facts()?.into_iter().filter(|(p, _)| !self.over.contains(p)).collect();
        all.extend(self.delta.all_facts()?);
        Ok(all.into_iter().collect())
    }

    /// The files under `key` in section `sec`.
    pub(crate) fn paths(&self, sec: Sec, key: &str) -> Result<Vec<String>, Damaged> {
        let mut found = self.base.paths(sec, key)?;
        found.retain(|p| !self.over.contains(p));
        found.extend(self.delta.paths(sec, key)?);
        found.sort_unstable();
        Ok(found)
    }

    /// Writes the layers with `changed` made (each file as it now is;
    /// `None`: removed): the delta alone while it stays small, else the
    /// base with the delta merged in, and no delta. Returns whether it was
    /// written.
    pub(crate) fn save(
        &self,
        root: &Path,
        changed: &BTreeMap<String, Option<FileFacts>>,
    ) -> Result<bool, Damaged> {
        // The delta copied with the changed files' lines replaced.
        let mut olds = Vec::with_capacity(changed.len());
        for path in changed.keys() {
            olds.push(if self.over.contains(path) { self.delta.facts(path)? } else { None });
        }
        let delta_changes: Vec<_> = changed
            .iter()
            .zip(&olds)
            .map(|((p, new), old)| (p.as_str(), old.as_ref(), new.as_ref()))
            .collect();
        let delta = self.delta.merge(&delta_changes)?;
        let mut removed: BTreeSet<&str> = self.removed.iter().map(String::as_str).collect();
        for (path, facts) in changed {
            match facts {
                Some(_) => {
                    removed.remove(path.as_str());
                }
                // A file made and removed since the base hides nothing.
                None if self.base.facts(path)?.is_some() => {
                    removed.insert(path);
                }
                None => {}
            }
        }
        let mut bytes = MAGIC.to_vec();
        for path in &removed {
            bytes.extend_from_slice(REMOVED);
            topic_table::enc(path, &mut bytes);
            bytes.push(b'\n');
        }
        bytes.extend_from_slice(TABLE);
        delta.write_to(&mut bytes).map_err(|_| Damaged)?;
        if !self.unsaved && bytes.len() * MERGE_FRACTION < self.base.len() {
            let target = root.join(TOPICS_DELTA);
            return Ok(fsio::check_no_links(root, TOPICS_DELTA).is_ok()
                && fsio::replace_cache_file(root, &target, &bytes).is_ok());
        }
        // The base with every file the delta speaks for made as it is.
        let mut now: BTreeMap<&str, Option<FileFacts>> = BTreeMap::new();
        for path in &self.over {
            now.insert(path, self.delta.facts(path)?);
        }
        for (path, facts) in changed {
            now.insert(path, facts.clone());
        }
        let mut base_olds = Vec::with_capacity(now.len());
        for path in now.keys() {
            base_olds.push(self.base.facts(path)?);
        }
        let changes: Vec<_> =
            now.iter().zip(&base_olds).map(|((p, new), old)| (*p, old.as_ref(), new.as_ref())).collect();
        let merge = self.base.merge(&changes)?;
        let fill = |out: &mut dyn std::io::Write| merge.write_to(out);
        let written = fsio::check_no_links(root, TOPICS_CACHE).is_ok()
            && fsio::replace_cache_file_with(root, &root.join(TOPICS_CACHE), fill).is_ok();
        // A delta left beside the new base is stale: re-read, not wrong.
        Ok(written && remove_delta(root))
    }
}

/// Removes the delta of workspace `root`; true when there is none after.
fn remove_delta(root: &Path) -> bool {
    match std::fs::remove_file(root.join(TOPICS_DELTA)) {
        Ok(()) => true,
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}
