//! The error of the transaction layer: one stable code of FORMAT.md §5, a
//! message, and where it applies.

use std::fmt;

/// The stable codes a transaction can refuse or fail with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Code {
    /// Bad input: malformed patch, bad path, bad value.
    InvalidArgument,
    /// The tier may not do this.
    PermissionDenied,
    /// Another writer holds the lock past the timeout.
    Locked,
    /// The base revision is not current, or a `create` hits an existing file.
    Conflict,
    /// A named file or text does not exist.
    NotFound,
    /// The result would add a diagnostic.
    ValidationFailed,
    /// The operating system refused an operation.
    Io,
}

impl Code {
    /// `INVALID_ARGUMENT`, `PERMISSION_DENIED`, …
    pub fn as_str(self) -> &'static str {
        match self {
            Code::InvalidArgument => "INVALID_ARGUMENT",
            Code::PermissionDenied => "PERMISSION_DENIED",
            Code::Locked => "LOCKED",
            Code::Conflict => "CONFLICT",
            Code::NotFound => "NOT_FOUND",
            Code::ValidationFailed => "VALIDATION_FAILED",
            Code::Io => "IO",
        }
    }
}

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
        use scriptorium_source_archive::ErrorKind as K;
        let code = match e.kind() {
            K::InvalidArgument => Code::InvalidArgument,
            K::NotFound => Code::NotFound,
            K::Conflict => Code::Conflict,
            K::ValidationFailed => Code::ValidationFailed,
            _ => Code::Io,
        };
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
