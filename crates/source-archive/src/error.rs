//! The error type of the archive layer.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::code::Code;

/// An error of the archive layer: a code, a message, and where it happened.
#[derive(Debug)]
pub struct Error {
    code: Code,
    message: String,
    path: Option<PathBuf>,
    line: Option<u64>,
    offset: Option<u64>,
    source: Option<std::io::Error>,
}

impl Error {
    /// An error with `code` (layers above build theirs with the same codes).
    pub fn new(code: Code, message: impl Into<String>) -> Error {
        Error { code, message: message.into(), path: None, line: None, offset: None, source: None }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Error {
        Error::new(Code::InvalidArgument, message)
    }

    /// An I/O failure: `what` ("cannot read") and the path.
    pub fn io(err: std::io::Error, what: &str, path: &Path) -> Error {
        let mut e = Error::new(Code::Io, format!("{what} {}: {err}", path.display()));
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

    /// The stable code, e.g. `INVALID_ARGUMENT`.
    pub fn code(&self) -> Code {
        self.code
    }

    /// Whether a later attempt could succeed (what the code implies).
    pub fn retryable(&self) -> bool {
        self.code.retryable()
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
        write!(f, "{}: {}", self.code, self.message)?;
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
