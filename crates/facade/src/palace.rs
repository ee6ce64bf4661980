//! The memory palace: one self-contained HTML page that shows a person
//! what a workspace remembers and why (FORMAT.md §9).
//!
//! [`export`] reads the workspace once — topic files, the archive, the
//! promotions, the history and the derived views, each through its own
//! layer's API — and writes every topic, the records its citations name,
//! every pending record, and counts for the rest as one JSON document.
//! [`page`] wraps that document in an HTML page whose script and style are
//! inline and pinned by their SHA-256 in a Content-Security-Policy of
//! `default-src 'none'`; [`write()`] puts the page on disk (mode 0600, in a
//! fresh 0700 folder unless told where) and [`open()`] hands it to the
//! platform's opener.
//!
//! **Safety:** every string from memory is data. The JSON sits in a
//! `<script type="application/json">` element with `<`, `>`, `&`, U+2028
//! and U+2029 escaped ([`escape_json`]), so no byte of memory can end the
//! element or open a comment; the page's script reaches the DOM only
//! through `textContent` and element construction, never `innerHTML`; the
//! only links it makes are in-page (`#…`) or `file://` links into the
//! workspace, built here from workspace-relative paths.
//!
//! What it does not do: it changes no memory (nothing under `topics/` or
//! `sources/`, no derived view; computing the revision may refresh its
//! cache in `.scriptorium/`, as every reader does) and takes no lock (the
//! command line holds the shared lock while [`export`] reads).
//!
//! ```
//! let json = r#"{"text":"</script><!--"}"#;
//! assert_eq!(scriptorium::palace::escape_json(json), r#"{"text":"\u003c/script\u003e\u003c!--"}"#);
//! ```

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use scriptorium_source_archive::archive::Archive;
use scriptorium_source_archive::json::RecordView;
use scriptorium_source_archive::{id, trust};
use scriptorium_topic_markdown::diag::Diagnostic;
use scriptorium_topic_markdown::parse::{inline_spans, is_evidence_label, Inline, Link};
use scriptorium_topic_markdown::validate::{
    check, dir_of, join, link_target, ArchiveResolver, Loaded, Resolution, SourceResolver,
};
use scriptorium_topic_markdown::views;
use scriptorium_transaction as transaction;

use crate::error::Error;
use scriptorium_source_archive::Code;

/// The page's script, pinned by its hash in the page's policy.
const SCRIPT: &str = include_str!("palace/palace.js");
/// The page's style sheet, pinned by its hash in the page's policy.
const STYLE: &str = include_str!("palace/palace.css");

/// The name of the page in the fresh folder [`write()`] makes by default.
pub const FILE_NAME: &str = "palace.html";

/// The version of the embedded JSON document's shape.
pub const DATA_FORMAT: u32 = 1;

/// The id of the `<script type="application/json">` element holding the data.
pub const DATA_ELEMENT_ID: &str = "palace-data";

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
    history: Vec<serde_json::Value>,
    audit: Vec<serde_json::Value>,
    core: CoreOut,
    diagnostics: Vec<Diagnostic>,
    archive_problems: Vec<ProblemOut>,
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

/// `file:///abs/root/` for an absolute root.
fn root_url(root: &Path) -> String {
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

fn io_error(e: &std::io::Error, what: &str, path: &Path) -> Error {
    let code = match e.kind() {
        std::io::ErrorKind::NotFound => Code::NotFound,
        std::io::ErrorKind::PermissionDenied => Code::PermissionDenied,
        _ => Code::Io,
    };
    let mut err = Error::new(code, format!("{what} {}: {e}", path.display()));
    err.path = Some(path.display().to_string());
    err
}

/// The text a link shows: its link text, or a wiki link's alias or target.
fn link_text(link: &Link) -> String {
    match link {
        Link::Markdown { text, target } => {
            if text.is_empty() {
                target.clone()
            } else {
                text.clone()
            }
        }
        Link::Wiki { target, alias } => alias.clone().unwrap_or_else(|| target.clone()),
    }
}

/// A heading line's level and text (`## Text` → (2, "Text")).
fn heading(line: &str) -> (usize, String) {
    let level = line.bytes().take_while(|&b| b == b'#').count();
    (level, line[level..].trim().to_owned())
}

/// Where block ids live: `(file index, block id)` → block index.
type BlockIndex<'a> = HashMap<(usize, &'a str), usize>;

