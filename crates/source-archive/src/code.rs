//! The stable error codes of FORMAT.md §5, defined once for every layer.

use std::fmt;

/// What kind of refusal or failure an error is: one stable code of
/// FORMAT.md §5. Every layer's error exposes one (`code()`); a code never
/// changes meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Code {
    /// Bad input: malformed JSON or value, bad path, bad configuration.
    InvalidArgument,
    /// Something named does not exist.
    NotFound,
    /// The input collides with what exists (a stale base revision, a twin
    /// name, a `create` on an existing file).
    Conflict,
    /// The caller's tier or credentials do not allow it.
    PermissionDenied,
    /// The result would not satisfy the format (added diagnostics, a
    /// damaged archive file).
    ValidationFailed,
    /// Another process held the lock past the timeout.
    Locked,
    /// `memory.backend = "none"`.
    MemoryDisabled,
    /// The model could not be reached, timed out, was rate-limited or
    /// answered with something unusable.
    ModelUnavailable,
    /// The operating system refused an operation.
    Io,
    /// An archived record committed to the workspace history was changed,
    /// removed or reordered outside Scriptorium.
    Tampered,
}

impl Code {
    /// Every code, in FORMAT.md §5's order.
    pub const ALL: [Code; 10] = [
        Code::InvalidArgument,
        Code::NotFound,
        Code::Conflict,
        Code::PermissionDenied,
        Code::ValidationFailed,
        Code::Locked,
        Code::MemoryDisabled,
        Code::ModelUnavailable,
        Code::Io,
        Code::Tampered,
    ];

    /// The code as printed: `INVALID_ARGUMENT`, `NOT_FOUND`, …
    pub fn as_str(self) -> &'static str {
        match self {
            Code::InvalidArgument => "INVALID_ARGUMENT",
            Code::NotFound => "NOT_FOUND",
            Code::Conflict => "CONFLICT",
            Code::PermissionDenied => "PERMISSION_DENIED",
            Code::ValidationFailed => "VALIDATION_FAILED",
            Code::Locked => "LOCKED",
            Code::MemoryDisabled => "MEMORY_DISABLED",
            Code::ModelUnavailable => "MODEL_UNAVAILABLE",
            Code::Io => "IO",
            Code::Tampered => "TAMPERED",
        }
    }

    /// Parses [`Code::as_str`]'s output.
    pub fn parse(s: &str) -> Option<Code> {
        Code::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// Whether a later attempt could succeed where this one failed: a held
    /// lock, a conflict, an I/O error or an unavailable model can; refused
    /// content, a bad argument, a denied permission or disabled memory
    /// cannot.
    pub fn retryable(self) -> bool {
        matches!(self, Code::Io | Code::Locked | Code::Conflict | Code::ModelUnavailable)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    //! The codes round-trip through their text.
    use super::*;

    #[test]
    fn every_code_parses_back() {
        for c in Code::ALL {
            assert_eq!(Code::parse(c.as_str()), Some(c));
            assert_eq!(c.to_string(), c.as_str());
        }
        assert_eq!(Code::parse("NOPE"), None);
    }
}
