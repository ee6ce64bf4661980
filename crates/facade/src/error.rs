//! The facade's error: the FORMAT.md §5 error object every verb, tool and
//! backend call refuses or fails with, whichever layer it came from.

use std::fmt;

use serde::Serialize;
use serde_json::{json, Value};

use scriptorium_scheduler::{self as scheduler, WriteFailure};
use scriptorium_source_archive::{self as archive, Code};
use scriptorium_topic_markdown::diag::Diagnostic;
use scriptorium_transaction as transaction;
use scriptorium_writer::model::ModelError;

/// A refusal or failure: a stable code, a message, and where it applies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Error {
    /// The stable code.
    pub code: Code,
    /// What went wrong, for a person.
    pub message: String,
    /// The file, workspace-relative path or argument it concerns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The byte offset in the file at `path`, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// The 1-based line in the file at `path`, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// For a failed write: whether a later attempt could finish it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retryable: Option<bool>,
    /// For `VALIDATION_FAILED`: every diagnostic the change would add.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<Diagnostic>,
}

/// A `Result` with the facade's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error with a code and a message.
    pub fn new(code: Code, message: impl Into<String>) -> Error {
        Error {
            code,
            message: message.into(),
            path: None,
            offset: None,
            line: None,
            retryable: None,
            diagnostics: Vec::new(),
        }
    }

    /// `INVALID_ARGUMENT`.
    pub fn invalid(message: impl Into<String>) -> Error {
        Error::new(Code::InvalidArgument, message)
    }

    /// The same error about `path`.
    pub fn at(mut self, path: impl Into<String>) -> Error {
        self.path = Some(path.into());
        self
    }

    /// `MEMORY_DISABLED`: the refusal of every verb, tool and backend call
    /// when `memory.backend = "none"`.
    pub fn disabled() -> Error {
        Error::new(Code::MemoryDisabled, "memory is disabled (memory.backend = \"none\")")
    }

    /// The stable code.
    pub fn code(&self) -> Code {
        self.code
    }

    /// The path or argument it concerns, if any.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// Whether a later attempt could succeed: what the error says when it
    /// is a failed write, else what its code implies.
    pub fn retryable(&self) -> bool {
        self.retryable.unwrap_or_else(|| self.code.retryable())
    }

    /// `{"error": {…}}`, the object printed on stderr (keys in order).
    pub fn to_value(&self) -> Value {
        json!({ "error": self })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for Error {}

impl From<transaction::Error> for Error {
    fn from(e: transaction::Error) -> Error {
        Error {
            code: e.code,
            message: e.message,
            path: e.path,
            offset: e.offset,
            line: e.line,
            retryable: None,
            diagnostics: e.diagnostics,
        }
    }
}

impl From<archive::Error> for Error {
    fn from(e: archive::Error) -> Error {
        Error {
            code: e.code(),
            message: e.message().to_owned(),
            path: e.path().map(|p| p.to_string_lossy().into_owned()),
            offset: e.offset(),
            line: e.line(),
            retryable: None,
            diagnostics: Vec::new(),
        }
    }
}

impl From<scheduler::Error> for Error {
    fn from(e: scheduler::Error) -> Error {
        Error {
            code: e.code,
            message: e.message,
            path: e.path,
            offset: None,
            line: e.line,
            retryable: None,
            diagnostics: Vec::new(),
        }
    }
}

impl From<WriteFailure> for Error {
    fn from(f: WriteFailure) -> Error {
        Error { retryable: Some(f.retryable), ..Error::new(f.code, f.reason) }
    }
}

impl From<ModelError> for Error {
    fn from(e: ModelError) -> Error {
        Error { retryable: Some(e.retryable), ..Error::new(e.code, e.reason) }
    }
}

impl From<crate::config::ConfigError> for Error {
    fn from(e: crate::config::ConfigError) -> Error {
        Error::invalid(format!("configuration: {}", e.message)).at(e.path.display().to_string())
    }
}
