//! What parsing gives: the frames of the valid prefix, borrowing from the
//! bytes, and where and why parsing stopped.

use std::borrow::Cow;
use std::fmt;

use super::encoded::decoded;
use crate::id::SourceId;
use crate::record::{Role, SourceRecord};
use crate::speaker::Speaker;

/// Where and why parsing stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Byte offset where the bad frame (or the marker) starts.
    pub offset: usize,
    /// 1-based line where the bad frame (or the marker) starts.
    pub line: u64,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid v2 frame at byte {} (line {}): {}", self.offset, self.line, self.reason)
    }
}

/// One valid frame, borrowing from the parsed bytes.
///
/// Identifiers stay in their encoded (canonical) form; the accessors decode
/// them on demand, so parsing allocates nothing for the common frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// Byte offset of the frame's separator line.
    pub offset: usize,
    /// 1-based line of the frame's separator line.
    pub line: u64,
    /// Byte length of the frame.
    pub len: usize,
    /// The encoded text form of the source id.
    pub source_text: &'a str,
    /// The role.
    pub role: Role,
    /// True when the frame carries `<!-- trust:pending -->`.
    pub pending: bool,
    /// `None` for a speakerless frame; the encoded `speaker-id` value (empty
    /// for a display-only identity) for a trusted one.
    pub speaker_id_encoded: Option<&'a str>,
    /// The display recovered from the label (trusted identities only).
    pub speaker_display: Option<&'a str>,
    /// The header label (the role for a speakerless frame).
    pub label: &'a str,
    /// The timestamp, verbatim.
    pub timestamp: &'a str,
    /// The body, verbatim.
    pub body: &'a str,
}

impl<'a> Frame<'a> {
    fn part(&self, k: usize) -> &'a str {
        self.source_text.split('/').nth(k).expect("a valid frame's id has three parts")
    }

    /// The provider, decoded.
    pub fn provider(&self) -> Cow<'a, str> {
        decoded(self.part(0))
    }

    /// The thread, decoded.
    pub fn thread(&self) -> Cow<'a, str> {
        decoded(self.part(1))
    }

    /// The message id, decoded.
    pub fn message(&self) -> Cow<'a, str> {
        decoded(self.part(2))
    }

    /// The decoded `speaker-id` value: `None` when speakerless, empty for a
    /// display-only identity.
    pub fn speaker_id(&self) -> Option<Cow<'a, str>> {
        self.speaker_id_encoded.map(decoded)
    }

    /// The trusted identity of this frame, if any.
    pub fn speaker(&self) -> Option<Speaker> {
        self.speaker_id().and_then(|id| Speaker::from_stored(self.label, &id))
    }

    /// An owned record equal to the one that was written.
    pub fn to_record(&self) -> SourceRecord {
        let id = SourceId::new(&self.provider(), &self.thread(), &self.message())
            .expect("a valid frame holds a valid source id");
        SourceRecord::from_parts_unchecked(
            id,
            self.role,
            self.timestamp.to_owned(),
            self.speaker(),
            self.pending,
            self.body.to_owned(),
        )
    }
}

/// The result of parsing a v2 file: the valid prefix and, if the file does
/// not parse to its end, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed<'a> {
    /// Every frame of the valid prefix, in file order.
    pub frames: Vec<Frame<'a>>,
    /// Length in bytes of the valid prefix (marker included).
    pub valid_len: usize,
    /// The first problem, or `None` when the whole input is valid.
    pub error: Option<Diagnostic>,
}

/// The (provider, thread) a file stands for, which every frame must name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expect<'e> {
    /// The decoded provider.
    pub provider: &'e str,
    /// The decoded thread.
    pub thread: &'e str,
}
