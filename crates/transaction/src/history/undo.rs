//! Undoing a commit's topic changes ([`plan`]): the edits of a new
//! transaction that give the blocks a commit added, changed or removed
//! back their state from before it. Archived records are never touched.
//!
//! * A topic file nothing changed since the commit gets back its bytes
//!   from before it (created, replaced or deleted as a whole).
//! * Otherwise the file as it is now is edited block by block: blocks the
//!   commit added are removed, changed or removed ones get back their text
//!   (a removed one is put back after the block it followed). Evidence
//!   definitions the commit added that no block cites any more go; ones
//!   a restored block cites and the file lacks come back.
//! * A block changed since the commit (its text now is not the one the
//!   commit left) is a conflict: `CONFLICT` naming every such block,
//!   unless `force`, which gives it its state from before the commit all
//!   the same.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use scriptorium_topic_markdown::parse::{Block, TopicFile};

use crate::error::{Code, Error};
use crate::patch::Edit;

use super::blocks;
use super::diff::{self, Change};
use super::objects::working;
use super::read::{changes_of, require_repo, resolve_walked};

/// What undoing a commit writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The commit undone (40 hex digits).
    pub commit: String,
    /// The edits to commit: empty when there is nothing to undo.
    pub edits: Vec<Edit>,
    /// The blocks given back their state from before it, as `path#^id`.
    pub reverted: Vec<String>,
}

/// The edits that undo the topic changes of the commit `rev` names
/// ([`super::read::resolve`]), against the workspace as it is on disk.
pub fn plan(root: &Path, rev: &str, force: bool) -> Result<Plan, Error> {
    let repo = require_repo(root)?;
    let c = resolve_walked(root, rev)?;
    let mut out = Plan { commit: c.id.to_string(), edits: Vec::new(), reverted: Vec::new() };
    let mut conflicts = Vec::new();
    for ch in changes_of(&repo, &c)? {
        if !(ch.path.starts_with("topics/") && ch.path.ends_with(".md")) {
            continue;
        }
        let file = undo_file(&repo, root, &ch)?;
        conflicts.extend(file.conflicts.iter().map(|id| format!("{}#^{id}", ch.path)));
        out.reverted.extend(file.reverted.iter().map(|id| format!("{}#^{id}", ch.path)));
        out.edits.extend(file.edit);
    }
    if !conflicts.is_empty() && !force {
        return Err(Error::new(
            Code::Conflict,
            format!(
                "changed again since {}: {}; nothing was written. Undo the later change first, or pass --force to give these blocks their state from before it all the same",
                out.commit,
                conflicts.join(", ")
            ),
        ));
    }
    Ok(out)
}

/// What undoing one file's change comes to.
struct FileUndo {
    edit: Option<Edit>,
    reverted: Vec<String>,
    conflicts: Vec<String>,
}

fn undo_file(repo: &gix::Repository, root: &Path, ch: &Change) -> Result<FileUndo, Error> {
    let before = ch.old.map(|id| diff::blob(repo, Some(id))).transpose()?;
    let after = ch.new.map(|id| diff::blob(repo, Some(id))).transpose()?;
    let current = working(root, &ch.path)?;
    let d = blocks::diff(before.as_deref().unwrap_or(b""), after.as_deref().unwrap_or(b""));
    let touched: Vec<String> = d.ids().cloned().collect();
    let mut undo = FileUndo { edit: None, reverted: Vec::new(), conflicts: Vec::new() };
    let new: Option<Vec<u8>> = if current == after {
        undo.reverted = touched;
        before.clone()
    } else if before.is_none() && current.is_none() {
        // The file the commit created is gone already: nothing to undo.
        return Ok(undo);
    } else {
        let now = blocks::blocks_of(current.as_deref().unwrap_or(b""));
        let then = blocks::blocks_of(after.as_deref().unwrap_or(b""));
        for id in &touched {
            if now.get(id).map(|b| &b.1) != then.get(id).map(|b| &b.1) {
                undo.conflicts.push(id.clone());
            }
        }
        let text = |b: &Option<Vec<u8>>| String::from_utf8_lossy(b.as_deref().unwrap_or(b"")).into_owned();
        let merged = merge(&text(&current), &text(&before), &text(&after), &touched);
        undo.reverted = touched;
        // A file the commit created, left with nothing but blank lines, goes.
        (before.is_some() || !merged.trim().is_empty()).then(|| merged.into_bytes())
    };
    if new == current {
        undo.reverted.clear();
        return Ok(undo);
    }
    let path = ch.path.clone();
    let as_text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    undo.edit = match (current.is_some(), new) {
        (true, Some(b)) => Some(Edit::Replace { path, content: as_text(b) }),
        (false, Some(b)) => Some(Edit::Create { path, content: as_text(b) }),
        (true, None) => Some(Edit::Delete { path }),
        (false, None) => None,
    };
    Ok(undo)
}

