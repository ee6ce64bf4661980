//! The model-driven writer: a bounded tool loop whose staged edits, with the
//! batch's evidence records, become one transaction.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use scriptorium_bm25_index::search::{Bm25, Filters};
use scriptorium_bm25_index::tokenize::TokenizerConfig;
use scriptorium_scheduler::{Batch, BatchWriter, Code, WriteFailure, Written};
use scriptorium_source_archive::SourceRecord;
use scriptorium_transaction::{self as transaction, patch, Base, Edit, Patch, Tier};

use crate::input::{Input, Turn};
use crate::model::{Message, Model, ToolCall, ToolSpec};

/// The write prompt (versioned in its first line).
pub const WRITE_PROMPT: &str = include_str!("../prompts/write.md");
/// The reorganize prompt.
pub const SLEEP_PROMPT: &str = include_str!("../prompts/sleep.md");

/// Model calls a write may make by default.
pub const MAX_CALLS: usize = 12;
/// Times a refused transaction is shown to the model to repair.
pub const REPAIRS: usize = 2;
/// The most characters one `memory_get` page holds.
pub const GET_CHARS: usize = 20_000;
/// Tool calls of one answer that are run; the rest are answered with an
/// error.
pub const CALLS_PER_REPLY: usize = 16;
/// Topic files the reorganize pass lists by name; the rest are counted.
pub const LISTED_FILES: usize = 400;

/// A writer driven by a model.
#[derive(Debug)]
pub struct ModelWriter<M> {
    /// The model.
    pub model: M,
    /// Model calls per write.
    pub max_calls: usize,
    /// Repair rounds after a refused transaction.
    pub repairs: usize,
    /// `o200k_base` tokens sent in each model call of the last write
    /// (prompt, records and tool results).
    pub tokens_sent: Vec<usize>,
}

impl<M: Model> ModelWriter<M> {
    /// A writer with the default bounds.
    pub fn new(model: M) -> ModelWriter<M> {
        ModelWriter { model, max_calls: MAX_CALLS, repairs: REPAIRS, tokens_sent: Vec::new() }
    }

    /// Writes `input` as one transaction.
    pub fn write_input(&mut self, input: &Input<'_>) -> Result<Written, WriteFailure> {
        input.refuse_conflicts()?;
        let user = observation(&input.origin, &input.turns);
        let job = Job {
            root: input.root,
            turns: &input.turns,
            archive: &input.archive,
            lock_timeout: input.lock_timeout,
            message: format!(
                "model writer ({}): {} turns of {}",
                self.model.name(),
                input.turns.len(),
                input.origin
            ),
        };
        self.run(WRITE_PROMPT, user, &job)
    }

    /// The nightly reorganize: the file list, then the same tools; returns
    /// the paths changed (empty: nothing to do).
    pub fn reorganize(&mut self, root: &Path, lock_timeout: Duration) -> Result<Vec<String>, WriteFailure> {
        let user = file_list(root)?;
        let job = Job { root, turns: &[], archive: &[], lock_timeout, message: "reorganize".to_owned() };
        self.run(SLEEP_PROMPT, user, &job).map(|w| w.changed)
    }

    fn run(&mut self, system: &str, user: String, job: &Job<'_>) -> Result<Written, WriteFailure> {
        self.tokens_sent.clear();
        let base = transaction::revision::compute(job.root)?.hex;
        let tools = tool_specs(!job.turns.is_empty());
        let mut messages = vec![Message::text("system", system), Message::text("user", user)];
        let mut staged = Staged::default();
        let mut repairs = 0;
        for _ in 0..self.max_calls {
            self.tokens_sent.push(tokens_of(&messages));
            tracing::debug!(model = self.model.name(), messages = messages.len(), "asking the model");
            let reply = self.model.chat(&messages, &tools)?;
            tracing::debug!(
                tool_calls = reply.tool_calls.len(),
                prompt_tokens = reply.prompt_tokens,
                "the model answered"
            );
            messages.push(Message {
                role: "assistant".to_owned(),
                content: reply.text.clone(),
                tool_calls: reply.tool_calls.clone(),
                tool_call_id: None,
            });
            if reply.tool_calls.is_empty() {
                messages.push(Message::text("user", "Use the tools, and call `finish` when you are done."));
                continue;
            }
            let mut finish = false;
            for (i, call) in reply.tool_calls.iter().enumerate() {
                let answer = if i < CALLS_PER_REPLY {
                    let (answer, done) = run_tool(job, &mut staged, call);
                    finish |= done;
                    answer
                } else {
                    format!("error: not run; at most {CALLS_PER_REPLY} tool calls per answer")
                };
                messages.push(Message::tool(&call.id, answer));
            }
            if !finish {
                continue;
            }
            match commit(job, &base, &staged.edits) {
                Ok(w) => return Ok(w),
                Err(e) if repairable(&e) && repairs < self.repairs => {
                    repairs += 1;
                    messages.push(Message::text("user", refusal_text(&e)));
                }
                // The model's edits, refused after the repairs: not retryable.
                Err(e) if repairable(&e) => {
                    let f = WriteFailure::from(e);
                    return Err(WriteFailure::new(
                        Code::ValidationFailed,
                        format!(
                            "refused after {} repair attempts: {} {}",
                            self.repairs,
                            f.code.as_str(),
                            f.reason
                        ),
                    ));
                }
                Err(e) => return Err(WriteFailure::from(e)),
            }
        }
        Err(WriteFailure::new(
            Code::ValidationFailed,
            format!(
                "the model made {} calls without a transaction that could be committed; nothing was written",
                self.max_calls
            ),
        ))
    }
}

