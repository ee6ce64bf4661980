//! Blocks one side moved to another file while the other changed them in
//! place. Each file merges on its own, so the file the block left sees
//! "deleted on one side, changed on the other" and keeps the changed
//! block, while the file it went to holds it too: the same id twice. This
//! pass reads the deletion as the move it was — the block leaves its old
//! file, and in its new one takes the change when the move left its text
//! as it was (otherwise the new file's version stays, a block conflict
//! recording the change).

use gix::ObjectId;
use scriptorium_topic_markdown::parse::TopicFile;

use crate::error::Error;
use crate::history;

use super::conflicts::{Conflict, Kind};
use super::merge::{Merged, Sides};

/// `text` with the block `id` given `with` (removed, with the blank line
/// after it, when `with` is empty); `None` when the block is not there.
pub(crate) fn splice_block(text: &str, id: &str, with: &str) -> Option<String> {
    let (file, _) = TopicFile::parse_lenient(text);
    let lines = file.lines();
    let b = file.blocks.iter().find(|b| b.id.as_deref() == Some(id))?;
    let (start, end) = (lines[b.first_line].start, lines[b.last_line].end);
    if with.is_empty() {
        let next = lines[b.last_line].next;
        let after = lines.get(b.last_line + 1).filter(|l| l.start == l.end).map_or(next, |l| l.next);
        return Some(format!("{}{}", &text[..start], &text[after..]));
    }
    Some(format!("{}{with}{}", &text[..start], &text[end..]))
}

/// The text of block `id` in `bytes`, if it is there.
fn block_text(bytes: &[u8], id: &str) -> Option<String> {
    history::blocks_of(bytes).remove(id).map(|(_, text)| text)
}

/// Follows the moves among `merged`'s block conflicts (see the module
/// documentation).
pub(crate) fn follow(repo: &gix::Repository, sides: &Sides, merged: &mut Merged) -> Result<(), Error> {
    let candidates: Vec<usize> = (0..merged.conflicts.len())
        .filter(|&k| {
            let c = &merged.conflicts[k];
            c.kind == Kind::Block && (c.ours.is_empty() != c.theirs.is_empty())
        })
        .collect();
    let mut resolved = Vec::new();
    for k in candidates {
        let c = merged.conflicts[k].clone();
        let mover_tree = if c.ours.is_empty() { sides.ours } else { Some(sides.theirs) };
        let Some(id) = c.block_id.clone() else { continue };
        let Some(target) = moved_to(repo, sides.base, mover_tree, &c.path, &id)? else { continue };
        let changed = if c.ours.is_empty() { &c.theirs } else { &c.ours };
        let base_text = match sides.base.map(|t| history::blob_at(repo, t, &c.path)).transpose()?.flatten() {
            Some(blob) => block_text(&history::read_blob(repo, blob)?, &id),
            None => None,
        };
        let Some(left) = current(repo, sides, merged, &c.path)? else { continue };
        let Some(left) = splice_block(&left, &id, "") else { continue };
        let Some(before) = current(repo, sides, merged, &target)? else { continue };
        let now = block_text(before.as_bytes(), &id).unwrap_or_default();
        let arrived = before.clone();
        let arrived = if base_text.as_deref() == Some(now.as_str()) {
            splice_block(&arrived, &id, changed).unwrap_or(arrived)
        } else {
            // Moved and changed: the new file's version stays.
            let (ours, theirs) =
                if c.ours.is_empty() { (now, changed.clone()) } else { (changed.clone(), now) };
            merged.conflicts.push(Conflict { path: target.clone(), ours, theirs, ..c.clone() });
            arrived
        };
        set(merged, &c.path, left);
        if arrived != before {
            set(merged, &target, arrived);
        }
        resolved.push(k);
    }
    for k in resolved.into_iter().rev() {
        merged.conflicts.remove(k);
    }
    Ok(())
}

/// The other topic file the side with tree `mover` put block `id` in, among
/// the files it changed since `base`.
fn moved_to(
    repo: &gix::Repository,
    base: Option<ObjectId>,
    mover: Option<ObjectId>,
    from: &str,
    id: &str,
) -> Result<Option<String>, Error> {
    for ch in history::changes(repo, base, mover)? {
        let topic = ch.path.starts_with("topics/") && ch.path.ends_with(".md") && ch.path != from;
        let Some(blob) = ch.new.filter(|_| topic) else { continue };
        if history::blocks_of(&history::read_blob(repo, blob)?).contains_key(id) {
            return Ok(Some(ch.path));
        }
    }
    Ok(None)
}

/// The merged text of `path`: what the merge writes, else ours.
fn current(
    repo: &gix::Repository,
    sides: &Sides,
    merged: &Merged,
    path: &str,
) -> Result<Option<String>, Error> {
    if let Some((_, bytes)) = merged.files.iter().find(|(p, _)| p == path) {
        return Ok(bytes.as_deref().map(|b| String::from_utf8_lossy(b).into_owned()));
    }
    let Some(tree) = sides.ours else { return Ok(None) };
    match history::blob_at(repo, tree, path)? {
        Some(blob) => Ok(Some(String::from_utf8_lossy(&history::read_blob(repo, blob)?).into_owned())),
        None => Ok(None),
    }
}

fn set(merged: &mut Merged, path: &str, text: String) {
    match merged.files.iter_mut().find(|(p, _)| p == path) {
        Some(entry) => entry.1 = Some(text.into_bytes()),
        None => merged.files.push((path.to_owned(), Some(text.into_bytes()))),
    }
}
