//! Importers: transcripts in five shapes into a [`SessionStore`]
//! (FORMAT.md §8). Importing a file again adds only nodes with new ids and
//! leaves nodes and marks alone.
//!
//! Each shape has its reader in a module of its own (`jsonl`, `openai`,
//! `claude_code`, `codex`, `locomo`); this module reads a file, or a piece
//! of one, with one and adds what it read to the store.
//!
//! **Pieces.** The line formats (`jsonl`, `claude-code`, `codex`) can be
//! read a piece at a time ([`read_text`]), as a hook does with a transcript
//! that grows while its session runs: a piece is whole lines of the file,
//! told by the number of its first line. Reading a file in consecutive
//! pieces gives the same nodes, and the same store once each piece is
//! imported in order, as reading it whole. A last line not yet ended by its
//! LF that does not parse yet (JSON cut short) is the line still being
//! written: it is left out, so the next piece starts with it.

use std::collections::HashMap;
use std::path::Path;

use scriptorium_source_archive::timestamp;

use crate::error::{Error, Result};
use crate::node::Node;
use crate::observe::Recorded;
use crate::store::{NewNodes, SessionStore};

mod claude_code;
mod codex;
pub mod evidence;
mod jsonl;
mod locomo;
mod openai;
mod surrogates;

use claude_code::claude_code;
pub use claude_code::CLAUDE_CODE_PROVIDER;
use codex::codex;
pub use codex::CODEX_PROVIDER;
use jsonl::jsonl;
pub use jsonl::JSONL_PROVIDER;
use locomo::locomo;
pub use locomo::{locomo_time, LOCOMO_PROVIDER};
use openai::openai;
pub use openai::OPENAI_PROVIDER;
pub use surrogates::lone_surrogates_replaced;

/// The shapes `session import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Ours: one node per line.
    Jsonl,
    /// An OpenAI-style `messages` array.
    OpenAi,
    /// A Claude Code session file.
    ClaudeCode,
    /// A Codex CLI rollout file.
    Codex,
    /// The LoCoMo benchmark's JSON.
    Locomo,
}

impl Format {
    /// Parses `jsonl`, `openai`, `claude-code`, `codex` or `locomo`.
    pub fn parse(s: &str) -> Option<Format> {
        Some(match s {
            "jsonl" => Format::Jsonl,
            "openai" => Format::OpenAi,
            "claude-code" => Format::ClaudeCode,
            "codex" => Format::Codex,
            "locomo" => Format::Locomo,
            _ => return None,
        })
    }

    /// Whether the format is one object per line, so a file of it can be
    /// read a piece at a time (`openai` and `locomo` are one JSON document).
    pub fn by_line(self) -> bool {
        matches!(self, Format::Jsonl | Format::ClaudeCode | Format::Codex)
    }
}

/// Where a piece of a transcript file comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin<'a> {
    /// The file's stem (the session when the text names none).
    pub stem: &'a str,
    /// The file's modification time (dates lines without one).
    pub mtime: &'a str,
    /// The 1-based line number of the text's first line in the file.
    pub first_line: usize,
}

/// One conversation read from a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transcript {
    /// The session it goes to.
    pub session: String,
    /// Its nodes, every parent before its children.
    pub nodes: Vec<Node>,
    /// The node of the transcript's last line (the head).
    pub head: Option<String>,
    /// Whether a parent named by no node (in the file or the store) makes
    /// the node a root instead of an error: Claude Code files name parents
    /// that live in other files after a compaction.
    pub lenient_parents: bool,
    /// Whether the nodes continue the session's chain from an earlier piece
    /// of the same file: [`import`] makes a new, parentless first node the
    /// child of the session's head in the store (a Codex piece that does
    /// not start at line 1; formats whose nodes name their parents never
    /// need it).
    pub continues: bool,
}

/// What an import did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Imported {
    /// Sessions read.
    pub sessions: usize,
    /// Nodes read.
    pub nodes: usize,
    /// Nodes that were new.
    pub new_nodes: usize,
}

/// Reads one file: [`read_text`] over the whole of it from line 1, dated by
/// its modification time. A file ending inside a UTF-8 character (a line
/// still being written) is read up to that character.
pub fn read(format: Format, path: &Path) -> Result<Vec<Transcript>> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| Error::io(&e, "cannot read the transcript").at(&shown))?;
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        // The file ends part way through a character: the writer is not done.
        Err(e) if e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            String::from_utf8_lossy(&e.as_bytes()[..valid]).into_owned()
        }
        Err(e) => {
            return Err(
                Error::invalid(format!("not UTF-8 (at byte {})", e.utf8_error().valid_up_to())).at(&shown)
            )
        }
    };
    let mtime = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| timestamp::format_unix(d.as_secs() as i64))
        .unwrap_or_else(|| timestamp::format_unix(0));
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let origin = Origin { stem: &stem, mtime: &mtime, first_line: 1 };
    read_text(format, &text, &origin).map_err(|e| if e.path.is_none() { e.at(&shown) } else { e })
}

