//! Importers: transcripts in four shapes into a [`SessionStore`]
//! (FORMAT.md §8). Importing a file again adds only nodes with new ids and
//! leaves nodes and marks alone.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use scriptorium_source_archive::timestamp;

use crate::error::{Error, Result};
use crate::node::{Kind, Node, Role};
use crate::store::{NewNodes, SessionStore};

pub mod evidence;

/// The shapes `session import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Ours: one node per line.
    Jsonl,
    /// An OpenAI-style `messages` array.
    OpenAi,
    /// A Claude Code session file.
    ClaudeCode,
    /// The LoCoMo benchmark's JSON.
    Locomo,
}

impl Format {
    /// Parses `jsonl`, `openai`, `claude-code` or `locomo`.
    pub fn parse(s: &str) -> Option<Format> {
        Some(match s {
            "jsonl" => Format::Jsonl,
            "openai" => Format::OpenAi,
            "claude-code" => Format::ClaudeCode,
            "locomo" => Format::Locomo,
            _ => return None,
        })
    }
}

/// One conversation read from a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transcript {
    /// The session it goes to.
    pub session: String,
    /// Its nodes, every parent before its children.
    pub nodes: Vec<Node>,
    /// The node of the transcript's last line (the head).
    pub head: Option<String>,
    /// Whether a parent named by no node (in the file or the store) makes
    /// the node a root instead of an error: Claude Code files name parents
    /// that live in other files after a compaction.
    pub lenient_parents: bool,
}

/// What an import did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Imported {
    /// Sessions read.
    pub sessions: usize,
    /// Nodes read.
    pub nodes: usize,
    /// Nodes that were new.
    pub new_nodes: usize,
}

/// Reads one file.
pub fn read(format: Format, path: &Path) -> Result<Vec<Transcript>> {
    let shown = path.display().to_string();
    let text = std::fs::read(path).map_err(|e| Error::io(&e, "cannot read the transcript").at(&shown))?;
    let text = String::from_utf8(text).map_err(|e| {
        Error::invalid(format!("not UTF-8 (at byte {})", e.utf8_error().valid_up_to())).at(&shown)
    })?;
    let mtime = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| timestamp::format_unix(d.as_secs() as i64))
        .unwrap_or_else(|| timestamp::format_unix(0));
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let read = match format {
        Format::Jsonl => jsonl(&text),
        Format::OpenAi => openai(&text, &stem, &mtime),
        Format::ClaudeCode => claude_code(&text, &stem, &mtime),
        Format::Locomo => locomo(&text),
    };
    let mut transcripts = read.map_err(|e| if e.path.is_none() { e.at(&shown) } else { e })?;
    for t in &mut transcripts {
        t.head = t.nodes.last().map(|n| n.id.clone());
        t.nodes = parents_first(std::mem::take(&mut t.nodes)).map_err(|e| e.at(&shown))?;
    }
    Ok(transcripts)
}

