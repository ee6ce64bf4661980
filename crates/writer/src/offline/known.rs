//! What the workspace already holds, as the offline writer's plan asks
//! about it: whether a block id is taken, whether a turn is cited, and what
//! a speaker's paragraphs already say. Each answer follows the batch, not
//! the workspace:
//!
//! * block ids and cited sources are looked up in the transaction layer's
//!   id and link index (`.scriptorium/topics.cache`), which is already
//!   loaded for the commit; only the batch's candidates are asked about;
//! * what was said is kept per topic file in `.scriptorium/said.cache`
//!   (the [`said_keys`] of each file, with the SHA-256 of the bytes they
//!   were read from, the hash the revision and the id index use): a file
//!   is read only when its hash is not the one the cache holds, so a batch
//!   reads the files the write before it changed, not the workspace. A
//!   cache that is missing, torn or of another version is rebuilt; one
//!   that cannot be written costs reading again next time, never a wrong
//!   answer.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use scriptorium_scheduler::{Code, WriteFailure};
use scriptorium_transaction::validation::TopicIndex;

use super::text::said_keys;

/// The cache of what topic files say was said, relative to the workspace.
pub const SAID_CACHE: &str = ".scriptorium/said.cache";

const HEADER: &str = "scriptorium said cache 1";

/// What the workspace already holds, for the turns of one write.
#[derive(Debug, Clone, Default)]
pub struct Known<'a> {
    /// The id and link index (`None`: an empty workspace).
    pub index: Option<&'a TopicIndex>,
    /// Who said what, by (attribution or role as written, [`super::key`]),
    /// as topic files quote it (or say it not verbatim), with the source
    /// each such paragraph cites, for the speakers of the write (at least):
    /// the same speaker's sentence is not written again when a paragraph
    /// cites a record of that speaker, trusted or promoted unless this turn
    /// is pending.
    pub said: HashMap<(String, String), Vec<Option<String>>>,
}

impl Known<'_> {
    /// Of `sources` (text form), those some block cites.
    pub fn cited_among<'s>(&self, sources: impl IntoIterator<Item = &'s str>) -> HashSet<String> {
        let wanted: HashSet<&str> = sources.into_iter().collect();
        self.index.map_or_else(HashSet::new, |index| cited_among(index, &wanted))
    }

    /// Of the block ids `ids`, those some topic file holds.
    pub fn held_among<'s>(&self, ids: impl IntoIterator<Item = &'s str>) -> HashSet<String> {
        let wanted: HashSet<&str> = ids.into_iter().collect();
        self.index.map_or_else(HashSet::new, |index| held_among(index, &wanted))
    }
}

// The three lookups below are the only places that read the id index's
// layout: one pass over its entries, with no copies, until it answers
// `cites_source`, `holds_block_id` and the files with their hashes itself.

/// Of `wanted`, the source ids some topic file's evidence cites.
fn cited_among(index: &TopicIndex, wanted: &HashSet<&str>) -> HashSet<String> {
    let sources = index.files.values().flat_map(|f| f.sources.iter());
    sources.filter(|s| wanted.contains(s.as_str())).cloned().collect()
}

/// Of `wanted`, the block ids some topic file holds.
fn held_among(index: &TopicIndex, wanted: &HashSet<&str>) -> HashSet<String> {
    let ids = index.files.values().flat_map(|f| f.ids.iter());
    ids.filter(|id| wanted.contains(id.as_str())).cloned().collect()
}

/// Every topic file with the SHA-256 (hex) of its current bytes.
fn topic_files(index: &TopicIndex) -> impl Iterator<Item = (&str, &str)> {
    index.files.iter().map(|(path, facts)| (path.as_str(), facts.sha256.as_str()))
}

/// One file's line of the cache.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    path: String,
    sha256: String,
    /// (who, key, cited source) of each sentence.
    said: Vec<(String, String, Option<String>)>,
}

/// What the topic files of the workspace at `root` (as `index` lists them)
/// say `speakers` said: (who, key) → the sources the paragraphs cite. Reads
/// only the files whose hash `.scriptorium/said.cache` does not hold, and
/// writes the cache back when that changed it.
pub fn said_by(
    root: &Path,
    index: &TopicIndex,
    speakers: &HashSet<String>,
) -> Result<HashMap<(String, String), Vec<Option<String>>>, WriteFailure> {
    let mut cached = load(root);
    let mut fresh: Vec<Entry> = Vec::new();
    let mut dirty = false;
    for (path, sha256) in topic_files(index) {
        match cached.remove(path) {
            Some(e) if e.sha256 == sha256 => fresh.push(e),
            _ => {
                dirty = true;
                let said = said_keys(&read(root, path)?)
                    .into_iter()
                    .map(|s| (s.who, s.key, s.source))
                    .collect();
                fresh.push(Entry { path: path.to_owned(), sha256: sha256.to_owned(), said });
            }
        }
    }
    // Entries of files that are gone are dropped.
    dirty |= !cached.is_empty();
    if dirty {
        save(root, &fresh);
    }
    let mut out: HashMap<(String, String), Vec<Option<String>>> = HashMap::new();
    for (who, key, source) in fresh.into_iter().flat_map(|e| e.said) {
        if speakers.contains(&who) {
            out.entry((who, key)).or_default().push(source);
        }
    }
    Ok(out)
}

/// The cache's entries by path; empty when it is missing, torn or of
/// another version.
fn load(root: &Path) -> BTreeMap<String, Entry> {
    let Ok(text) = std::fs::read_to_string(root.join(SAID_CACHE)) else { return BTreeMap::new() };
    let mut lines = text.lines();
    if lines.next() != Some(HEADER) {
        return BTreeMap::new();
    }
    let mut out = BTreeMap::new();
    for line in lines {
        match serde_json::from_str::<Entry>(line) {
            Ok(e) => {
                out.insert(e.path.clone(), e);
            }
            Err(_) => return BTreeMap::new(),
        }
    }
    out
}

/// Writes the cache (atomically, not fsynced; best effort).
fn save(root: &Path, entries: &[Entry]) {
    let mut out = String::with_capacity(128 * entries.len() + 32);
    out.push_str(HEADER);
    out.push('\n');
    for e in entries {
        out.push_str(&serde_json::to_string(e).expect("a cache line serializes"));
        out.push('\n');
    }
    if let Err(e) =
        scriptorium_source_archive::fsio::replace_cache_file(root, &root.join(SAID_CACHE), out.as_bytes())
    {
        tracing::debug!(error = %e, "the said cache could not be written");
    }
}

/// The text of the topic file at `path` (empty when it vanished).
fn read(root: &Path, path: &str) -> Result<String, WriteFailure> {
    match std::fs::read_to_string(root.join(path)) {
        Ok(s) => Ok(s),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(WriteFailure::new(Code::Io, format!("cannot read {path}: {e}"))),
    }
}
