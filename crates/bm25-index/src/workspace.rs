//! The documents of a workspace and the index files that hold them under
//! `.scriptorium/index/` (FORMAT.md §1, §7).
//!
//! Each workspace file is a *unit*: a v2 archive file, a legacy archive
//! file, or a topic file. [`open`] compares every file's size and
//! modification time with what the index recorded and re-reads only the
//! files that changed (plus, for a file modified just before it was read, a
//! hash of its bytes, so an edit within one timestamp tick is not missed). What a changed file affects beyond itself:
//!
//! * a legacy record is left out when a v2 record has its source id, so a
//!   legacy file depends on the v2 files its ids name;
//! * a topic block's validity and trust depend on the other topic files
//!   (duplicate ids, links) and on the records it cites, so every topic file
//!   is re-checked when any topic file or any cited archive file changed —
//!   but only topic files whose documents changed are re-indexed.
//!
//! The index files are replaced atomically (temporary + rename) and read
//! through a memory map; a reader keeps its map until it reopens. A reader
//! ([`open`], [`search`]) that cannot write them (a read-only
//! workspace, a full disk) keeps the refreshed index in memory for its
//! process instead and says so in [`Report::unsaved`]; see [`unsaved`].

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use scriptorium_source_archive::{trust, Code, Error};
use serde::Serialize;

use crate::delta::Refreshed;
use crate::hit::{Found, Hit};
use crate::search::View;
use crate::segment::{self, Damaged, Kind, Stamp, Unit};
use crate::tokenize::TokenizerConfig;

mod documents;
mod files;
mod fold;
mod listing;
mod reread;
mod unsaved;
pub use documents::parse_day;
use documents::{legacy_unit, source_parts, topic_units, v2_unit, Sources};
pub use files::open_existing;
use files::{index_dir, record_promoted, record_revision, save_base, save_refreshed};
use fold::{refresh, Folded, RefreshError};
use listing::{list_files, read};
pub use reread::{unit_documents, Reread};
use unsaved::Save;

/// The index folder, relative to the workspace.
pub const DIR: &str = ".scriptorium/index";
/// The base segment's file name.
pub const BASE: &str = "base.idx";
/// The delta segment's file name.
pub const DELTA: &str = "delta.idx";
/// The promoted source ids the index reflects, one per line, sorted.
pub const PROMOTED: &str = "promoted";
/// The revision (FORMAT.md §6) the index files describe, when the writer
/// that last wrote them said so ([`open_committed`]).
pub const REVISION: &str = "revision";

/// What [`open`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// The index was current.
    Fresh,
    /// Changed files were folded into the delta.
    Refreshed,
    /// Changed files were folded in and the delta merged into a new base.
    Merged,
    /// The index was built from every file.
    Built,
}

/// A report of [`open`] or [`build`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// What was done.
    pub action: Action,
    /// Why the index was rebuilt, when it was unusable.
    pub rebuilt_because: Option<String>,
    /// Files re-read.
    pub files_read: usize,
    /// Units replaced or removed in the index.
    pub units_changed: usize,
    /// Live documents.
    pub documents: u32,
    /// Bytes of the base file.
    pub base_bytes: u64,
    /// Bytes of the delta file (0 when there is none).
    pub delta_bytes: u64,
    /// Why the refreshed index could not be written, when it could not:
    /// it is then kept in memory for this process only (the byte counts
    /// are its size in memory), and the next reader refreshes again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsaved: Option<String>,
}

impl Report {
    /// What a write that read `files_read` files and changed
    /// `units_changed` units did, before the sizes are known.
    fn of_work(action: Action, files_read: usize, units_changed: usize) -> Report {
        Report {
            action,
            rebuilt_because: None,
            files_read,
            units_changed,
            documents: 0,
            base_bytes: 0,
            delta_bytes: 0,
            unsaved: None,
        }
    }
}

/// An opened, current index of a workspace.
#[derive(Debug)]
pub struct Opened {
    /// The searchable view.
    pub view: View,
    /// What opening it did.
    pub report: Report,
}

fn damaged(e: Damaged) -> Error {
    Error::new(Code::Io, e.to_string())
}

pub(super) fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

fn finish(root: &Path, config: TokenizerConfig, mut report: Report) -> Result<Opened, Error> {
    let view = match open_existing(root, config)? {
        Ok(v) => v,
        Err(why) => return Err(Error::new(Code::Io, format!("the index just written is unusable: {why}"))),
    };
    report.documents = view.len();
    report.base_bytes = file_size(&index_dir(root).join(BASE));
    report.delta_bytes = if view.delta().is_some() { file_size(&index_dir(root).join(DELTA)) } else { 0 };
    Ok(Opened { view, report })
}