/// Reads the text of a transcript file, or a piece of it: whole lines
/// starting at line `origin.first_line` of the file (line numbers in
/// errors and Codex node ids are the file's). Reading a line format's file
/// in consecutive pieces gives the same nodes as reading it whole; `openai`
/// and `locomo` are one JSON document each and are read only whole
/// (`INVALID_ARGUMENT` for a piece not starting at line 1).
pub fn read_text(format: Format, text: &str, origin: &Origin<'_>) -> Result<Vec<Transcript>> {
    if origin.first_line == 0 {
        return Err(Error::invalid("line numbers start at 1"));
    }
    if !format.by_line() && origin.first_line != 1 {
        return Err(Error::invalid(
            "an openai or locomo transcript is one JSON document; it is read whole, not from a later line",
        ));
    }
    let mut transcripts = match format {
        Format::Jsonl => jsonl(text, origin.first_line),
        Format::OpenAi => openai(text, origin.stem, origin.mtime),
        Format::ClaudeCode => claude_code(text, origin),
        Format::Codex => codex(text, origin),
        Format::Locomo => locomo(text),
    }?;
    for t in &mut transcripts {
        t.head = t.nodes.last().map(|n| n.id.clone());
        if t.lenient_parents {
            cut_cycles(&mut t.nodes);
        }
        t.nodes = parents_first(std::mem::take(&mut t.nodes))?;
    }
    Ok(transcripts)
}

/// Adds the transcripts to the store, all or nothing. Two archive threads
/// (or providers) whose names differ only in case or Unicode normal form
/// are refused: the archive could never hold both.
pub fn import<S: SessionStore + ?Sized>(store: &S, transcripts: &[Transcript]) -> Result<Imported> {
    let mut names: HashMap<(String, String), (String, String)> = HashMap::new();
    let mut providers: HashMap<String, String> = HashMap::new();
    for n in transcripts.iter().flat_map(|t| &t.nodes) {
        let p = providers
            .entry(scriptorium_source_archive::id::fold_key(&n.provider))
            .or_insert_with(|| n.provider.clone());
        if *p != n.provider {
            return Err(Error::invalid(format!(
                "providers {p} and {} differ only in case or normal form; the archive cannot hold both",
                n.provider
            )));
        }
        let key = (
            scriptorium_source_archive::id::fold_key(&n.provider),
            scriptorium_source_archive::id::fold_key(&n.thread),
        );
        let seen = names.entry(key).or_insert_with(|| (n.provider.clone(), n.thread.clone()));
        if seen.0 != n.provider || seen.1 != n.thread {
            return Err(Error::invalid(format!(
                "threads {}/{} and {}/{} differ only in case or normal form; the archive cannot hold both",
                seen.0, seen.1, n.provider, n.thread
            )));
        }
    }
    let mut owned = Vec::with_capacity(transcripts.len());
    for t in transcripts {
        let mut nodes = t.nodes.clone();
        if t.continues {
            continue_chain(store, &t.session, &mut nodes)?;
        }
        if t.lenient_parents {
            let here: std::collections::HashSet<&str> = t.nodes.iter().map(|n| n.id.as_str()).collect();
            for n in &mut nodes {
                if let Some(p) = &n.parent {
                    if !here.contains(p.as_str()) && store.link(&t.session, p, "")?.is_none() {
                        n.parent = None;
                    }
                }
            }
        }
        owned.push(nodes);
    }
    let batch: Vec<NewNodes<'_>> = transcripts
        .iter()
        .zip(&owned)
        .map(|(t, nodes)| NewNodes { session: &t.session, nodes, head: t.head.as_deref() })
        .collect();
    let new = store.add_sessions(&batch)?;
    for (added, positions) in batch.iter().zip(&new) {
        for &at in positions {
            crate::observe::recorded(&Recorded { session: added.session, node: &added.nodes[at] });
        }
    }
    Ok(Imported {
        sessions: transcripts.len(),
        nodes: owned.iter().map(Vec::len).sum(),
        new_nodes: new.iter().map(Vec::len).sum(),
    })
}

/// Makes a new, parentless first node the child of the session's head in
/// the store, so a piece read after an earlier one extends its chain. A
/// first node already stored is left alone (importing a piece again changes
/// nothing), and so is one of a session the store does not hold yet.
fn continue_chain<S: SessionStore + ?Sized>(store: &S, session: &str, nodes: &mut [Node]) -> Result<()> {
    let Some(first) = nodes.first_mut() else { return Ok(()) };
    if first.parent.is_some() || store.link(session, &first.id, "")?.is_some() {
        return Ok(());
    }
    let head = store.session(session)?.and_then(|s| s.head).filter(|h| *h != first.id);
    if let Some(head) = head {
        if store.link(session, &head, "")?.is_some() {
            first.parent = Some(head);
        }
    }
    Ok(())
}

