//! Codex CLI rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`):
//! one `{"timestamp","type","payload"}` object per line, appended while the
//! session runs and again after each resume.
//!
//! The conversation is in the `response_item` lines (messages, tool calls
//! and their outputs, reasoning) and the `compacted` lines (compaction
//! summaries). `event_msg` lines are the interface's copies of those items
//! (a prompt is recorded both as a `response_item` user message and as an
//! `event_msg` `user_message`) or telemetry, and `session_meta` and
//! `turn_context` lines are settings: none of them makes a node, so each
//! utterance is one node.

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{bad, normalise_timestamp, numbered, unfinished, Origin, Transcript};
use crate::error::Result;
use crate::node::{Node, NodeKind, NodeRole};

/// The provider of Codex CLI transcripts.
pub const CODEX_PROVIDER: &str = "codex";

/// The start and end markers of the context Codex itself puts in user-role
/// messages (AGENTS.md instructions, the environment, skills, a shell
/// command the user ran with `!`, an aborted turn, a sub-agent's report, a
/// hook's prompt, …). A text is such context when, trimmed, it starts with
/// a start marker and ends with its end marker, ASCII case ignored: Codex's
/// own test for "contextual user fragments".
const HARNESS_FRAGMENTS: &[(&str, &str)] = &[
    ("# AGENTS.md instructions for ", "</INSTRUCTIONS>"),
    ("<user_instructions>", "</user_instructions>"),
    ("<environment_context>", "</environment_context>"),
    ("<skill>", "</skill>"),
    ("<user_shell_command>", "</user_shell_command>"),
    ("<turn_aborted>", "</turn_aborted>"),
    ("<subagent_notification>", "</subagent_notification>"),
    ("<goal_context>", "</goal_context>"),
    ("<extension_context>", "</extension_context>"),
    ("<hook_prompt", "</hook_prompt>"),
    ("<hook_context>", "</hook_context>"),
    ("<external_", ">"),
];

/// What one line says: who, what kind of node, the text.
struct Entry {
    role: NodeRole,
    kind: NodeKind,
    content: String,
}

impl Entry {
    fn runtime(role: NodeRole, content: String) -> Entry {
        Entry { role, kind: NodeKind::Runtime, content }
    }
}

/// The one session of a Codex rollout file, or of a piece of one.
///
/// The session (and thread) is the `id` of the `session_meta` on the file's
/// line 1 when the text holds that line, otherwise the id in the file's
/// stem (`rollout-2025-10-01T12-00-00-<uuid>` names session `<uuid>`, the
/// same id), otherwise the stem. Each node is the child of the node before
/// it; the first node of a piece not starting at line 1 continues the
/// session's chain in the store ([`Transcript::continues`]). Lines without
/// a `timestamp` are dated by the file's modification time.
pub(super) fn codex(text: &str, origin: &Origin<'_>) -> Result<Vec<Transcript>> {
    let mut read: Vec<(usize, Node)> = Vec::new();
    let mut session = None;
    for (n, line, open) in numbered(text, origin.first_line) {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = match serde_json::from_str(&super::lone_surrogates_replaced(line)) {
            Ok(v) => v,
            // The last line of a rollout still being written: read next time.
            Err(e) if unfinished(open, &e) => continue,
            Err(e) => return Err(bad(n, format!("not JSON: {e}"))),
        };
        let Value::Object(o) = &v else { return Err(bad(n, "not a JSON object")) };
        let Some(line_type) = o.get("type").and_then(Value::as_str) else {
            return Err(bad(n, "no \"type\" string"));
        };
        let payload = o.get("payload").unwrap_or(&Value::Null);
        if line_type == "session_meta" && n == 1 {
            session = payload.get("id").and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned);
        }
        let Some(entry) = entry(line_type, payload) else { continue };
        let timestamp = match o.get("timestamp") {
            None | Some(Value::Null) => origin.mtime.to_owned(),
            Some(Value::String(s)) => {
                normalise_timestamp(s).ok_or_else(|| bad(n, format!("timestamp {s:?} is not RFC 3339")))?
            }
            Some(other) => return Err(bad(n, format!("timestamp {other} is not a time"))),
        };
        let node = Node {
            id: node_id(n, line),
            parent: read.last().map(|(_, p)| p.id.clone()),
            role: entry.role,
            kind: entry.kind,
            timestamp,
            content: entry.content,
            speaker_id: None,
            speaker_display: None,
            provider: CODEX_PROVIDER.to_owned(),
            thread: String::new(),
            pending: false,
        };
        read.push((n, node));
    }
    let session = session.unwrap_or_else(|| session_of_stem(origin.stem).to_owned());
    let mut nodes = Vec::with_capacity(read.len());
    for (n, mut node) in read {
        node.thread.clone_from(&session);
        node.check().map_err(|e| bad(n, e.message))?;
        nodes.push(node);
    }
    Ok(vec![Transcript {
        session,
        nodes,
        head: None,
        lenient_parents: false,
        continues: origin.first_line > 1,
    }])
}

