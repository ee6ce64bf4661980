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
//! index of block ids and links ([`TopicIndex`]), kept in
//! `.scriptorium/topics.cache`: a table read in place, one entry per topic
//! file with the SHA-256 of the bytes it was made from (the same hash the
//! revision uses), so a file edited by hand is re-read the next time, and
//! only it. Citations are resolved by reading just the cited archive files.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use scriptorium_source_archive::cited::{self, Cited};
use scriptorium_topic_markdown::diag::{Code as DiagCode, Diagnostic};
use scriptorium_topic_markdown::validate::{self, Loaded, Resolution, SourceResolver};

use crate::error::Error;
pub use crate::topic_facts::{facts_of, load, FileFacts};
pub use crate::topic_index::TopicIndex;
pub use crate::topic_layers::{TOPICS_CACHE, TOPICS_DELTA};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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
    let (scope, load_set) = index.scope_with(&dirty, &new_facts)?;
    let mut before: Vec<Loaded> = Vec::new();
    let mut after: Vec<Loaded> = Vec::new();
    let mut diag_before: Vec<Diagnostic> = Vec::new();
    let mut diag_after: Vec<Diagnostic> = Vec::new();
    for path in &load_set {
        let exists_now = index.contains(path);
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