/// The records the export embeds and how to find them by source id.
struct Embedded {
    records: Vec<RecordOut>,
    by_id: HashMap<String, usize>,
}

/// Every source id cited by an evidence definition some block uses.
fn cited_ids(topics: &[Loaded]) -> HashSet<String> {
    let mut out = HashSet::new();
    for t in topics {
        for b in &t.file.blocks {
            for r in &b.refs {
                if let Some(Some(Ok(ev))) = t.file.definition(&r.label).map(|d| &d.evidence) {
                    out.extend(ev.sources.iter().map(|s| s.id.clone()));
                }
            }
        }
    }
    out
}

/// Speaker key: (trusted, label, id, display).
/// A trusted identity: its attribution, verbatim id and display.
/// The speaker a record is counted under: a trusted identity's attribution,
/// or a legacy hint's `… [legacy hint]`; `None` without either.
fn shown_as(v: &RecordView) -> Option<String> {
    if v.speaker_trusted {
        return Some(v.attribution.clone());
    }
    v.speaker_label
        .as_deref()
        .map(|l| format!("{} [legacy hint]", scriptorium_source_archive::speaker::shown_id(l)))
}

type SpeakerKey<'a> = (String, Option<&'a str>, Option<&'a str>);

#[derive(Default)]
struct SpeakerCount {
    records: usize,
    pending: usize,
}

struct ArchiveSummary {
    embedded: Embedded,
    threads: Vec<ThreadOut>,
    speakers: Vec<SpeakerOut>,
    records_per_day: BTreeMap<String, usize>,
    pending: usize,
    legacy: usize,
}

/// A timestamp's UTC day: its first ten bytes (`YYYY-MM-DD`; archive
/// timestamps are UTC with a `Z`).
fn day_of(ts: &str) -> Option<&str> {
    ts.get(..10).filter(|d| d.as_bytes().get(4) == Some(&b'-'))
}

/// One pass over the archive: the records to embed (cited or pending),
/// counts per thread, speaker and day for all of them.
fn summarise_archive(
    archive: &Archive,
    cited: &HashSet<String>,
    promoted: &std::collections::BTreeSet<String>,
    root_url: &str,
) -> ArchiveSummary {
    let mut records = Vec::new();
    let mut by_id = HashMap::new();
    // (records, pending, embedded) per v2 thread and per legacy file.
    let mut v2_threads: BTreeMap<(&str, &str), (usize, usize, usize)> = BTreeMap::new();
    let mut legacy_files: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    let mut speakers: HashMap<SpeakerKey<'_>, SpeakerCount> = HashMap::new();
    let mut per_day: BTreeMap<&str, usize> = BTreeMap::new();
    let mut pending_total = 0;
    for r in archive.v2_records() {
        let id = r.id();
        let text = id.text();
        let promoted_here = r.is_pending() && promoted.contains(&text);
        let pending = r.is_pending() && !promoted_here;
        let entry = v2_threads.entry((id.provider(), id.thread())).or_default();
        entry.0 += 1;
        if pending {
            entry.1 += 1;
            pending_total += 1;
        }
        if let Some(s) = r.speaker() {
            let c = speakers.entry((s.attribution(), s.id(), s.display())).or_default();
            c.records += 1;
            c.pending += usize::from(pending);
        }
        if let Some(d) = day_of(r.timestamp()) {
            *per_day.entry(d).or_default() += 1;
        }
        if pending || cited.contains(&text) {
            entry.2 += 1;
            let mut view = RecordView::of_record(r);
            if promoted_here {
                view.trust = scriptorium_source_archive::json::Trust::Trusted;
            }
            let url = format!(
                "{root_url}{}#{}",
                scriptorium_topic_markdown::views::percent_path(&view.path),
                view.anchor.as_deref().unwrap_or("")
            );
            by_id.insert(text, records.len());
            records.push(RecordOut {
                view,
                url,
                legacy: false,
                promoted: promoted_here,
                cited_by: Vec::new(),
            });
        }
    }
    let mut legacy = 0;
    // Untrusted speaker hints of legacy records, counted apart from trusted ones.
    let mut hints: BTreeMap<String, usize> = BTreeMap::new();
    for (path, r) in archive.legacy_records() {
        legacy += 1;
        let entry = legacy_files.entry(path).or_default();
        entry.0 += 1;
        if let Some(h) = &r.hint {
            *hints.entry(h.attribution()).or_default() += 1;
        }
        if let Some(d) = day_of(&r.timestamp) {
            *per_day.entry(d).or_default() += 1;
        }
        let Some(id) = &r.id else { continue };
        let text = id.text();
        if cited.contains(&text) && !by_id.contains_key(&text) {
            entry.2 += 1;
            let view = RecordView::of_legacy(r, path, None);
            let url = format!(
                "{root_url}{}#{}",
                scriptorium_topic_markdown::views::percent_path(path),
                view.anchor.as_deref().unwrap_or("")
            );
            by_id.insert(text, records.len());
            records.push(RecordOut { view, url, legacy: true, promoted: false, cited_by: Vec::new() });
        }
    }
    let mut speakers: Vec<SpeakerOut> = speakers
        .into_iter()
        .map(|((attribution, id, display), c)| SpeakerOut {
            attribution,
            id: id.map(str::to_owned),
            display: display.map(str::to_owned),
            trusted: true,
            records: c.records,
            pending: c.pending,
            cited: 0,
        })
        .collect();
    speakers.extend(hints.into_iter().map(|(attribution, n)| SpeakerOut {
        attribution,
        id: None,
        display: None,
        trusted: false,
        records: n,
        pending: 0,
        cited: 0,
    }));
    speakers.sort_by(|a, b| b.records.cmp(&a.records).then_with(|| a.attribution.cmp(&b.attribution)));
    let mut threads: Vec<ThreadOut> = v2_threads
        .into_iter()
        .map(|((provider, thread), c)| (id::v2_path(provider, thread), c))
        .chain(legacy_files.into_iter().map(|(path, c)| (path.to_owned(), c)))
        .map(|(path, (records, pending, embedded))| ThreadOut {
            url: format!("{root_url}{}", scriptorium_topic_markdown::views::percent_path(&path)),
            path,
            records,
            pending,
            embedded,
        })
        .collect();
    threads.sort_by(|a, b| a.path.cmp(&b.path));
    ArchiveSummary {
        embedded: Embedded { records, by_id },
        threads,
        speakers,
        records_per_day: per_day.into_iter().map(|(d, n)| (d.to_owned(), n)).collect(),
        pending: pending_total,
        legacy,
    }
}