impl<M: Model> BatchWriter for ModelWriter<M> {
    fn name(&self) -> &str {
        self.model.name()
    }

    fn write_batch(&mut self, batch: &Batch<'_>) -> Result<Written, WriteFailure> {
        self.write_input(&Input::of_batch(batch))
    }
}

struct Job<'a> {
    root: &'a Path,
    turns: &'a [Turn],
    archive: &'a [SourceRecord],
    lock_timeout: Duration,
    message: String,
}

/// The runtime's framing of a batch: a heading and the writer-input lines in
/// a fence. Every line starts with `{`, so no content can close the fence.
pub fn observation(origin: &str, turns: &[Turn]) -> String {
    let mut s =
        format!("## Observation: {} turns from {}\n\n```jsonl\n", turns.len(), origin.replace('\n', " "));
    for t in turns {
        s.push_str(&t.line);
        s.push('\n');
    }
    s.push_str("```\n");
    s
}

fn tokens_of(messages: &[Message]) -> usize {
    let bpe = tiktoken_rs::o200k_base_singleton();
    messages
        .iter()
        .map(|m| {
            m.content.as_deref().map_or(0, |c| bpe.count_ordinary(c))
                + m.tool_calls.iter().map(|c| bpe.count_ordinary(&c.arguments)).sum::<usize>()
        })
        .sum()
}

fn commit(job: &Job<'_>, base: &str, staged: &[Edit]) -> Result<Written, transaction::Error> {
    let mut w = transaction::Writer::open(job.root, job.lock_timeout)?;
    let patch = Patch {
        base_revision: base.to_owned(),
        message: job.message.clone(),
        sources: job.archive.to_vec(),
        edits: staged.to_vec(),
    };
    let done = w.commit(&patch, Tier::Owner, Base::Check)?;
    Ok(Written { revision: done.revision, changed: done.changed })
}

/// What the model can fix: its edits were refused. A stale base revision is
/// not (the scheduler rebuilds the batch), nor a held lock or an I/O error.
fn repairable(e: &transaction::Error) -> bool {
    match e.code {
        transaction::Code::ValidationFailed
        | transaction::Code::NotFound
        | transaction::Code::InvalidArgument => true,
        transaction::Code::Conflict => !e.message.starts_with("base_revision "),
        _ => false,
    }
}

fn refusal_text(e: &transaction::Error) -> String {
    let mut s = format!("The transaction was refused: {} {}", e.code.as_str(), e.message);
    if let Some(p) = &e.path {
        s.push_str(&format!(" ({p})"));
    }
    for d in &e.diagnostics {
        s.push_str(&format!("\n- {d}"));
    }
    s.push_str(
        "\nNothing was written. Fix the staged edits (or `reset` and stage them again), then call `finish`.",
    );
    s
}

