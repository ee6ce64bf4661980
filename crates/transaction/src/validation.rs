//! Validation of a staged change against the current workspace, at a cost
//! that follows the change (FORMAT.md §6).
//!
//! A change is refused iff the resulting workspace has a diagnostic the
//! current one lacks. Only these files can gain one: the changed topic
//! files, the files that link to a changed file, and the files that hold a
//! block id a changed file holds (before or after). Those are checked
//! twice — as they are, and as they would be — together with what they link
//! to and what shares their ids, so that every link and duplicate is judged
//! with the files it involves. Diagnostics are compared as multisets of
//! (code, path, block id, message), lines left out because edits move them;
//! a duplicate id is compared without its message (which names lines).
//!
//! Finding those files without reading the workspace needs a workspace-wide
//! index of block ids and links, kept in `.scriptorium/topics.cache`: one
//! entry per topic file with the SHA-256 of the bytes it was made from (the
//! same hash the revision uses), so a file edited by hand is re-read the
//! next time, and only it. Citations are resolved by reading just the cited
//! archive files.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use serde::{Deserialize, Serialize};

use scriptorium_source_archive::cited::{self, Cited};
use scriptorium_topic_markdown::diag::{Code as DiagCode, Diagnostic};
use scriptorium_topic_markdown::validate::{self, link_target, Loaded, Resolution, SourceResolver};

use crate::error::Error;
use crate::revision::Revision;

/// The id and link index, relative to the workspace root.
pub const TOPICS_CACHE: &str = ".scriptorium/topics.cache";

const CACHE_HEADER: &str = "scriptorium topics cache 3";

impl FileFacts {
    /// The facts of a file that does not parse: its hash, nothing else.
    pub fn unreadable(sha256: String) -> FileFacts {
        FileFacts { sha256, ids: Vec::new(), links: Vec::new(), cites: Vec::new(), sources: Vec::new() }
    }
}

/// What the index keeps of one topic file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileFacts {
    /// SHA-256 (hex) of the bytes these facts were read from.
    pub sha256: String,
    /// Its block ids, in file order.
    pub ids: Vec<String>,
    /// The topic files its blocks link to, sorted, each once.
    pub links: Vec<String>,
    /// The archive files its evidence cites, sorted, each once.
    #[serde(default)]
    pub cites: Vec<String>,
    /// The source ids its evidence cites (text form), sorted, each once.
    #[serde(default)]
    pub sources: Vec<String>,
}

#[derive(Serialize, Deserialize)]
struct CacheLine {
    path: String,
    #[serde(flatten)]
    facts: FileFacts,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The facts of a parsed topic file.
pub fn facts_of(loaded: &Loaded, sha256: String) -> FileFacts {
    let ids = loaded.file.blocks.iter().filter_map(|b| b.id.clone()).collect();
    let mut links = BTreeSet::new();
    for b in &loaded.file.blocks {
        for (_, l) in &b.links {
            if let Ok(Some(t)) = link_target(&loaded.path, l) {
                links.insert(t.path);
            }
        }
    }
    let mut cites = BTreeSet::new();
    let mut sources = BTreeSet::new();
    for def in &loaded.file.definitions {
        if let Some(Ok(ev)) = &def.evidence {
            for src in &ev.sources {
                sources.insert(src.id.clone());
                if let Some(p) = validate::join(validate::dir_of(&loaded.path), &src.path) {
                    cites.insert(p);
                }
            }
        }
    }
    FileFacts {
        sha256,
        ids,
        links: links.into_iter().collect(),
        cites: cites.into_iter().collect(),
        sources: sources.into_iter().collect(),
    }
}

/// Parses topic file bytes: `Err` with a `BAD_ENCODING` diagnostic when
/// they are not UTF-8.
pub fn load(path: &str, bytes: &[u8]) -> Result<Loaded, Diagnostic> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(Loaded::parse(path, text)),
        Err(e) => Err(Diagnostic {
            code: DiagCode::BadEncoding,
            path: path.to_owned(),
            line: 1,
            block_id: None,
            message: format!("the file is not valid UTF-8 ({e})"),
        }),
    }
}

/// The workspace-wide index of block ids and links.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TopicIndex {
    /// Facts per topic file path.
    pub files: BTreeMap<String, FileFacts>,
    /// What changed files held before (since this value was loaded), so
    /// that the files they shared ids with can be found.
    pub previous: BTreeMap<String, FileFacts>,
    dirty: bool,
}

fn topic_paths(rev: &Revision) -> impl Iterator<Item = (&str, &[u8; 32])> {
    rev.tree.iter().filter_map(|(p, h)| {
        let p = std::str::from_utf8(p).ok()?;
        (p.starts_with("topics/") && p.ends_with(".md")).then_some((p, h))
    })
}