/// The longest snippet a hit carries, in characters.
pub const SNIPPET_CHARS: usize = 160;

/// The snippet of a hit (at most [`SNIPPET_CHARS`] characters around the
/// first matching word) from what was indexed, `indexed`; for a block the
/// query's words find in its own text, from that text, so its file's
/// `(aliases: …)` line shows only when the block matched through it.
pub fn snippet(tok: &crate::tokenize::Tokenizer, found: &Found, indexed: &str, terms: &[String]) -> String {
    match found {
        Found::Block(b) if b.text.len() < indexed.len() && tok.mentions(&b.text, terms) => {
            tok.snippet(&b.text, terms, SNIPPET_CHARS)
        }
        _ => tok.snippet(indexed, terms, SNIPPET_CHARS),
    }
}

/// A ranked document's indexed text and what a hit shows of it: stored,
/// or read back from its file under `root`, which must still hold the
/// bytes indexed (else [`Damaged`]).
pub fn reread(root: &Path, view: &View, ranked: &crate::search::Ranked) -> Result<Reread, Damaged> {
    reread::Files::spans(root).read(&view.stored(ranked)?)
}

/// The [`Hit`] of a ranked document of the index of the workspace at
/// `root`: the block or record (stored, or read back from its file, which
/// must still hold the bytes indexed), with its kind, score and snippet.
pub fn hit(
    root: &Path,
    view: &View,
    ranked: &crate::search::Ranked,
    terms: &[String],
) -> Result<Hit, Damaged> {
    let stored = view.stored(ranked)?;
    let read = reread::Files::spans(root).read(&stored)?;
    let tok = crate::tokenize::Tokenizer::new(view.base().config());
    let snippet = snippet(&tok, &read.found, &read.indexed, terms);
    Ok(Hit {
        kind: stored.kind,
        found: read.found,
        score: ranked.score,
        snippet,
        bm25_rank: None,
        embedding_rank: None,
        tampered: false,
    })
}

/// Searches the workspace at `root` (refreshing its index first) and
/// returns the hits, best first. `speaker`, as a person
/// names one, keeps only that speaker's records ([`crate::speaker::resolve`]);
/// a name several identities have is `INVALID_ARGUMENT` listing their
/// attributions, and it replaces any speaker key `filters` holds. An index
/// found damaged while answering (a chunk read for the first time fails its
/// checksum, or a file no longer holds the bytes a hit was indexed from)
/// is rebuilt and the search run again: never a wrong answer, never a
/// stuck index.
pub fn search(
    root: &Path,
    config: TokenizerConfig,
    query: &str,
    filters: &crate::search::Filters,
    speaker: Option<&str>,
    limit: usize,
    bm25: crate::search::Bm25,
) -> Result<Vec<Hit>, Error> {
    let answer = |view: &View| -> Result<Result<Vec<Hit>, Error>, Damaged> {
        let mut filters = filters.clone();
        if let Some(name) = speaker {
            match crate::speaker::resolve(view, name)? {
                crate::speaker::Resolved::Key(k) => filters.speaker = Some(k),
                crate::speaker::Resolved::Nobody => return Ok(Ok(Vec::new())),
                crate::speaker::Resolved::Ambiguous(who) => return Ok(Err(ambiguous(name, &who))),
            }
        }
        let terms = view.query_terms(query);
        let hits = view.search(query, &filters, limit, bm25)?;
        hits.iter().map(|h| hit(root, view, h, &terms)).collect::<Result<_, _>>().map(Ok)
    };
    let opened = open(root, config)?;
    let why = match answer(&opened.view) {
        Ok(lines) => return lines,
        Err(d) => d.to_string(),
    };
    drop(opened);
    let rebuilt = build_because(root, config, Some(why), Save::IfPossible, &mut |_, _| {})?;
    answer(&rebuilt.view).map_err(|d| Error::new(Code::Io, format!("the rebuilt index is unusable: {d}")))?
}

