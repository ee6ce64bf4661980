//! The last self rendered, kept in `.scriptorium/self.cache` with a hash of
//! what it was rendered from: the budget and the eligible blocks (their
//! files, ids and texts), which are all a render depends on. A prompt whose
//! self did not change reads it back instead of loading the tokenizer
//! (tens of milliseconds) and counting again; a stale, torn or missing
//! cache costs a render, never a wrong self. Written only in a workspace
//! that exists, never through a symbolic link; like every cache, atomically
//! and without fsync.

use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use scriptorium_source_archive::fsio;

use super::{SelfReport, SelfView, Shown};

/// The cache, workspace-relative.
pub(super) const CACHE: &str = ".scriptorium/self.cache";

/// Changes whenever the render's output for the same blocks would.
const FORMAT: &[u8] = b"scriptorium self 1\0";

/// The cache's one entry.
#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    /// The hash of what the self was rendered from ([`key`]).
    key: String,
    /// The self as rendered.
    text: String,
    /// Its tokens.
    tokens: usize,
    /// The ids of the blocks it omitted.
    omitted: Vec<String>,
}

/// The hash of a render's inputs.
fn key(budget: usize, blocks: &[Shown]) -> String {
    let mut h = Sha256::new();
    h.update(FORMAT);
    h.update(budget.to_le_bytes());
    for b in blocks {
        for part in [b.path, b.id.as_str(), b.text.as_str()] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The render of `blocks` under `budget`: read from the cache when it
/// holds this one, else made by `render` and kept.
pub(super) fn through(
    root: &Path,
    budget: usize,
    blocks: &[Shown],
    render: impl FnOnce() -> SelfView,
) -> SelfView {
    let key = key(budget, blocks);
    if let Some(view) = read(root, &key) {
        return view;
    }
    let view = render();
    write(root, &key, &view);
    view
}

/// The cached render when the cache holds the one for `key`.
fn read(root: &Path, key: &str) -> Option<SelfView> {
    let path = root.join(CACHE);
    // A link is never followed.
    if !std::fs::symlink_metadata(&path).ok()?.is_file() {
        return None;
    }
    let entry: Entry = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
    let report = SelfReport { tokens: entry.tokens, omitted: entry.omitted };
    (entry.key == key).then_some(SelfView { text: entry.text, report })
}

/// Keeps `view` as the render for `key`, best effort.
fn write(root: &Path, key: &str, view: &SelfView) {
    if !std::fs::symlink_metadata(root.join(".scriptorium")).is_ok_and(|m| m.is_dir()) {
        return;
    }
    let entry = Entry {
        key: key.to_owned(),
        text: view.text.clone(),
        tokens: view.report.tokens,
        omitted: view.report.omitted.clone(),
    };
    let written = serde_json::to_vec(&entry).map_err(|e| e.to_string()).and_then(|bytes| {
        fsio::check_no_links(root, CACHE).map_err(|e| e.to_string())?;
        fsio::check_no_links(root, ".scriptorium/tmp/x").map_err(|e| e.to_string())?;
        fsio::replace_cache_file(root, &root.join(CACHE), &bytes).map_err(|e| e.to_string())
    });
    if let Err(why) = written {
        tracing::warn!(%why, "cannot keep the self's render");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(id: &str, text: &str) -> Shown {
        Shown { path: "topics/self/persona.md", id: id.into(), text: text.into() }
    }

    #[test]
    fn a_render_is_reused_only_for_the_same_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join(".scriptorium")).unwrap();
        let blocks = [shown("p1", "Answer briefly.")];
        let made = through(root, 500, &blocks, || super::super::render_blocks(&blocks, 500));
        assert!(made.report.tokens > 0);
        // The same inputs: the cache answers (this render would differ).
        let other = SelfView { text: "other".into(), report: SelfReport::default() };
        assert_eq!(through(root, 500, &blocks, || other.clone()), made);
        // Another budget, text or id: rendered again.
        assert_eq!(through(root, 499, &blocks, || other.clone()), other);
        let edited = [shown("p1", "Answer in full.")];
        assert_eq!(through(root, 500, &edited, || other.clone()), other);
        let moved = [shown("p2", "Answer briefly.")];
        assert_eq!(through(root, 500, &moved, || other.clone()), other);
        // A torn cache is a miss.
        std::fs::write(root.join(CACHE), b"{\"key\":").unwrap();
        assert_eq!(through(root, 500, &blocks, || other.clone()), other);
    }

    #[test]
    fn no_workspace_no_cache() {
        let dir = tempfile::tempdir().unwrap();
        let blocks = [shown("p1", "Answer briefly.")];
        through(dir.path(), 500, &blocks, SelfView::default);
        assert!(!dir.path().join(".scriptorium").exists());
    }
}
