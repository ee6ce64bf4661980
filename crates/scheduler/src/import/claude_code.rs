//! Claude Code session files: one event per line, turns and tool calls
//! linked by their uuids.

use serde_json::Value;

use super::{bad, normalise_timestamp, numbered, unfinished, Origin, Transcript};
use crate::error::Result;
use crate::node::{Node, NodeKind, NodeRole};

/// The provider of Claude Code transcripts.
pub const CLAUDE_CODE_PROVIDER: &str = "claude-code";

/// The one session of a Claude Code session file, or of a piece of one
/// (named by its session id, else by the file's stem; the file's mtime
/// dates events without a time). Entries name their parents by uuid, so a
/// piece whose first entry's parent came in an earlier piece links to it
/// through the store.
pub(super) fn claude_code(text: &str, origin: &Origin<'_>) -> Result<Vec<Transcript>> {
    let (stem, mtime) = (origin.stem, origin.mtime);
    let mut nodes = Vec::new();
    let mut session: Option<String> = None;
    let mut seen = std::collections::HashSet::new();
    for (n, line, open) in numbered(text, origin.first_line) {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = match serde_json::from_str(&super::lone_surrogates_replaced(line)) {
            Ok(v) => v,
            // The last line of a transcript still being written, not yet
            // ended by its LF: it is read next time.
            Err(e) if unfinished(open, &e) => continue,
            Err(e) => return Err(bad(n, format!("not JSON: {e}"))),
        };
        let Some(uuid) = v.get("uuid").and_then(Value::as_str).filter(|s| !s.is_empty()) else { continue };
        if !seen.insert(uuid.to_owned()) {
            continue;
        }
        let thread = v.get("sessionId").and_then(Value::as_str).unwrap_or(stem).to_owned();
        session.get_or_insert_with(|| thread.clone());
        let message = v.get("message").unwrap_or(&Value::Null);
        let entry_type = v.get("type").and_then(Value::as_str).unwrap_or("");
        let role = match message.get("role").and_then(Value::as_str).unwrap_or(entry_type) {
            "assistant" => NodeRole::Assistant,
            "user" => NodeRole::User,
            _ => NodeRole::System,
        };
        let flag = |k: &str| v.get(k).and_then(Value::as_bool).unwrap_or(false);
        let content = message.get("content").unwrap_or(&Value::Null);
        let blocks: &[Value] = content.as_array().map(Vec::as_slice).unwrap_or(&[]);
        let has = |t: &str| blocks.iter().any(|b| b.get("type").and_then(Value::as_str) == Some(t));
        let texts: Vec<&str> = match content {
            Value::String(s) => vec![s.as_str()],
            _ => blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect(),
        };
        let kind =
            if flag("isMeta") || flag("isCompactSummary") || flag("isSidechain") || harness_made(&texts) {
                NodeKind::Runtime
            } else if !texts.is_empty() && matches!(entry_type, "user" | "assistant") {
                NodeKind::Turn
            } else if has("tool_use") {
                NodeKind::ToolCall
            } else if has("tool_result") {
                NodeKind::ToolResult
            } else {
                NodeKind::Runtime
            };
        let ts = match v.get("timestamp").and_then(Value::as_str) {
            Some(s) => {
                normalise_timestamp(s).ok_or_else(|| bad(n, format!("timestamp {s:?} is not RFC 3339")))?
            }
            None => mtime.to_owned(),
        };
        let node = Node {
            id: uuid.to_owned(),
            parent: v.get("parentUuid").and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned),
            role: if kind == NodeKind::Turn { role } else { role_or_tool(role, kind) },
            kind,
            timestamp: ts,
            content: texts.join("\n\n"),
            speaker_id: None,
            speaker_display: None,
            provider: CLAUDE_CODE_PROVIDER.to_owned(),
            thread,
            pending: false,
        };
        node.check().map_err(|e| bad(n, e.message))?;
        nodes.push(node);
    }
    let session = session.unwrap_or_else(|| stem.to_owned());
    Ok(vec![Transcript { session, nodes, head: None, lenient_parents: true, continues: false }])
}

fn role_or_tool(role: NodeRole, kind: NodeKind) -> NodeRole {
    match kind {
        NodeKind::ToolResult => NodeRole::Tool,
        _ => role,
    }
}

/// The elements of the user entries Claude Code writes itself: a slash
/// command's invocation and its output, a `!` shell command's input and
/// output, and reminders it adds to the conversation. Nobody said them.
const HARNESS_MADE: [&str; 9] = [
    "command-name",
    "command-message",
    "command-args",
    "local-command-stdout",
    "local-command-stderr",
    "bash-input",
    "bash-stdout",
    "bash-stderr",
    "system-reminder",
];

/// Whether an entry's text is Claude Code's own: every text block is, once
/// trimmed, nothing but whole [`HARNESS_MADE`] elements (`<name>…</name>`,
/// white space between them). A person's words before, between or after
/// them make it a turn.
fn harness_made(texts: &[&str]) -> bool {
    !texts.is_empty() && texts.iter().all(|t| only_elements(t))
}

fn only_elements(text: &str) -> bool {
    let mut rest = text.trim();
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let Some(name) = HARNESS_MADE.iter().find(|n| {
            rest.strip_prefix('<').and_then(|r| r.strip_prefix(**n)).is_some_and(|r| r.starts_with('>'))
        }) else {
            return false;
        };
        let close = format!("</{name}>");
        let Some(end) = rest.find(&close) else { return false };
        rest = rest[end + close.len()..].trim_start();
    }
    true
}
