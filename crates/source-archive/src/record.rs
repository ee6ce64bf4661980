//! The archived record: one message, verbatim, with its trusted identity.

use std::fmt;

use crate::error::{Error, Result};
use crate::id::{check_identifier, SourceId};
use crate::speaker::Speaker;
use crate::timestamp;

/// The most physical lines one record may take.
pub const MAX_RECORD_LINES: usize = 1_000_000;

/// Who produced a message, as the conversation store says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// A person (or, in a group, one of several people).
    User,
    /// The agent.
    Assistant,
    /// The runtime or an operator.
    System,
}

impl Role {
    /// The role as written on disk and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
        }
    }

    /// Parses `user`, `assistant` or `system`.
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            "system" => Some(Role::System),
            _ => None,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One archived message.
///
/// Built only through [`SourceRecord::new`] (or a parser), so every value is
/// one a v2 file can hold and `parse(write(r)) == r`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SourceRecord {
    id: SourceId,
    role: Role,
    timestamp: String,
    speaker: Option<Speaker>,
    pending: bool,
    content: String,
}

impl SourceRecord {
    /// Checks and builds a record. `speaker` comes from the transport fields
    /// ([`Speaker::from_transport`]), never from `content`.
    pub fn new(
        id: SourceId,
        role: Role,
        timestamp: &str,
        speaker: Option<Speaker>,
        pending: bool,
        content: String,
    ) -> Result<SourceRecord> {
        if !timestamp::is_valid(timestamp) {
            return Err(Error::invalid(format!(
                "timestamp {timestamp:?} is not YYYY-MM-DDTHH:MM:SS[.fraction]Z (UTC, RFC 3339)"
            )));
        }
        if let Some(id) = speaker.as_ref().and_then(Speaker::id) {
            check_identifier("speaker_id", id, false)?;
        }
        let lines = memchr::memchr_iter(b'\n', content.as_bytes()).count() + 1;
        if lines > MAX_RECORD_LINES {
            return Err(Error::invalid(format!(
                "content needs {lines} lines; a record holds at most {MAX_RECORD_LINES}"
            )));
        }
        Ok(SourceRecord { id, role, timestamp: timestamp.to_owned(), speaker, pending, content })
    }

    pub(crate) fn from_parts_unchecked(
        id: SourceId,
        role: Role,
        timestamp: String,
        speaker: Option<Speaker>,
        pending: bool,
        content: String,
    ) -> SourceRecord {
        SourceRecord { id, role, timestamp, speaker, pending, content }
    }

    /// The source id.
    pub fn id(&self) -> &SourceId {
        &self.id
    }

    /// The role.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The timestamp, verbatim.
    pub fn timestamp(&self) -> &str {
        &self.timestamp
    }

    /// The trusted identity, if the transport gave one.
    pub fn speaker(&self) -> Option<&Speaker> {
        self.speaker.as_ref()
    }

    /// The header label: the speaker's label, or the role when speakerless.
    pub fn header_label(&self) -> &str {
        match &self.speaker {
            Some(s) => s.label(),
            None => self.role.as_str(),
        }
    }

    /// Who said it, as shown to a model or a person (FORMAT.md §2.3): the
    /// speaker's [`Speaker::attribution`], or the bare role when
    /// speakerless.
    pub fn attribution(&self) -> String {
        match &self.speaker {
            Some(s) => s.attribution(),
            None => self.role.as_str().to_owned(),
        }
    }

    /// True when the record is archived as pending (e.g. unpaired group text).
    pub fn is_pending(&self) -> bool {
        self.pending
    }

    /// The message body, exactly as received.
    pub fn content(&self) -> &str {
        &self.content
    }

    /// The number of physical lines the record takes in a v2 frame.
    pub fn record_lines(&self) -> usize {
        memchr::memchr_iter(b'\n', self.content.as_bytes()).count() + 1
    }
}