impl TopicIndex {
    /// Loads the index and brings it up to date with `rev` (the revision
    /// just computed), re-reading only files whose hash changed.
    pub fn load(root: &Path, rev: &Revision) -> Result<TopicIndex, Error> {
        let mut idx = TopicIndex::default();
        if let Ok(text) = std::fs::read_to_string(root.join(TOPICS_CACHE)) {
            let mut lines = text.lines();
            if lines.next() == Some(CACHE_HEADER) {
                for line in lines {
                    match serde_json::from_str::<CacheLine>(line) {
                        Ok(l) => {
                            idx.files.insert(l.path, l.facts);
                        }
                        Err(_) => {
                            idx.files.clear();
                            break;
                        }
                    }
                }
            }
        }
        let live: BTreeMap<&str, String> = topic_paths(rev).map(|(p, h)| (p, hex(h))).collect();
        let gone: Vec<String> =
            idx.files.keys().filter(|p| !live.contains_key(p.as_str())).cloned().collect();
        for p in gone {
            if let Some(old) = idx.files.remove(&p) {
                idx.previous.insert(p, old);
                idx.dirty = true;
            }
        }
        for (path, sha) in live {
            match idx.files.get(path) {
                Some(f) if f.sha256 == sha => continue,
                Some(f) => {
                    idx.previous.insert(path.to_owned(), f.clone());
                }
                None => {}
            }
            let full = root.join(path);
            let bytes = std::fs::read(&full).map_err(|e| Error::io(&e, "cannot read", &full))?;
            let facts = match load(path, &bytes) {
                Ok(l) => facts_of(&l, sha),
                Err(_) => FileFacts::unreadable(sha),
            };
            idx.files.insert(path.to_owned(), facts);
            idx.dirty = true;
        }
        Ok(idx)
    }

    /// Records the facts of a file as it now is (`None`: removed).
    pub fn set(&mut self, path: &str, facts: Option<FileFacts>) {
        let old = match facts {
            Some(f) => self.files.insert(path.to_owned(), f),
            None => self.files.remove(path),
        };
        if let Some(old) = old {
            self.previous.entry(path.to_owned()).or_insert(old);
        }
        self.dirty = true;
    }

    /// Writes the index back when it changed (best effort: an index that
    /// cannot be written costs re-reading next time, never a wrong answer,
    /// since every entry carries the hash it was read from).
    pub fn save(&mut self, root: &Path) {
        if !self.dirty {
            return;
        }
        let mut out = String::with_capacity(64 * self.files.len() + 32);
        out.push_str(CACHE_HEADER);
        out.push('\n');
        for (path, facts) in &self.files {
            let line = CacheLine { path: path.clone(), facts: facts.clone() };
            out.push_str(&serde_json::to_string(&line).expect("a cache line serializes"));
            out.push('\n');
        }
        if scriptorium_source_archive::fsio::replace_file(root, &root.join(TOPICS_CACHE), out.as_bytes())
            .is_ok()
        {
            self.dirty = false;
        }
    }
}

/// Who holds each block id and who links to each file, over some sets of
/// file facts (built once per commit: it reads the whole id and link index).
#[derive(Debug)]
pub struct Maps<'a> {
    sets: Vec<&'a BTreeMap<String, FileFacts>>,
    holders: HashMap<&'a str, BTreeSet<&'a str>>,
    linkers: HashMap<&'a str, BTreeSet<&'a str>>,
}

