//! Errors of the scheduler: one stable code of FORMAT.md §5, a message, and
//! where it applies; and [`WriteFailure`], what a write that did not finish
//! reports.

use std::fmt;

use scriptorium_transaction as transaction;

pub use scriptorium_source_archive::Code;

/// An error of the session store or an importer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The stable code.
    pub code: Code,
    /// What went wrong, for a person.
    pub message: String,
    /// The file (or session) it concerns, if any.
    pub path: Option<String>,
    /// The 1-based line of `path` it concerns, if any.
    pub line: Option<u64>,
}

/// The scheduler's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error with no location.
    pub fn new(code: Code, message: impl Into<String>) -> Error {
        Error { code, message: message.into(), path: None, line: None }
    }

    /// `INVALID_ARGUMENT`.
    pub fn invalid(message: impl Into<String>) -> Error {
        Error::new(Code::InvalidArgument, message)
    }

    /// Sets the file it concerns.
    pub fn at(mut self, path: impl Into<String>) -> Error {
        self.path = Some(path.into());
        self
    }

    /// Sets the line it concerns.
    pub fn line(mut self, line: u64) -> Error {
        self.line = Some(line);
        self
    }

    /// An I/O error while doing `what`.
    pub fn io(e: &std::io::Error, what: &str) -> Error {
        Error::new(Code::Io, format!("{what}: {e}"))
    }

    /// The stable code.
    pub fn code(&self) -> Code {
        self.code
    }

    /// The file (or session) it concerns, if any.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// Whether a later attempt could succeed (what the code implies).
    pub fn retryable(&self) -> bool {
        self.code.retryable()
    }

    /// An archive error (a bad identifier, timestamp or record).
    pub fn from_archive(e: scriptorium_source_archive::Error) -> Error {
        let mut out = Error::new(e.code(), e.message().to_owned());
        out.path = e.path().map(|p| p.display().to_string());
        out.line = e.line();
        out
    }
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Error {
        Error::new(Code::Io, format!("session database: {e}"))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)?;
        match (&self.path, self.line) {
            (Some(p), Some(l)) => write!(f, " ({p}:{l})"),
            (Some(p), None) => write!(f, " ({p})"),
            _ => Ok(()),
        }
    }
}

impl std::error::Error for Error {}

/// A write that did not finish: why, and whether a later pass could.
///
/// Nothing of the batch that failed is marked; batches written before it in
/// the same call are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteFailure {
    /// The stable code.
    pub code: Code,
    /// What went wrong, for a person.
    pub reason: String,
    /// Whether a later pass could finish it (the watcher retries these with
    /// backoff and marks the others handled).
    pub retryable: bool,
}

impl WriteFailure {
    /// A failure whose retryability follows its code ([`Code::retryable`]).
    pub fn new(code: Code, reason: impl Into<String>) -> WriteFailure {
        WriteFailure { code, reason: reason.into(), retryable: code.retryable() }
    }
}

impl From<Error> for WriteFailure {
    fn from(e: Error) -> WriteFailure {
        let reason = match (&e.path, e.line) {
            (Some(p), Some(l)) => format!("{p}:{l}: {}", e.message),
            (Some(p), None) => format!("{p}: {}", e.message),
            _ => e.message,
        };
        WriteFailure::new(e.code, reason)
    }
}

impl From<transaction::Error> for WriteFailure {
    fn from(e: transaction::Error) -> WriteFailure {
        let code = e.code;
        let mut reason = match &e.path {
            Some(p) => format!("{p}: {}", e.message),
            None => e.message.clone(),
        };
        if let Some(d) = e.diagnostics.first() {
            reason.push_str(&format!(" ({} diagnostics; first: {d})", e.diagnostics.len()));
        }
        let mut f = WriteFailure::new(code, reason);
        // A stale base revision is worth another try; any other conflict
        // (a name that twins an existing one, a file that already exists)
        // will be there next time too.
        if code == Code::Conflict && !e.message.starts_with("base_revision ") {
            f.retryable = false;
        }
        f
    }
}

impl fmt::Display for WriteFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let again = if self.retryable { "retryable" } else { "not retryable" };
        write!(f, "{}: {} ({again})", self.code, self.reason)
    }
}

impl std::error::Error for WriteFailure {}
