//! The workspace-wide index of block ids and links ([`TopicIndex`]): the
//! table on disk ([`crate::topic_table`]), read in place, with the delta of
//! the files changed since it was written ([`crate::topic_layers`]), plus
//! the files that changed since they were saved, kept in memory.
//!
//! Loading compares the layers' hash of every topic file with the
//! revision's (a step of the same class as the revision's walk) and re-reads
//! only the files whose hash differs. Lookups binary-search the layers and
//! consult the changed files; saving rewrites the delta with the changed
//! files' lines replaced, and merges it into the table once it has grown to
//! an eighth of it. A table that is missing or damaged is rebuilt from the
//! topic files, never believed and never reported.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::error::{Code, Error};
use crate::revision::Revision;
use crate::topic_facts::{facts_of, load as parse, FileFacts};
use crate::topic_layers::Layers;
use crate::topic_layers::TOPICS_CACHE;
use crate::topic_table::{Damaged, FileRow, Sec, Table};

/// What the index knows, replaced whole when a damaged table is rebuilt.
#[derive(Debug)]
struct State {
    /// The table as read (or as rebuilt), with its delta.
    table: Layers,
    /// Its files section.
    rows: BTreeMap<String, FileRow>,
    /// The files whose table lines are out of date, as they now are
    /// (`None`: removed).
    changed: BTreeMap<String, Option<FileFacts>>,
}

/// The workspace-wide index of block ids and links.
#[derive(Debug)]
pub struct TopicIndex {
    root: PathBuf,
    state: RefCell<State>,
    /// What changed files held before (since the table was written, or
    /// since this value was loaded for files the table did not describe),
    /// so that the files they shared ids with can be found.
    previous: BTreeMap<String, FileFacts>,
    /// A changed file's previous facts could not be read (the table was
    /// damaged): every scope is the whole workspace.
    previous_lost: bool,
    dirty: Cell<bool>,
}

/// Lowercase hex (once per topic file per load: kept cheap).
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 * bytes.len());
    for &b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

/// The revision's topic files with their hashes (hex), in path order.
fn topic_paths(rev: &Revision) -> Vec<(&str, String)> {
    rev.tree
        .iter()
        .filter_map(|(p, h)| {
            let p = std::str::from_utf8(p).ok()?;
            (p.starts_with("topics/") && p.ends_with(".md")).then(|| (p, hex(h)))
        })
        .collect()
}

/// The facts of the topic file at `path` as it is on disk.
fn read_facts(root: &Path, path: &str, sha: Option<String>) -> Result<FileFacts, Error> {
    let full = root.join(path);
    let bytes = std::fs::read(&full).map_err(|e| Error::io(&e, "cannot read", &full))?;
    let sha = sha.unwrap_or_else(|| hex(&<sha2::Sha256 as sha2::Digest>::digest(&bytes)));
    Ok(match parse(path, &bytes) {
        Ok(l) => facts_of(&l, sha),
        Err(_) => FileFacts::unreadable(sha),
    })
}

impl State {
    /// The table's facts of `path`, which must carry the hash its files
    /// line gives.
    fn listed(&self, path: &str) -> Result<Option<FileFacts>, Damaged> {
        let Some(row) = self.rows.get(path) else { return Ok(None) };
        match self.table.facts(path)? {
            Some(f) if f.sha256 == row.sha256 => Ok(Some(f)),
            _ => Err(Damaged),
        }
    }
}

fn state_of(table: Layers) -> Result<State, Damaged> {
    let rows = table.files()?;
    Ok(State { table, rows, changed: BTreeMap::new() })
}

/// The table of `files`, built from nothing.
fn built(files: &BTreeMap<String, FileFacts>) -> State {
    let table = Table::build(files.iter().map(|(p, f)| (p.as_str(), f)));
    state_of(Layers::built(table)).expect("a built table is whole")
}

impl TopicIndex {
    /// Loads the index and brings it up to date with `rev` (the revision
    /// just computed), re-reading only files whose hash changed.
    pub fn load(root: &Path, rev: &Revision) -> Result<TopicIndex, Error> {
        let live = topic_paths(rev);
        let mut idx = TopicIndex {
            root: root.to_owned(),
            state: RefCell::new(built(&BTreeMap::new())),
            previous: BTreeMap::new(),
            previous_lost: false,
            dirty: Cell::new(true),
        };
        if let Ok(state) = Layers::open(root).and_then(state_of) {
            *idx.state.get_mut() = state;
            if let Ok(read) = idx.catch_up(&live) {
                for (path, sha) in read {
                    let facts = read_facts(root, &path, Some(sha))?;
                    idx.state.get_mut().changed.insert(path, Some(facts));
                }
                return Ok(idx);
            }
            // The table lied about a file it lists: start again.
            idx.previous.clear();
        }
        // Missing or damaged: rebuilt from every topic file.
        let mut all = BTreeMap::new();
        for (path, sha) in live {
            all.insert(path.to_owned(), read_facts(root, path, Some(sha))?);
        }
        *idx.state.get_mut() = built(&all);
        idx.dirty.set(true);
        Ok(idx)
    }