impl<'a> Maps<'a> {
    /// The maps of the facts in `sets` (e.g. the current index, and the
    /// files' facts before or after a change).
    pub fn new(sets: &[&'a BTreeMap<String, FileFacts>]) -> Maps<'a> {
        let mut holders: HashMap<&str, BTreeSet<&str>> = HashMap::new();
        let mut linkers: HashMap<&str, BTreeSet<&str>> = HashMap::new();
        for m in sets {
            for (path, f) in m.iter() {
                for id in &f.ids {
                    holders.entry(id.as_str()).or_default().insert(path.as_str());
                }
                for t in &f.links {
                    linkers.entry(t.as_str()).or_default().insert(path.as_str());
                }
            }
        }
        Maps { sets: sets.to_vec(), holders, linkers }
    }

    /// The files whose blocks link to topic file `path`.
    pub fn linking_to(&self, path: &str) -> Vec<String> {
        self.linkers.get(path).into_iter().flatten().map(|l| (*l).to_owned()).collect()
    }

    fn facts_of(&self, p: &str) -> impl Iterator<Item = &'a FileFacts> + '_ {
        let p = p.to_owned();
        self.sets.iter().filter_map(move |m| m.get(&p))
    }

    /// The files a change to `dirty` can affect: `S`, the dirty files plus
    /// those linking to one and those sharing an id with one; and `L`, `S`
    /// plus what `S` links to and shares ids with.
    pub fn scope(&self, dirty: &BTreeSet<String>) -> (BTreeSet<String>, BTreeSet<String>) {
        let mut s: BTreeSet<String> = dirty.clone();
        for path in dirty {
            for l in self.linkers.get(path.as_str()).into_iter().flatten() {
                s.insert((*l).to_owned());
            }
            for f in self.facts_of(path) {
                for id in &f.ids {
                    for h in self.holders.get(id.as_str()).into_iter().flatten() {
                        s.insert((*h).to_owned());
                    }
                }
            }
        }
        let mut l = s.clone();
        for path in &s {
            for f in self.facts_of(path) {
                l.extend(f.links.iter().cloned());
                for id in &f.ids {
                    for h in self.holders.get(id.as_str()).into_iter().flatten() {
                        l.insert((*h).to_owned());
                    }
                }
            }
        }
        (s, l)
    }
}

/// [`Maps::scope`] over `sets`, building the maps.
pub fn scope(
    sets: &[&BTreeMap<String, FileFacts>],
    dirty: &BTreeSet<String>,
) -> (BTreeSet<String>, BTreeSet<String>) {
    Maps::new(sets).scope(dirty)
}

impl TopicIndex {
    /// The topic files whose evidence cites one of `sources` (before or
    /// after the changes recorded since loading).
    pub fn citing(&self, sources: &BTreeSet<String>) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for m in [&self.files, &self.previous] {
            for (path, f) in m {
                if f.cites.iter().any(|c| sources.contains(c)) {
                    out.insert(path.clone());
                }
            }
        }
        out
    }
}

impl scriptorium_bm25_index::workspace::TopicScope for Maps<'_> {
    fn scope(&self, dirty: &BTreeSet<String>) -> Option<(BTreeSet<String>, BTreeSet<String>)> {
        Some(Maps::scope(self, dirty))
    }
}

type Records = HashMap<String, Cited>;

/// The records of the archive files read so far: path → anchor → record
/// (pending as archived). Shared by the resolvers of one validation, so a
/// file both states cite is parsed once.
pub type FileRecords = RefCell<HashMap<String, Records>>;

/// Resolves citations by reading only the cited archive files, from the
/// staged bytes when the change writes them.
#[derive(Debug)]
pub struct Sources<'a> {
    root: &'a Path,
    staged: &'a HashMap<String, Vec<u8>>,
    promoted: &'a BTreeSet<String>,
    read: &'a FileRecords,
    staged_read: FileRecords,
}

impl<'a> Sources<'a> {
    /// A resolver over workspace `root`, with `staged` archive files
    /// (path → new bytes), the promoted ids, and a cache of files read
    /// from disk (shareable between resolvers of the same workspace).
    pub fn new(
        root: &'a Path,
        staged: &'a HashMap<String, Vec<u8>>,
        promoted: &'a BTreeSet<String>,
        read: &'a FileRecords,
    ) -> Self {
        Sources { root, staged, promoted, read, staged_read: RefCell::new(HashMap::new()) }
    }

    /// The record at `path#anchor` when its id is `source_id`, with its
    /// trust after promotions.
    fn find<T>(
        &self,
        source_id: &str,
        path: &str,
        anchor: &str,
        f: impl FnOnce(&Cited, bool) -> T,
    ) -> Option<T> {
        let (cache, fresh) = match self.staged.get(path) {
            Some(bytes) => (&self.staged_read, Some(bytes)),
            None => (self.read, None),
        };
        let mut files = cache.borrow_mut();
        let records = files.entry(path.to_owned()).or_insert_with(|| match fresh {
            Some(bytes) => cited::by_anchor(path, bytes),
            None => cited::read(self.root, path),
        });
        let c = records.get(anchor).filter(|c| c.source_id == source_id)?;
        Some(f(c, c.pending && !self.promoted.contains(source_id)))
    }
}

impl SourceResolver for Sources<'_> {
    fn resolve(&self, source_id: &str, path: &str, anchor: &str) -> Resolution {
        match self.find(source_id, path, anchor, |_, pending| pending) {
            Some(true) => Resolution::Pending,
            Some(false) => Resolution::Trusted,
            None => Resolution::Unknown,
        }
    }

    fn content(&self, source_id: &str, path: &str, anchor: &str) -> Option<Cow<'_, str>> {
        self.find(source_id, path, anchor, |c, _| Cow::Owned(c.content.clone()))
    }
}

