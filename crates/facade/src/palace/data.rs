//! What the palace exports from a workspace: one JSON document holding
//! every topic file with its blocks as parts, the records its citations
//! name and every pending record, counts per thread, speaker and day, the
//! people, the timeline, the relations, the git history (and which of its
//! commits touched each block) and the audit,
//! `core.md` as the derived view renders it, and the writer's health.
//!
//! This module holds the document's shape and [`json`], which reads the
//! workspace once and assembles the document in named steps: the archive
//! (`archive`), the topic files and their blocks (`topics`), and the
//! views derived from both (`views`).

use std::path::Path;

use serde::{Deserialize, Serialize};

use scriptorium_source_archive::archive::Archive;
use scriptorium_source_archive::json::RecordView;
use scriptorium_source_archive::trust;
use scriptorium_topic_markdown::diag::Diagnostic;
use scriptorium_transaction as transaction;
use scriptorium_transaction::history::read::LogEntry;
use scriptorium_transaction::snapshot::Checkup;

use super::{io_error, DATA_FORMAT, HISTORY_LIMIT};
use crate::error::Error;

mod archive;
mod topics;
mod views;

// ---------------------------------------------------------------------------
// The embedded document.

#[derive(Serialize)]
struct Data {
    format: u32,
    root: String,
    root_url: String,
    revision: String,
    counts: Counts,
    files: Vec<FileOut>,
    blocks: Vec<BlockOut>,
    records: Vec<RecordOut>,
    threads: Vec<ThreadOut>,
    speakers: Vec<SpeakerOut>,
    people: Vec<PersonOut>,
    timeline: Vec<DayOut>,
    relations: Relations,
    /// The newest [`HISTORY_LIMIT`] commits of the workspace's git
    /// history, newest first.
    history: Vec<LogEntry>,
    /// Whether older commits exist than the last of `history`.
    history_truncated: bool,
    audit: Vec<serde_json::Value>,
    core: CoreOut,
    diagnostics: Vec<Diagnostic>,
    archive_problems: Vec<ProblemOut>,
    /// The writer's health, as `status` reports it.
    health: crate::health::Health,
}

#[derive(Serialize, Default)]
struct Counts {
    topic_files: usize,
    blocks: usize,
    pending_blocks: usize,
    invalid_blocks: usize,
    records: usize,
    pending_records: usize,
    legacy_records: usize,
    records_embedded: usize,
    diagnostics: usize,
}

#[derive(Serialize)]
struct FileOut {
    path: String,
    url: String,
    kind: Option<&'static str>,
    description: Option<String>,
    aliases: Vec<String>,
    title: Option<String>,
    /// Headings and blocks in file order.
    items: Vec<Item>,
    blocks: usize,
    pending: usize,
    /// Indexes into `diagnostics`.
    diagnostics: Vec<usize>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Item {
    Heading { heading: String, level: usize },
    Block { block: usize },
}

#[derive(Serialize)]
struct BlockOut {
    file: usize,
    id: Option<String>,
    /// 1-based first line.
    line: usize,
    pending: bool,
    valid: bool,
    /// Every cited evidence `Time`, as written.
    times: Vec<String>,
    parts: Vec<Part>,
    /// Indexes into `records` of every cited record, each once.
    records: Vec<usize>,
    /// Indexes into `history` of the commits that added, changed or
    /// removed this block's `path#^id`, newest first.
    commits: Vec<usize>,
}

/// A piece of a block's text: literal text, a citation, or a link to a
/// topic file or block. Nothing else in memory becomes an element.
#[derive(Serialize, Debug, PartialEq)]
#[serde(untagged)]
enum Part {
    Text(String),
    Cite { cite: String, n: usize, time: Option<String>, sources: Vec<CiteSource>, problem: Option<String> },
    Link { link: String, file: usize, block: Option<String> },
}

#[derive(Serialize, Debug, PartialEq)]
struct CiteSource {
    id: String,
    record: Option<usize>,
    status: &'static str,
}

#[derive(Serialize)]
struct RecordOut {
    #[serde(flatten)]
    view: RecordView,
    url: String,
    legacy: bool,
    promoted: bool,
    cited_by: Vec<usize>,
}

#[derive(Serialize)]
struct ThreadOut {
    path: String,
    url: String,
    records: usize,
    pending: usize,
    embedded: usize,
}

#[derive(Serialize)]
struct SpeakerOut {
    /// How the identity is shown (FORMAT.md §2.3), or a legacy hint's
    /// `… [legacy hint]`.
    attribution: String,
    id: Option<String>,
    display: Option<String>,
    trusted: bool,
    records: usize,
    pending: usize,
    cited: usize,
}

#[derive(Serialize)]
struct PersonOut {
    file: usize,
    aliases: Vec<String>,
    speakers: Vec<CitedSpeaker>,
}

#[derive(Serialize)]
struct CitedSpeaker {
    /// As [`SpeakerOut::attribution`]; the role for a record without one.
    attribution: String,
    trusted: bool,
    records: usize,
}

#[derive(Serialize)]
struct DayOut {
    day: String,
    blocks: Vec<usize>,
    records: usize,
}

#[derive(Serialize, Deserialize, Default)]
struct Relations {
    nodes: Vec<Node>,
    edges: Vec<Edge>,
}

#[derive(Serialize, Deserialize)]
struct Node {
    id: String,
    kind: String,
}

#[derive(Serialize, Deserialize)]
struct Edge {
    from: String,
    to: String,
}

#[derive(Serialize)]
struct CoreOut {
    path: Option<String>,
    budget: usize,
    tokens: usize,
    /// Block ids taken into `core.md`, in file order.
    included: Vec<String>,
    /// Eligible block ids left out for the budget.
    omitted: Vec<String>,
    /// Indexes into `blocks` of the pending or invalid blocks of the core
    /// file (never eligible, so not "left out").
    ineligible: Vec<usize>,
    text: Option<String>,
    /// `current`, `stale`, `absent` or `hand-written`.
    on_disk: &'static str,
}

#[derive(Serialize)]
struct ProblemOut {
    path: String,
    offset: u64,
    line: u64,
    reason: String,
}

// ---------------------------------------------------------------------------
// Reading the workspace.

/// The palace's data for the workspace at the canonical `root`, as one
/// compact JSON document.
pub(super) fn json(root: &Path) -> Result<String, Error> {
    let data = collect(root)?;
    Ok(serde_json::to_string(&data).expect("the palace data serializes"))
}

/// `file:///abs/root/` for an absolute root.
pub(super) fn root_url(root: &Path) -> String {
    let mut s = root.to_string_lossy().replace('\\', "/");
    if !s.starts_with('/') {
        s.insert(0, '/');
    }
    if !s.ends_with('/') {
        s.push('/');
    }
    format!("file://{}", scriptorium_topic_markdown::views::percent_path(&s))
}

/// Lines of a JSON-lines runtime file, each parsed; a line that does not
/// parse (a torn last line, a hand edit) is kept as `{"unreadable": line}`.
fn json_lines(path: &Path) -> Result<Vec<serde_json::Value>, Error> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_error(&e, "cannot read", path)),
    };
    Ok(bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .map(|l| {
            serde_json::from_slice(l)
                .unwrap_or_else(|_| serde_json::json!({ "unreadable": String::from_utf8_lossy(l) }))
        })
        .collect())
}