/// The tools a write (with `evidence`) or a reorganize (without) offers.
pub fn tool_specs(with_evidence: bool) -> Vec<ToolSpec> {
    let path = json!({"type": "string", "description": "workspace-relative, under topics/, ending in .md"});
    let mut v = vec![
        ToolSpec {
            name: "memory_search",
            description:
                "BM25 search over topic blocks and archived records; returns JSON lines, best first.",
            parameters: json!({"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["query"]}),
        },
        ToolSpec {
            name: "memory_get",
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
            description: "Stage a topic file's whole new content (read it whole with memory_get first).",
            parameters: json!({"type": "object", "properties": {"path": path, "content": {"type": "string"}}, "required": ["path", "content"]}),
        },
        ToolSpec {
            name: "delete",
            description: "Stage deleting a topic file (read it whole with memory_get first).",
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
struct Staged {
    edits: Vec<Edit>,
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

/// Runs one tool call; returns its answer and whether it was `finish`.
fn run_tool(job: &Job<'_>, staged: &mut Staged, call: &ToolCall) -> (String, bool) {
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
    let stage = |staged: &mut Staged, e: Edit| {
        staged.edits.push(e);
        format!("staged ({} edits)", staged.edits.len())
    };
    let answer = match call.name.as_str() {
        "memory_search" => match string_arg(&args, "query") {
            Err(e) => e,
            Ok(q) => {
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
                    Ok(hits) => hits
                        .iter()
                        .map(scriptorium_source_archive::json::to_line)
                        .collect::<Vec<_>>()
                        .join("\n"),
                    Err(e) => format!("error: {}", e.message()),
                }
            }
        },
        "memory_get" => match topic_path(&args) {
            Err(e) => e,
            Ok(p) => {
                let offset = args.get("offset").and_then(Value::as_u64).unwrap_or(0) as usize;
                match scriptorium_source_archive::fsio::check_no_links(job.root, &p)
                    .map_err(|e| e.message().to_owned())
                    .and_then(|()| std::fs::read_to_string(job.root.join(&p)).map_err(|e| e.to_string()))
                {
                    Ok(text) => {
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
                            format!(
                                "{page}\n[… {total} characters in all; call memory_get with offset {end} for the rest]"
                            )
                        }
                    }
                    Err(e) => format!("error: {p}: {e}"),
                }
            }
        },
        "evidence" => match (topic_path(&args), args.get("refs").and_then(Value::as_array)) {
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
        },
        "create" | "append" => match (topic_path(&args), string_arg(&args, "content")) {
            (Err(e), _) | (_, Err(e)) => e,
            (Ok(path), Ok(content)) => {
                if call.name == "create" {
                    staged.created.insert(path.clone());
                    stage(staged, Edit::Create { path, content })
                } else {
                    stage(staged, Edit::Append { path, content })
                }
            }
        },
        "replace" | "delete" | "str_replace" => {
            match topic_path(&args) {
                Err(e) => e,
                Ok(path)
                    if call.name != "str_replace"
                        && !staged.read_whole.contains(&path)
                        && !staged.created.contains(&path) =>
                {
                    format!("error: read {path} whole with memory_get (every page) before you replace or delete it")
                }
                Ok(path) => match call.name.as_str() {
                    "delete" => stage(staged, Edit::Delete { path }),
                    "replace" => match string_arg(&args, "content") {
                        Err(e) => e,
                        Ok(content) => stage(staged, Edit::Replace { path, content }),
                    },
                    _ => match (string_arg(&args, "old"), string_arg(&args, "new")) {
                        (Err(e), _) | (_, Err(e)) => e,
                        (Ok(old), Ok(new)) => stage(staged, Edit::StrReplace { path, old, new }),
                    },
                },
            }
        }
        other => format!("error: there is no tool {other:?}"),
    };
    (answer, false)
}

/// The reorganize pass's view of the workspace: every topic file with its
/// size and block count, the large or multi-subject ones named.
fn file_list(root: &Path) -> Result<String, WriteFailure> {
    let (topics, _) = transaction::views::load_topics(root)?;
    let mut s = String::from("## Topic files (path, bytes, blocks, headings)\n\n");
    let mut notable = Vec::new();
    for (n, t) in topics.iter().enumerate() {
        let text = std::fs::read_to_string(root.join(&t.path)).unwrap_or_default();
        if n == LISTED_FILES {
            s.push_str(&format!("- … and {} more files\n", topics.len() - LISTED_FILES));
        }
        let blocks = text.lines().filter(|l| is_block_end(l)).count();
        let headings = text.lines().filter(|l| l.starts_with("# ") || l.starts_with("## ")).count();
        if n < LISTED_FILES {
            s.push_str(&format!("- {} {} {} {}\n", t.path, text.len(), blocks, headings));
        }
        if text.len() > 16_000 || blocks > 40 || headings > 2 {
            notable.push(t.path.clone());
        }
    }
    if topics.is_empty() {
        s.push_str("(none)\n");
    }
    s.push_str("\n## Large or multi-subject\n\n");
    if notable.is_empty() {
        s.push_str("(none)\n");
    }
    for p in notable {
        s.push_str(&format!("- {p}\n"));
    }
    Ok(s)
}

fn is_block_end(line: &str) -> bool {
    line.rsplit_once(" ^").is_some_and(|(_, id)| {
        !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    })
}
