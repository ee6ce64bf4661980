//! Recording turns: what a harness — never the model — tells memory was
//! said, added to the workspace's session store exactly once.
//!
//! The harness supplies the trusted fields (`speaker_id`,
//! `speaker_display`, `pending`) from its own records of who is talking;
//! this is why recording is not a `memory_*` tool: a model must never be
//! able to say who spoke.

use std::path::Path;

use serde::Serialize;

use scriptorium_scheduler::import::{self, Format, Origin, Transcript};
use scriptorium_scheduler::store::SESSIONS_DB;
use scriptorium_scheduler::SqliteStore;

use crate::error::Error;

/// What recording did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Recorded {
    /// Nodes that were new.
    pub added: usize,
    /// Nodes whose ids the session already had (left as they were).
    pub skipped: usize,
}

/// Adds the transcripts' nodes to the session store of the workspace at
/// `root` (creating the workspace when missing), all or nothing; a node
/// whose id its session already has is skipped, never recorded twice.
pub fn record(root: &Path, transcripts: &[Transcript]) -> Result<Recorded, Error> {
    if transcripts.iter().all(|t| t.nodes.is_empty()) {
        return Ok(Recorded::default());
    }
    scriptorium_transaction::layout::ensure(root)?;
    let store = SqliteStore::open(&root.join(SESSIONS_DB))?;
    let done = import::import(&store, transcripts)?;
    Ok(Recorded { added: done.new_nodes, skipped: done.nodes - done.new_nodes })
}

/// [`record`] of our JSONL (FORMAT.md §8: one node per line), as
/// `session append` reads it on stdin.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let line = r#"{"session":"s1","id":"t1","role":"user","timestamp":"2026-01-05T10:00:00Z","content":"I prefer tea.","speaker_id":"u42","speaker_display":"Ada"}"#;
/// let first = scriptorium::sessions::append_jsonl(dir.path(), &format!("{line}\n")).unwrap();
/// assert_eq!((first.added, first.skipped), (1, 0));
/// let again = scriptorium::sessions::append_jsonl(dir.path(), &format!("{line}\n")).unwrap();
/// assert_eq!((again.added, again.skipped), (0, 1));
/// ```
pub fn append_jsonl(root: &Path, text: &str) -> Result<Recorded, Error> {
    // The text is whole: a last line without its LF is a line all the same.
    let owned;
    let text = if text.is_empty() || text.ends_with('\n') {
        text
    } else {
        owned = format!("{text}\n");
        &owned
    };
    let origin = Origin { stem: "stdin", mtime: "1970-01-01T00:00:00Z", first_line: 1 };
    let transcripts = import::read_text(Format::Jsonl, text, &origin).map_err(|e| {
        let e: Error = e.into();
        if e.path.is_none() {
            e.at("stdin")
        } else {
            e
        }
    })?;
    record(root, &transcripts)
}
