//! Which conversations a dream pass takes, and which of their records.
//!
//! A conversation is an archive thread: one v2 file
//! `sources/<provider>/_v2/<thread>.md`, named `provider/thread` (both
//! PCT-encoded, as in its records' source ids). Only trusted records count
//! (not pending, or promoted); legacy files are not conversations. The
//! *unreflected* records of a conversation are the trusted records after
//! the ledger's cursor ([`super::ledger`]) in file order — all of them when
//! the ledger names none, or names a record the file does not hold.
//!
//! * [`Pick::Auto`]: conversations with unreflected records, the most
//!   unreflected bytes first (ties: conversation id, bytewise), taken while
//!   both caps allow: at most `max_conversations`, at most `max_bytes` of
//!   record content. Each conversation gives its unreflected records oldest
//!   first; the conversation whose records cross `max_bytes` gives those
//!   that fit, and the pass takes no further conversation (its next pass
//!   goes on from there). The first record of a pass is always taken, even
//!   when it alone is larger than `max_bytes`, so no conversation is stuck
//!   (as a batch's one larger turn goes alone). A cap of 0 selects nothing.
//! * Asked for ([`Pick::Conversations`], [`Pick::Recent`], or a focus):
//!   every conversation picked is taken; each gets an equal share of
//!   `max_bytes` (at least one record): its unreflected records oldest
//!   first, or, when it has none, its newest records.

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};

use scriptorium_bm25_index::hit::Found;
use scriptorium_bm25_index::search::{Bm25, Filters};
use scriptorium_bm25_index::segment::Kind;
use scriptorium_bm25_index::tokenize::TokenizerConfig;
use scriptorium_scheduler::{Code, Error, WriteFailure};
use scriptorium_source_archive::v2::{self, Expect};
use scriptorium_source_archive::{fsio, pct, trust, SourceRecord};
use scriptorium_topic_markdown::time::{self, Instant};

use super::ledger::Ledger;

/// How a pass picks its conversations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pick {
    /// By unreflected volume, within the caps (with a focus: the
    /// conversations whose records a search for it finds, best first).
    Auto,
    /// These conversations (`provider/thread`, encoded), in this order.
    Conversations(Vec<String>),
    /// The `N` most recently active conversations (newest record first;
    /// ties: conversation id).
    Recent(usize),
}

/// The caps of a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// The most conversations an automatic pick takes.
    pub max_conversations: usize,
    /// The most bytes of record content a pass takes (see the module
    /// documentation for the edges).
    pub max_bytes: u64,
}

/// The record hits a focus search looks at.
pub const FOCUS_HITS: usize = 50;

/// One selected conversation and the records the pass gets of it, in file
/// order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Material {
    /// `provider/thread`, encoded.
    pub conversation: String,
    /// The records.
    pub records: Vec<SourceRecord>,
    /// Their content, in UTF-8 bytes.
    pub bytes: u64,
    /// The last unreflected record among them (source id text form): where
    /// the ledger's cursor moves once the pass has reflected on them.
    pub advance_to: Option<String>,
}

/// One conversation as the scan found it.
#[derive(Debug, Clone)]
struct Summary {
    conversation: String,
    file: PathBuf,
    /// Content bytes of each trusted record, in file order.
    sizes: Vec<u64>,
    /// Index into `sizes` of the first unreflected record.
    first_unreflected: usize,
    /// The newest trusted record's time.
    newest: Option<Instant>,
}

impl Summary {
    fn unreflected(&self) -> &[u64] {
        &self.sizes[self.first_unreflected..]
    }

    fn unreflected_bytes(&self) -> u64 {
        self.unreflected().iter().sum()
    }
}

/// Picks the conversations of a pass over the workspace at `root` and
/// reads their records. `NOT_FOUND` names a conversation that has no
/// archive file; `INVALID_ARGUMENT` one that is not `provider/thread`.
pub fn select(
    root: &Path,
    pick: &Pick,
    focus: Option<&str>,
    caps: Caps,
    ledger: &Ledger,
) -> Result<Vec<Material>, WriteFailure> {
    if let Pick::Conversations(ids) = pick {
        for id in ids {
            check_id(id)?;
        }
    }
    let promoted = trust::promoted(root).map_err(|e| WriteFailure::from(Error::from_archive(e)))?;
    let all = scan(root, &promoted, ledger)?;
    let plans: Vec<(&Summary, Range<usize>)> = match (pick, focus) {
        (Pick::Auto, None) => auto(&all, caps),
        (Pick::Auto, Some(f)) => asked(focused(root, &all, f, caps.max_conversations)?, caps.max_bytes),
        (Pick::Conversations(ids), _) => asked(named(&all, ids)?, caps.max_bytes),
        (Pick::Recent(n), _) => asked(recent(&all, *n), caps.max_bytes),
    };
    plans.into_iter().filter(|(_, r)| !r.is_empty()).map(|(s, r)| material(s, r, &promoted)).collect()
}

