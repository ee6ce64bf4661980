//! Importers: transcripts in four shapes into a [`SessionStore`]
//! (FORMAT.md §8). Importing a file again adds only nodes with new ids and
//! leaves nodes and marks alone.
//!
//! Each shape has its reader in a module of its own (`jsonl`, `openai`,
//! `claude_code`, `locomo`); this module reads a file with one and adds
//! what it read to the store.

use std::collections::HashMap;
use std::path::Path;

use scriptorium_source_archive::timestamp;

use crate::error::{Error, Result};
use crate::node::Node;
use crate::observe::Recorded;
use crate::store::{NewNodes, SessionStore};

mod claude_code;
pub mod evidence;
mod jsonl;
mod locomo;
mod openai;

use claude_code::claude_code;
pub use claude_code::CLAUDE_CODE_PROVIDER;
use jsonl::jsonl;
pub use jsonl::JSONL_PROVIDER;
use locomo::locomo;
pub use locomo::{locomo_time, LOCOMO_PROVIDER};
use openai::openai;
pub use openai::OPENAI_PROVIDER;

/// The shapes `session import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Ours: one node per line.
    Jsonl,
    /// An OpenAI-style `messages` array.
    OpenAi,
    /// A Claude Code session file.
    ClaudeCode,
    /// The LoCoMo benchmark's JSON.
    Locomo,
}

impl Format {
    /// Parses `jsonl`, `openai`, `claude-code` or `locomo`.
    pub fn parse(s: &str) -> Option<Format> {
        Some(match s {
            "jsonl" => Format::Jsonl,
            "openai" => Format::OpenAi,
            "claude-code" => Format::ClaudeCode,
            "locomo" => Format::Locomo,
            _ => return None,
        })
    }
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

/// Reads one file.
pub fn read(format: Format, path: &Path) -> Result<Vec<Transcript>> {
    let shown = path.display().to_string();
    let text = std::fs::read(path).map_err(|e| Error::io(&e, "cannot read the transcript").at(&shown))?;
    let text = String::from_utf8(text).map_err(|e| {
        Error::invalid(format!("not UTF-8 (at byte {})", e.utf8_error().valid_up_to())).at(&shown)
    })?;
    let mtime = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| timestamp::format_unix(d.as_secs() as i64))
        .unwrap_or_else(|| timestamp::format_unix(0));
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let read = match format {
        Format::Jsonl => jsonl(&text),
        Format::OpenAi => openai(&text, &stem, &mtime),
        Format::ClaudeCode => claude_code(&text, &stem, &mtime),
        Format::Locomo => locomo(&text),
    };
    let mut transcripts = read.map_err(|e| if e.path.is_none() { e.at(&shown) } else { e })?;
    for t in &mut transcripts {
        t.head = t.nodes.last().map(|n| n.id.clone());
        t.nodes = parents_first(std::mem::take(&mut t.nodes)).map_err(|e| e.at(&shown))?;
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