    /// Marks the files the table lists but the revision lacks as removed,
    /// and returns those whose hash differs, or the table lacks, to be read.
    fn catch_up(&mut self, live: &[(&str, String)]) -> Result<Vec<(String, String)>, Damaged> {
        let state = self.state.get_mut();
        let live_set: BTreeSet<&str> = live.iter().map(|(p, _)| *p).collect();
        let gone: Vec<String> =
            state.rows.keys().filter(|p| !live_set.contains(p.as_str())).cloned().collect();
        let mut read = Vec::new();
        for (path, sha) in live {
            if state.rows.get(*path).is_none_or(|row| &row.sha256 != sha) {
                read.push(((*path).to_owned(), sha.clone()));
            }
        }
        for path in gone.iter().chain(read.iter().map(|(p, _)| p)) {
            if let Some(old) = state.listed(path)? {
                self.previous.insert(path.clone(), old);
            }
        }
        for path in gone {
            state.changed.insert(path, None);
        }
        self.dirty.set(!state.changed.is_empty() || !read.is_empty());
        Ok(read)
    }

    /// Runs `f` against the table; a damaged table is rebuilt from the
    /// topic files (which say what the index says they are) and `f` run
    /// again.
    fn lookup<T>(&self, f: impl Fn(&State) -> Result<T, Damaged>) -> Result<T, Error> {
        if let Ok(v) = f(&self.state.borrow()) {
            return Ok(v);
        }
        self.rebuild()?;
        f(&self.state.borrow())
            .map_err(|_| Error::new(Code::Io, "the id and link index was rebuilt and still cannot be read"))
    }

    /// Replaces the table with one built from the files as the index says
    /// they now are: the changed files' facts, the others read again.
    fn rebuild(&self) -> Result<(), Error> {
        let mut all = BTreeMap::new();
        {
            let state = self.state.borrow();
            for path in state.rows.keys().filter(|p| !state.changed.contains_key(*p)) {
                all.insert(path.clone(), read_facts(&self.root, path, None)?);
            }
            for (path, facts) in &state.changed {
                if let Some(facts) = facts {
                    all.insert(path.clone(), facts.clone());
                }
            }
        }
        *self.state.borrow_mut() = built(&all);
        self.dirty.set(true);
        Ok(())
    }

    /// The table's bytes with the changed files' lines replaced.
    /// Records the facts of a file as it now is (`None`: removed).
    pub fn set(&mut self, path: &str, facts: Option<FileFacts>) {
        let state = self.state.get_mut();
        let old = match state.changed.insert(path.to_owned(), facts) {
            Some(old) => Ok(old),
            None => state.listed(path),
        };
        match old {
            Ok(Some(old)) => {
                self.previous.entry(path.to_owned()).or_insert(old);
            }
            Ok(None) => {}
            Err(Damaged) => self.previous_lost = true,
        }
        self.dirty.set(true);
    }

    /// Writes the index back when it changed: the table's bytes with the
    /// changed files' lines replaced, atomically but without fsync (a
    /// cache: every line carries the hash it was read from, so a table lost
    /// or left stale costs re-reading, never a wrong answer). Best effort.
    pub fn save(&mut self, root: &Path) {
        if !self.dirty.get() {
            return;
        }
        let save = |idx: &TopicIndex| {
            let state = idx.state.borrow();
            state.table.save(root, &state.changed)
        };
        // A table that does not hold what it says is built again.
        let saved = save(self).or_else(|Damaged| match self.rebuild() {
            Ok(()) => save(self),
            Err(_) => Err(Damaged),
        });
        let written = match saved {
            Ok(written) => written,
            // Left for the next load to rebuild.
            Err(Damaged) => std::fs::remove_file(root.join(TOPICS_CACHE)).is_ok(),
        };
        if written {
            self.dirty.set(false);
        }
    }

    /// How many files the index holds in memory as changed since the
    /// layers on disk were written.
    #[cfg(test)]
    pub(crate) fn changed_since_saved(&self) -> usize {
        self.state.borrow().changed.len()
    }

    /// Whether the topic file `path` exists.
    pub fn contains(&self, path: &str) -> bool {
        let state = self.state.borrow();
        match state.changed.get(path) {
            Some(f) => f.is_some(),
            None => state.rows.contains_key(path),
        }
    }

    /// The facts of the topic file `path` as it is.
    pub fn facts(&self, path: &str) -> Result<Option<FileFacts>, Error> {
        self.lookup(|s| match s.changed.get(path) {
            Some(f) => Ok(f.clone()),
            None => s.listed(path),
        })
    }

