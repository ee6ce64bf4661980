//! The writer status, `.scriptorium/status.json`: the latest success, the
//! latest failure with its class and fingerprint, the failure streak
//! (failures in a row since the latest success), and the pending count.
//! Written best effort, outside any transaction: failing to write it never
//! fails a write.
//!
//! Files written before the streak and the fingerprint existed are read as
//! they would have been written: a missing `failure_streak` is 1 when the
//! latest failure is newer than the latest success, else 0, and a missing
//! `fingerprint` is computed from the failure's code and reason.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::WriteFailure;

mod fingerprint;

pub use fingerprint::{fingerprint, normalise};

/// Where the status lives, relative to the workspace.
pub const STATUS_FILE: &str = ".scriptorium/status.json";

/// The lock that serialises updates of the status file between processes
/// (so two writers finishing at once never lose a streak's count).
pub const STATUS_LOCK: &str = ".scriptorium/status.lock";

/// How long an update waits for [`STATUS_LOCK`] before writing without it.
const LOCK_WAIT: Duration = Duration::from_secs(2);

/// The latest failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// When (`YYYY-MM-DDTHH:MM:SSZ`).
    pub time: String,
    /// The stable code.
    pub code: String,
    /// Why.
    pub reason: String,
    /// Whether a later pass could finish it.
    pub retryable: bool,
    /// The same failure repeating has the same fingerprint:
    /// [`fingerprint()`] of the code and the reason.
    #[serde(default)]
    pub fingerprint: String,
}

/// The writer status as stored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "Stored")]
pub struct WriterStatus {
    /// When a batch was last written.
    pub latest_success: Option<String>,
    /// The latest failure.
    pub latest_failure: Option<Failure>,
    /// Failures in a row since the latest success (0: the latest outcome
    /// was a success, or nothing failed yet).
    pub failure_streak: u32,
    /// Eligible unmarked turns when the status was last written (a
    /// read-only count; `status` recounts).
    pub pending_turns: Option<usize>,
}

/// The file as any version wrote it.
#[derive(Deserialize)]
struct Stored {
    latest_success: Option<String>,
    latest_failure: Option<Failure>,
    failure_streak: Option<u32>,
    pending_turns: Option<usize>,
}

impl From<Stored> for WriterStatus {
    fn from(s: Stored) -> WriterStatus {
        let latest_failure = s.latest_failure.map(|mut f| {
            if f.fingerprint.is_empty() {
                f.fingerprint = fingerprint(&f.code, &f.reason);
            }
            f
        });
        // Times are all `YYYY-MM-DDTHH:MM:SSZ`: their order is the text's.
        let failed_last = match (&latest_failure, &s.latest_success) {
            (Some(f), Some(ok)) => f.time > *ok,
            (Some(_), None) => true,
            (None, _) => false,
        };
        WriterStatus {
            failure_streak: s.failure_streak.unwrap_or(u32::from(failed_last)),
            latest_success: s.latest_success,
            latest_failure,
            pending_turns: s.pending_turns,
        }
    }
}

/// Reads the status; a missing or unreadable file is an empty status.
pub fn load(root: &Path) -> WriterStatus {
    std::fs::read(root.join(STATUS_FILE))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

fn save(root: &Path, status: &WriterStatus) -> bool {
    let Ok(mut bytes) = serde_json::to_vec(status) else { return false };
    bytes.push(b'\n');
    scriptorium_source_archive::fsio::replace_cache_file(root, &root.join(STATUS_FILE), &bytes).is_ok()
}

/// Reads, changes and writes the status under [`STATUS_LOCK`] (without it
/// when it cannot be had: the file is best effort); returns whether the
/// file was written.
fn update(root: &Path, change: impl FnOnce(&mut WriterStatus)) -> bool {
    let _held = scriptorium_transaction::lock::acquire_file(root, STATUS_LOCK, LOCK_WAIT)
        .inspect_err(|e| tracing::warn!(why = %e, "the status file is updated without its lock"));
    let mut s = load(root);
    change(&mut s);
    save(root, &s)
}

/// Records a success at `time` (the streak ends); returns whether the file
/// was written.
pub fn record_success(root: &Path, time: &str) -> bool {
    update(root, |s| {
        s.latest_success = Some(time.to_owned());
        s.failure_streak = 0;
    })
}

/// Records a failure at `time` (the streak grows by one); returns whether
/// the file was written.
pub fn record_failure(root: &Path, time: &str, f: &WriteFailure) -> bool {
    update(root, |s| {
        s.latest_failure = Some(Failure {
            time: time.to_owned(),
            code: f.code.as_str().to_owned(),
            reason: f.reason.clone(),
            retryable: f.retryable,
            fingerprint: fingerprint(f.code.as_str(), &f.reason),
        });
        s.failure_streak = s.failure_streak.saturating_add(1);
    })
}

/// Records the pending count; returns whether the file was written.
pub fn record_pending(root: &Path, pending: usize) -> bool {
    update(root, |s| s.pending_turns = Some(pending))
}

#[cfg(test)]
mod tests;
