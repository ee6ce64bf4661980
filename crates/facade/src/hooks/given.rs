//! Which self each session was last given, so that a `UserPromptSubmit`
//! answer carries the self only when its session does not hold it yet: a
//! harness keeps what a hook injects in the conversation, and the self
//! repeated at every turn would fill it. `SessionStart` (a new, resumed,
//! cleared or compacted conversation) always gives it; a prompt gives it
//! again when it changed since (an edit shows up at the next prompt), or
//! when the session is not known.
//!
//! One file per session under `.scriptorium/hooks/self/` (named by a hash
//! of the session id) holding the SHA-256 of the self as given.

use std::path::Path;

use sha2::{Digest, Sha256};

use super::state;

/// The folder of the records, workspace-relative.
const DIR: &str = ".scriptorium/hooks/self";

/// The record of `session`, workspace-relative.
fn path_of(session: &str) -> String {
    format!("{DIR}/{}", state::name_of(session.as_bytes()))
}

/// What is recorded of `text`: its SHA-256, in hex.
fn digest(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `session` must be given the self `text`: it is not known, or
/// what it was last given is not `text`.
pub(super) fn due(root: &Path, session: Option<&str>, text: &str) -> bool {
    let Some(session) = session else { return true };
    // A record that is missing, unreadable or planted is no proof the
    // session holds this self: it is given again.
    match std::fs::read(root.join(path_of(session))) {
        Ok(bytes) => bytes != digest(text).as_bytes(),
        Err(_) => true,
    }
}

/// Records that `session` was given the self `text`, in a workspace that
/// exists; a record that cannot be written only costs giving it again. No
/// self gives nothing to record (a self that appears later is due all the
/// same).
pub(super) fn record(root: &Path, session: Option<&str>, text: &str) {
    let Some(session) = session.filter(|_| !text.is_empty()) else { return };
    if !std::fs::symlink_metadata(root.join(".scriptorium")).is_ok_and(|m| m.is_dir()) {
        return;
    }
    if let Err(e) = state::write(root, &path_of(session), digest(text).as_bytes()) {
        tracing::warn!(why = %e.message, "cannot record the self a session was given");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_given_each_self_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // No workspace: nothing is recorded, the self is always due.
        record(root, Some("s1"), "self");
        assert!(due(root, Some("s1"), "self"));
        std::fs::create_dir(root.join(".scriptorium")).unwrap();
        record(root, Some("s1"), "self");
        assert!(!due(root, Some("s1"), "self"));
        assert!(due(root, Some("s1"), "self, edited"), "a changed self is given again");
        assert!(due(root, Some("s2"), "self"), "another session");
        assert!(due(root, None, "self"), "an unknown session");
        record(root, Some("s3"), "");
        assert!(!root.join(path_of("s3")).exists(), "no self, no record");
        assert!(due(root, Some("s3"), "self"), "a self that appears later");
    }
}
