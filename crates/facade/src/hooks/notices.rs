//! Telling the person when the self changes (FORMAT.md §9): a transaction
//! whose changes touch `topics/self/persona.md` or
//! `topics/self/identity.md` leaves a notice, and the next hook answer —
//! whatever its event, in whichever session comes first — carries it once
//! as its `systemMessage`: shown to the person, never put in the model's
//! context. Background writes end after the hook that started them has
//! answered, so the notice waits for the next one.
//!
//! The notices are files under `.scriptorium/hooks/self_changed/`, one per
//! transaction (`<nanoseconds>-<revision>.json`), left by an observer of
//! installed transactions ([`register`]) in the process that made the
//! change; only in a workspace whose hooks have run (`.scriptorium/hooks/`
//! exists) and while `memory.self.edit_notice` is on, and at most
//! [`KEPT`] of them (the oldest go). A hook takes each by reading and then
//! removing it: of two hooks at once, only the one whose removal succeeds
//! tells it.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};

use scriptorium_source_archive::{fsio, timestamp};
use scriptorium_transaction::observe::{self, Installed, Observer, Registration};

use super::state;
use crate::config::Config;
use crate::error::Error;
use crate::self_prompt::is_self;

/// The folder of the notices, workspace-relative.
pub const DIR: &str = ".scriptorium/hooks/self_changed";
/// The most notices kept waiting for a hook.
pub const KEPT: usize = 16;
/// The most changes one message names; the rest are counted.
const SHOWN: usize = 4;

/// One transaction that changed the self.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notice {
    /// When (UTC, RFC 3339).
    pub time: String,
    /// The workspace revision it made current.
    pub revision: String,
    /// Who or what made it (`update`, `model:<name>`, `sync`, …).
    pub writer: String,
    /// The self's files it changed.
    pub changed: Vec<String>,
}

/// Leaves a notice for each installed transaction that changed the self.
struct Recorder;

impl Observer for Recorder {
    fn installed(&self, t: &Installed<'_>) {
        let changed: Vec<String> = t.changed.iter().filter(|p| is_self(p)).cloned().collect();
        if changed.is_empty() {
            return;
        }
        let notice = Notice {
            time: timestamp::now(),
            revision: t.revision.to_owned(),
            writer: t.provenance.writer.clone(),
            changed,
        };
        if let Err(e) = leave(t.root, &notice) {
            tracing::warn!(why = %e.message, "cannot leave the notice of a change of the self");
        }
    }
}

/// Leaves a notice for every transaction this process installs that
/// changes the self, from now on (once per process; later calls do
/// nothing). The `scriptorium` program, [`crate::backend::LocalMemoryBackend`]
/// and [`super::background_write`] call it; a program committing through
/// the lower layers directly calls it once itself.
pub fn register() {
    static KEPT_ALIVE: OnceLock<Registration<dyn Observer>> = OnceLock::new();
    KEPT_ALIVE.get_or_init(|| observe::register(Arc::new(Recorder)));
}

/// Whether `rel` is a real folder of the workspace (no link on the way).
fn is_folder(root: &Path, rel: &str) -> bool {
    fsio::check_no_links(root, &format!("{rel}/x")).is_ok()
        && std::fs::symlink_metadata(root.join(rel)).is_ok_and(|m| m.is_dir())
}

/// Leaves `notice` for the next hook of the workspace at `root` (see the
/// module documentation for when it does nothing).
pub fn leave(root: &Path, notice: &Notice) -> Result<(), Error> {
    if !is_folder(root, super::state::DIR) {
        return Ok(());
    }
    if !Config::load(root).map(|c| c.self_edit_notice).unwrap_or(true) {
        return Ok(());
    }
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let name: String = notice.revision.chars().filter(char::is_ascii_hexdigit).take(16).collect();
    let bytes = serde_json::to_vec(notice).map_err(|e| Error::new(crate::Code::Io, e.to_string()))?;
    state::write(root, &format!("{DIR}/{nanos:020}-{name}.json"), &bytes)?;
    // The oldest beyond the newest KEPT go.
    let waiting = names(root);
    for old in waiting.iter().take(waiting.len().saturating_sub(KEPT)) {
        let _ = std::fs::remove_file(root.join(DIR).join(old));
    }
    Ok(())
}

/// The notices' file names, oldest first.
fn names(root: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(root.join(DIR)) else { return Vec::new() };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".json") && !n.starts_with('.'))
        .collect();
    names.sort();
    names
}

/// Takes every notice waiting in the workspace at `root`: the message a
/// hook's answer carries, or `None` (nothing waits, or
/// `memory.self.edit_notice` is off, which drops them).
pub fn take(root: &Path, config: &Config) -> Option<String> {
    if !is_folder(root, DIR) {
        // The hooks of this workspace run from now on: the next change of
        // the self is left for them, the first one included.
        if config.self_edit_notice && is_folder(root, ".scriptorium") {
            if let Err(e) = state::create_dir(root, DIR) {
                tracing::warn!(why = %e.message, "cannot create the folder of the self's notices");
            }
        }
        return None;
    }
    let mut taken = Vec::new();
    for name in names(root) {
        let path = root.join(DIR).join(&name);
        let read = std::fs::symlink_metadata(&path)
            .ok()
            .filter(std::fs::Metadata::is_file)
            .and_then(|_| std::fs::read(&path).ok());
        // Only the hook whose removal succeeds tells it.
        if std::fs::remove_file(&path).is_ok() {
            taken.extend(read.and_then(|b| serde_json::from_slice::<Notice>(&b).ok()).filter(sound));
        }
    }
    (config.self_edit_notice && !taken.is_empty()).then(|| message(&taken))
}

/// Whether `n` is a notice this module leaves: a revision, and only the
/// self's files (a file put there by hand tells nothing else).
fn sound(n: &Notice) -> bool {
    n.revision.len() == 64
        && n.revision.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && !n.changed.is_empty()
        && n.changed.iter().all(|p| is_self(p))
        && n.writer.chars().count() <= 200
}

/// The message for `notices`, oldest first.
pub fn message(notices: &[Notice]) -> String {
    let mut parts: Vec<String> = notices
        .iter()
        .take(SHOWN)
        .map(|n| {
            format!(
                "{} changed ({}, revision {})",
                n.changed.join(", "),
                crate::recall::field(&n.writer),
                n.revision
            )
        })
        .collect();
    if notices.len() > SHOWN {
        parts.push(format!("and {} more change(s)", notices.len() - SHOWN));
    }
    format!("scriptorium memory: the self changed: {}", parts.join("; "))
}

#[cfg(test)]
mod tests;
