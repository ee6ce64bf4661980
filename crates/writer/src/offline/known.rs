//! What the workspace already holds, as the offline writer's plan asks
//! about it: whether a block id is taken, whether a turn is cited, and what
//! a speaker's paragraphs already say. Each answer follows the batch, not
//! the workspace:
//!
//! * block ids and cited sources are looked up in the transaction layer's
//!   id and link index (`.scriptorium/topics.cache`, read in place); only
//!   the batch's turns and the ids of the paragraphs it would add are asked
//!   about;
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

use scriptorium_scheduler::{Code, WriteFailure};
use scriptorium_transaction::validation::TopicIndex;

use super::text::said_keys;

/// The cache of what topic files say was said, relative to the workspace.
pub const SAID_CACHE: &str = ".scriptorium/said.cache";

const HEADER: &str = "scriptorium said cache 1";

/// Who said what: (attribution or role as written, [`super::key`]) → the
/// source each paragraph saying it cites.
pub type SaidBy = HashMap<(String, String), Vec<Option<String>>>;

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
    pub said: SaidBy,
}

impl Known<'_> {
    /// Of `sources` (text form), those some block cites.
    pub fn cited_among<'s>(
        &self,
        sources: impl IntoIterator<Item = &'s str>,
    ) -> Result<HashSet<String>, WriteFailure> {
        self.among(sources, TopicIndex::cites_source)
    }

    /// Of the block ids `ids`, those some topic file holds.
    pub fn held_among<'s>(
        &self,
        ids: impl IntoIterator<Item = &'s str>,
    ) -> Result<HashSet<String>, WriteFailure> {
        self.among(ids, TopicIndex::holds_block_id)
    }

    /// Of `items`, those for which the index answers `has`, each asked once.
    fn among<'s>(
        &self,
        items: impl IntoIterator<Item = &'s str>,
        has: impl Fn(&TopicIndex, &str) -> Result<bool, scriptorium_transaction::Error>,
    ) -> Result<HashSet<String>, WriteFailure> {
        let Some(index) = self.index else { return Ok(HashSet::new()) };
        let mut out = HashSet::new();
        for item in items.into_iter().collect::<HashSet<&str>>() {
            if has(index, item)? {
                out.insert(item.to_owned());
            }
        }
        Ok(out)
    }
}

/// What the topic files of the workspace at `root` (as `index` lists them)
/// say `speakers` said: (who, key) → the sources the paragraphs cite. Reads
/// only the files whose hash `.scriptorium/said.cache` does not hold, and
/// writes the cache back when that changed it; the entries of the other
/// files are copied as they are, and only the sentences of `speakers` are
/// decoded.
pub fn said_by(root: &Path, index: &TopicIndex, speakers: &HashSet<String>) -> Result<SaidBy, WriteFailure> {
    let text = std::fs::read_to_string(root.join(SAID_CACHE)).unwrap_or_default();
    let mut cached = entries(&text);
    let wanted: HashSet<String> = speakers.iter().map(|w| json_string(w)).collect();
    let mut out = SaidBy::new();
    let mut file = String::with_capacity(text.len() + 4096);
    file.push_str(HEADER);
    file.push('\n');
    let mut dirty = false;
    for (path, sha256) in index.hashes() {
        let (path, sha256) = (path.as_str(), sha256.as_str());
        let hit = cached.remove(path).filter(|(sha, _)| *sha == sha256);
        if let Some((block, said)) = hit.and_then(|(_, block)| Some((block, sentences(block, &wanted)?))) {
            file.push_str(block);
            for (who, key, source) in said {
                out.entry((who, key)).or_default().push(source);
            }
            continue;
        }
        dirty = true;
        let said = said_keys(&read(root, path)?);
        file.push_str(&format!("{}\t{sha256}\t{}\n", json_string(path), said.len()));
        for s in said {
            let source = s.source.as_deref().map_or_else(|| "null".to_owned(), json_string);
            file.push_str(&format!("\t{}\t{}\t{source}\n", json_string(&s.who), json_string(&s.key)));
            if speakers.contains(&s.who) {
                out.entry((s.who, s.key)).or_default().push(s.source);
            }
        }
    }
    // Entries of files that are gone are dropped.
    if dirty || !cached.is_empty() {
        if let Err(e) = scriptorium_source_archive::fsio::replace_cache_file(
            root,
            &root.join(SAID_CACHE),
            file.as_bytes(),
        ) {
            tracing::debug!(error = %e, "the said cache could not be written");
        }
    }
    Ok(out)
}

/// `s` as a JSON string: one line, no tab.
fn json_string(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// The cache's entries: path → (SHA-256, the entry's lines as they are:
/// its file line — the path as a JSON string, the hash and the number of
/// sentences, tab-separated — then one line per sentence, each opening with
/// a tab). Empty when the cache is missing, of another version, or torn
/// anywhere (an entry with another number of sentences than it says).
fn entries(text: &str) -> BTreeMap<String, (&str, &str)> {
    let mut out = BTreeMap::new();
    let Some(body) = text.strip_prefix(HEADER).and_then(|b| b.strip_prefix('\n')) else { return out };
    if !body.is_empty() && !body.ends_with('\n') {
        return out;
    }
    let mut at = 0;
    while at < body.len() {
        let rest = &body[at..];
        let mut end = rest.find('\n').map_or(rest.len(), |n| n + 1);
        let mut lines = 0;
        while rest[end..].starts_with('\t') {
            end += rest[end..].find('\n').map_or(rest.len() - end, |n| n + 1);
            lines += 1;
        }
        let block = &rest[..end];
        let mut head = block.lines().next().unwrap_or("").split('\t');
        let parsed = (|| {
            let path: String = serde_json::from_str(head.next()?).ok()?;
            let sha = head.next()?;
            let count: usize = head.next()?.parse().ok()?;
            let hex = sha.len() == 64 && sha.bytes().all(|b| b.is_ascii_hexdigit());
            (hex && count == lines && head.next().is_none()).then_some((path, sha))
        })();
        let Some((path, sha)) = parsed else { return BTreeMap::new() };
        out.insert(path, (sha, block));
        at += end;
    }
    out
}

/// The sentences of an entry (its lines after the first) whose speaker,
/// as a JSON string, is in `wanted`: (who, key, source); `None` when one
/// of them does not decode (the file is then read again).
fn sentences(block: &str, wanted: &HashSet<String>) -> Option<Vec<(String, String, Option<String>)>> {
    let mut out = Vec::new();
    for line in block.lines().skip(1) {
        let mut fields = line.strip_prefix('\t')?.split('\t');
        let who = fields.next()?;
        if !wanted.contains(who) {
            continue;
        }
        let key: String = serde_json::from_str(fields.next()?).ok()?;
        let source: Option<String> = serde_json::from_str(fields.next()?).ok()?;
        if fields.next().is_some() {
            return None;
        }
        out.push((serde_json::from_str(who).ok()?, key, source));
    }
    Some(out)
}

/// The text of the topic file at `path` (empty when it vanished).
fn read(root: &Path, path: &str) -> Result<String, WriteFailure> {
    match std::fs::read_to_string(root.join(path)) {
        Ok(s) => Ok(s),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(WriteFailure::new(Code::Io, format!("cannot read {path}: {e}"))),
    }
}
