//! The workspace history: a git repository in the workspace folder, one
//! commit per installed transaction, whose trailers say what made it.
//!
//! * **What a commit holds.** Its tree is the previous commit's tree with
//!   the transaction's paths under `topics/` and `sources/` (and the
//!   workspace's `.gitignore`) replaced; nothing else is ever staged, so a
//!   repository that holds other files too keeps them as they are.
//! * **Its message** is a one-line summary, a blank line, then the trailers
//!   of a [`Stamp`]: `Scriptorium-Revision`, `Scriptorium-Writer`,
//!   `Scriptorium-Tier`, and where they apply `Scriptorium-Session` and
//!   `Scriptorium-Turns`. Provenance is read from the trailers only; the
//!   author and committer are the configured identity ([`Settings`]).
//! * **Crash safety.** The commit to make is part of the install's intent
//!   ([`crate::install`]); recovery makes a missing commit, once: a head
//!   whose `Scriptorium-Revision` is the intent's revision is already it.
//! * **Edits outside Scriptorium** ([`commit_outside`]): before a
//!   transaction, a workspace whose revision is not the head's is committed
//!   as it is, as an `external` commit, except archive files whose committed
//!   frames changed ([`frames`]): those keep their committed bytes in
//!   history and are reported as tampered.
//! * **Tamper evidence** ([`tamper`]): `check` verifies every commit and
//!   the working tree against the frames committed before them.
//!
//! The repository is `<root>/.git`, created on the first commit unless the
//! workspace's `scriptorium.toml` sets `memory.history = "off"`.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Code, Error};

mod blocks;
mod diff;
pub mod frames;
mod index_file;
mod objects;
pub mod read;
mod record;
mod repo;
pub mod tamper;
pub mod touched;
pub mod undo;

pub(crate) use blocks::blocks_of;
pub(crate) use diff::{changes, changes_and_others, Change};
pub(crate) use objects::{blob_at, head, read_blob};
pub(crate) use record::postpone;
pub use record::{
    check_archive_writes, commit_installed, commit_outside, commit_postponed, postponed, Outside, Writer,
    POSTPONED,
};
pub(crate) use repo::open;
pub use repo::{author_of, enabled_of, Settings, GITIGNORE, GITIGNORE_TEXT};
pub use touched::{block_history, BlockHistory};

/// The trailer keys, in the order they are written.
pub const REVISION_TRAILER: &str = "Scriptorium-Revision";
/// Who or what made the commit.
pub const WRITER_TRAILER: &str = "Scriptorium-Writer";
/// The tier it was written at.
pub const TIER_TRAILER: &str = "Scriptorium-Tier";
/// The session its turns came from.
pub const SESSION_TRAILER: &str = "Scriptorium-Session";
/// The node ids of the turns written, comma-separated.
pub const TURNS_TRAILER: &str = "Scriptorium-Turns";

/// What a commit says about itself, in its trailers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    /// The workspace revision the commit records (64 hex digits).
    pub revision: String,
    /// `archive`, `offline`, `model:<name>`, `update`, `promote`,
    /// `backfill`, `sleep`, `undo`, `migration`, `sync`, `resolve` or
    /// `external`.
    pub writer: String,
    /// `owner`, `paired` or `untrusted`.
    pub tier: String,
    /// The session the written turns came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The node ids of the turns written, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turns: Vec<String>,
}

/// One line of summary: no line breaks, trimmed.
fn one_line(value: &str) -> String {
    value.split(['\n', '\r']).map(str::trim).filter(|s| !s.is_empty()).collect::<Vec<_>>().join(" ")
}