/// The archive files that do not parse to their end.
fn archive_problems(archive: &Archive) -> Vec<ProblemOut> {
    archive
        .problems()
        .iter()
        .map(|p| ProblemOut {
            path: p.path.clone(),
            offset: p.diagnostic.offset as u64,
            line: p.diagnostic.line,
            reason: p.diagnostic.reason.clone(),
        })
        .collect()
}

/// Reads the workspace once, each layer through its own API, and builds
/// the document step by step.
fn collect(root: &Path) -> Result<Data, Error> {
    let root_url = root_url(root);
    let mut checkup = transaction::snapshot::checkup(root)?;
    let diagnostics = std::mem::take(&mut checkup.diagnostics);
    let resolver = checkup.resolver();
    let Checkup { topics, archive, promoted, checked, .. } = &checkup;
    let topics = &topics.loaded;
    let revision = transaction::revision::compute(root)?.hex;
    let budget = transaction::layout::core_budget(root)?;

    let summary = archive::summarise(archive, &topics::cited_ids(topics), promoted, &root_url);
    let mut embedded = summary.embedded;
    let index = topics::Index::new(topics, checked, &diagnostics);
    let mut counts = Counts::default();
    let (files, mut blocks) = {
        let cx = topics::PartsContext {
            resolver: &resolver,
            by_id: &embedded.by_id,
            file_index: &index.file_index,
            blocks: &index.blocks_by_id,
        };
        topics::files_and_blocks(topics, &index, &cx, &root_url, &mut counts)
    };
    topics::cite_back(&blocks, &mut embedded.records);
    let history = transaction::history::block_history(root, HISTORY_LIMIT)?;
    topics::commits_of(&mut blocks, &files, &history.touched);

    let people = views::people(&files, &blocks, &embedded.records);
    let mut speakers = summary.speakers;
    views::count_cited(&mut speakers, &embedded.records);
    let timeline = views::timeline(checked, &index, &files, &blocks, &summary.records_per_day);
    let relations = views::relations(topics, checked);
    let core = views::core(root, topics, checked, budget, &index, &files, &blocks);
    let audit = json_lines(&root.join(trust::AUDIT_FILE))?;
    let archive_problems = archive_problems(archive);

    counts.topic_files = files.len();
    counts.blocks = blocks.len();
    counts.records = archive.v2_records().count() + summary.legacy;
    counts.pending_records = summary.pending;
    counts.legacy_records = summary.legacy;
    counts.records_embedded = embedded.records.len();
    counts.diagnostics = diagnostics.len();

    Ok(Data {
        format: DATA_FORMAT,
        root: root.display().to_string(),
        root_url,
        revision,
        counts,
        files,
        blocks,
        records: embedded.records,
        threads: summary.threads,
        speakers,
        people,
        timeline,
        relations,
        history: history.entries,
        history_truncated: history.truncated,
        audit,
        core,
        diagnostics,
        archive_problems,
        health: crate::health::Health::of(root),
    })
}
