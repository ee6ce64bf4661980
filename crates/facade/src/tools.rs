//! The `memory_*` tools: their JSON Schema specs (OpenAI function-calling
//! shape) and one dispatcher, [`call_tool`], shared by the library, the CLI
//! and the MCP server (FORMAT.md §9).
//!
//! There is no "save this" tool: recording the conversation is the
//! writer's job; `memory_update` is for what the user asked to be
//! remembered now and for fixing what is wrong.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use scriptorium_bm25_index::search::Filters;
use scriptorium_bm25_index::workspace as index_ws;
use scriptorium_source_archive::archive::{Archive, Found};
use scriptorium_source_archive::json::RecordView;
use scriptorium_source_archive::{v2, SourceId};
use scriptorium_topic_markdown::validate::Loaded;
use scriptorium_transaction::{self as transaction, Base, Tier};

use crate::error::Error;
use crate::search::{Answer, Method};
use crate::status::Status;

pub mod args;
use crate::snapshot::{Checkup, Snapshot};
use scriptorium_source_archive::Code;

/// Who is calling a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caller {
    /// What the caller may write.
    pub tier: Tier,
    /// Whether a person is at the keyboard (only they may promote).
    pub interactive: bool,
}

fn invalid(message: impl Into<String>) -> Error {
    Error::new(Code::InvalidArgument, message)
}

fn tool(name: &str, description: &str, parameters: Value) -> Value {
    json!({"type": "function", "function": {"name": name, "description": description, "parameters": parameters}})
}

/// The six tools' specs, in the OpenAI function-calling shape.
pub fn tool_specs() -> Vec<Value> {
    vec![
        tool(
            "memory_search",
            "Search memory (topic blocks and archived messages), best first. `speaker` filters archived messages: an exact id, or a name or attribution (`Ada [id 7391]`) that exactly one archived identity has; a name several share is refused, listing them.",
            json!({"type": "object", "properties": {
                "query": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                "path_prefix": {"type": "string"},
                "date_from": {"type": "string", "description": "YYYY-MM-DD"},
                "date_to": {"type": "string", "description": "YYYY-MM-DD"},
                "speaker": {"type": "string"},
                "method": {"type": "string", "enum": ["bm25", "embedding", "hybrid"],
                    "description": "bm25 (default; words), embedding (meaning; needs the configured embeddings endpoint), hybrid (both, fused; BM25 alone, saying so, without an endpoint). speaker works with bm25 only."},
                "include_pending": {"type": "boolean"}},
                "required": ["query"], "additionalProperties": false}),
        ),
        tool(
            "memory_get",
            "Read exactly one of: a topic file (`path`), a block (`block_id`), an archived message (`source_id` or `anchor`).",
            json!({"type": "object", "properties": {
                "path": {"type": "string"}, "block_id": {"type": "string"},
                "source_id": {"type": "string"}, "anchor": {"type": "string"}},
                "additionalProperties": false}),
        ),
        tool(
            "memory_update",
            "Change memory as one validated transaction: the patch object (base_revision, message, sources, edits). Only for what the user asked to remember now, or to fix what is wrong. A paired caller's sources must be pending and may not name a speaker (speaker_id, speaker_display).",
            json!({"type": "object", "properties": {
                "base_revision": {"type": "string"}, "message": {"type": "string"},
                "sources": {"type": "array", "items": {"type": "object"}},
                "edits": {"type": "array", "items": {"type": "object"}}},
                "required": ["base_revision"]}),
        ),
        tool("memory_status", "The revision, counts and writer status.", json!({"type": "object", "properties": {}, "additionalProperties": false})),
        tool(
            "memory_promote",
            "Trust pending archived messages (owner at the keyboard only).",
            json!({"type": "object", "properties": {"source_ids": {"type": "array", "items": {"type": "string"}}},
                   "required": ["source_ids"], "additionalProperties": false}),
        ),
        tool(
            "memory_grep",
            "Raw lines of topic and archive files matching a regular expression (Rust regex syntax); pending ones marked.",
            json!({"type": "object", "properties": {
                "regex": {"type": "string"}, "path_prefix": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 1000}},
                "required": ["regex"], "additionalProperties": false}),
        ),
    ]
}

/// The tool names.
pub const TOOLS: [&str; 6] =
    ["memory_search", "memory_get", "memory_update", "memory_status", "memory_promote", "memory_grep"];

/// A tool call with its arguments checked.
enum Call {
    Search(args::SearchArgs),
    Get(args::GetArgs),
    /// The patch is checked by the transaction.
    Update,
    Status(args::StatusArgs),
    Promote(args::PromoteArgs),
    Grep(args::GrepArgs),
}