/// [`search`] over the index files as the last writer left them, without
/// looking at the workspace's files first: a reader that must answer in
/// milliseconds whatever happened since (a coding agent's prompt hook)
/// and can live with what a hand edit changed since the last write showing
/// up at the next one. Writers refresh the index as part of every commit,
/// so what memory wrote is there. Only the files its hits are read from
/// are read. Falls back to [`search`] (which refreshes, or builds) when
/// there is no usable index, a chunk reads damaged, or a hit's file no
/// longer holds the bytes it was indexed from (a hand edit since).
pub fn search_as_is(
    root: &Path,
    config: TokenizerConfig,
    query: &str,
    filters: &crate::search::Filters,
    limit: usize,
    bm25: crate::search::Bm25,
) -> Result<Vec<Hit>, Error> {
    if let Ok(view) = open_existing(root, config)? {
        let terms = view.query_terms(query);
        let answered = view
            .search(query, filters, limit, bm25)
            .and_then(|hits| hits.iter().map(|h| hit(root, &view, h, &terms)).collect::<Result<Vec<_>, _>>());
        if let Ok(hits) = answered {
            return Ok(hits);
        }
    }
    search(root, config, query, filters, None, limit, bm25)
}

/// The refusal of a speaker name several identities have.
fn ambiguous(name: &str, who: &[String]) -> Error {
    let list: Vec<String> = who.iter().map(|w| format!("\"{w}\"")).collect();
    let message = format!(
        "speaker {name:?} names {} archived identities: {}; give an exact id or one of these attributions",
        who.len(),
        list.join(", ")
    );
    Error::new(Code::InvalidArgument, message)
}

/// Same bytes on disk, whenever they were read.
fn same_file(a: &Stamp, b: &Stamp) -> bool {
    a.size == b.size
        && a.modified == b.modified
        && a.changed == b.changed
        && a.inode == b.inode
        && a.hash == b.hash
}

/// Builds the index of the workspace at `root` from every file, replacing
/// whatever was there.
pub fn build(root: &Path, config: TokenizerConfig) -> Result<Opened, Error> {
    build_because(root, config, None, Save::Required, &mut |_, _| {})
}