/// A trailer value as written: `%`, `,`, control characters and leading
/// or trailing spaces percent-encoded, so that any session or node id
/// comes back as it was and a list splits only at its commas.
fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let last = value.chars().count().saturating_sub(1);
    for (k, c) in value.chars().enumerate() {
        let edge_space = c == ' ' && (k == 0 || k == last);
        if c == '%' || c == ',' || c.is_control() || edge_space {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The inverse of [`encode`] (a malformed escape stays as written).
fn decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut k = 0;
    while k < bytes.len() {
        let hex = bytes.get(k + 1..k + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[k], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(b)) => {
                out.push(b);
                k += 3;
            }
            (b, _) => {
                out.push(b);
                k += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Stamp {
    /// The commit message: `summary` (its first line, trimmed; the writer
    /// when empty), a blank line, the trailers.
    pub fn message(&self, summary: &str) -> String {
        let mut first = one_line(summary.lines().next().unwrap_or(""));
        if first.is_empty() {
            first = format!("{} transaction", self.writer);
        }
        let mut out = format!("{first}\n\n");
        let mut trailer = |k: &str, v: &str| {
            out.push_str(k);
            out.push_str(": ");
            out.push_str(v);
            out.push('\n');
        };
        trailer(REVISION_TRAILER, &encode(&self.revision));
        trailer(WRITER_TRAILER, &encode(&self.writer));
        trailer(TIER_TRAILER, &encode(&self.tier));
        if let Some(s) = &self.session {
            trailer(SESSION_TRAILER, &encode(s));
        }
        if !self.turns.is_empty() {
            let turns: Vec<String> = self.turns.iter().map(|t| encode(t)).collect();
            trailer(TURNS_TRAILER, &turns.join(","));
        }
        out
    }

    /// The stamp of a commit message: its last paragraph's trailers, or
    /// `None` when it has no `Scriptorium-Revision` (a commit made by hand).
    pub fn parse(message: &str) -> Option<Stamp> {
        let last = message.trim_end().rsplit("\n\n").next()?;
        let mut stamp = Stamp::default();
        for line in last.lines() {
            let Some((k, v)) = line.split_once(':') else { continue };
            let v = v.trim();
            match k.trim() {
                REVISION_TRAILER => stamp.revision = decode(v),
                WRITER_TRAILER => stamp.writer = decode(v),
                TIER_TRAILER => stamp.tier = decode(v),
                SESSION_TRAILER => stamp.session = Some(decode(v)),
                TURNS_TRAILER => {
                    stamp.turns = v.split(',').map(str::trim).filter(|t| !t.is_empty()).map(decode).collect()
                }
                _ => {}
            }
        }
        (!stamp.revision.is_empty()).then_some(stamp)
    }
}

/// The commit an install makes once its files are in place: recorded in
/// the intent, so that recovery can make it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Planned {
    /// The summary line.
    pub summary: String,
    /// The trailers.
    pub stamp: Stamp,
    /// The workspace-relative paths the transaction changed.
    pub paths: Vec<String>,
    /// What a sync makes of the head besides a plain commit (absent from
    /// intents of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge: Option<Merge>,
}

/// How a sync's install joins another machine's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Merge {
    /// A merge commit: the head, then this commit (40 hex digits), as
    /// parents.
    With(String),
    /// No commit: the head becomes this commit (a fast-forward), whose tree
    /// the install gave the workspace.
    Adopt(String),
}

/// Whether the workspace keeps a history.
pub fn enabled(root: &Path) -> Result<bool, Error> {
    Ok(Settings::read(root)?.enabled)
}

pub(crate) fn git_error(what: &str, e: impl std::fmt::Display) -> Error {
    Error::new(Code::Io, format!("git history: {what}: {e}")).at(".git")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_survives_its_message() {
        let s = Stamp {
            revision: "ab".repeat(32),
            writer: "model:qwen".into(),
            tier: "paired".into(),
            session: Some("s-1".into()),
            turns: vec!["m1".into(), "m2".into()],
        };
        let msg = s.message("wrote 2 turns\nsecond line ignored");
        assert!(msg.starts_with("wrote 2 turns\n\nScriptorium-Revision: "), "{msg}");
        assert!(msg.contains("\nScriptorium-Turns: m1,m2\n"), "{msg}");
        assert_eq!(Stamp::parse(&msg), Some(s));
    }

    #[test]
    fn any_session_or_node_id_comes_back_as_it_was() {
        let s = Stamp {
            revision: "0".repeat(64),
            writer: "model:a,b".into(),
            tier: "owner".into(),
            session: Some(" s\nScriptorium-Writer: external %41 ".into()),
            turns: vec!["a,b".into(), "c%2C".into(), "é\r".into()],
        };
        let msg = s.message("x");
        assert_eq!(msg.lines().filter(|l| l.starts_with("Scriptorium-Writer")).count(), 1, "{msg}");
        assert_eq!(Stamp::parse(&msg), Some(s));
    }

    #[test]
    fn a_summary_cannot_forge_trailers() {
        let s = Stamp {
            revision: "0".repeat(64),
            writer: "update".into(),
            tier: "owner".into(),
            ..Stamp::default()
        };
        let msg = s.message("x\n\nScriptorium-Writer: external");
        assert_eq!(Stamp::parse(&msg).unwrap().writer, "update");
        assert_eq!(msg.lines().next(), Some("x"));
    }

    #[test]
    fn a_hand_made_commit_has_no_stamp() {
        assert_eq!(Stamp::parse("fix typo\n\nSigned-off-by: A <a@b>\n"), None);
    }
}
