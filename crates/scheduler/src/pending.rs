//! What is pending: for each live tip, the real turns after the nearest node
//! marked for the workspace, oldest first; and how a batch is cut from them.
//!
//! There is no session-wide cursor. A walk goes from a tip toward the root,
//! one node at a time, and stops at the first marked node, so its cost
//! follows the unwritten suffix, not the session. Tool calls, tool results
//! and runtime turns are skipped over: never collected, never a stop.

use std::collections::HashSet;

use scriptorium_source_archive::writer_input::{self, InputLine};
use scriptorium_source_archive::SourceRecord;

use crate::error::{Code, Error, Result};
use crate::node::{Node, NodeKind};
use crate::store::SessionStore;

/// The default batch threshold, in `o200k_base` tokens.
pub const DEFAULT_THRESHOLD: usize = 16_000;

/// The default reflection cadence: a session's write is due after this
/// many agent steps (assistant turns and tool calls) since its last write,
/// whatever its pending tokens.
pub const DEFAULT_EVERY_STEPS: usize = 25;

/// The tip of the transcript's last line: the head node itself when it is a
/// leaf, otherwise its newest descendant. `None` for an empty session.
pub fn head_tip<S: SessionStore + ?Sized>(store: &S, session: &str) -> Result<Option<String>> {
    let head = match store.session(session)? {
        None => return Err(Error::new(Code::NotFound, format!("no session {session:?}"))),
        Some(info) => info.head,
    };
    let Some(mut at) = head else { return Ok(store.tips(session)?.pop()) };
    while let Some(child) = store.newest_child(session, &at)? {
        at = child;
    }
    Ok(Some(at))
}

/// The live tips of a session, the head's first, the others oldest first.
pub fn tips_head_first<S: SessionStore + ?Sized>(store: &S, session: &str) -> Result<Vec<String>> {
    let mut tips = store.tips(session)?;
    if let Some(head) = head_tip(store, session)? {
        tips.retain(|t| *t != head);
        tips.insert(0, head);
    }
    Ok(tips)
}

/// The unmarked real turns of the branch ending at `tip`, oldest first.
///
/// With `seen`, the walk also stops at a node already in it (its ancestors
/// were counted by an earlier walk) and records every node it passes, so
/// shared prefixes are counted once across tips.
pub fn suffix<S: SessionStore + ?Sized>(
    store: &S,
    session: &str,
    tip: &str,
    workspace: &str,
    mut seen: Option<&mut HashSet<String>>,
) -> Result<Vec<String>> {
    let mut turns = Vec::new();
    let mut at = Some(tip.to_owned());
    let mut steps = 0u64;
    // A walk longer than the session is a cycle (in a store written by
    // something else; the embedded store cannot hold one).
    let max_depth = match store.session(session)? {
        Some(info) => u64::try_from(info.seq).unwrap_or(0).saturating_add(1),
        None => return Err(Error::new(Code::NotFound, format!("no session {session:?}"))),
    };
    while let Some(id) = at {
        if let Some(seen) = seen.as_deref_mut() {
            if !seen.insert(id.clone()) {
                break;
            }
        }
        let link = store.link(session, &id, workspace)?.ok_or_else(|| {
            Error::new(Code::NotFound, format!("session {session:?}: node {id:?} is named but not stored"))
        })?;
        // Only real turns are ever marked; a mark on anything else (written
        // by another program) neither stops the walk nor counts.
        if link.marked && link.kind == NodeKind::Turn {
            break;
        }
        if link.kind == NodeKind::Turn {
            turns.push(id);
        }
        steps += 1;
        if steps > max_depth {
            return Err(Error::new(
                Code::Io,
                format!("session {session:?}: the parents of {tip:?} do not reach a root (a cycle?)"),
            ));
        }
        at = link.parent;
    }
    turns.reverse();
    Ok(turns)
}

/// Pending real turns of every session (distinct nodes: a prefix shared by
/// several tips counts once). Reads only the unwritten suffixes.
pub fn pending_turns<S: SessionStore + ?Sized>(store: &S, workspace: &str) -> Result<usize> {
    let mut total = 0;
    for info in store.sessions()? {
        total += pending_in(store, &info.id, workspace)?;
    }
    Ok(total)
}

/// Pending real turns of one session (distinct nodes).
pub fn pending_in<S: SessionStore + ?Sized>(store: &S, session: &str, workspace: &str) -> Result<usize> {
    let mut seen = HashSet::new();
    let mut total = 0;
    for tip in store.tips(session)? {
        total += suffix(store, session, &tip, workspace, Some(&mut seen))?.len();
    }
    Ok(total)
}

/// Tokens of one writer-input line and its LF in `o200k_base`.
pub fn line_tokens(line: &str) -> usize {
    let mut text = String::with_capacity(line.len() + 1);
    text.push_str(line);
    text.push('\n');
    tiktoken_rs::o200k_base_singleton().count_ordinary(&text)
}

/// A batch cut from a pending suffix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    /// The turns' node ids, oldest first.
    pub ids: Vec<String>,
    /// Their archive records.
    pub records: Vec<SourceRecord>,
    /// Their writer-input lines (without LF).
    pub lines: Vec<String>,
    /// The lines' tokens, each with its LF.
    pub tokens: usize,
}

impl Cut {
    /// Its first `n` turns, as a batch of their own.
    pub fn prefix(&self, n: usize) -> Cut {
        let lines = self.lines[..n].to_vec();
        Cut {
            ids: self.ids[..n].to_vec(),
            records: self.records[..n].to_vec(),
            tokens: lines.iter().map(|l| line_tokens(l)).sum(),
            lines,
        }
    }
}

/// Cuts the batch from `pending` (oldest first): the shortest prefix whose
/// writer-input JSONL reaches `threshold` tokens, the turn that crosses it
/// included (so one larger turn goes alone). When the whole suffix stays
/// under the threshold, `None` unless `force`, and then all of it. `None`
/// for nothing pending.
pub fn cut<S: SessionStore + ?Sized>(
    store: &S,
    session: &str,
    pending: &[String],
    threshold: usize,
    force: bool,
) -> Result<Option<Cut>> {
    let mut out = Cut { ids: Vec::new(), records: Vec::new(), lines: Vec::new(), tokens: 0 };
    for id in pending {
        let node = store.node(session, id)?.ok_or_else(|| {
            Error::new(Code::NotFound, format!("session {session:?}: node {id:?} vanished"))
        })?;
        let record = node_record(&node)?;
        let line = writer_input::encode(&InputLine::of_record(&record));
        out.tokens += line_tokens(&line);
        out.ids.push(node.id);
        out.records.push(record);
        out.lines.push(line);
        if out.tokens >= threshold {
            return Ok(Some(out));
        }
    }
    if out.ids.is_empty() || !force {
        return Ok(None);
    }
    Ok(Some(out))
}

fn node_record(node: &Node) -> Result<SourceRecord> {
    node.record().map_err(|e| Error { message: format!("node {:?}: {}", node.id, e.message), ..e })
}