/// Context for turning one block into parts.
struct PartsContext<'a> {
    resolver: &'a ArchiveResolver<'a>,
    by_id: &'a HashMap<String, usize>,
    file_index: &'a HashMap<&'a str, usize>,
    blocks: &'a BlockIndex<'a>,
}

/// A block's text as parts: literal text, evidence citations and links to
/// topic files or blocks that exist. Fenced lines stay text; the block id
/// at the end is left out (it is shown apart).
fn block_parts(t: &Loaded, index: usize, cx: &PartsContext<'_>) -> (Vec<Part>, Vec<usize>) {
    let file = &t.file;
    let b = &file.blocks[index];
    let mut parts = Vec::new();
    let mut text = String::new();
    // The cited records in first-cited order, and the set of them.
    let mut records: (Vec<usize>, HashSet<usize>) = (Vec::new(), HashSet::new());
    let mut numbers: HashMap<String, usize> = HashMap::new();
    let dir = dir_of(&t.path);
    for k in b.first_line..=b.last_line {
        if k > b.first_line {
            text.push('\n');
        }
        let mut line = file.line(k);
        if k == b.last_line {
            if let Some(id) = &b.id {
                if let Some(stripped) = line.strip_suffix(id.as_str()).and_then(|l| l.strip_suffix(" ^")) {
                    line = stripped;
                }
            }
        }
        if file.is_fenced(k) {
            text.push_str(line);
            continue;
        }
        let mut pos = 0;
        for span in inline_spans(line) {
            let range = span.range;
            if range.end > line.len() {
                break;
            }
            let part = match span.item {
                Inline::Footnote(label) if is_evidence_label(&label) => {
                    let next = numbers.len() + 1;
                    let n = *numbers.entry(label.clone()).or_insert(next);
                    Some(citation(t, dir, label, n, cx, &mut records))
                }
                Inline::Footnote(_) => None,
                Inline::Link(link) => match link_target(&t.path, &link) {
                    Ok(Some(target)) => cx.file_index.get(target.path.as_str()).copied().and_then(|f| {
                        let exists = match &target.block_id {
                            None => true,
                            Some(id) => cx.blocks.contains_key(&(f, id.as_str())),
                        };
                        exists.then(|| Part::Link { link: link_text(&link), file: f, block: target.block_id })
                    }),
                    _ => None,
                },
            };
            if let Some(p) = part {
                text.push_str(&line[pos..range.start]);
                if !text.is_empty() {
                    parts.push(Part::Text(std::mem::take(&mut text)));
                }
                parts.push(p);
                pos = range.end;
            }
        }
        text.push_str(&line[pos..]);
    }
    let trimmed = text.trim_end().len();
    text.truncate(trimmed);
    if !text.is_empty() {
        parts.push(Part::Text(text));
    }
    (parts, records.0)
}

