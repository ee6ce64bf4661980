//! OpenAI-style transcripts: a `messages` array, content as a string or as
//! parts.

use serde_json::Value;

use super::{normalise_timestamp, unix_timestamp, Transcript};
use crate::error::{Error, Result};
use crate::node::{Node, NodeKind, NodeRole};

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.as_str()),
                Value::Object(o) if matches!(o.get("type").and_then(Value::as_str), Some("text") | None) => {
                    o.get("text").and_then(Value::as_str)
                }
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n\n"),
        _ => String::new(),
    }
}

/// The provider of OpenAI-style transcripts.
pub const OPENAI_PROVIDER: &str = "openai";

/// The one session of an OpenAI-style transcript (named by its `id`, else
/// by the file's `stem`; `mtime` dates messages without a time).
pub(super) fn openai(text: &str, stem: &str, mtime: &str) -> Result<Vec<Transcript>> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| Error::invalid(format!("not JSON: {e}")).line(e.line() as u64))?;
    let (id, messages) = match &v {
        Value::Array(m) => (None, m),
        Value::Object(o) => match o.get("messages") {
            Some(Value::Array(m)) => (o.get("id"), m),
            _ => return Err(Error::invalid("an object without a \"messages\" array")),
        },
        _ => return Err(Error::invalid("neither a messages array nor an object with \"messages\"")),
    };
    let session = match id {
        None | Some(Value::Null) => stem.to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(other) => return Err(Error::invalid(format!("\"id\" must be a string, not {other}"))),
    };
    let mut nodes = Vec::with_capacity(messages.len());
    for (i, m) in messages.iter().enumerate() {
        let Value::Object(o) = m else {
            return Err(Error::invalid(format!("message {i} is not an object")));
        };
        let role_text = o.get("role").and_then(Value::as_str).unwrap_or("");
        let text = text_of(o.get("content").unwrap_or(&Value::Null));
        let (role, kind) = match role_text {
            "user" => (NodeRole::User, NodeKind::Turn),
            "assistant" => {
                let calls = o.get("tool_calls").and_then(Value::as_array).is_some_and(|a| !a.is_empty())
                    || o.get("function_call").is_some_and(|f| !f.is_null());
                (
                    NodeRole::Assistant,
                    if calls && text.is_empty() { NodeKind::ToolCall } else { NodeKind::Turn },
                )
            }
            "system" | "developer" => (NodeRole::System, NodeKind::Runtime),
            "tool" | "function" => (NodeRole::Tool, NodeKind::ToolResult),
            other => {
                return Err(Error::invalid(format!("message {i}: role {other:?} is not an OpenAI role")))
            }
        };
        let ts = match o.get("timestamp") {
            None | Some(Value::Null) => mtime.to_owned(),
            Some(Value::String(s)) => normalise_timestamp(s)
                .ok_or_else(|| Error::invalid(format!("message {i}: timestamp {s:?} is not RFC 3339")))?,
            Some(Value::Number(n)) => n
                .as_f64()
                .and_then(unix_timestamp)
                .ok_or_else(|| Error::invalid(format!("message {i}: timestamp {n} is out of range")))?,
            Some(other) => {
                return Err(Error::invalid(format!("message {i}: timestamp {other} is not a time")))
            }
        };
        let name = match o.get("name") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.as_str()).filter(|s| !s.is_empty()),
            Some(other) => {
                return Err(Error::invalid(format!("message {i}: \"name\" must be a string, not {other}")))
            }
        };
        match o.get("content") {
            None | Some(Value::Null | Value::String(_) | Value::Array(_)) => {}
            Some(other) => {
                return Err(Error::invalid(format!(
                    "message {i}: \"content\" must be a string or a list of parts, not {other}"
                )))
            }
        }
        let node = Node {
            id: format!("m{i}"),
            parent: (i > 0).then(|| format!("m{}", i - 1)),
            role,
            kind,
            timestamp: ts,
            content: text,
            speaker_id: None,
            speaker_display: name.map(str::to_owned),
            provider: OPENAI_PROVIDER.to_owned(),
            thread: session.clone(),
            pending: false,
        };
        node.check().map_err(|e| Error::invalid(format!("message {i}: {}", e.message)))?;
        nodes.push(node);
    }
    Ok(vec![Transcript { session, nodes, head: None, lenient_parents: false, continues: false }])
}