/// The lines of `text`, each with its line ending.
fn raw_lines(file: &TopicFile) -> Vec<String> {
    let text = file.print();
    file.lines().iter().map(|l| text[l.start..l.next].to_owned()).collect()
}

/// `text` as lines ending in LF.
fn lf_lines(text: &str) -> Vec<String> {
    text.split('\n').map(|l| format!("{l}\n")).collect()
}

/// The lines of a file being edited: each original line's replacement.
struct Slots(Vec<Vec<String>>);

impl Slots {
    fn clear(&mut self, first: usize, last: usize) {
        self.0[first..=last].iter_mut().for_each(Vec::clear);
    }

    fn is_blank(&self, k: usize) -> bool {
        self.0.get(k).is_some_and(|s| s.len() == 1 && s[0].trim().is_empty())
    }

    /// The block's lines replaced by `text`.
    fn replace(&mut self, b: &Block, text: &str) {
        let mut lines = lf_lines(text);
        if !self.0[b.last_line].iter().any(|l| l.ends_with('\n')) {
            if let Some(last) = lines.last_mut() {
                last.pop();
            }
        }
        self.clear(b.first_line, b.last_line);
        self.0[b.first_line] = lines;
    }

    /// The block's lines removed, with the blank line after (or before) it.
    fn remove(&mut self, b: &Block) {
        self.clear(b.first_line, b.last_line);
        if self.is_blank(b.last_line + 1) {
            self.0[b.last_line + 1].clear();
        } else if b.first_line > 0 && self.is_blank(b.first_line - 1) {
            self.0[b.first_line - 1].clear();
        }
    }

    /// `text` as a block after line `k`.
    fn insert_after(&mut self, k: usize, text: &str) {
        if self.0[k].last().is_some_and(|l| !l.ends_with('\n')) {
            self.0[k].push("\n".into());
        }
        self.0[k].push("\n".into());
        self.0[k].extend(lf_lines(text));
    }

    /// `text` as a block before line `k`.
    fn insert_before(&mut self, k: usize, text: &str) {
        let mut lines = lf_lines(text);
        lines.push("\n".into());
        lines.append(&mut self.0[k]);
        self.0[k] = lines;
    }
}

