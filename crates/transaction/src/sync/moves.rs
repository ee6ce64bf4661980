//! Blocks one side moved to another file while the other changed them in
//! place. Each file merges on its own, so the file the block left sees
//! "deleted on one side, changed on the other" and keeps the changed
//! block, while the file it went to holds it too: the same id twice. This
//! pass reads the deletion as the move it was — the block leaves its old
//! file, and in its new one takes the change when the move left its text
//! as it was (otherwise this machine's version stays there, a block
//! conflict recording the other). A topic file one side deleted after moving its
//! blocks elsewhere, and the other side changed, is read the same way,
//! block by block, and goes when nothing else held it.

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

/// Follows the moves among `merged`'s block and file conflicts (see the
/// module documentation).
pub(crate) fn follow(repo: &gix::Repository, sides: &Sides, merged: &mut Merged) -> Result<(), Error> {
    let candidates: Vec<usize> = (0..merged.conflicts.len())
        .filter(|&k| {
            let c = &merged.conflicts[k];
            let topic = c.path.starts_with("topics/") && c.path.ends_with(".md");
            matches!(c.kind, Kind::Block | Kind::File) && topic && (c.ours.is_empty() != c.theirs.is_empty())
        })
        .collect();
    let mut settled = Vec::new();
    for k in candidates {
        let c = merged.conflicts[k].clone();
        let moved = Moved { from: &c.path, ours_moved: c.ours.is_empty(), template: &c };
        let done = match c.kind {
            Kind::Block => {
                let changed = if c.ours.is_empty() { &c.theirs } else { &c.ours };
                let id = c.block_id.clone().unwrap_or_default();
                follow_block(repo, sides, merged, &moved, &id, changed)?
            }
            _ => follow_file(repo, sides, merged, &moved)?,
        };
        if done {
            settled.push(k);
        }
    }
    for k in settled.into_iter().rev() {
        merged.conflicts.remove(k);
    }
    Ok(())
}

/// A deletion on one side that may have been a move.
struct Moved<'a> {
    /// The file the block left.
    from: &'a str,
    /// Whether ours is the side that deleted (moved) it.
    ours_moved: bool,
    /// The conflict it came from.
    template: &'a Conflict,
}

/// A topic file one side deleted and the other changed: each of its blocks
/// the deleting side put in another file follows its move; the file goes
/// when nothing but its moved blocks held it.
fn follow_file(
    repo: &gix::Repository,
    sides: &Sides,
    merged: &mut Merged,
    moved: &Moved<'_>,
) -> Result<bool, Error> {
    let Some(kept) = current(repo, sides, merged, moved.from)? else { return Ok(false) };
    let ids: Vec<(String, String)> =
        history::blocks_of(kept.as_bytes()).into_iter().map(|(id, (_, text))| (id, text)).collect();
    let mut all = !ids.is_empty();
    for (id, text) in &ids {
        all &= follow_block(repo, sides, merged, moved, id, text)?;
    }
    let left = current(repo, sides, merged, moved.from)?.unwrap_or_default();
    if all && history::blocks_of(left.as_bytes()).is_empty() {
        set(merged, moved.from, None);
        return Ok(true);
    }
    Ok(false)
}

