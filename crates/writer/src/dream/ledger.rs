//! The dream ledger, `.scriptorium/dream.json`: per conversation, the last
//! record a dream pass with a model reflected on, so the next pass picks
//! new material. Runtime state like `status.json`: outside the revision,
//! written best effort and atomically; a missing or unreadable ledger is an
//! empty one (everything counts as unreflected), which costs a pass that
//! looks again, never lost memory.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Where the ledger lives, relative to the workspace.
pub const LEDGER_FILE: &str = ".scriptorium/dream.json";

/// The ledger's format version.
const VERSION: u32 = 1;

/// How far one conversation has been reflected on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor {
    /// The source id (text form) of the last record reflected on: its
    /// frame and every frame before it in the conversation's archive file
    /// count as reflected.
    pub through: String,
    /// When the pass that got there ran (`YYYY-MM-DDTHH:MM:SSZ`).
    pub time: String,
}

/// The ledger as stored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    /// The format version.
    #[serde(default)]
    pub version: u32,
    /// Conversation (`provider/thread`, encoded) → how far it is reflected.
    #[serde(default)]
    pub conversations: BTreeMap<String, Cursor>,
}

impl Ledger {
    /// Reads the ledger of the workspace at `root`; a missing, unreadable
    /// or foreign one is empty.
    pub fn load(root: &Path) -> Ledger {
        std::fs::read(root.join(LEDGER_FILE))
            .ok()
            .and_then(|b| serde_json::from_slice::<Ledger>(&b).ok())
            .filter(|l| l.version == VERSION)
            .unwrap_or_default()
    }

    /// The last record reflected on in `conversation`, if any.
    pub fn through(&self, conversation: &str) -> Option<&str> {
        self.conversations.get(conversation).map(|c| c.through.as_str())
    }

    /// Records that `conversation` is reflected on through the record
    /// `through` (source id text form), at `time`.
    pub fn advance(&mut self, conversation: &str, through: &str, time: &str) {
        self.conversations
            .insert(conversation.to_owned(), Cursor { through: through.to_owned(), time: time.to_owned() });
    }

    /// Writes the ledger atomically, best effort; returns whether it was
    /// written.
    pub fn save(&self, root: &Path) -> bool {
        let stored = Ledger { version: VERSION, conversations: self.conversations.clone() };
        let Ok(mut bytes) = serde_json::to_vec(&stored) else { return false };
        bytes.push(b'\n');
        scriptorium_source_archive::fsio::replace_cache_file(root, &root.join(LEDGER_FILE), &bytes).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ledger_round_trips_and_a_damaged_one_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".scriptorium/tmp")).unwrap();
        assert_eq!(Ledger::load(dir.path()), Ledger::default());
        let mut l = Ledger::default();
        l.advance("chat/t1", "chat/t1/m3", "2026-01-01T00:00:00Z");
        assert!(l.save(dir.path()));
        let back = Ledger::load(dir.path());
        assert_eq!(back.through("chat/t1"), Some("chat/t1/m3"));
        assert_eq!(back.through("chat/t2"), None);
        std::fs::write(dir.path().join(LEDGER_FILE), b"{\"version\":1,\"conversations\":").unwrap();
        assert_eq!(Ledger::load(dir.path()), Ledger::default(), "torn");
        std::fs::write(dir.path().join(LEDGER_FILE), b"{\"version\":7,\"conversations\":{}}").unwrap();
        assert_eq!(Ledger::load(dir.path()), Ledger::default(), "another version");
    }
}