/// A node's id: its line number in the file and 16 hex digits of the
/// SHA-256 of the line (`12-3f9a…`).
///
/// The line number makes the id the same whether the file is read whole or
/// in pieces, and keeps two equal lines apart; the digest keeps a line
/// replaced by another (a file rewritten under the same session) from
/// taking the id of what stood there before. So one utterance always gets
/// one id, and two different utterances never share one.
fn node_id(line_number: usize, line: &str) -> String {
    let digest = Sha256::digest(line.as_bytes());
    let mut id = format!("{line_number}-");
    for b in &digest[..8] {
        id.push_str(&format!("{b:02x}"));
    }
    id
}

/// The session a rollout's file stem names: the UUID at the end of
/// `rollout-<time>-<uuid>`, or the whole stem for any other name.
fn session_of_stem(stem: &str) -> &str {
    let uuid = stem.len().checked_sub(36).and_then(|at| stem.get(at..));
    match uuid {
        Some(id) if stem.starts_with("rollout-") && is_uuid(id) => id,
        _ => stem,
    }
}

fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// What a line of the given type makes, or `None` for lines that make no
/// node (session and turn settings, interface events, unknown line types).
fn entry(line_type: &str, payload: &Value) -> Option<Entry> {
    let field = |k: &str| payload.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    match line_type {
        "response_item" => Some(response_item(payload)),
        // A compaction summary, and a message between agents: nobody in the
        // conversation said them.
        "compacted" => Some(Entry::runtime(NodeRole::System, field("message"))),
        "inter_agent_communication" => Some(Entry::runtime(NodeRole::System, field("content"))),
        _ => None,
    }
}

/// A model-history item: a message, a tool call or its output, reasoning,
/// or anything newer (runtime).
fn response_item(payload: &Value) -> Entry {
    let call = |name: &str, args: Option<&Value>| Entry {
        role: NodeRole::Assistant,
        kind: NodeKind::ToolCall,
        content: format!("{name}\n{}", verbatim(args)),
    };
    let name = payload.get("name").and_then(Value::as_str).unwrap_or("");
    match payload.get("type").and_then(Value::as_str).unwrap_or("") {
        "message" => message(payload),
        "function_call" => call(name, payload.get("arguments")),
        "custom_tool_call" => call(name, payload.get("input")),
        "local_shell_call" => call("local_shell", payload.get("action")),
        "web_search_call" => call("web_search", payload.get("action")),
        "tool_search_call" => call("tool_search", payload.get("arguments")),
        "function_call_output" | "custom_tool_call_output" | "tool_search_output" => Entry {
            role: NodeRole::Tool,
            kind: NodeKind::ToolResult,
            content: output_text(payload.get("output")),
        },
        "reasoning" => {
            let parts = ["summary", "content"].iter().flat_map(|k| items(payload.get(k)));
            let text: Vec<&str> = parts.filter_map(|p| p.get("text").and_then(Value::as_str)).collect();
            Entry::runtime(NodeRole::Assistant, text.join("\n\n"))
        }
        _ => Entry::runtime(NodeRole::System, String::new()),
    }
}