/// One evidence citation: its definition's time and sources, each
/// resolved against the archive and mapped to an embedded record.
fn citation(
    t: &Loaded,
    dir: &str,
    label: String,
    n: usize,
    cx: &PartsContext<'_>,
    records: &mut (Vec<usize>, HashSet<usize>),
) -> Part {
    let Some(def) = t.file.definition(&label) else {
        return Part::Cite {
            cite: label,
            n,
            time: None,
            sources: Vec::new(),
            problem: Some("no definition of this footnote in the file".into()),
        };
    };
    match &def.evidence {
        Some(Ok(ev)) => {
            let sources = ev
                .sources
                .iter()
                .map(|s| {
                    let status = match join(dir, &s.path) {
                        Some(p) => cx.resolver.resolve(&s.id, &p, &s.anchor),
                        None => Resolution::Unknown,
                    };
                    let record = match status {
                        Resolution::Unknown => None,
                        _ => cx.by_id.get(&s.id).copied(),
                    };
                    if let Some(r) = record {
                        if records.1.insert(r) {
                            records.0.push(r);
                        }
                    }
                    let status = match status {
                        Resolution::Trusted => "trusted",
                        Resolution::Pending => "pending",
                        Resolution::Unknown => "unknown",
                    };
                    CiteSource { id: s.id.clone(), record, status }
                })
                .collect();
            Part::Cite { cite: label, n, time: Some(ev.time.clone()), sources, problem: None }
        }
        Some(Err(why)) => {
            Part::Cite { cite: label, n, time: None, sources: Vec::new(), problem: Some(why.clone()) }
        }
        None => Part::Cite {
            cite: label,
            n,
            time: None,
            sources: Vec::new(),
            problem: Some("not an evidence footnote".into()),
        },
    }
}

/// Reads the workspace at `root` and returns the palace's data as one
/// compact JSON document (not yet escaped for HTML; see [`escape_json`]).
///
/// It embeds every topic file (headings and blocks as parts: text,
/// citations, links), every record a citation names and every pending
/// record (verbatim, in the FORMAT.md §5 record shape plus its `file://`
/// URL), counts per thread, speaker and day for all records, the people,
/// the timeline, `relations.json`, `.scriptorium/history.jsonl`,
/// `.scriptorium/audit.jsonl`, and the rendered `core.md` with its token
/// count and the blocks left out.
///
/// Errors: `NOT_FOUND` when `root` is not a folder; `IO` when a file
/// cannot be read; `INVALID_ARGUMENT` for a malformed `scriptorium.toml`.
pub fn export(root: &Path) -> Result<String, Error> {
    if !root.is_dir() {
        let mut e = Error::new(Code::NotFound, format!("no workspace at {}", root.display()));
        e.path = Some(root.display().to_string());
        return Err(e);
    }
    let root = std::fs::canonicalize(root).map_err(|e| io_error(&e, "cannot resolve", root))?;
    let data = collect(&root)?;
    Ok(serde_json::to_string(&data).expect("the palace data serializes"))
}

