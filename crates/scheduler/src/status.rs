//! The writer status, `.scriptorium/status.json`: the latest success, the
//! latest failure with its class, and the pending count. Written best
//! effort, outside any transaction: failing to write it never fails a write.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::WriteFailure;

/// Where the status lives, relative to the workspace.
pub const STATUS_FILE: &str = ".scriptorium/status.json";

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
}

/// The writer status as stored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriterStatus {
    /// When a batch was last written.
    pub latest_success: Option<String>,
    /// The latest failure.
    pub latest_failure: Option<Failure>,
    /// Eligible unmarked turns when the status was last written (a
    /// read-only count; `status` recounts).
    pub pending_turns: Option<usize>,
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

/// Records a success at `time`; returns whether the file was written.
pub fn record_success(root: &Path, time: &str) -> bool {
    let mut s = load(root);
    s.latest_success = Some(time.to_owned());
    save(root, &s)
}

/// Records a failure at `time`; returns whether the file was written.
pub fn record_failure(root: &Path, time: &str, f: &WriteFailure) -> bool {
    let mut s = load(root);
    s.latest_failure = Some(Failure {
        time: time.to_owned(),
        code: f.code.as_str().to_owned(),
        reason: f.reason.clone(),
        retryable: f.retryable,
    });
    save(root, &s)
}

/// Records the pending count; returns whether the file was written.
pub fn record_pending(root: &Path, pending: usize) -> bool {
    let mut s = load(root);
    s.pending_turns = Some(pending);
    save(root, &s)
}
