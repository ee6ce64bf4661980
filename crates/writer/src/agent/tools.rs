//! The tools the model calls: their specifications, and running one call
//! against the workspace (reading) or the staged edits (writing).

use serde_json::{json, Value};

use scriptorium_bm25_index::search::{Bm25, Filters};
use scriptorium_bm25_index::tokenize::TokenizerConfig;
use scriptorium_transaction::{patch, Edit};

use super::{Job, GET_CHARS};
use crate::model::{ToolCall, ToolSpec};

/// The tools a write (with `evidence`) or a reorganize (without) offers.
pub fn tool_specs(with_evidence: bool) -> Vec<ToolSpec> {
    let path = json!({"type": "string", "description": "workspace-relative, under topics/, ending in .md"});
    let mut v = vec![
        ToolSpec {
            name: "search",
            description:
                "BM25 search over topic blocks and archived records; returns JSON lines, best first.",
            parameters: json!({"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["query"]}),
        },
        ToolSpec {
            name: "read",
            description:
                "The current text of one topic file, 20,000 characters a page (`offset` for the next).",
            parameters: json!({"type": "object", "properties": {"path": path, "offset": {"type": "integer"}}, "required": ["path"]}),
        },
        ToolSpec {
            name: "create",
            description: "Stage a new topic file.",
            parameters: json!({"type": "object", "properties": {"path": path, "content": {"type": "string"}}, "required": ["path", "content"]}),
        },
        ToolSpec {
            name: "append",
            description: "Stage text appended to a topic file (start it with a blank line).",
            parameters: json!({"type": "object", "properties": {"path": path, "content": {"type": "string"}}, "required": ["path", "content"]}),
        },
        ToolSpec {
            name: "str_replace",
            description: "Stage replacing the first occurrence of `old` in a topic file by `new`.",
            parameters: json!({"type": "object", "properties": {"path": path, "old": {"type": "string"}, "new": {"type": "string"}}, "required": ["path", "old", "new"]}),
        },
        ToolSpec {
            name: "replace",
            description: "Stage a topic file's whole new content (read every page of it with `read` first).",
            parameters: json!({"type": "object", "properties": {"path": path, "content": {"type": "string"}}, "required": ["path", "content"]}),
        },
        ToolSpec {
            name: "delete",
            description: "Stage deleting a topic file (read every page of it with `read` first).",
            parameters: json!({"type": "object", "properties": {"path": path}, "required": ["path"]}),
        },
        ToolSpec {
            name: "reset",
            description: "Drop every staged edit.",
            parameters: json!({"type": "object", "properties": {}}),
        },
        ToolSpec {
            name: "finish",
            description: "Commit the staged edits (and the batch's records) as one transaction.",
            parameters: json!({"type": "object", "properties": {}}),
        },
    ];
    if with_evidence {
        v.insert(2, ToolSpec {
            name: "evidence",
            description: "The footnote label and definition line citing turns of this batch from a topic file.",
            parameters: json!({"type": "object", "properties": {"path": path, "refs": {"type": "array", "items": {"type": "string"}}}, "required": ["path", "refs"]}),
        });
    }
    v
}

/// The staged edits, and the files the model has read whole in this job:
/// only those (or files it created) may be replaced or deleted, so an edit
/// made from a partial view cannot drop blocks it never saw.
#[derive(Debug, Default)]
pub(super) struct Staged {
    /// The edits, in order.
    pub(super) edits: Vec<Edit>,
    /// Per file, how far (in characters) it has been read from the start
    /// without a gap.
    read_upto: std::collections::HashMap<String, usize>,
    read_whole: std::collections::HashSet<String>,
    created: std::collections::HashSet<String>,
}

fn string_arg(args: &Value, key: &str) -> Result<String, String> {
    args.get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("error: argument {key:?} (a string) is required"))
}

fn topic_path(args: &Value) -> Result<String, String> {
    let p = string_arg(args, "path")?;
    patch::check_path(&p).map_err(|e| format!("error: {}", e.message))?;
    Ok(p)
}

impl Staged {
    /// Stages `e`; says how many edits are staged.
    fn stage(&mut self, e: Edit) -> String {
        self.edits.push(e);
        format!("staged ({} edits)", self.edits.len())
    }
}

/// Runs one tool call; returns its answer and whether it was `finish`.
pub(super) fn run_tool(job: &Job<'_>, staged: &mut Staged, call: &ToolCall) -> (String, bool) {
    // Tools without arguments run whatever came with them (servers send
    // "", "null" or "{}").
    match call.name.as_str() {
        "finish" => return ("committing".to_owned(), true),
        "reset" => {
            staged.edits.clear();
            staged.created.clear();
            return ("every staged edit dropped".to_owned(), false);
        }
        _ => {}
    }
    let args: Value = match call.arguments.trim() {
        "" | "null" => Value::Object(Default::default()),
        text => match serde_json::from_str(text) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) | Err(_) => {
                return (format!("error: the arguments of {} are not a JSON object", call.name), false)
            }
        },
    };
    let answer = match call.name.as_str() {
        "search" => search(job, &args),
        "read" => read(job, staged, &args),
        "evidence" => evidence(job, &args),
        "create" | "append" => stage_addition(staged, &call.name, &args),
        "replace" | "delete" | "str_replace" => stage_change(staged, &call.name, &args),
        other => format!("error: there is no tool {other:?}"),
    };
    (answer, false)
}

