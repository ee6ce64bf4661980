//! Our own transcript shape: one node per line, parents named by id.

use std::collections::HashMap;

use serde::Deserialize;

use super::{bad, normalise_timestamp, numbered, unfinished, Transcript};
use crate::error::Result;
use crate::node::{Node, NodeKind, NodeRole};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonlNode {
    session: String,
    id: String,
    #[serde(default)]
    parent: Option<String>,
    role: String,
    #[serde(default)]
    kind: Option<String>,
    timestamp: String,
    content: String,
    #[serde(default)]
    speaker_id: Option<String>,
    #[serde(default)]
    speaker_display: Option<String>,
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    pending: bool,
}

/// The provider of our own JSONL when a line names none.
pub const JSONL_PROVIDER: &str = "jsonl";

/// The sessions of a JSONL transcript (or of a piece of one whose first
/// line is line `first_line` of the file), in order of first appearance. A
/// last line cut short and not yet ended by a LF is left for the next read.
pub(super) fn jsonl(text: &str, first_line: usize) -> Result<Vec<Transcript>> {
    let mut sessions: Vec<Transcript> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut seen: HashMap<(String, String), usize> = HashMap::new();
    for (n, line, open) in numbered(text, first_line) {
        if line.trim().is_empty() {
            continue;
        }
        let raw: JsonlNode = match serde_json::from_str(line) {
            Ok(raw) => raw,
            Err(e) if unfinished(open, &e) => continue,
            Err(e) => return Err(bad(n, format!("{e}"))),
        };
        let role = NodeRole::parse(&raw.role)
            .ok_or_else(|| bad(n, format!("role {:?} is not user, assistant, system or tool", raw.role)))?;
        let kind = match raw.kind.as_deref() {
            None => NodeKind::Turn,
            Some(k) => NodeKind::parse(k).ok_or_else(|| {
                bad(n, format!("kind {k:?} is not turn, tool_call, tool_result or runtime"))
            })?,
        };
        let ts = normalise_timestamp(&raw.timestamp)
            .ok_or_else(|| bad(n, format!("timestamp {:?} is not RFC 3339 with an offset", raw.timestamp)))?;
        if let Some(first) = seen.insert((raw.session.clone(), raw.id.clone()), n) {
            return Err(bad(
                n,
                format!("node {:?} of session {:?} is also on line {first}", raw.id, raw.session),
            ));
        }
        let node = Node {
            id: raw.id,
            parent: raw.parent,
            role,
            kind,
            timestamp: ts,
            content: raw.content,
            speaker_id: raw.speaker_id,
            speaker_display: raw.speaker_display,
            provider: raw.provider.unwrap_or_else(|| JSONL_PROVIDER.to_owned()),
            thread: raw.session.clone(),
            pending: raw.pending,
        };
        node.check().map_err(|e| bad(n, e.message))?;
        let slot = *index.entry(raw.session.clone()).or_insert_with(|| {
            sessions.push(Transcript {
                session: raw.session.clone(),
                nodes: Vec::new(),
                head: None,
                lenient_parents: false,
                continues: false,
            });
            sessions.len() - 1
        });
        sessions[slot].nodes.push(node);
    }
    Ok(sessions)
}
