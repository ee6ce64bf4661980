//! A hook event as the agent sends it: a JSON object on stdin.

use std::path::PathBuf;

use serde::Deserialize;

use crate::error::Error;

/// The hook events memory answers; any other is answered with nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventName {
    /// A session starts (or resumes, or is cleared or compacted).
    SessionStart,
    /// The person submitted a prompt.
    UserPromptSubmit,
    /// The agent finished answering.
    Stop,
    /// A sub-agent finished.
    SubagentStop,
    /// The conversation is about to be compacted.
    PreCompact,
    /// The session ends.
    SessionEnd,
    /// An event memory has nothing to do for.
    Other(String),
}

impl EventName {
    /// The event named `s`.
    pub fn parse(s: &str) -> EventName {
        match s {
            "SessionStart" => EventName::SessionStart,
            "UserPromptSubmit" => EventName::UserPromptSubmit,
            "Stop" => EventName::Stop,
            "SubagentStop" => EventName::SubagentStop,
            "PreCompact" => EventName::PreCompact,
            "SessionEnd" => EventName::SessionEnd,
            other => EventName::Other(other.to_owned()),
        }
    }

    /// The event's name, as the agent spells it.
    pub fn as_str(&self) -> &str {
        match self {
            EventName::SessionStart => "SessionStart",
            EventName::UserPromptSubmit => "UserPromptSubmit",
            EventName::Stop => "Stop",
            EventName::SubagentStop => "SubagentStop",
            EventName::PreCompact => "PreCompact",
            EventName::SessionEnd => "SessionEnd",
            EventName::Other(s) => s,
        }
    }
}

/// One hook event: the fields memory reads (any other field is ignored, so
/// an agent adding fields breaks nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookEvent {
    /// Which event.
    pub name: EventName,
    /// The agent's session id.
    pub session_id: Option<String>,
    /// The session's transcript file.
    pub transcript_path: Option<PathBuf>,
    /// The prompt (`UserPromptSubmit`).
    pub prompt: Option<String>,
    /// Why the session starts (`SessionStart`: startup, resume, clear, compact).
    pub source: Option<String>,
}

#[derive(Deserialize)]
struct Raw {
    hook_event_name: String,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    transcript_path: Option<String>,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    source: Option<String>,
}

/// The most bytes of a hook event read from stdin.
pub const MAX_EVENT_BYTES: usize = 32 << 20;

impl HookEvent {
    /// Reads an event: a JSON object with at least `hook_event_name`.
    ///
    /// ```
    /// use scriptorium::hooks::{EventName, HookEvent};
    /// let e = HookEvent::parse(br#"{"hook_event_name":"UserPromptSubmit","session_id":"s1","prompt":"hi","cwd":"/x"}"#).unwrap();
    /// assert_eq!(e.name, EventName::UserPromptSubmit);
    /// assert_eq!(e.prompt.as_deref(), Some("hi"));
    /// assert_eq!(HookEvent::parse(b"[]").unwrap_err().code.as_str(), "INVALID_ARGUMENT");
    /// ```
    pub fn parse(bytes: &[u8]) -> Result<HookEvent, Error> {
        if bytes.len() > MAX_EVENT_BYTES {
            return Err(Error::invalid(format!(
                "the hook event is {} bytes, more than the {MAX_EVENT_BYTES} read",
                bytes.len()
            ))
            .at("stdin"));
        }
        // A byte order mark, and lone surrogate escapes (as JavaScript
        // writes a cut emoji), are read past rather than refused.
        let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
        let text = std::str::from_utf8(bytes)
            .map_err(|e| Error::invalid(format!("the hook event is not UTF-8: {e}")).at("stdin"))?;
        let text = scriptorium_scheduler::import::lone_surrogates_replaced(text);
        let raw: Raw = serde_json::from_str(&text).map_err(|e| {
            Error::invalid(format!("the hook event is not the JSON object expected: {e}")).at("stdin")
        })?;
        let nonempty = |s: Option<String>| s.filter(|s| !s.is_empty());
        Ok(HookEvent {
            name: EventName::parse(&raw.hook_event_name),
            session_id: nonempty(raw.session_id),
            transcript_path: nonempty(raw.transcript_path).map(PathBuf::from),
            prompt: raw.prompt,
            source: raw.source,
        })
    }
}