    /// The number of topic files.
    pub fn file_count(&self) -> usize {
        let state = self.state.borrow();
        let listed = state.rows.keys().filter(|p| !state.changed.contains_key(*p)).count();
        listed + state.changed.values().filter(|f| f.is_some()).count()
    }

    /// The number of blocks with an id, over every topic file (an id held
    /// twice counts twice).
    pub fn block_count(&self) -> usize {
        let state = self.state.borrow();
        let listed: usize =
            state.rows.iter().filter(|(p, _)| !state.changed.contains_key(*p)).map(|(_, r)| r.blocks).sum();
        listed + state.changed.values().flatten().map(|f| f.ids.len()).sum::<usize>()
    }

    /// Every topic file with the SHA-256 (hex) of its bytes as it is, in
    /// path order (the table's per-file section, held in memory).
    pub fn hashes(&self) -> Vec<(String, String)> {
        let state = self.state.borrow();
        let mut all: BTreeMap<String, String> = state
            .rows
            .iter()
            .filter(|(p, _)| !state.changed.contains_key(*p))
            .map(|(p, r)| (p.clone(), r.sha256.clone()))
            .collect();
        all.extend(state.changed.iter().filter_map(|(p, f)| Some((p.clone(), f.as_ref()?.sha256.clone()))));
        all.into_iter().collect()
    }

    /// The topic files whose blocks link to topic file `path`, as they are.
    pub fn linking_to(&self, path: &str) -> Result<Vec<String>, Error> {
        self.lookup(|s| {
            let mut out: BTreeSet<String> =
                s.table.paths(Sec::Links, path)?.into_iter().filter(|p| !s.changed.contains_key(p)).collect();
            let now = s.changed.iter().filter_map(|(p, f)| Some((p, f.as_ref()?)));
            out.extend(now.filter(|(_, f)| f.links.iter().any(|l| l == path)).map(|(p, _)| p.clone()));
            Ok(out.into_iter().collect())
        })
    }

    /// Whether some topic file holds block id `id`.
    pub fn holds_block_id(&self, id: &str) -> Result<bool, Error> {
        self.current_under(Sec::Ids, id, |f| f.ids.iter().any(|i| i == id))
    }

    /// Whether some topic file's evidence cites source id `id` (text form).
    pub fn cites_source(&self, id: &str) -> Result<bool, Error> {
        self.current_under(Sec::Sources, id, |f| f.sources.iter().any(|s| s == id))
    }

    /// Whether a file as it now is has `key` in section `sec`.
    fn current_under(&self, sec: Sec, key: &str, has: impl Fn(&FileFacts) -> bool) -> Result<bool, Error> {
        self.lookup(|s| {
            if s.changed.values().flatten().any(&has) {
                return Ok(true);
            }
            Ok(s.table.paths(sec, key)?.iter().any(|p| !s.changed.contains_key(p)))
        })
    }

    /// The topic files whose evidence cites one of `sources` (before or
    /// after the changes recorded since loading).
    pub fn citing(&self, sources: &BTreeSet<String>) -> Result<BTreeSet<String>, Error> {
        let mut out = BTreeSet::new();
        if self.previous_lost {
            out.extend(self.everything()?);
            return Ok(out);
        }
        for src in sources {
            out.extend(self.lookup(|s| s.table.paths(Sec::Cites, src))?);
        }
        let state = self.state.borrow();
        let now = state.changed.iter().filter_map(|(p, f)| Some((p, f.as_ref()?)));
        for (path, f) in now.chain(&self.previous) {
            if f.cites.iter().any(|c| sources.contains(c)) {
                out.insert(path.clone());
            }
        }
        Ok(out)
    }

    /// Every topic file with its facts, in path order (reads the whole
    /// table: for the rare caller that needs the whole workspace).
    pub fn entries(&self) -> Result<impl Iterator<Item = (String, FileFacts)>, Error> {
        let all = self.lookup(|s| {
            let mut all: BTreeMap<String, FileFacts> =
                s.table.all_facts()?.into_iter().filter(|(p, _)| !s.changed.contains_key(p)).collect();
            all.extend(s.changed.iter().filter_map(|(p, f)| Some((p.clone(), f.clone()?))));
            Ok(all)
        })?;
        Ok(all.into_iter())
    }

    /// Every topic file, as it is or was before a recorded change.
    fn everything(&self) -> Result<BTreeSet<String>, Error> {
        let state = self.state.borrow();
        let mut all: BTreeSet<String> = state.rows.keys().cloned().collect();
        all.extend(state.changed.keys().cloned());
        all.extend(self.previous.keys().cloned());
        Ok(all)
    }