/// Runs tool `name` with `args` (a JSON object) on the workspace at `root`.
///
/// The configuration is read first (the user file, the workspace's
/// `scriptorium.toml`, the environment): with `memory.backend = "none"`
/// every tool refuses with `MEMORY_DISABLED` before anything else is
/// looked at; a configuration that does not load is `INVALID_ARGUMENT`.
pub fn call_tool(root: &Path, name: &str, args: &Value, caller: &Caller) -> Result<Value, Error> {
    let config = crate::config::Config::load(root).map_err(|e| {
        let mut t = invalid(format!("configuration: {}", e.message));
        t.path = Some(e.path.display().to_string());
        t
    })?;
    if config.disabled() {
        return Err(Error::disabled());
    }
    if !args.is_object() {
        return Err(invalid("the arguments must be a JSON object"));
    }
    // The arguments are checked before the workspace is looked at.
    let call = match name {
        "memory_search" => Call::Search(args::parse(name, args)?),
        "memory_get" => Call::Get(args::parse(name, args)?),
        "memory_update" => Call::Update,
        "memory_status" => Call::Status(args::parse(name, args)?),
        "memory_promote" => {
            // Who may promote is said before what is wrong with the call.
            owner_at_the_keyboard(caller)?;
            Call::Promote(args::parse(name, args)?)
        }
        "memory_grep" => Call::Grep(args::parse(name, args)?),
        _ => return Err(invalid(format!("there is no tool {name:?}"))),
    };
    if !root.is_dir() {
        return Err(Error::new(Code::NotFound, format!("no workspace at {}", root.display())));
    }
    match call {
        Call::Search(a) => search(root, &a, &config).map(|answer| json!(answer)),
        Call::Get(a) => get(root, &a),
        Call::Update => update(root, args, caller),
        Call::Status(args::StatusArgs {}) => status(root),
        Call::Promote(a) => promote(root, a, caller),
        Call::Grep(a) => grep(root, &a),
    }
}

/// The workspace held for reading by a tool.
fn snapshot(root: &Path) -> Result<Snapshot, Error> {
    Ok(Snapshot::open(root, transaction::lock::INTERACTIVE_TIMEOUT)?)
}

/// `memory_search`, typed: the answer for `a` on the workspace at `root`,
/// read under a [`Snapshot`].
pub fn search(root: &Path, a: &args::SearchArgs, config: &crate::config::Config) -> Result<Answer, Error> {
    let method = a.method.unwrap_or_default();
    if a.speaker.is_some() && method != Method::Bm25 {
        return Err(invalid(format!(
            "a speaker filter works only with method bm25 (it matches archived records' trusted speaker fields), not {}",
            method.as_str()
        )));
    }
    let day = |k: &str, v: &Option<String>| -> Result<Option<i32>, Error> {
        match v {
            None => Ok(None),
            Some(s) => index_ws::parse_day(s)
                .map(Some)
                .ok_or_else(|| invalid(format!("{k} {s:?} is not YYYY-MM-DD"))),
        }
    };
    let filters = Filters {
        kind: a.speaker.as_ref().map(|_| scriptorium_bm25_index::segment::Kind::Source),
        path_prefix: a.path_prefix.clone(),
        day_from: day("date_from", &a.date_from)?,
        day_to: day("date_to", &a.date_to)?,
        speaker: None,
        include_pending: a.include_pending.unwrap_or(false),
    };
    let limit = args::limit(a.limit, 10, 100)?;
    let _snapshot = snapshot(root)?;
    crate::search::answer(root, config, method, &a.query, &filters, a.speaker.as_deref(), limit)
}

fn get(root: &Path, a: &args::GetArgs) -> Result<Value, Error> {
    let given: Vec<(&str, &str)> =
        [("path", &a.path), ("block_id", &a.block_id), ("source_id", &a.source_id), ("anchor", &a.anchor)]
            .into_iter()
            .filter_map(|(k, v)| v.as_deref().map(|v| (k, v)))
            .collect();
    let [(key, value)] = given.as_slice() else {
        return Err(invalid("give exactly one of path, block_id, source_id, anchor"));
    };
    let snapshot = snapshot(root)?;
    match *key {
        "path" => {
            transaction::patch::check_path(value)?;
            scriptorium_source_archive::fsio::check_no_links(root, value)?;
            match std::fs::read_to_string(root.join(value)) {
                Ok(content) => Ok(json!({"path": value, "content": content})),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    Err(Error::new(Code::NotFound, format!("no topic file {value}")))
                }
                Err(e) => Err(Error::new(Code::Io, format!("cannot read {value}: {e}"))),
            }
        }
        "block_id" => {
            let topics = snapshot.topics()?.loaded;
            for t in &topics {
                if let Some(b) = t.file.blocks.iter().find(|b| b.id.as_deref() == Some(*value)) {
                    return Ok(
                        json!({"path": t.path, "block_id": value, "line": b.first_line + 1, "text": t.file.block_text(b)}),
                    );
                }
            }
            Err(Error::new(Code::NotFound, format!("no block ^{value}")))
        }
        _ => {
            let archive = Archive::scan(root)?;
            let id = if *key == "source_id" {
                Some(SourceId::parse(value).map_err(Error::from)?)
            } else {
                archive
                    .v2_records()
                    .map(|r| r.id().clone())
                    .chain(archive.legacy_records().filter_map(|(_, r)| r.id.clone()))
                    .find(|id| id.anchor() == *value)
            };
            let promoted = snapshot.promoted()?;
            let view = id.as_ref().and_then(|id| archive.get(id)).map(|found| match found {
                Found::V2(r) => {
                    let mut view = RecordView::of_record(r);
                    if r.is_pending() && promoted.contains(&r.id().text()) {
                        view.trust = scriptorium_source_archive::json::Trust::Trusted;
                    }
                    view
                }
                Found::Legacy(path, r) => RecordView::of_legacy(r, path, None),
            });
            match view {
                Some(v) => Ok(serde_json::to_value(v).unwrap_or(Value::Null)),
                None => Err(Error::new(Code::NotFound, format!("no archived record {value}"))),
            }
        }
    }
}