/// `search`: the best `limit` hits (5 by default, at most 20) for
/// `query`, one JSON line each.
fn search(job: &Job<'_>, args: &Value) -> String {
    let q = match string_arg(args, "query") {
        Err(e) => return e,
        Ok(q) => q,
    };
    let limit = args.get("limit").and_then(Value::as_u64).unwrap_or(5).clamp(1, 20) as usize;
    match scriptorium_bm25_index::workspace::search(
        job.root,
        TokenizerConfig::default(),
        &q,
        &Filters::default(),
        None,
        limit,
        Bm25::default(),
    ) {
        Ok(hits) if hits.is_empty() => "no hits".to_owned(),
        Ok(hits) => hits.iter().map(scriptorium_source_archive::json::to_line).collect::<Vec<_>>().join("\n"),
        Err(e) => format!("error: {}", e.message()),
    }
}

/// `read`: one page of a topic file from `offset`; notes how far the
/// file has been read without a gap.
fn read(job: &Job<'_>, staged: &mut Staged, args: &Value) -> String {
    let p = match topic_path(args) {
        Err(e) => return e,
        Ok(p) => p,
    };
    let offset = args.get("offset").and_then(Value::as_u64).unwrap_or(0) as usize;
    let text = match scriptorium_source_archive::fsio::check_no_links(job.root, &p)
        .map_err(|e| e.message().to_owned())
        .and_then(|()| std::fs::read_to_string(job.root.join(&p)).map_err(|e| e.to_string()))
    {
        Ok(text) => text,
        Err(e) => return format!("error: {p}: {e}"),
    };
    let total = text.chars().count();
    let page: String = text.chars().skip(offset).take(GET_CHARS).collect();
    let end = offset.saturating_add(GET_CHARS);
    let upto = staged.read_upto.entry(p.clone()).or_insert(0);
    if offset <= *upto {
        *upto = (*upto).max(end);
    }
    if *upto >= total {
        staged.read_whole.insert(p.clone());
    }
    if end >= total {
        page
    } else {
        format!("{page}\n[… {total} characters in all; call read with offset {end} for the rest]")
    }
}

/// `evidence`: for each of `refs` (turns of this batch), the footnote label
/// to cite it by and the definition line to add to the file.
fn evidence(job: &Job<'_>, args: &Value) -> String {
    match (topic_path(args), args.get("refs").and_then(Value::as_array)) {
        (Err(e), _) => e,
        (_, None) => "error: argument \"refs\" (an array of strings) is required".to_owned(),
        (Ok(p), Some(refs)) => refs
            .iter()
            .map(|r| {
                let r = r.as_str().unwrap_or("");
                match job.turns.iter().find(|t| t.source == r) {
                    Some(t) => format!(
                        "cite as [^{}]; define once in {p}:\n{}",
                        t.evidence.label(),
                        t.evidence.definition(&p)
                    ),
                    None => format!("error: {r:?} is not a turn of this batch"),
                }
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// `create` and `append` (the tool `name`): staged as they come.
fn stage_addition(staged: &mut Staged, name: &str, args: &Value) -> String {
    match (topic_path(args), string_arg(args, "content")) {
        (Err(e), _) | (_, Err(e)) => e,
        (Ok(path), Ok(content)) => {
            if name == "create" {
                staged.created.insert(path.clone());
                staged.stage(Edit::Create { path, content })
            } else {
                staged.stage(Edit::Append { path, content })
            }
        }
    }
}

/// `replace`, `delete` and `str_replace` (the tool `name`): the first two
/// only of a file read whole or created in this job.
fn stage_change(staged: &mut Staged, name: &str, args: &Value) -> String {
    match topic_path(args) {
        Err(e) => e,
        Ok(path)
            if name != "str_replace"
                && !staged.read_whole.contains(&path)
                && !staged.created.contains(&path) =>
        {
            format!("error: read {path} whole with read (every page) before you replace or delete it")
        }
        Ok(path) => match name {
            "delete" => staged.stage(Edit::Delete { path }),
            "replace" => match string_arg(args, "content") {
                Err(e) => e,
                Ok(content) => staged.stage(Edit::Replace { path, content }),
            },
            _ => match (string_arg(args, "old"), string_arg(args, "new")) {
                (Err(e), _) | (_, Err(e)) => e,
                (Ok(old), Ok(new)) => staged.stage(Edit::StrReplace { path, old, new }),
            },
        },
    }
}