/// Adds the transcripts to the store, all or nothing. Two archive threads
/// (or providers) whose names differ only in case or Unicode normal form
/// are refused: the archive could never hold both.
pub fn import<S: SessionStore + ?Sized>(store: &S, transcripts: &[Transcript]) -> Result<Imported> {
    let mut names: HashMap<(String, String), (String, String)> = HashMap::new();
    let mut providers: HashMap<String, String> = HashMap::new();
    for n in transcripts.iter().flat_map(|t| &t.nodes) {
        let p = providers
            .entry(scriptorium_source_archive::id::fold_key(&n.provider))
            .or_insert_with(|| n.provider.clone());
        if *p != n.provider {
            return Err(Error::invalid(format!(
                "providers {p} and {} differ only in case or normal form; the archive cannot hold both",
                n.provider
            )));
        }
        let key = (
            scriptorium_source_archive::id::fold_key(&n.provider),
            scriptorium_source_archive::id::fold_key(&n.thread),
        );
        let seen = names.entry(key).or_insert_with(|| (n.provider.clone(), n.thread.clone()));
        if seen.0 != n.provider || seen.1 != n.thread {
            return Err(Error::invalid(format!(
                "threads {}/{} and {}/{} differ only in case or normal form; the archive cannot hold both",
                seen.0, seen.1, n.provider, n.thread
            )));
        }
    }
    let mut owned = Vec::with_capacity(transcripts.len());
    for t in transcripts {
        let mut nodes = t.nodes.clone();
        if t.lenient_parents {
            let here: std::collections::HashSet<&str> = t.nodes.iter().map(|n| n.id.as_str()).collect();
            for n in &mut nodes {
                if let Some(p) = &n.parent {
                    if !here.contains(p.as_str()) && store.link(&t.session, p, "")?.is_none() {
                        n.parent = None;
                    }
                }
            }
        }
        owned.push(nodes);
    }
    let batch: Vec<NewNodes<'_>> = transcripts
        .iter()
        .zip(&owned)
        .map(|(t, nodes)| NewNodes { session: &t.session, nodes, head: t.head.as_deref() })
        .collect();
    let new = store.add_sessions(&batch)?;
    Ok(Imported {
        sessions: transcripts.len(),
        nodes: owned.iter().map(Vec::len).sum(),
        new_nodes: new.iter().sum(),
    })
}

/// Orders nodes so every parent in the list comes before its children,
/// keeping file order otherwise. Refuses a cycle.
fn parents_first(nodes: Vec<Node>) -> Result<Vec<Node>> {
    let at: HashMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id.as_str(), i)).collect();
    let mut state = vec![0u8; nodes.len()]; // 0 new, 1 on the path, 2 done
    let mut order = Vec::with_capacity(nodes.len());
    for start in 0..nodes.len() {
        let mut path = Vec::new();
        let mut i = start;
        loop {
            match state[i] {
                2 => break,
                1 => {
                    return Err(Error::invalid(format!("node {:?} is its own ancestor", nodes[i].id)));
                }
                _ => {}
            }
            state[i] = 1;
            path.push(i);
            match nodes[i].parent.as_deref().and_then(|p| at.get(p)) {
                Some(&p) => i = p,
                None => break,
            }
        }
        for &i in path.iter().rev() {
            state[i] = 2;
            order.push(i);
        }
    }
    let mut slots: Vec<Option<Node>> = nodes.into_iter().map(Some).collect();
    Ok(order.into_iter().filter_map(|i| slots[i].take()).collect())
}

/// Normalises a timestamp to the archive's form: kept verbatim when it is
/// one already, otherwise any RFC 3339 time with an offset, in UTC.
pub fn normalise_timestamp(s: &str) -> Option<String> {
    if timestamp::is_valid(s) {
        return Some(s.to_owned());
    }
    let t: jiff::Timestamp = s.trim().parse().ok()?;
    let out = t.to_string();
    timestamp::is_valid(&out).then_some(out)
}

fn unix_timestamp(secs: f64) -> Option<String> {
    if !secs.is_finite() || !(0.0..=253_402_300_799.0).contains(&secs) {
        return None;
    }
    let t = jiff::Timestamp::from_second(secs.trunc() as i64).ok()?;
    let nanos = ((secs.fract()) * 1e9).round() as i64;
    let t = t.checked_add(jiff::SignedDuration::from_nanos(nanos)).ok()?;
    normalise_timestamp(&t.to_string())
}

fn bad(line: usize, why: impl Into<String>) -> Error {
    Error::invalid(why).line(line as u64)
}

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

fn jsonl(text: &str) -> Result<Vec<Transcript>> {
    let mut sessions: Vec<Transcript> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut seen: HashMap<(String, String), usize> = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        if line.trim().is_empty() {
            continue;
        }
        let raw: JsonlNode = serde_json::from_str(line).map_err(|e| bad(n, format!("{e}")))?;
        let role = Role::parse(&raw.role)
            .ok_or_else(|| bad(n, format!("role {:?} is not user, assistant, system or tool", raw.role)))?;
        let kind = match raw.kind.as_deref() {
            None => Kind::Turn,
            Some(k) => Kind::parse(k).ok_or_else(|| {
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
            });
            sessions.len() - 1
        });
        sessions[slot].nodes.push(node);
    }
    Ok(sessions)
}

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

