//! The error of the transaction layer: one stable code of FORMAT.md §5, a
//! message, and where it applies.

use std::fmt;

pub use scriptorium_source_archive::Code;

/// A refusal or failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The stable code.
    pub code: Code,
    /// What went wrong, for a person.
    pub message: String,
    /// The workspace-relative path or JSON location it concerns, if any.
    pub path: Option<String>,
    /// The byte offset in the file at `path` it concerns, if any.
    pub offset: Option<u64>,
    /// The 1-based line in the file at `path` it concerns, if any.
    pub line: Option<u64>,
    /// For `VALIDATION_FAILED`: every diagnostic the change would add.
    pub diagnostics: Vec<scriptorium_topic_markdown::diag::Diagnostic>,
}

impl Error {
    /// An error with no location.
    pub fn new(code: Code, message: impl Into<String>) -> Error {
        Error { code, message: message.into(), path: None, offset: None, line: None, diagnostics: Vec::new() }
    }

    /// The same error carrying `diagnostics`.
    pub fn with_diagnostics(
        mut self,
        diagnostics: Vec<scriptorium_topic_markdown::diag::Diagnostic>,
    ) -> Error {
        self.diagnostics = diagnostics;
        self
    }

    /// The same error about `path`.
    pub fn at(mut self, path: impl Into<String>) -> Error {
        self.path = Some(path.into());
        self
    }

    /// The stable code.
    pub fn code(&self) -> Code {
        self.code
    }

    /// The workspace-relative path or JSON location it concerns, if any.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// Whether a later attempt could succeed (what the code implies: a held
    /// lock, a stale base, an I/O failure).
    pub fn retryable(&self) -> bool {
        self.code.retryable()
    }

    /// An I/O failure doing `what` on `path`.
    pub fn io(e: &std::io::Error, what: &str, path: &std::path::Path) -> Error {
        Error::new(Code::Io, format!("{what} {}: {e}", path.display()))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(p) => write!(f, "{}: {}: {}", self.code.as_str(), p, self.message),
            None => write!(f, "{}: {}", self.code.as_str(), self.message),
        }
    }
}

impl std::error::Error for Error {}

impl From<scriptorium_source_archive::Error> for Error {
    fn from(e: scriptorium_source_archive::Error) -> Error {
        let code = e.code();
        let path = e.path().map(|p| p.display().to_string());
        Error {
            code,
            message: e.message().to_owned(),
            path,
            offset: e.offset(),
            line: e.line(),
            diagnostics: Vec::new(),
        }
    }
}