fn update(root: &Path, args: &Value, caller: &Caller) -> Result<Value, Error> {
    let mut patch = transaction::patch::parse(&args.to_string(), caller.tier)?;
    let mut w = transaction::Committer::open(root, Duration::from_secs(5))?;
    // A hand-written core.md is migrated first, as on every write.
    w.migrate_core_before(&mut patch)?;
    let by = transaction::observe::Provenance::by("update");
    let done = w.commit_as(&patch, caller.tier, Base::Check, &by)?;
    Ok(json!({"revision": done.revision, "changed": done.changed}))
}

fn status(root: &Path) -> Result<Value, Error> {
    let status = Status::of(&snapshot(root)?)?;
    Ok(serde_json::to_value(status).unwrap_or(Value::Null))
}

/// Only the owner at the keyboard may promote.
fn owner_at_the_keyboard(caller: &Caller) -> Result<(), Error> {
    if caller.tier != Tier::Owner || !caller.interactive {
        return Err(Error::new(
            Code::PermissionDenied,
            "memory_promote is for the owner at the keyboard; this caller is not",
        ));
    }
    Ok(())
}

fn promote(root: &Path, a: args::PromoteArgs, caller: &Caller) -> Result<Value, Error> {
    owner_at_the_keyboard(caller)?;
    let ids = a.source_ids;
    if ids.is_empty() {
        return Err(invalid("\"source_ids\" must be a non-empty array"));
    }
    // The writer `write` would use, from the workspace's configuration: a
    // bad choice promotes nothing.
    let config =
        crate::config::Config::load(root).map_err(|e| invalid(format!("configuration: {}", e.message)))?;
    let mut chosen =
        crate::writers::choose(&crate::writers::WriterFlags::default(), &config).map_err(Error::from)?;
    let done = crate::writers::promote(root, &ids, "owner", chosen.input_writer(), Duration::from_secs(5))?;
    Ok(serde_json::to_value(done).unwrap_or(Value::Null))
}

fn grep(root: &Path, a: &args::GrepArgs) -> Result<Value, Error> {
    let re = regex::RegexBuilder::new(&a.regex)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| invalid(format!("regex: {e}")))?;
    let prefix = a.path_prefix.as_deref().unwrap_or("");
    let limit = args::limit(a.limit, 100, 1000)?;
    let snapshot = snapshot(root)?;
    let mut files = Vec::new();
    for top in ["topics", "sources"] {
        collect(root, top, &mut files);
    }
    files.sort();
    // Which topic lines are in pending blocks.
    let Checkup { topics, promoted, checked, .. } = snapshot.checkup()?;
    let topics = topics.loaded;
    let mut pending_lines: HashSet<(String, usize)> = HashSet::new();
    for b in checked.blocks.iter().filter(|b| b.pending) {
        if let Some(t) = topics.iter().find(|t: &&Loaded| t.path == b.path) {
            if let Some(block) = t.file.blocks.get(b.index) {
                for l in block.first_line..=block.last_line {
                    pending_lines.insert((b.path.clone(), l));
                }
            }
        }
    }
    let mut hits = Vec::new();
    'files: for rel in files.iter().filter(|p| p.starts_with(prefix)) {
        let Ok(text) = std::fs::read_to_string(root.join(rel)) else { continue };
        let mut pending_frames: Vec<(usize, usize)> = Vec::new();
        if rel.starts_with("sources/") && rel.contains("/_v2/") {
            for f in v2::parse_prefix(text.as_bytes(), None).frames {
                if f.pending && !promoted.contains(f.source_text) {
                    let first = f.line as usize;
                    let lines = text[f.offset..f.offset + f.len].lines().count();
                    pending_frames.push((first, first + lines));
                }
            }
        }
        for (k, line) in text.lines().enumerate() {
            if !re.is_match(line) {
                continue;
            }
            let n = k + 1;
            let pending = pending_lines.contains(&(rel.clone(), k))
                || pending_frames.iter().any(|&(a, b)| n >= a && n < b);
            hits.push(json!({"path": rel, "line": n, "text": line, "pending": pending}));
            if hits.len() >= limit {
                break 'files;
            }
        }
    }
    Ok(json!({"matches": hits}))
}

fn collect(root: &Path, rel: &str, out: &mut Vec<String>) {
    let Ok(rd) = std::fs::read_dir(root.join(rel)) else { return };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = format!("{rel}/{name}");
        match e.file_type() {
            Ok(t) if t.is_dir() => collect(root, &path, out),
            Ok(t) if t.is_file() && name.ends_with(".md") => out.push(path),
            _ => {}
        }
    }
}