    /// The files a change to `dirty` can affect: `S`, the dirty files plus
    /// those linking to one and those sharing an id with one; and `L`, `S`
    /// plus what `S` links to and shares ids with. Files are taken as they
    /// are and as they were before the changes recorded since loading.
    pub fn scope(&self, dirty: &BTreeSet<String>) -> Result<(BTreeSet<String>, BTreeSet<String>), Error> {
        if self.previous_lost {
            let all = self.everything()?;
            return Ok((all.clone(), all));
        }
        Scope::new(self, &self.previous, true).run(dirty)
    }

    /// [`TopicIndex::scope`] with files taken as they are and as `then`
    /// says (the changed files as a change would leave them).
    pub(crate) fn scope_with(
        &self,
        dirty: &BTreeSet<String>,
        then: &BTreeMap<String, FileFacts>,
    ) -> Result<(BTreeSet<String>, BTreeSet<String>), Error> {
        Scope::new(self, then, false).run(dirty)
    }
}

impl scriptorium_bm25_index::workspace::TopicScope for TopicIndex {
    fn scope(&self, dirty: &BTreeSet<String>) -> Option<(BTreeSet<String>, BTreeSet<String>)> {
        // `None` re-checks every file: the safe answer when the index
        // cannot be read.
        TopicIndex::scope(self, dirty).ok()
    }
}

/// One scope computation: the table's answers, memoized, plus the facts
/// held in memory: the changed files as they are, and a second state of
/// some files (`then`).
struct Scope<'a> {
    index: &'a TopicIndex,
    then: &'a BTreeMap<String, FileFacts>,
    /// Whether the table's lines of the changed files count (they are what
    /// those files held before, which `then` is when it is the previous
    /// facts).
    stale: bool,
    /// Block id → files holding it, among the facts in memory.
    holders: HashMap<String, BTreeSet<String>>,
    /// Topic file → files linking to it, among the facts in memory.
    linkers: HashMap<String, BTreeSet<String>>,
    seen: HashMap<String, Vec<String>>,
}

impl<'a> Scope<'a> {
    fn new(index: &'a TopicIndex, then: &'a BTreeMap<String, FileFacts>, stale: bool) -> Scope<'a> {
        let mut holders: HashMap<String, BTreeSet<String>> = HashMap::new();
        let mut linkers: HashMap<String, BTreeSet<String>> = HashMap::new();
        let state = index.state.borrow();
        let now = state.changed.iter().filter_map(|(p, f)| Some((p, f.as_ref()?)));
        for (path, f) in now.chain(then) {
            for id in &f.ids {
                holders.entry(id.clone()).or_default().insert(path.clone());
            }
            for t in &f.links {
                linkers.entry(t.clone()).or_default().insert(path.clone());
            }
        }
        Scope { index, then, stale, holders, linkers, seen: HashMap::new() }
    }

    /// Both states of `path`: as it is, and as `then` says.
    fn facts(&self, path: &str) -> Result<Vec<FileFacts>, Error> {
        let mut out: Vec<FileFacts> = self.index.facts(path)?.into_iter().collect();
        out.extend(self.then.get(path).cloned());
        Ok(out)
    }

    /// The table's files under `key` in `sec` (without the changed files'
    /// stale lines unless they count).
    fn listed(&self, sec: Sec, key: &str) -> Result<Vec<String>, Error> {
        let stale = self.stale;
        self.index.lookup(|s| {
            let mut found = s.table.paths(sec, key)?;
            if !stale {
                found.retain(|p| !s.changed.contains_key(p));
            }
            Ok(found)
        })
    }

    fn holders_of(&mut self, id: &str, into: &mut BTreeSet<String>) -> Result<(), Error> {
        if !self.seen.contains_key(id) {
            let found = self.listed(Sec::Ids, id)?;
            self.seen.insert(id.to_owned(), found);
        }
        into.extend(self.seen[id].iter().cloned());
        into.extend(self.holders.get(id).into_iter().flatten().cloned());
        Ok(())
    }

    fn run(mut self, dirty: &BTreeSet<String>) -> Result<(BTreeSet<String>, BTreeSet<String>), Error> {
        let mut s: BTreeSet<String> = dirty.clone();
        for path in dirty {
            s.extend(self.listed(Sec::Links, path)?);
            s.extend(self.linkers.get(path).into_iter().flatten().cloned());
            for f in self.facts(path)? {
                for id in &f.ids {
                    self.holders_of(id, &mut s)?;
                }
            }
        }
        let mut l = s.clone();
        for path in &s {
            for f in self.facts(path)? {
                l.extend(f.links.iter().cloned());
                for id in &f.ids {
                    self.holders_of(id, &mut l)?;
                }
            }
        }
        Ok((s, l))
    }
}

#[cfg(test)]
mod tests;