/// Block `id`, changed to `changed` on the side that kept it: when the
/// other side put it in another file, it leaves `moved.from` and, in the
/// other file, takes the change if the move kept its text (a conflict
/// otherwise). Whether it was a move.
fn follow_block(
    repo: &gix::Repository,
    sides: &Sides,
    merged: &mut Merged,
    moved: &Moved<'_>,
    id: &str,
    changed: &str,
) -> Result<bool, Error> {
    let mover_tree = if moved.ours_moved { sides.ours } else { Some(sides.theirs) };
    let Some(target) = moved_to(repo, sides.base, mover_tree, moved.from, id)? else { return Ok(false) };
    let base_text = match sides.base.map(|t| history::blob_at(repo, t, moved.from)).transpose()?.flatten() {
        Some(blob) => block_text(&history::read_blob(repo, blob)?, id),
        None => None,
    };
    let Some(left) = current(repo, sides, merged, moved.from)? else { return Ok(false) };
    let Some(left) = splice_block(&left, id, "") else { return Ok(false) };
    let Some(before) = current(repo, sides, merged, &target)? else { return Ok(false) };
    let now = block_text(before.as_bytes(), id).unwrap_or_default();
    let changed = changed.to_owned();
    if base_text.as_deref() == Some(now.as_str()) {
        if let Some(arrived) = splice_block(&before, id, &changed).filter(|a| *a != before) {
            set(merged, &target, Some(arrived));
        }
    } else if now != changed {
        // Moved and changed on one side, changed on the other: this
        // machine's version stays, in the new file, like any conflict.
        if !moved.ours_moved {
            if let Some(arrived) = splice_block(&before, id, &changed) {
                set(merged, &target, Some(arrived));
            }
        }
        let (ours, theirs) = if moved.ours_moved { (now, changed) } else { (changed, now) };
        let c = moved.template;
        merged.conflicts.push(Conflict {
            id: id.to_owned(),
            kind: Kind::Block,
            path: target.clone(),
            block_id: Some(id.to_owned()),
            ours,
            theirs,
            ..c.clone()
        });
    }
    set(merged, moved.from, Some(left));
    Ok(true)
}

/// The blocks each side added to a topic file since the base, by id: the
/// file it added each to.
fn added(
    repo: &gix::Repository,
    base: Option<ObjectId>,
    side: Option<ObjectId>,
) -> Result<std::collections::BTreeMap<String, String>, Error> {
    let mut out = std::collections::BTreeMap::new();
    for ch in history::changes(repo, base, side)? {
        if !(ch.path.starts_with("topics/") && ch.path.ends_with(".md")) {
            continue;
        }
        let Some(new) = ch.new else { continue };
        let before = match ch.old {
            Some(old) => history::blocks_of(&history::read_blob(repo, old)?),
            None => Default::default(),
        };
        for id in history::blocks_of(&history::read_blob(repo, new)?).into_keys() {
            if !before.contains_key(&id) {
                out.insert(id, ch.path.clone());
            }
        }
    }
    Ok(out)
}

/// Blocks the two sides each put in a different file (both moved one block,
/// to two places): this machine's place stays, the remote's copy leaves the
/// file it went to, and where the two texts differ a block conflict at
/// this machine's place records the remote's.
pub(crate) fn one_place(repo: &gix::Repository, sides: &Sides, merged: &mut Merged) -> Result<(), Error> {
    let ours = added(repo, sides.base, sides.ours)?;
    let theirs = added(repo, sides.base, Some(sides.theirs))?;
    for (id, there) in &theirs {
        let Some(here) = ours.get(id).filter(|here| *here != there) else { continue };
        let Some(text) = current(repo, sides, merged, there)? else { continue };
        let Some(theirs_text) = block_text(text.as_bytes(), id) else { continue };
        let Some(left) = splice_block(&text, id, "") else { continue };
        set(merged, there, Some(left));
        let ours_text = current(repo, sides, merged, here)?.and_then(|t| block_text(t.as_bytes(), id));
        let Some(ours_text) = ours_text.filter(|o| *o != theirs_text) else { continue };
        merged.conflicts.push(Conflict {
            id: id.clone(),
            kind: Kind::Block,
            path: here.clone(),
            block_id: Some(id.clone()),
            source_id: None,
            key: None,
            ours: ours_text,
            theirs: theirs_text,
            theirs_commit: sides.theirs_commit.to_string(),
            time: scriptorium_source_archive::timestamp::now(),
        });
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

fn set(merged: &mut Merged, path: &str, text: Option<String>) {
    let bytes = text.map(String::into_bytes);
    match merged.files.iter_mut().find(|(p, _)| p == path) {
        Some(entry) => entry.1 = bytes,
        None => merged.files.push((path.to_owned(), bytes)),
    }
}