/// The lines of `text` with their numbers in the file (the text's first
/// line being `first_line`), each told whether it is the last line and
/// not yet ended by a LF (perhaps still being written).
fn numbered(text: &str, first_line: usize) -> impl Iterator<Item = (usize, &str, bool)> {
    let last = text.lines().count();
    let open = !text.ends_with('\n');
    text.lines().enumerate().map(move |(i, line)| (first_line + i, line, open && i + 1 == last))
}

/// Whether a line that did not parse is the one still being written: the
/// last line, not yet ended by a LF, whose JSON stops short. It is left for
/// the next read; any other bad line is refused.
fn unfinished(open: bool, e: &serde_json::Error) -> bool {
    open && e.is_eof()
}

/// Makes a node whose parent chain comes back to it a root, for the
/// formats whose parents are only hints (a damaged or hand-edited harness
/// file must not stop everything else in it from being read).
fn cut_cycles(nodes: &mut [Node]) {
    let at: HashMap<String, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id.clone(), i)).collect();
    let mut state = vec![0u8; nodes.len()]; // 0 new, 1 on the path, 2 done
    for start in 0..nodes.len() {
        let mut path: Vec<usize> = Vec::new();
        let mut i = start;
        loop {
            match state[i] {
                2 => break,
                1 => {
                    if let Some(&last) = path.last() {
                        nodes[last].parent = None;
                    }
                    break;
                }
                _ => {}
            }
            state[i] = 1;
            path.push(i);
            match nodes[i].parent.as_deref().and_then(|p| at.get(p)) {
                Some(&p) => i = p,
                None => break,
            }
        }
        for j in path {
            state[j] = 2;
        }
    }
}

/// Orders nodes so every parent in the list comes before its children,
/// keeping file order otherwise. Refuses a cycle.
fn parents_first(nodes: Vec<Node>) -> Result<Vec<Node>> {
    let at: HashMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id.as_str(), i)).collect();
    let mut state = vec![0u8; nodes.len()]; // 0 new, 1 on the path, 2 done
    let mut order = Vec::with_capacity(nodes.len());
    for start in 0..nodes.len() {
        let mut path = Vec::new();
        let mut i = start;
        loop {
            match state[i] {
                2 => break,
                1 => {
                    return Err(Error::invalid(format!("node {:?} is its own ancestor", nodes[i].id)));
                }
                _ => {}
            }
            state[i] = 1;
            path.push(i);
            match nodes[i].parent.as_deref().and_then(|p| at.get(p)) {
                Some(&p) => i = p,
                None => break,
            }
        }
        for &i in path.iter().rev() {
            state[i] = 2;
            order.push(i);
        }
    }
    let mut slots: Vec<Option<Node>> = nodes.into_iter().map(Some).collect();
    Ok(order.into_iter().filter_map(|i| slots[i].take()).collect())
}

/// Normalises a timestamp to the archive's form: kept verbatim when it is
/// one already, otherwise any RFC 3339 time with an offset, in UTC.
pub fn normalise_timestamp(s: &str) -> Option<String> {
    if timestamp::is_valid(s) {
        return Some(s.to_owned());
    }
    let t: jiff::Timestamp = s.trim().parse().ok()?;
    let out = t.to_string();
    timestamp::is_valid(&out).then_some(out)
}

fn unix_timestamp(secs: f64) -> Option<String> {
    if !secs.is_finite() || !(0.0..=253_402_300_799.0).contains(&secs) {
        return None;
    }
    let t = jiff::Timestamp::from_second(secs.trunc() as i64).ok()?;
    let nanos = ((secs.fract()) * 1e9).round() as i64;
    let t = t.checked_add(jiff::SignedDuration::from_nanos(nanos)).ok()?;
    normalise_timestamp(&t.to_string())
}

fn bad(line: usize, why: impl Into<String>) -> Error {
    Error::invalid(why).line(line as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_normalise_to_utc() {
        assert_eq!(
            normalise_timestamp("2025-06-02T18:46:59.937Z").as_deref(),
            Some("2025-06-02T18:46:59.937Z")
        );
        assert_eq!(normalise_timestamp("2025-06-02T20:46:59+02:00").as_deref(), Some("2025-06-02T18:46:59Z"));
        assert_eq!(normalise_timestamp("2025-06-02 18:46"), None);
        assert_eq!(unix_timestamp(1_700_000_000.5).as_deref(), Some("2023-11-14T22:13:20.5Z"));
        assert_eq!(unix_timestamp(-1.0), None);
    }
}