/// The comparison key of a diagnostic (see the module documentation).
fn key(d: &Diagnostic) -> (DiagCode, String, Option<String>, String) {
    let message = if d.code == DiagCode::DuplicateBlockId { String::new() } else { d.message.clone() };
    (d.code, d.path.clone(), d.block_id.clone(), message)
}

/// The outcome of validating a change.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Diagnostics the change would add (empty: accepted).
    pub added: Vec<Diagnostic>,
    /// Topic files checked (both states counted once).
    pub files_checked: usize,
    /// Facts of every changed topic file as it will be (`None`: removed).
    pub facts: Vec<(String, Option<FileFacts>)>,
}

/// Validates changing the topic files in `changes` (path → new bytes,
/// `None` removes) with the archive files in `staged`, against the current
/// workspace described by `index`.
pub fn validate(
    root: &Path,
    index: &TopicIndex,
    changes: &BTreeMap<String, Option<Vec<u8>>>,
    staged: &HashMap<String, Vec<u8>>,
    promoted: &BTreeSet<String>,
) -> Result<Outcome, Error> {
    let mut out = Outcome::default();
    if changes.is_empty() {
        return Ok(out);
    }
    // The changed files as they will be.
    let mut new_loaded: BTreeMap<String, Result<Loaded, Diagnostic>> = BTreeMap::new();
    for (path, bytes) in changes {
        if let Some(b) = bytes {
            let l = load(path, b);
            let sha = hex(&<sha2::Sha256 as sha2::Digest>::digest(b));
            let facts = match &l {
                Ok(l) => facts_of(l, sha),
                Err(_) => FileFacts::unreadable(sha),
            };
            out.facts.push((path.clone(), Some(facts)));
            new_loaded.insert(path.clone(), l);
        } else {
            out.facts.push((path.clone(), None));
        }
    }
    let new_facts: BTreeMap<String, FileFacts> =
        out.facts.iter().filter_map(|(p, f)| f.clone().map(|f| (p.clone(), f))).collect();
    let dirty: BTreeSet<String> = changes.keys().cloned().collect();
    let (scope, load_set) = scope(&[&index.files, &new_facts], &dirty);
    let mut before: Vec<Loaded> = Vec::new();
    let mut after: Vec<Loaded> = Vec::new();
    let mut diag_before: Vec<Diagnostic> = Vec::new();
    let mut diag_after: Vec<Diagnostic> = Vec::new();
    for path in &load_set {
        let exists_now = index.files.contains_key(path);
        if exists_now {
            let full = root.join(path);
            let bytes = std::fs::read(&full).map_err(|e| Error::io(&e, "cannot read", &full))?;
            match load(path, &bytes) {
                Ok(l) => before.push(l),
                Err(d) => diag_before.push(d),
            }
        }
        match changes.get(path) {
            Some(Some(_)) => match new_loaded.remove(path).expect("every new file was parsed") {
                Ok(l) => after.push(l),
                Err(d) => diag_after.push(d),
            },
            Some(None) => {}
            None => {
                if exists_now {
                    if let Some(l) = before.iter().find(|l| &l.path == path) {
                        after.push(l.clone());
                    } else if let Some(d) = diag_before.iter().find(|d| &d.path == path) {
                        diag_after.push(d.clone());
                    }
                }
            }
        }
    }
    out.files_checked = load_set.len();
    let no_staging = HashMap::new();
    let read = FileRecords::default();
    let now_sources = Sources::new(root, &no_staging, promoted, &read);
    let new_sources = Sources::new(root, staged, promoted, &read);
    diag_before.extend(validate::check(&before, &now_sources).diagnostics);
    diag_after.extend(validate::check(&after, &new_sources).diagnostics);
    let mut counts: HashMap<_, i64> = HashMap::new();
    for d in diag_before.iter().filter(|d| scope.contains(&d.path)) {
        *counts.entry(key(d)).or_default() += 1;
    }
    for d in diag_after.iter().filter(|d| scope.contains(&d.path)) {
        *counts.entry(key(d)).or_default() -= 1;
    }
    let mut added: Vec<Diagnostic> = diag_after
        .into_iter()
        .filter(|d| scope.contains(&d.path) && counts.get(&key(d)).is_some_and(|&c| c < 0))
        .collect();
    added.sort_by(|a, b| (&a.path, a.line, a.code).cmp(&(&b.path, b.line, b.code)));
    added.dedup();
    out.added = added;
    Ok(out)
}