/// `current` with the blocks `ids` given their state in `before`, then
/// the evidence definitions brought in step.
fn merge(current: &str, before: &str, after: &str, ids: &[String]) -> String {
    let (cur, _) = TopicFile::parse_lenient(current);
    let (old, _) = TopicFile::parse_lenient(before);
    let mut slots = Slots(if current.is_empty() {
        Vec::new()
    } else {
        raw_lines(&cur).into_iter().map(|l| vec![l]).collect()
    });
    let mut tail = String::new();
    let find = |f: &TopicFile, id: &str| f.blocks.iter().position(|b| b.id.as_deref() == Some(id));
    for id in ids {
        let at = find(&old, id);
        match (find(&cur, id).map(|k| &cur.blocks[k]), at.map(|k| old.block_text(&old.blocks[k]))) {
            (Some(b), Some(t)) => slots.replace(b, &t),
            (Some(b), None) => slots.remove(b),
            (None, Some(t)) => {
                // After the nearest block before it that is still there.
                let anchor = old.blocks[..at.unwrap_or(0)]
                    .iter()
                    .rev()
                    .find_map(|b| b.id.as_deref().and_then(|i| find(&cur, i)));
                match (anchor, cur.blocks.first()) {
                    (Some(a), _) => slots.insert_after(cur.blocks[a].last_line, &t),
                    (None, Some(b)) => slots.insert_before(b.first_line, &t),
                    (None, None) => tail.push_str(&format!("\n{t}\n")),
                }
            }
            (None, None) => {}
        }
    }
    let mut merged: String = slots.0.into_iter().flatten().collect();
    if !tail.is_empty() {
        if merged.is_empty() {
            tail.remove(0);
        } else if !merged.ends_with('\n') {
            merged.push('\n');
        }
        merged.push_str(&tail);
    }
    definitions(&merged, &old, after)
}

/// `text` without the definitions `after` added (over `before`) that no
/// block of it cites, and with the definitions from `before` its blocks
/// cite and it lacks.
fn definitions(text: &str, before: &TopicFile, after: &str) -> String {
    let (file, _) = TopicFile::parse_lenient(text);
    let (after, _) = TopicFile::parse_lenient(after);
    let cited: BTreeSet<&str> =
        file.blocks.iter().flat_map(|b| b.refs.iter().map(|r| r.label.as_str())).collect();
    let old_labels: BTreeSet<&str> = before.definitions.iter().map(|d| d.label.as_str()).collect();
    let added: BTreeSet<&str> =
        after.definitions.iter().map(|d| d.label.as_str()).filter(|l| !old_labels.contains(l)).collect();
    let mut drop = BTreeMap::new();
    for d in &file.definitions {
        if added.contains(d.label.as_str()) && !cited.contains(d.label.as_str()) {
            drop.insert(d.line, ());
        }
    }
    let mut out: String = raw_lines(&file)
        .into_iter()
        .enumerate()
        .filter(|(k, _)| !drop.contains_key(k))
        .map(|(_, l)| l)
        .collect();
    let have: BTreeSet<&str> = file.definitions.iter().map(|d| d.label.as_str()).collect();
    let mut missing: Vec<&str> = cited.iter().copied().filter(|l| !have.contains(l)).collect();
    missing.retain(|l| before.definition(l).is_some());
    if !missing.is_empty() {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        if file.definitions.is_empty() && !out.is_empty() {
            out.push('\n');
        }
        for l in missing {
            let d = before.definition(l).expect("kept only labels it defines");
            out.push_str(before.line(d.line));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "# T\n\nOne.[^e-0000000001] ^a1\n\nTwo.[^e-0000000001] ^b2\n\n[^e-0000000001]: d1\n";

    #[test]
    fn an_added_block_goes_with_the_definition_only_it_cited() {
        let after = "# T\n\nOne.[^e-0000000001] ^a1\n\nTwo.[^e-0000000001] ^b2\n\nNew.[^e-0000000002] ^c3\n\n[^e-0000000001]: d1\n[^e-0000000002]: d2\n";
        let current = after.replace("One.", "One, edited later.");
        let merged = merge(&current, BEFORE, after, &["c3".into()]);
        assert_eq!(merged, BEFORE.replace("One.", "One, edited later."));
    }

    #[test]
    fn changed_and_removed_blocks_get_their_text_back() {
        let after = "# T\n\nOne, changed.[^e-0000000001] ^a1\n\n[^e-0000000001]: d1\n";
        let current = format!("{after}\nLater.[^e-0000000001] ^z9\n");
        let merged = merge(&current, BEFORE, after, &["a1".into(), "b2".into()]);
        assert_eq!(
            merged,
            "# T\n\nOne.[^e-0000000001] ^a1\n\nTwo.[^e-0000000001] ^b2\n\n[^e-0000000001]: d1\n\nLater.[^e-0000000001] ^z9\n"
        );
    }
}