/// A message: a real turn when a person or the assistant said it; the
/// harness's own (developer and system messages, context Codex puts in
/// user-role messages, messages without text) is runtime.
fn message(payload: &Value) -> Entry {
    let texts: Vec<&str> = match payload.get("content") {
        Some(Value::String(s)) => vec![s.as_str()],
        other => items(other)
            .filter(|i| {
                matches!(i.get("type").and_then(Value::as_str), Some("input_text" | "output_text" | "text"))
            })
            .filter_map(|i| i.get("text").and_then(Value::as_str))
            .collect(),
    };
    let content = texts.join("\n\n");
    let said = texts.iter().any(|t| !t.trim().is_empty());
    match payload.get("role").and_then(Value::as_str).unwrap_or("") {
        "user" if said && !texts.iter().any(|t| harness_text(t)) => {
            Entry { role: NodeRole::User, kind: NodeKind::Turn, content }
        }
        "user" => Entry::runtime(NodeRole::User, content),
        "assistant" if said => Entry { role: NodeRole::Assistant, kind: NodeKind::Turn, content },
        "assistant" => Entry::runtime(NodeRole::Assistant, content),
        _ => Entry::runtime(NodeRole::System, content),
    }
}

/// Whether a user-role text is context Codex put there ([`HARNESS_FRAGMENTS`]).
fn harness_text(text: &str) -> bool {
    let t = text.trim();
    let starts = |m: &str| t.get(..m.len()).is_some_and(|p| p.eq_ignore_ascii_case(m));
    let ends =
        |m: &str| t.len() >= m.len() && t.get(t.len() - m.len()..).is_some_and(|p| p.eq_ignore_ascii_case(m));
    HARNESS_FRAGMENTS.iter().any(|(start, end)| starts(start) && ends(end))
}

/// The elements of an array value (none for anything else).
fn items(v: Option<&Value>) -> impl Iterator<Item = &Value> {
    v.and_then(Value::as_array).map(|a| a.iter()).into_iter().flatten()
}

/// A string verbatim, anything else as compact JSON, nothing as "".
fn verbatim(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// A tool's output: a string; a list of content items (their texts joined
/// by a blank line); or an older `{"content": …}` object.
fn output_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::Array(_)) => {
            let texts: Vec<&str> = items(v).filter_map(|i| i.get("text").and_then(Value::as_str)).collect();
            texts.join("\n\n")
        }
        Some(Value::Object(o)) if o.contains_key("content") => output_text(o.get("content")),
        other => verbatim(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_is_the_uuid_a_rollout_file_is_named_by() {
        assert_eq!(
            session_of_stem("rollout-2025-10-01T12-00-00-0199a213-81c0-7800-8aa1-bbab2a035a53"),
            "0199a213-81c0-7800-8aa1-bbab2a035a53"
        );
        assert_eq!(session_of_stem("rollout-x"), "rollout-x");
        assert_eq!(session_of_stem("my-session"), "my-session");
        assert_eq!(
            session_of_stem("rollout-2025-10-01T12-00-00-0199a213-81c0-7800-8aa1-bbab2a035a5z"),
            "rollout-2025-10-01T12-00-00-0199a213-81c0-7800-8aa1-bbab2a035a5z"
        );
    }

    #[test]
    fn harness_context_is_told_by_both_markers() {
        assert!(harness_text("<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"));
        assert!(harness_text("  <ENVIRONMENT_CONTEXT>x</environment_context>\n"));
        assert!(harness_text(
            "# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nbe brief\n</INSTRUCTIONS>"
        ));
        assert!(harness_text("<hook_prompt hook_run_id=\"r1\">Run the tests.</hook_prompt>"));
        assert!(!harness_text("<environment_context> is the tag I asked about"), "no end marker");
        assert!(!harness_text("why does <skill>x</skill> show up?"), "not at the start");
        assert!(!harness_text("héllo"));
    }

    #[test]
    fn tool_outputs_in_every_shape() {
        let v = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        assert_eq!(output_text(Some(&v(r#""ok""#))), "ok");
        assert_eq!(
            output_text(Some(&v(
                r#"[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"x"},{"type":"input_text","text":"b"}]"#
            ))),
            "a\n\nb"
        );
        assert_eq!(output_text(Some(&v(r#"{"content":"failed","success":false}"#))), "failed");
        assert_eq!(output_text(None), "");
    }
}