fn openai(text: &str, stem: &str, mtime: &str) -> Result<Vec<Transcript>> {
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
            "user" => (Role::User, Kind::Turn),
            "assistant" => {
                let calls = o.get("tool_calls").and_then(Value::as_array).is_some_and(|a| !a.is_empty())
                    || o.get("function_call").is_some_and(|f| !f.is_null());
                (Role::Assistant, if calls && text.is_empty() { Kind::ToolCall } else { Kind::Turn })
            }
            "system" | "developer" => (Role::System, Kind::Runtime),
            "tool" | "function" => (Role::Tool, Kind::ToolResult),
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
    Ok(vec![Transcript { session, nodes, head: None, lenient_parents: false }])
}

/// The provider of Claude Code transcripts.
pub const CLAUDE_CODE_PROVIDER: &str = "claude-code";

fn claude_code(text: &str, stem: &str, mtime: &str) -> Result<Vec<Transcript>> {
    let mut nodes = Vec::new();
    let mut session: Option<String> = None;
    let mut seen = std::collections::HashSet::new();
    let last_line = text.lines().count();
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            // The last line of a transcript still being written, not yet
            // ended by its LF: it is read next time.
            Err(_) if n == last_line && !text.ends_with('\n') => continue,
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
            "assistant" => Role::Assistant,
            "user" => Role::User,
            _ => Role::System,
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
        let kind = if flag("isMeta") || flag("isCompactSummary") || flag("isSidechain") {
            Kind::Runtime
        } else if !texts.is_empty() && matches!(entry_type, "user" | "assistant") {
            Kind::Turn
        } else if has("tool_use") {
            Kind::ToolCall
        } else if has("tool_result") {
            Kind::ToolResult
        } else {
            Kind::Runtime
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
            role: if kind == Kind::Turn { role } else { role_or_tool(role, kind) },
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
    Ok(vec![Transcript { session, nodes, head: None, lenient_parents: true }])
}

fn role_or_tool(role: Role, kind: Kind) -> Role {
    match kind {
        Kind::ToolResult => Role::Tool,
        _ => role,
    }
}

/// The provider of LoCoMo conversations.
pub const LOCOMO_PROVIDER: &str = "locomo";

/// A LoCoMo session date (`1:56 pm on 8 May, 2023`) read as UTC.
pub fn locomo_time(s: &str) -> Option<String> {
    let (time, date) = s.split_once(" on ")?;
    let (hm, ampm) = time.trim().split_once(' ')?;
    let (h, m) = hm.split_once(':')?;
    let (mut h, m): (i8, i8) = (h.parse().ok()?, m.parse().ok()?);
    if !(1..=12).contains(&h) {
        return None;
    }
    match ampm.to_ascii_lowercase().as_str() {
        "am" if h == 12 => h = 0,
        "am" => {}
        "pm" if h != 12 => h += 12,
        "pm" => {}
        _ => return None,
    }
    let mut parts = date.split([' ', ',']).filter(|p| !p.is_empty());
    let day: i8 = parts.next()?.parse().ok()?;
    let month = parts.next()?;
    let year: i16 = parts.next()?.parse().ok()?;
    if parts.next().is_some() {
        return None;
    }
    const MONTHS: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let mo = MONTHS.iter().position(|x| x.eq_ignore_ascii_case(month))? as i8 + 1;
    let dt = jiff::civil::DateTime::new(year, mo, day, h, m, 0, 0).ok()?;
    let t = dt.to_zoned(jiff::tz::TimeZone::UTC).ok()?.timestamp();
    normalise_timestamp(&t.to_string())
}

fn locomo(text: &str) -> Result<Vec<Transcript>> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| Error::invalid(format!("not JSON: {e}")).line(e.line() as u64))?;
    let samples = match &v {
        Value::Array(a) => a.as_slice(),
        Value::Object(_) => std::slice::from_ref(&v),
        _ => return Err(Error::invalid("not a LoCoMo sample list")),
    };
    let mut out = Vec::new();
    for (k, s) in samples.iter().enumerate() {
        let id = s
            .get("sample_id")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::invalid(format!("sample {k} has no \"sample_id\" string")))?;
        let conv = s
            .get("conversation")
            .and_then(Value::as_object)
            .ok_or_else(|| Error::invalid(format!("sample {id:?} has no \"conversation\" object")))?;
        // `session_N` with N written canonically (no sign, no leading zero).
        let mut numbers: Vec<u32> = conv
            .iter()
            .filter(|(_, v)| v.is_array())
            .filter_map(|(k, _)| {
                k.strip_prefix("session_")?.parse().ok().filter(|n: &u32| *k == format!("session_{n}"))
            })
            .collect();
        numbers.sort_unstable();
        let session = format!("locomo/{id}");
        let mut nodes: Vec<Node> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for n in numbers {
            let date_key = format!("session_{n}_date_time");
            let date = conv.get(&date_key).and_then(Value::as_str).unwrap_or("");
            let ts = locomo_time(date).ok_or_else(|| {
                Error::invalid(format!(
                    "sample {id:?}: {date_key} {date:?} is not like \"1:56 pm on 8 May, 2023\""
                ))
            })?;
            let turns =
                conv.get(&format!("session_{n}")).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
            for (i, t) in turns.iter().enumerate() {
                let field = |f: &str| t.get(f).and_then(Value::as_str);
                let dia = field("dia_id").ok_or_else(|| {
                    Error::invalid(format!("sample {id:?}: session_{n} turn {i} has no \"dia_id\""))
                })?;
                if !seen.insert(dia.to_owned()) {
                    continue;
                }
                let mut content = field("text").unwrap_or("").to_owned();
                if let Some(c) = field("blip_caption") {
                    content.push_str(&format!("\n[shared an image: {c}]"));
                }
                let node = Node {
                    id: dia.to_owned(),
                    parent: nodes.last().map(|p| p.id.clone()),
                    role: Role::User,
                    kind: Kind::Turn,
                    timestamp: ts.clone(),
                    content,
                    speaker_id: None,
                    speaker_display: field("speaker").map(str::to_owned),
                    provider: LOCOMO_PROVIDER.to_owned(),
                    thread: id.to_owned(),
                    pending: false,
                };
                node.check()
                    .map_err(|e| Error::invalid(format!("sample {id:?}: turn {dia:?}: {}", e.message)))?;
                nodes.push(node);
            }
        }
        out.push(Transcript { session, nodes, head: None, lenient_parents: false });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locomo_dates() {
        assert_eq!(locomo_time("1:56 pm on 8 May, 2023").as_deref(), Some("2023-05-08T13:56:00Z"));
        assert_eq!(locomo_time("12:09 am on 1 January, 2024").as_deref(), Some("2024-01-01T00:09:00Z"));
        assert_eq!(locomo_time("12:30 pm on 29 February, 2024").as_deref(), Some("2024-02-29T12:30:00Z"));
        assert_eq!(locomo_time("12:09 am on 13 September, 2023").as_deref(), Some("2023-09-13T00:09:00Z"));
        assert_eq!(locomo_time("noon"), None);
        assert_eq!(locomo_time("1:56 pm on 30 February, 2023"), None);
        assert_eq!(locomo_time("13:56 pm on 8 May, 2023"), None);
        assert_eq!(locomo_time("yesterday"), None);
    }

    #[test]
    fn timestamps_normalise_to_utc() {
        assert_eq!(
            normalise_timestamp("2025-06-02T18:46:59.937Z").as_deref(),
            Some("2025-06-02T18:46:59.937Z")
        );
        assert_eq!(normalise_timestamp("2025-06-02T20:46:59+02:00").as_deref(), Some("2025-06-02T18:46:59Z"));
        assert_eq!(normalise_timestamp("2025-06-02 18:46"), None);
        assert_eq!(unix_timestamp(1_700_000_000.5).as_deref(), Some("2023-11-14T22:13:20.5Z"));
        assert_eq!(unix_timestamp(-1.0), None);
    }
}
