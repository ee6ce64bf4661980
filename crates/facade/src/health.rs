//! Health: what the writer's recorded outcomes (`.scriptorium/status.json`,
//! FORMAT.md §8) say about whether memory is being written, and what a
//! person can do about it. `status` (text and `--json`), `memory_status`
//! and the palace all show this one object:
//!
//! ```json
//! {"failure_streak":2,"fingerprint":"LOCKED:3f2a9c0d1e2b","last_success":"2026-03-04T10:00:00Z",
//!  "last_failure":{"time","code","reason","retryable","fingerprint"},"remediation":"the workspace is locked by pid 4242 since …"}
//! ```
//!
//! `failure_streak` counts failed writes since the latest successful one
//! (a write that wrote a batch; one that found nothing owed changes
//! nothing). While it is above 0, `fingerprint` is the current failure's
//! (the same failure repeating keeps it; see
//! [`scriptorium_scheduler::status::fingerprint`]) and `remediation` says
//! what to do for its code; at 0 both are `null` and `last_failure` is
//! history.

use std::path::Path;

use serde::Serialize;

use scriptorium_scheduler::status::{self, Failure, WriterStatus};
use scriptorium_scheduler::write::SCHEDULER_LOCK;
use scriptorium_source_archive::Code;
use scriptorium_transaction::lock::holder::{self, Holding};
use scriptorium_transaction::lock::LOCK_FILE;

/// The writer's health.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Health {
    /// Failed writes since the latest successful one.
    pub failure_streak: u32,
    /// The current failure's fingerprint (`null` without a streak).
    pub fingerprint: Option<String>,
    /// When a batch was last written.
    pub last_success: Option<String>,
    /// The latest failure, current or not.
    pub last_failure: Option<Failure>,
    /// What to do about the current failure (`null` without a streak).
    pub remediation: Option<String>,
}

impl Health {
    /// The health of the workspace at `root`, from its writer status (a
    /// missing or unreadable status: healthy, nothing recorded).
    pub fn of(root: &Path) -> Health {
        Health::from_status(root, status::load(root))
    }

    /// The health a writer status says; `root` is looked at for a
    /// `LOCKED` failure's holder.
    pub fn from_status(root: &Path, s: WriterStatus) -> Health {
        let current = s.latest_failure.as_ref().filter(|_| s.failure_streak > 0);
        Health {
            failure_streak: s.failure_streak,
            fingerprint: current.map(|f| f.fingerprint.clone()),
            remediation: current.map(|f| remediation(root, f)),
            last_success: s.latest_success,
            last_failure: s.latest_failure,
        }
    }
}

/// What a person can do about `failure`, by its code (FORMAT.md §8 lists
/// where each comes from). A `LOCKED` one names the process holding the
/// workspace's scheduler or write lock when one holds it now.
pub fn remediation(root: &Path, failure: &Failure) -> String {
    let pending = "the turns stay pending and the next write takes them";
    match Code::parse(&failure.code) {
        Some(Code::PermissionDenied) => format!(
            "the model endpoint refused the key (HTTP 401 or 403): set SCRIPTORIUM_API_KEY (or the variable memory.writer.api_key_env names) to a key it accepts; `scriptorium config show` shows the settings in force; {pending}"
        ),
        Some(Code::Locked) => locked(root),
        Some(Code::ModelUnavailable) => format!(
            "the model endpoint gave no usable answer (unreachable, timed out, HTTP 408, 429 or 5xx, or an answer it could not use): check that the server at memory.writer.model_url (or SCRIPTORIUM_MODEL_URL) runs and serves memory.writer.model; {pending} (the watcher retries, backing off up to an hour); `scriptorium write --model offline` writes without a model"
        ),
        Some(Code::ValidationFailed) => format!(
            "validation refused the writer's change after its repair attempts (or the model reached its call limit without finishing): {pending}; `scriptorium check` shows the workspace's problems, and another model or the offline writer (`scriptorium write --model offline`) can write them"
        ),
        Some(Code::Conflict) if failure.retryable => format!(
            "the workspace changed while the write ran (a stale base revision): {pending}, rebuilding the batch"
        ),
        Some(Code::Conflict) => "a turn or a file collides with what the workspace holds (a source id archived with another record, a twin name, a file that already exists; the reason names both): a turn whose id is taken is left out (it stays in the session store) and the next write goes on after it; a colliding file must be renamed or removed".to_owned(),
        Some(Code::Io) => format!(
            "a file or the session store could not be read or written (the reason names it): check free space and permissions under the workspace, and run `scriptorium check`; {pending}"
        ),
        Some(Code::InvalidArgument) => format!(
            "the writer's configuration or request was refused (a bad model URL or name, an endpoint answering HTTP 4xx, a bad setting): fix the setting the reason names (`scriptorium config show` lists every setting and where it came from); {pending}"
        ),
        Some(Code::NotFound) => "what the write named does not exist (the reason names the session or file): check the session id and the workspace path".to_owned(),
        Some(Code::MemoryDisabled) => "memory is off (memory.backend = \"none\"): set memory.backend = \"local\" to write again".to_owned(),
        Some(Code::Tampered) => "an archive file no longer holds what the workspace history committed: `scriptorium check` names it; restore the committed file (`git -C <workspace> checkout -- <file>`) before writing again".to_owned(),
        _ => format!("see the reason; `scriptorium check` shows the workspace's problems; {pending}"),
    }
}

/// The remediation of `LOCKED`: who holds the scheduler's or the
/// workspace's write lock now, if anyone does (a process is named only
/// when its record says so and it still runs, [`holder::probe`]).
fn locked(root: &Path) -> String {
    let then = "the turns stay pending and the next write (the watcher, the next hook, `scriptorium write`) takes them";
    for (rel, lock) in [(SCHEDULER_LOCK, "scheduler lock"), (LOCK_FILE, "write lock")] {
        match holder::probe(root, rel) {
            Ok(Holding::Held(Some(h))) => {
                return format!(
                    "the workspace is locked by pid {} since {} ({rel}): wait for that process to finish, or end it if it hangs; {then}",
                    h.pid, h.since
                )
            }
            Ok(Holding::Held(None)) => {
                return format!(
                    "another process holds the {lock} ({rel}; it did not record its pid): wait for it to finish; {then}"
                )
            }
            Ok(Holding::Shared) => {
                return format!(
                    "readers hold the {lock} shared ({rel}: a search, recall, `scriptorium check`, the palace or an MCP server reading the workspace): a write waits until they finish, so end one that hangs; {then}"
                )
            }
            Ok(Holding::Free) | Err(_) => {}
        }
    }
    format!(
        "no process holds the workspace's write or scheduler lock now (the one that did has finished; the reason names any other lock): {then}"
    )
}

#[cfg(test)]
mod tests;