/// `provider/thread`, both canonical PCT, neither hidden.
fn check_id(id: &str) -> Result<(), WriteFailure> {
    let ok = id.split_once('/').is_some_and(|(p, t)| {
        [p, t]
            .iter()
            .all(|x| !x.is_empty() && !x.starts_with('.') && !x.contains('/') && pct::is_canonical(x))
    });
    if ok {
        return Ok(());
    }
    Err(WriteFailure::new(
        Code::InvalidArgument,
        format!(
            "conversation {id:?} is not provider/thread as sleep --json names it (both parts PCT-encoded, e.g. chat/team%201)"
        ),
    ))
}

/// Every conversation with at least one trusted record, by id.
fn scan(root: &Path, promoted: &BTreeSet<String>, ledger: &Ledger) -> Result<Vec<Summary>, WriteFailure> {
    let mut out = Vec::new();
    for (provider, file) in v2_files(root)? {
        let Some(thread) = file.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".md"))
        else {
            continue;
        };
        let (Ok(p), Ok(t)) =
            (pct::decode_canonical(provider.as_bytes()), pct::decode_canonical(thread.as_bytes()))
        else {
            continue;
        };
        let conversation = format!("{provider}/{thread}");
        let bytes = read(&file)?;
        let parsed = v2::parse_prefix(&bytes, Some(Expect { provider: &p, thread: &t }));
        let through = ledger.through(&conversation);
        let cursor = through.and_then(|c| parsed.frames.iter().position(|f| f.source_text == c));
        let mut s = Summary { conversation, file, sizes: Vec::new(), first_unreflected: 0, newest: None };
        for (k, f) in parsed.frames.iter().enumerate() {
            if f.pending && !promoted.contains(f.source_text) {
                continue;
            }
            if cursor.is_some_and(|c| k <= c) {
                s.first_unreflected += 1;
            }
            s.sizes.push(f.body.len() as u64);
            s.newest = s.newest.max(time::parse(f.timestamp));
        }
        if !s.sizes.is_empty() {
            out.push(s);
        }
    }
    out.sort_by(|a, b| a.conversation.cmp(&b.conversation));
    Ok(out)
}

fn read(file: &Path) -> Result<fsio::FileBytes, WriteFailure> {
    fsio::read_file(file).map_err(|e| WriteFailure::from(Error::from_archive(e)))
}

/// Every regular `.md` file under `sources/*/_v2/` (no symbolic links),
/// with its provider folder's name.
fn v2_files(root: &Path) -> Result<Vec<(String, PathBuf)>, WriteFailure> {
    let mut out = Vec::new();
    for (provider, pdir) in entries(&root.join("sources"), |t| t.is_dir())? {
        for (name, file) in entries(&pdir.join("_v2"), |t| t.is_file())? {
            if name.ends_with(".md") {
                out.push((provider.clone(), file));
            }
        }
    }
    Ok(out)
}

