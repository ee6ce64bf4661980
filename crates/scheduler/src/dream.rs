//! What a dream pass (`sleep`, the watcher's nightly pass,
//! `MemoryBackend::reorganize`) reports: the conversations it selected,
//! the paths it changed, and, when it changed nothing, why (FORMAT.md §8).
//!
//! The pass itself is the writer's (`scriptorium_writer::dream`); the
//! report lives here because the watcher's [`crate::watch::Reorganize`]
//! returns it and its `memory.reorganize_ended` event carries it.

use serde::{Serialize, Serializer};

/// One conversation a pass selected: an archive thread, with the records
/// of it the pass considered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Selected {
    /// `provider/thread`, both PCT-encoded: the first two parts of the
    /// source ids of its records.
    pub conversation: String,
    /// Records of it handed to the pass.
    pub records: usize,
    /// Their content, in UTF-8 bytes.
    pub bytes: u64,
}

/// Why a pass changed nothing (in each case the offline hygiene found
/// nothing to change either).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unchanged {
    /// Conversations were selected, but no model is configured to
    /// consolidate them.
    NoModel,
    /// No conversation had anything to reflect on, so no model was asked.
    NothingSelected,
    /// The model looked at the selected conversations and changed nothing.
    NothingToChange,
}

impl Unchanged {
    /// The reason as reports print it.
    pub fn as_str(self) -> &'static str {
        match self {
            Unchanged::NoModel => "no model configured",
            Unchanged::NothingSelected => "nothing selected",
            Unchanged::NothingToChange => "nothing to change",
        }
    }
}

impl Serialize for Unchanged {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// What the offline hygiene of a pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Hygiene {
    /// Blocks removed because a twin (the same text once footnote
    /// references and the id are left out, white space collapsed and case
    /// folded) stays, citing their sources too.
    pub merged: usize,
    /// People cards whose `aliases` list was sorted (or had an exact
    /// duplicate dropped).
    pub aliases: usize,
}

/// What one pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The conversations it selected, in the order it took them.
    pub selected: Vec<Selected>,
    /// The workspace-relative paths it changed, sorted, each once.
    pub changed: Vec<String>,
    /// Why nothing changed; `None` exactly when `changed` is not empty.
    pub reason: Option<Unchanged>,
    /// What the offline hygiene did.
    pub hygiene: Hygiene,
    /// The focus the pass was given, as given.
    pub focus: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_as_json() {
        let r = Report {
            selected: vec![Selected { conversation: "chat/team-1".into(), records: 2, bytes: 30 }],
            changed: Vec::new(),
            reason: Some(Unchanged::NoModel),
            hygiene: Hygiene::default(),
            focus: None,
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"selected":[{"conversation":"chat/team-1","records":2,"bytes":30}],"changed":[],"reason":"no model configured","hygiene":{"merged":0,"aliases":0},"focus":null}"#
        );
        for (u, s) in [
            (Unchanged::NoModel, "no model configured"),
            (Unchanged::NothingSelected, "nothing selected"),
            (Unchanged::NothingToChange, "nothing to change"),
        ] {
            assert_eq!(serde_json::to_value(u).unwrap(), serde_json::json!(s));
        }
    }
}