fn collect(root: &Path) -> Result<Data, Error> {
    let root_url = root_url(root);
    let (topics, mut diagnostics) = transaction::views::load_topics(root)?;
    let archive = Archive::scan(root)?;
    let promoted = trust::promoted(root)?;
    let mut resolver = ArchiveResolver::new(&archive);
    resolver.promote(&promoted);
    let checked = check(&topics, &resolver);
    diagnostics.extend(checked.diagnostics.iter().cloned());
    diagnostics.sort_by(|a, b| (&a.path, a.line, a.code).cmp(&(&b.path, b.line, b.code)));
    let revision = transaction::revision::compute(root)?.hex;
    let budget = transaction::layout::core_budget(root)?;

    let cited = cited_ids(&topics);
    let summary = summarise_archive(&archive, &cited, &promoted, &root_url);
    let mut embedded = summary.embedded;

    // Files, and where every block lives.
    let file_index: HashMap<&str, usize> =
        topics.iter().enumerate().map(|(k, t)| (t.path.as_str(), k)).collect();
    let mut diag_of_file: HashMap<&str, Vec<usize>> = HashMap::new();
    for (k, d) in diagnostics.iter().enumerate() {
        diag_of_file.entry(d.path.as_str()).or_default().push(k);
    }
    let mut block_at: HashMap<(usize, usize), usize> = HashMap::new(); // (file, index in file) -> block
    let mut blocks_by_id: BlockIndex<'_> = HashMap::new();
    let mut order = 0;
    for (f, t) in topics.iter().enumerate() {
        for (i, b) in t.file.blocks.iter().enumerate() {
            block_at.insert((f, i), order);
            if let Some(id) = &b.id {
                blocks_by_id.entry((f, id.as_str())).or_insert(order);
            }
            order += 1;
        }
    }
    let states: HashMap<(&str, usize), &scriptorium_topic_markdown::validate::BlockState> =
        checked.blocks.iter().map(|s| ((s.path.as_str(), s.index), s)).collect();

    let cx = PartsContext {
        resolver: &resolver,
        by_id: &embedded.by_id,
        file_index: &file_index,
        blocks: &blocks_by_id,
    };
    let mut blocks = Vec::with_capacity(order);
    let mut files = Vec::with_capacity(topics.len());
    let mut counts = Counts::default();
    for (f, t) in topics.iter().enumerate() {
        let fm = t.file.front_matter.as_ref();
        let mut items = Vec::new();
        let mut headings = t.file.headings.iter().peekable();
        let mut title = None;
        let (mut n_blocks, mut n_pending) = (0, 0);
        for (i, b) in t.file.blocks.iter().enumerate() {
            while let Some(&&h) = headings.peek() {
                if h > b.first_line {
                    break;
                }
                let (level, text) = heading(t.file.line(h));
                title.get_or_insert_with(|| text.clone());
                items.push(Item::Heading { heading: text, level });
                headings.next();
            }
            let state = states.get(&(t.path.as_str(), i));
            let pending = state.is_some_and(|s| s.pending);
            let valid = state.is_some_and(|s| s.valid);
            let (parts, records) = block_parts(t, i, &cx);
            let k = blocks.len();
            items.push(Item::Block { block: k });
            n_blocks += 1;
            n_pending += usize::from(pending);
            counts.invalid_blocks += usize::from(!valid);
            blocks.push(BlockOut {
                file: f,
                id: b.id.clone(),
                line: b.first_line + 1,
                pending,
                valid,
                times: state.map(|s| s.times.iter().map(|(w, _)| w.clone()).collect()).unwrap_or_default(),
                parts,
                records,
            });
        }
        for &h in headings {
            let (level, text) = heading(t.file.line(h));
            title.get_or_insert_with(|| text.clone());
            items.push(Item::Heading { heading: text, level });
        }
        counts.pending_blocks += n_pending;
        files.push(FileOut {
            url: format!("{root_url}{}", scriptorium_topic_markdown::views::percent_path(&t.path)),
            path: t.path.clone(),
            kind: fm.and_then(|m| m.kind()).map(|k| k.as_str()),
            description: fm.and_then(|m| m.description()).map(str::to_owned),
            aliases: fm.map(|m| m.aliases().into_iter().map(str::to_owned).collect()).unwrap_or_default(),
            title,
            items,
            blocks: n_blocks,
            pending: n_pending,
            diagnostics: diag_of_file.get(t.path.as_str()).cloned().unwrap_or_default(),
        });
    }
    debug_assert_eq!(blocks.len(), order);
    for (k, b) in blocks.iter().enumerate() {
        for &r in &b.records {
            embedded.records[r].cited_by.push(k);
        }
    }

    // People: person files and the speakers of the records they cite.
    let mut people = Vec::new();
    for (f, file) in files.iter().enumerate() {
        if file.kind != Some("person") {
            continue;
        }
        let mut seen: HashSet<usize> = HashSet::new();
        let mut by_speaker: BTreeMap<(bool, String), usize> = BTreeMap::new();
        for item in &file.items {
            let Item::Block { block } = item else { continue };
            for &r in &blocks[*block].records {
                if seen.insert(r) {
                    let v = &embedded.records[r].view;
                    let who = shown_as(v).unwrap_or_else(|| v.role.clone());
                    *by_speaker.entry((v.speaker_trusted, who)).or_default() += 1;
                }
            }
        }
        let mut speakers: Vec<CitedSpeaker> = by_speaker
            .into_iter()
            .map(|((trusted, attribution), records)| CitedSpeaker { attribution, trusted, records })
            .collect();
        speakers.sort_by(|a, b| b.records.cmp(&a.records).then_with(|| a.attribution.cmp(&b.attribution)));
        people.push(PersonOut { file: f, aliases: file.aliases.clone(), speakers });
    }

    // How often each speaker is cited.
    let mut speakers = summary.speakers;
    let mut cited_per: HashMap<(bool, String), usize> = HashMap::new();
    for r in embedded.records.iter().filter(|r| !r.cited_by.is_empty()) {
        if let Some(who) = shown_as(&r.view) {
            *cited_per.entry((r.view.speaker_trusted, who)).or_default() += 1;
        }
    }
    for s in &mut speakers {
        s.cited = cited_per.get(&(s.trusted, s.attribution.clone())).copied().unwrap_or(0);
    }

    // The timeline: every block on each UTC day its evidence falls on.
    let mut days: BTreeMap<String, Vec<(scriptorium_topic_markdown::time::Instant, usize)>> = BTreeMap::new();
    for s in &checked.blocks {
        let Some(&f) = file_index.get(s.path.as_str()) else { continue };
        let Some(&k) = block_at.get(&(f, s.index)) else { continue };
        let mut on: BTreeMap<(i64, i64, i64), scriptorium_topic_markdown::time::Instant> = BTreeMap::new();
        for (_, instant) in &s.times {
            let e = on.entry(instant.utc_day()).or_insert(*instant);
            if *instant < *e {
                *e = *instant;
            }
        }
        for ((y, m, d), instant) in on {
            if (0..=9999).contains(&y) {
                days.entry(format!("{y:04}-{m:02}-{d:02}")).or_default().push((instant, k));
            }
        }
    }
    let mut all_days: Vec<String> = days.keys().cloned().collect();
    all_days.extend(summary.records_per_day.keys().cloned());
    all_days.sort();
    all_days.dedup();
    let timeline = all_days
        .into_iter()
        .map(|day| {
            let mut on = days.remove(&day).unwrap_or_default();
            on.sort_by(|a, b| {
                let (ba, bb) = (&blocks[a.1], &blocks[b.1]);
                (a.0, &files[ba.file].path, &ba.id).cmp(&(b.0, &files[bb.file].path, &bb.id))
            });
            let records = summary.records_per_day.get(&day).copied().unwrap_or(0);
            DayOut { day, blocks: on.into_iter().map(|(_, k)| k).collect(), records }
        })
        .collect();

    // relations.json, as the derived view writes it.
    let relations = match views::relations(&topics, &checked).0 {
        Some(json) => serde_json::from_str(&json).expect("relations.json is the shape it is written in"),
        None => Relations::default(),
    };

    // core.md, as the derived view renders it.
    let core_file = topics.iter().find(|t| t.path == "topics/core.md");
    let render = views::render_core(core_file, &checked, budget);
    let core = {
        let path = core_file.map(|t| t.path.clone());
        let f = core_file.and_then(|t| file_index.get(t.path.as_str()).copied());
        let mut included = Vec::new();
        let mut ineligible = Vec::new();
        if let Some(f) = f {
            for item in &files[f].items {
                let Item::Block { block } = item else { continue };
                let b = &blocks[*block];
                match &b.id {
                    Some(id) if b.valid && !b.pending => {
                        if !render.report.omitted.contains(id) {
                            included.push(id.clone());
                        }
                    }
                    _ => ineligible.push(*block),
                }
            }
        }
        let blocked = matches!(
            scriptorium_transaction::views::CoreSlot::of(root),
            scriptorium_transaction::views::CoreSlot::Blocked(_)
        );
        let on_disk = match std::fs::read_to_string(root.join("core.md")) {
            _ if blocked => "blocked",
            Ok(text) if !text.starts_with(views::CORE_MARKER) => "hand-written",
            Ok(text) if Some(&text) == render.bytes.as_ref() => "current",
            Ok(_) => "stale",
            Err(_) if render.bytes.is_none() => "absent",
            Err(_) => "stale",
        };
        CoreOut {
            path,
            budget,
            tokens: render.report.tokens,
            included,
            omitted: render.report.omitted,
            ineligible,
            text: render.bytes,
            on_disk,
        }
    };

    let history = json_lines(&root.join(transaction::install::HISTORY))?;
    let audit = json_lines(&root.join(trust::AUDIT_FILE))?;
    let archive_problems = archive
        .problems()
        .iter()
        .map(|p| ProblemOut {
            path: p.path.clone(),
            offset: p.diagnostic.offset as u64,
            line: p.diagnostic.line,
            reason: p.diagnostic.reason.clone(),
        })
        .collect();

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
        history,
        audit,
        core,
        diagnostics,
        archive_problems,
    })
}

