//! A node of a session: one entry of a conversation, with the trusted
//! transport fields that say who spoke.

use std::fmt;

use scriptorium_source_archive::{self as archive, SourceId, SourceRecord, Speaker};

use crate::error::{Error, Result};

/// Who produced a node, as the conversation store says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeRole {
    /// A person (in a group, one of several).
    User,
    /// The agent.
    Assistant,
    /// The runtime or an operator.
    System,
    /// A tool's output.
    Tool,
}

impl NodeRole {
    /// `user`, `assistant`, `system` or `tool`.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeRole::User => "user",
            NodeRole::Assistant => "assistant",
            NodeRole::System => "system",
            NodeRole::Tool => "tool",
        }
    }

    /// Parses the text form.
    pub fn parse(s: &str) -> Option<NodeRole> {
        Some(match s {
            "user" => NodeRole::User,
            "assistant" => NodeRole::Assistant,
            "system" => NodeRole::System,
            "tool" => NodeRole::Tool,
            _ => return None,
        })
    }
}

impl fmt::Display for NodeRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a node is. Only [`NodeKind::Turn`] is ever archived, shown to the
/// writer or marked; the others are skipped over by every walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// Something a person or the assistant said.
    Turn,
    /// The assistant calling a tool.
    ToolCall,
    /// A tool's answer.
    ToolResult,
    /// A turn the runtime scheduled for itself: a sub-agent notification, a
    /// merge prompt, a compaction summary, a meta entry.
    Runtime,
}

impl NodeKind {
    /// `turn`, `tool_call`, `tool_result` or `runtime`.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Turn => "turn",
            NodeKind::ToolCall => "tool_call",
            NodeKind::ToolResult => "tool_result",
            NodeKind::Runtime => "runtime",
        }
    }

    /// Parses the text form.
    pub fn parse(s: &str) -> Option<NodeKind> {
        Some(match s {
            "turn" => NodeKind::Turn,
            "tool_call" => NodeKind::ToolCall,
            "tool_result" => NodeKind::ToolResult,
            "runtime" => NodeKind::Runtime,
            _ => return None,
        })
    }
}

impl fmt::Display for NodeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One node of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Unique within its session; the archived record's message id.
    pub id: String,
    /// The node this one answers or follows; `None` for a root.
    pub parent: Option<String>,
    /// Who produced it.
    pub role: NodeRole,
    /// What it is.
    pub kind: NodeKind,
    /// `YYYY-MM-DDTHH:MM:SS[.fraction]Z`.
    pub timestamp: String,
    /// The body, verbatim.
    pub content: String,
    /// The trusted transport id of the speaker (never parsed from content).
    pub speaker_id: Option<String>,
    /// The trusted transport display name of the speaker.
    pub speaker_display: Option<String>,
    /// The archive provider its record goes to.
    pub provider: String,
    /// The archive thread its record goes to.
    pub thread: String,
    /// Whether its record is archived pending: what an unpaired group
    /// member said, trusted only once the owner promotes it.
    pub pending: bool,
}

impl Node {
    /// Checks what every store requires: the identifiers make a valid source
    /// id, the timestamp is the archive's, and a real turn has an archivable
    /// role.
    pub fn check(&self) -> Result<()> {
        let id = SourceId::new(&self.provider, &self.thread, &self.id).map_err(Error::from_archive)?;
        if let Some(p) = &self.parent {
            if p == &self.id {
                return Err(Error::invalid(format!("node {:?} is its own parent", self.id)));
            }
            SourceId::new(&self.provider, &self.thread, p).map_err(Error::from_archive)?;
        }
        if !archive::timestamp::is_valid(&self.timestamp) {
            return Err(Error::invalid(format!(
                "timestamp {:?} is not YYYY-MM-DDTHH:MM:SS[.fraction]Z",
                self.timestamp
            )));
        }
        if let Some(s) = &self.speaker_id {
            archive::id::check_identifier("speaker_id", s, false).map_err(Error::from_archive)?;
        }
        if self.kind == NodeKind::Turn {
            self.record_with(id)?;
        }
        Ok(())
    }

    /// The archive record of a real turn: speaker from the transport fields,
    /// body verbatim.
    pub fn record(&self) -> Result<SourceRecord> {
        let id = SourceId::new(&self.provider, &self.thread, &self.id).map_err(Error::from_archive)?;
        self.record_with(id)
    }

    fn record_with(&self, id: SourceId) -> Result<SourceRecord> {
        let role = match self.role {
            NodeRole::User => archive::Role::User,
            NodeRole::Assistant => archive::Role::Assistant,
            NodeRole::System => archive::Role::System,
            NodeRole::Tool => {
                return Err(Error::invalid(format!(
                    "node {:?}: a real turn cannot have role tool (use kind tool_result)",
                    self.id
                )))
            }
        };
        let speaker = Speaker::from_transport(self.speaker_id.as_deref(), self.speaker_display.as_deref());
        SourceRecord::new(id, role, &self.timestamp, speaker, self.pending, self.content.clone())
            .map_err(Error::from_archive)
    }
}
