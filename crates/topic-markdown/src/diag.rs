//! Diagnostics: what is wrong with a topic file, where, with a stable code.

use std::fmt;

use serde::Serialize;

/// The stable code of a diagnostic. A code never changes meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Code {
    /// A block's last line does not end in ` ^block-id`.
    MissingBlockId,
    /// A block id is used more than once in the workspace.
    DuplicateBlockId,
    /// A block cites no evidence footnote `[^e-HEX10]`.
    UncitedBlock,
    /// A footnote reference has no definition in its file.
    UndefinedFootnote,
    /// A footnote definition is malformed or defined twice.
    BadFootnote,
    /// A source link does not resolve to an archived record.
    UnknownSource,
    /// A link to a topic file or block does not resolve.
    BrokenLink,
    /// Front matter is unclosed, malformed, or has an unknown `kind`.
    BadFrontMatter,
    /// The file is not valid UTF-8.
    BadEncoding,
    /// A quotation of three or more words appears verbatim in no record
    /// the block cites.
    UngroundedQuote,
}

impl Code {
    /// The code as printed, e.g. `MISSING_BLOCK_ID`.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::MissingBlockId => "MISSING_BLOCK_ID",
            Code::DuplicateBlockId => "DUPLICATE_BLOCK_ID",
            Code::UncitedBlock => "UNCITED_BLOCK",
            Code::UndefinedFootnote => "UNDEFINED_FOOTNOTE",
            Code::BadFootnote => "BAD_FOOTNOTE",
            Code::UnknownSource => "UNKNOWN_SOURCE",
            Code::BrokenLink => "BROKEN_LINK",
            Code::BadFrontMatter => "BAD_FRONT_MATTER",
            Code::BadEncoding => "BAD_ENCODING",
            Code::UngroundedQuote => "UNGROUNDED_QUOTE",
        }
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem: code, workspace-relative path, 1-based line, block id when
/// it concerns a block, and a message for a person.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Diagnostic {
    /// The stable code.
    pub code: Code,
    /// Workspace-relative path of the topic file.
    pub path: String,
    /// The block's first line, or the line of the definition or front matter.
    pub line: usize,
    /// The block concerned, when it has an id.
    pub block_id: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.path, self.line, self.code)?;
        if let Some(id) = &self.block_id {
            write!(f, " ^{id}")?;
        }
        write!(f, ": {}", self.message)
    }
}