fn entries(
    dir: &Path,
    keep: impl Fn(&std::fs::FileType) -> bool,
) -> Result<Vec<(String, PathBuf)>, WriteFailure> {
    let io = |e: std::io::Error| WriteFailure::new(Code::Io, format!("cannot list {}: {e}", dir.display()));
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(e)),
    };
    let mut out = Vec::new();
    for entry in rd {
        let entry = entry.map_err(io)?;
        let t = entry.file_type().map_err(io)?;
        if let (true, Some(name)) = (keep(&t), entry.file_name().to_str()) {
            out.push((name.to_owned(), entry.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// The automatic pick: most unreflected bytes first, within both caps.
fn auto(all: &[Summary], caps: Caps) -> Vec<(&Summary, Range<usize>)> {
    let mut candidates: Vec<(&Summary, u64)> =
        all.iter().filter(|s| !s.unreflected().is_empty()).map(|s| (s, s.unreflected_bytes())).collect();
    candidates.sort_by(|(a, x), (b, y)| y.cmp(x).then_with(|| a.conversation.cmp(&b.conversation)));
    let mut out = Vec::new();
    if caps.max_conversations == 0 || caps.max_bytes == 0 {
        return out;
    }
    let mut used = 0u64;
    for (s, _) in candidates {
        if out.len() == caps.max_conversations {
            break;
        }
        let n = fitting(s.unreflected(), &mut used, caps.max_bytes, out.is_empty());
        if n == 0 {
            break;
        }
        let start = s.first_unreflected;
        out.push((s, start..start + n));
        if n < s.unreflected().len() {
            break;
        }
    }
    out
}

/// How many of `sizes`, in order, fit in `max` after `used` (adding them
/// to `used`); with `first`, at least one.
fn fitting(sizes: &[u64], used: &mut u64, max: u64, first: bool) -> usize {
    let mut n = 0;
    for &b in sizes {
        if used.saturating_add(b) > max && !(first && n == 0) {
            break;
        }
        *used = used.saturating_add(b);
        n += 1;
    }
    n
}

/// Conversations asked for: each gets an equal share of `max_bytes`.
fn asked(picked: Vec<&Summary>, max_bytes: u64) -> Vec<(&Summary, Range<usize>)> {
    let share = (max_bytes / picked.len().max(1) as u64).max(1);
    picked
        .into_iter()
        .map(|s| {
            let mut used = 0;
            if s.unreflected().is_empty() {
                let newest: Vec<u64> = s.sizes.iter().rev().copied().collect();
                let n = fitting(&newest, &mut used, share, true);
                (s, s.sizes.len() - n..s.sizes.len())
            } else {
                let n = fitting(s.unreflected(), &mut used, share, true);
                (s, s.first_unreflected..s.first_unreflected + n)
            }
        })
        .collect()
}

/// The named conversations, each once, in the order named.
fn named<'a>(all: &'a [Summary], ids: &[String]) -> Result<Vec<&'a Summary>, WriteFailure> {
    let by_id: HashMap<&str, &Summary> = all.iter().map(|s| (s.conversation.as_str(), s)).collect();
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for id in ids {
        if !seen.insert(id.as_str()) {
            continue;
        }
        match by_id.get(id.as_str()) {
            Some(s) => out.push(*s),
            None => {
                return Err(WriteFailure::new(
                    Code::NotFound,
                    format!("no conversation {id:?}: the archive holds no trusted record of it"),
                ))
            }
        }
    }
    Ok(out)
}

/// The `n` most recently active conversations.
fn recent(all: &[Summary], n: usize) -> Vec<&Summary> {
    let mut v: Vec<&Summary> = all.iter().collect();
    v.sort_by(|a, b| b.newest.cmp(&a.newest).then_with(|| a.conversation.cmp(&b.conversation)));
    v.truncate(n);
    v
}

/// The conversations holding the best record hits of a search for
/// `focus`, best first, at most `max`.
fn focused<'a>(
    root: &Path,
    all: &'a [Summary],
    focus: &str,
    max: usize,
) -> Result<Vec<&'a Summary>, WriteFailure> {
    let filters = Filters { kind: Some(Kind::Source), ..Filters::default() };
    let hits = scriptorium_bm25_index::workspace::search(
        root,
        TokenizerConfig::default(),
        focus,
        &filters,
        None,
        FOCUS_HITS,
        Bm25::default(),
    )
    .map_err(|e| WriteFailure::new(e.code(), format!("searching for the focus: {}", e.message())))?;
    let by_path: HashMap<String, &Summary> = all
        .iter()
        .filter_map(|s| Some((s.file.strip_prefix(root).ok()?.to_str()?.replace('\\', "/"), s)))
        .collect();
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for h in &hits {
        let Found::Record(r) = &h.found else { continue };
        if let Some(s) = by_path.get(&r.path) {
            if out.len() < max && seen.insert(s.conversation.as_str()) {
                out.push(*s);
            }
        }
    }
    Ok(out)
}

/// Reads the trusted records `range` of `s`.
fn material(s: &Summary, range: Range<usize>, promoted: &BTreeSet<String>) -> Result<Material, WriteFailure> {
    let bytes = read(&s.file)?;
    let parsed = v2::parse_prefix(&bytes, None);
    let records: Vec<SourceRecord> = parsed
        .frames
        .iter()
        .filter(|f| !f.pending || promoted.contains(f.source_text))
        .skip(range.start)
        .take(range.len())
        .map(v2::Frame::to_record)
        .collect();
    let advance_to =
        (range.end > s.first_unreflected).then(|| records.last().map(|r| r.id().text())).flatten();
    Ok(Material {
        conversation: s.conversation.clone(),
        bytes: records.iter().map(|r| r.content().len() as u64).sum(),
        records,
        advance_to,
    })
}

#[cfg(test)]
mod tests;