// ---------------------------------------------------------------------------
// The page.

/// Escapes compact JSON for a `<script type="application/json">` element:
/// `<`, `>`, `&`, U+2028 and U+2029 become `\u003c`, `\u003e`, `\u0026`,
/// `\u2028`, `\u2029`. These characters occur in JSON only inside strings,
/// where the escape decodes to the same character, so the document means
/// exactly what it meant; and no sequence of memory bytes can end the
/// element (`</script`) or open a comment (`<!--`).
pub fn escape_json(json: &str) -> String {
    let bytes = json.as_bytes();
    let mut out = String::with_capacity(json.len() + json.len() / 32);
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let escape = match bytes[i] {
            b'<' => Some(("\\u003c", 1)),
            b'>' => Some(("\\u003e", 1)),
            b'&' => Some(("\\u0026", 1)),
            0xE2 if bytes.get(i + 1) == Some(&0x80) && bytes.get(i + 2) == Some(&0xA8) => {
                Some(("\\u2028", 3))
            }
            0xE2 if bytes.get(i + 1) == Some(&0x80) && bytes.get(i + 2) == Some(&0xA9) => {
                Some(("\\u2029", 3))
            }
            _ => None,
        };
        match escape {
            Some((with, len)) => {
                out.push_str(&json[copied..i]);
                out.push_str(with);
                i += len;
                copied = i;
            }
            None => i += 1,
        }
    }
    out.push_str(&json[copied..]);
    out
}

