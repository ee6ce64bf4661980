//! The error type of the archive layer.

use std::fmt;
use std::path::{Path, PathBuf};

/// What kind of refusal or failure an [`Error`] is.
///
/// Each kind maps to one stable code of FORMAT.md §5 ([`ErrorKind::code`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Bad input: malformed JSON, a missing field, an invalid value.
    InvalidArgument,
    /// Something named does not exist.
    NotFound,
    /// The input collides with what exists (e.g. an NFC/case-fold twin).
    Conflict,
    /// Bytes on disk do not satisfy the format (e.g. a damaged archive tail).
    ValidationFailed,
    /// The operating system refused an operation.
    Io,
}

impl ErrorKind {
    /// The stable code printed by the CLI and the tools.
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::InvalidArgument => "INVALID_ARGUMENT",
            ErrorKind::NotFound => "NOT_FOUND",
            ErrorKind::Conflict => "CONFLICT",
            ErrorKind::ValidationFailed => "VALIDATION_FAILED",
            ErrorKind::Io => "IO",
        }
    }
}

/// An error of the archive layer: a kind, a message, and where it happened.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    path: Option<PathBuf>,
    line: Option<u64>,
    offset: Option<u64>,
    source: Option<std::io::Error>,
}

impl Error {
    /// An error of `kind` (layers above build theirs with the same codes).
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error { kind, message: message.into(), path: None, line: None, offset: None, source: None }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidArgument, message)
    }

    /// An I/O failure: `what` ("cannot read") and the path.
    pub fn io(err: std::io::Error, what: &str, path: &Path) -> Error {
        let mut e = Error::new(ErrorKind::Io, format!("{what} {}: {err}", path.display()));
        e.path = Some(path.to_path_buf());
        e.source = Some(err);
        e
    }

    /// The same error about `path`.
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Error {
        self.path = Some(path.into());
        self
    }

    pub(crate) fn with_line(mut self, line: u64) -> Error {
        self.line = Some(line);
        self
    }

    pub(crate) fn with_offset(mut self, offset: u64) -> Error {
        self.offset = Some(offset);
        self
    }

    /// The kind of error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The stable code, e.g. `INVALID_ARGUMENT`.
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    /// The message without location.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The file the error is about, when there is one.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The 1-based line (of an input stream or a file), when known.
    pub fn line(&self) -> Option<u64> {
        self.line
    }

    /// The byte offset in a file, when known.
    pub fn offset(&self) -> Option<u64> {
        self.offset
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.code(), self.message)?;
        if let Some(line) = self.line {
            write!(f, " (line {line})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_ref().map(|e| e as _)
    }
}

/// A `Result` with this layer's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