/// [`build`], calling `progress(files read, files)` as it reads.
pub fn build_with_progress(
    root: &Path,
    config: TokenizerConfig,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Opened, Error> {
    build_because(root, config, None, Save::Required, progress)
}

fn build_because(
    root: &Path,
    config: TokenizerConfig,
    why: Option<String>,
    save: Save,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Opened, Error> {
    let listing = list_files(root)?;
    let promoted = trust::promoted(root)?;
    let total = listing.len();
    let mut files_read = 0;
    let mut sources = Sources { fresh: HashMap::new(), gone: HashSet::new(), old: None };
    let (legacy, v2): (Vec<_>, Vec<_>) = listing
        .iter()
        .filter(|((k, _), _)| *k == Kind::Source)
        .partition(|((_, rel), _)| source_parts(rel).is_some_and(|p| !p.2));
    for ((_, rel), listed) in v2 {
        let (bytes, stamp) = read(root, rel, *listed)?;
        files_read += 1;
        progress(files_read, total);
        let mut unit = v2_unit(rel, &bytes, stamp, &promoted);
        unit.docs.sort_by(|a, b| a.anchor.cmp(&b.anchor));
        sources.fresh.insert(rel.clone(), unit);
    }
    let mut legacy_units = Vec::new();
    for ((_, rel), listed) in legacy {
        let (bytes, stamp) = read(root, rel, *listed)?;
        files_read += 1;
        progress(files_read, total);
        legacy_units.push(legacy_unit(rel, &bytes, stamp, &sources).map_err(damaged)?);
    }
    for unit in legacy_units {
        sources.fresh.insert(unit.path.clone(), unit);
    }
    let tok = crate::tokenize::Tokenizer::new(config);
    let topics = topic_units(root, &listing, &sources, &mut files_read, None, &tok)?;
    progress(files_read, total);
    let mut units: Vec<Unit> = sources.fresh.into_values().collect();
    units.extend(topics);
    let units_changed = units.len();
    let bytes = segment::build(units, config, None);
    let report = Report { rebuilt_because: why, ..Report::of_work(Action::Built, files_read, units_changed) };
    match save_base(root, &bytes, &promoted) {
        Ok(()) => finish(root, config, report),
        Err(e) => unsaved::keep(None, config, save, e, Refreshed::Base(bytes), report),
    }
}

/// Opens the index of the workspace at `root`, first folding in every file
/// that changed since it was written; builds it when it is missing or
/// unusable (truncated, corrupted, foreign, another format version or
/// tokenizer). For a reader: when the result cannot be written (an I/O
/// error under `.scriptorium/`), it is kept in memory for this process and
/// [`Report::unsaved`] says why.
pub fn open(root: &Path, config: TokenizerConfig) -> Result<Opened, Error> {
    open_with(root, config, None, Save::IfPossible, None)
}

/// Which topic files a refresh re-checks when some changed.
///
/// A topic block's validity depends on other files (a duplicated id, a
/// link's target), so by default a refresh re-checks every topic file when
/// any changed. A caller that keeps an index of ids and links can name the
/// files that can be affected instead, and the refresh costs what the
/// change touches.
pub trait TopicScope {
    /// Given the topic files that changed, appeared or disappeared, and the
    /// files citing an archive file that changed: the files whose blocks
    /// must be re-checked (`S`, a superset of `dirty`) and the files to
    /// load to judge them (`L ⊇ S`: what `S` links to and shares ids with).
    /// `None` re-checks everything.
    fn scope(&self, dirty: &BTreeSet<String>) -> Option<(BTreeSet<String>, BTreeSet<String>)>;
}

/// [`open`] for a writer, re-checking only the topic files `scope` names:
/// an index that cannot be written is an error, never kept in memory.
pub fn open_scoped(
    root: &Path,
    config: TokenizerConfig,
    scope: Option<&dyn TopicScope>,
) -> Result<Opened, Error> {
    open_with(root, config, scope, Save::Required, None)
}

/// What a writer knows of the commit it just made, under the workspace
/// lock: the revisions of the workspace (FORMAT.md §6) before and after it,
/// and every file it changed, added or removed.
#[derive(Debug, Clone, Copy)]
pub struct Commit<'a> {
    /// The revision the commit started from.
    pub before: &'a str,
    /// The revision it made.
    pub after: &'a str,
    /// Workspace-relative paths of the files it changed.
    pub changed: &'a [String],
}

/// [`open_scoped`] after a commit. When the index files describe
/// `commit.before` (the revision the last writer recorded with them, and
/// no index file written since), only the files the commit changed are
/// looked at: the workspace is not walked, so the refresh costs what the
/// commit changed. Otherwise every file is listed, as [`open_scoped`] does.
/// Either way the index then records `commit.after`.
pub fn open_committed(
    root: &Path,
    config: TokenizerConfig,
    scope: Option<&dyn TopicScope>,
    commit: Commit<'_>,
) -> Result<Opened, Error> {
    open_with(root, config, scope, Save::Required, Some(commit))
}

fn open_with(
    root: &Path,
    config: TokenizerConfig,
    scope: Option<&dyn TopicScope>,
    save: Save,
    commit: Option<Commit<'_>>,
) -> Result<Opened, Error> {
    let view = match open_existing(root, config)? {
        Ok(v) => v,
        Err(why) => {
            let built = build_because(root, config, Some(why), save, &mut |_, _| {})?;
            return committed(root, commit, built);
        }
    };
    match refresh(root, &view, scope, commit) {
        Ok(Folded::Changes { refreshed, promoted, report }) => {
            match save_refreshed(root, &view, &refreshed, &promoted) {
                Ok(()) => {
                    drop(view);
                    committed(root, commit, finish(root, config, report)?)
                }
                Err(e) => unsaved::keep(Some(&view), config, save, e, refreshed, report),
            }
        }
        Ok(folded @ (Folded::Nothing | Folded::Promotions(_))) => {
            let unsaved = match folded {
                Folded::Promotions(promoted) => match record_promoted(root, &promoted) {
                    Ok(()) => None,
                    Err(e) => Some(unsaved::reason(save, e)?),
                },
                _ => None,
            };
            let report = Report {
                action: Action::Fresh,
                rebuilt_because: None,
                files_read: 0,
                units_changed: 0,
                documents: view.len(),
                base_bytes: file_size(&index_dir(root).join(BASE)),
                delta_bytes: if view.delta().is_some() { file_size(&index_dir(root).join(DELTA)) } else { 0 },
                unsaved,
            };
            committed(root, commit, Opened { view, report })
        }
        Err(RefreshError::Damaged(d)) => {
            drop(view);
            let built = build_because(root, config, Some(d.to_string()), save, &mut |_, _| {})?;
            committed(root, commit, built)
        }
        Err(RefreshError::Other(e)) => Err(e),
    }
}

/// An index made current by a writer's refresh describes the revision the
/// commit made: recorded, so the next commit need not walk the workspace.
fn committed(root: &Path, commit: Option<Commit<'_>>, opened: Opened) -> Result<Opened, Error> {
    if let Some(c) = commit {
        record_revision(root, c.after)?;
    }
    Ok(opened)
}