/// Standard base64 with padding (RFC 4648 §4).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(chunk.get(1).copied().unwrap_or(0)) << 8)
            | u32::from(chunk.get(2).copied().unwrap_or(0));
        let sextets = [n >> 18, n >> 12, n >> 6, n];
        for (k, s) in sextets.iter().enumerate() {
            if k <= chunk.len() {
                out.push(char::from(ALPHABET[(*s & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `'sha256-…'`: a CSP source expression for an inline element's text.
fn hash_source(text: &str) -> String {
    format!("'sha256-{}'", base64(&Sha256::digest(text.as_bytes())))
}

/// The page's Content-Security-Policy: nothing is allowed (`default-src
/// 'none'`) except the page's own script and style, each by the SHA-256
/// of its text; no `<base>` and no form submission either.
pub fn content_security_policy() -> String {
    format!(
        "default-src 'none'; script-src {}; style-src {}; base-uri 'none'; form-action 'none'",
        hash_source(SCRIPT),
        hash_source(STYLE)
    )
}

/// The HTML page around `data_json` (what [`export`] returns): the policy,
/// the style, the escaped data and the script. Deterministic: the same
/// data gives the same bytes.
pub fn page(data_json: &str) -> String {
    let data = escape_json(data_json);
    let mut html = String::with_capacity(data.len() + SCRIPT.len() + STYLE.len() + 1024);
    html.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    html.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"");
    html.push_str(&content_security_policy());
    html.push_str("\">\n<meta name=\"referrer\" content=\"no-referrer\">\n");
    html.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    html.push_str("<title>Scriptorium palace</title>\n<style>");
    html.push_str(STYLE);
    html.push_str("</style>\n</head>\n<body>\n<noscript>The palace draws its views with its own script; allow scripts for this file to see them.</noscript>\n");
    html.push_str("<script type=\"application/json\" id=\"");
    html.push_str(DATA_ELEMENT_ID);
    html.push_str("\">");
    html.push_str(&data);
    html.push_str("</script>\n<script>");
    html.push_str(SCRIPT);
    html.push_str("</script>\n</body>\n</html>\n");
    html
}

/// The page for the workspace at `root`: [`page`] of [`export`].
pub fn generate(root: &Path) -> Result<String, Error> {
    Ok(page(&export(root)?))
}

// ---------------------------------------------------------------------------
// Writing and opening.

fn fresh_name(prefix: &str) -> String {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{prefix}{nanos:x}-{:x}", std::process::id())
}

#[cfg(unix)]
fn private_dir(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new().mode(0o700).create(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
}

#[cfg(not(unix))]
fn private_dir(path: &Path) -> std::io::Result<()> {
    std::fs::create_dir(path)
}

/// Creates `path` (which must not exist) with mode 0600 and writes
/// `bytes` to it, flushed to the disk.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    f.write_all(bytes)?;
    f.sync_all()
}

/// Writes the page and returns its absolute path.
///
/// * `out` is `None`: `palace.html` in a fresh folder of mode 0700 under
///   the system's temporary folder.
/// * `out` is a file path: its folder must exist (`NOT_FOUND` otherwise,
///   `INVALID_ARGUMENT` when it is not a folder or `out` names a folder);
///   the page is written to a temporary file in that folder and renamed
///   over `out`, so a reader sees the old page or the new one, never a
///   part.
///
/// The page has mode 0600 either way.
pub fn write(html: &str, out: Option<&Path>) -> Result<PathBuf, Error> {
    let at = |code: Code, message: String, path: &Path| {
        let mut e = Error::new(code, message);
        e.path = Some(path.display().to_string());
        e
    };
    let Some(out) = out else {
        let base = std::env::temp_dir();
        let mut dir = None;
        for n in 0..100u32 {
            let candidate = base.join(format!("{}-{n}", fresh_name("scriptorium-palace-")));
            match private_dir(&candidate) {
                Ok(()) => {
                    dir = Some(candidate);
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io_error(&e, "cannot create the folder", &candidate)),
            }
        }
        let dir = dir.ok_or_else(|| at(Code::Io, "no fresh temporary folder could be made".into(), &base))?;
        let dir = std::fs::canonicalize(&dir).map_err(|e| io_error(&e, "cannot resolve", &dir))?;
        let file = dir.join(FILE_NAME);
        write_private(&file, html.as_bytes()).map_err(|e| io_error(&e, "cannot write", &file))?;
        return Ok(file);
    };
    let Some(name) = out.file_name() else {
        return Err(at(Code::InvalidArgument, format!("--out {} does not name a file", out.display()), out));
    };
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let parent = match std::fs::canonicalize(&parent) {
        Ok(p) => p,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(at(
                Code::NotFound,
                format!("the folder of --out {} does not exist: {}", out.display(), parent.display()),
                &parent,
            ))
        }
        Err(e) => return Err(io_error(&e, "cannot resolve", &parent)),
    };
    if !parent.is_dir() {
        return Err(at(Code::InvalidArgument, format!("{} is not a folder", parent.display()), &parent));
    }
    let target = parent.join(name);
    if target.is_dir() {
        return Err(at(Code::InvalidArgument, format!("--out {} is a folder", target.display()), &target));
    }
    let tmp = parent.join(format!(".{}.{}", name.to_string_lossy(), fresh_name("tmp-")));
    if let Err(e) = write_private(&tmp, html.as_bytes()) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io_error(&e, "cannot write", &tmp));
    }
    if let Err(e) = std::fs::rename(&tmp, &target) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io_error(&e, "cannot replace", &target));
    }
    // The rename is durable once the folder is.
    if let Ok(d) = std::fs::File::open(&parent) {
        let _ = d.sync_all();
    }
    Ok(target)
}

/// The platform's opener: `open` on macOS, `explorer` on Windows,
/// `xdg-open` elsewhere.
pub fn opener() -> &'static str {
    if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    }
}

/// Hands `path` to the platform's [`opener`] without waiting for it (a
/// browser may run for hours). `IO` when the opener cannot be started.
pub fn open(path: &Path) -> Result<(), Error> {
    let opener = opener();
    std::process::Command::new(opener)
        .arg(path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(drop)
        .map_err(|e| {
            let mut err =
                Error::new(Code::Io, format!("cannot start {opener} to open {}: {e}", path.display()));
            err.path = Some(path.display().to_string());
            err
        })
}

#[cfg(test)]
mod tests;
