//! The latest hook failure, kept in `.scriptorium/hooks/last_error.json` so
//! that `status --json` shows it as `"hooks":{"last_error":{"code","event","time"}}`:
//! a hook never fails the agent, and its failures are never silent.
//!
//! A background write's failure is a writer outcome as well: it is also
//! recorded in the writer status (`.scriptorium/status.json`), where it
//! counts in the failure streak `status` reports as health — by the
//! scheduler when the write ran, by [`record_writer`] when it failed
//! before (its session's write could not be claimed, the writer could not
//! be chosen, the session store could not be opened). A failure answering
//! an event (reading a transcript, recall, the nudge) is not a write and
//! does not count.

use std::path::Path;

use serde::{Deserialize, Serialize};

use scriptorium_scheduler::WriteFailure;
use scriptorium_source_archive::timestamp;

use crate::error::Error;

/// Where the latest failure is kept, workspace-relative.
pub const LAST_ERROR: &str = ".scriptorium/hooks/last_error.json";

/// A hook's failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastError {
    /// The FORMAT.md §5 code.
    pub code: String,
    /// The hook event (`Stop`, `UserPromptSubmit`, …; `write` for a
    /// background write's own failure is named by the event that started it).
    pub event: String,
    /// When (UTC, RFC 3339).
    pub time: String,
}

/// The hooks' part of a status.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HookStatus {
    /// The latest failure, if any was ever recorded.
    pub last_error: Option<LastError>,
}

/// The hooks' status of the workspace at `root` (nothing recorded, or an
/// unreadable record: no failure to show).
pub fn status(root: &Path) -> HookStatus {
    let last_error = std::fs::read(root.join(LAST_ERROR)).ok().and_then(|b| serde_json::from_slice(&b).ok());
    HookStatus { last_error }
}

/// Records `e`, a background write's failure before the scheduler ran it,
/// in the writer status (best effort; only when the workspace exists).
pub fn record_writer(root: &Path, e: &Error) {
    if !std::fs::symlink_metadata(root.join(".scriptorium")).is_ok_and(|m| m.is_dir()) {
        return;
    }
    let reason = match &e.path {
        Some(p) => format!("{p}: {}", e.message),
        None => e.message.clone(),
    };
    let failure = WriteFailure { code: e.code, reason, retryable: e.retryable() };
    scriptorium_scheduler::status::record_failure(root, &timestamp::now(), &failure);
}

/// Records `e` as the latest failure of `event`, when the workspace exists
/// (a hook never creates a workspace to say it failed); a record that
/// cannot be written is logged and otherwise dropped: the person is told
/// by the hook's answer all the same.
pub fn record(root: &Path, event: &str, e: &Error) {
    // A `.scriptorium` that is a link is not followed (`is_dir` would).
    if !std::fs::symlink_metadata(root.join(".scriptorium")).is_ok_and(|m| m.is_dir()) {
        return;
    }
    let entry =
        LastError { code: e.code.as_str().to_owned(), event: event.to_owned(), time: timestamp::now() };
    let written = serde_json::to_vec(&entry)
        .map_err(|e| Error::new(scriptorium_source_archive::Code::Io, e.to_string()))
        .and_then(|bytes| super::state::write(root, LAST_ERROR, &bytes));
    if let Err(why) = written {
        tracing::warn!(why = %why.message, "cannot record the hook's failure");
    }
}
