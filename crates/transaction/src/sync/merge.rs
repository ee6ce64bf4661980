//! What a sync writes: how the head relates to the remote's commit, and the
//! files of a fast-forward or of a three-way merge of the two histories.
//!
//! * **Relation.** Up to date, ahead (the remote's commit is an ancestor of
//!   the head: only a push is needed), behind (the head is an ancestor of
//!   the remote's commit, or there is no head: a fast-forward), or
//!   diverged, merged from their best common ancestor (none for unrelated
//!   histories, merged as if from an empty workspace; of several, the one
//!   committed last).
//! * **Which files.** Only `topics/` and `sources/` are merged, and only the
//!   files the remote changed since the base: a file only this machine
//!   changed stays as it is. A file both changed is merged by its kind —
//!   an archive file by frames ([`scriptorium_source_archive::merge`]), a
//!   topic file by blocks ([`scriptorium_topic_markdown::merge`]) — and a
//!   file one side deleted and the other changed keeps the changed version
//!   (nothing written is lost), a conflict of kind `file`.
//! * Paths no install may write (another kind of file, a name git allows
//!   and a workspace does not) are skipped and reported.

use std::collections::{BTreeMap, HashSet, VecDeque};

use gix::ObjectId;

use scriptorium_source_archive::timestamp;

use crate::error::Error;
use crate::history::{self, git_error};
use crate::patch::check_file_path;

use super::conflicts::{Conflict, Kind};

/// How the head relates to the remote's commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Relation {
    /// The same commit.
    UpToDate,
    /// The remote's commit is an ancestor of the head.
    Ahead,
    /// The head is an ancestor of the remote's commit (or there is none).
    Behind,
    /// Each has commits the other lacks.
    Diverged(Base),
}

/// The base of a three-way merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Base {
    /// Their best common ancestor (of several, the one committed last;
    /// none for unrelated histories).
    pub(crate) commit: Option<ObjectId>,
    /// Whether it is their only best common ancestor. After criss-cross
    /// merges it is not, and a record's version in it says nothing about
    /// which side resolved what.
    pub(crate) only: bool,
}

/// The files a sync installs and what it found.
#[derive(Debug, Default)]
pub(crate) struct Merged {
    /// Workspace files: new bytes, or `None` to remove.
    pub(crate) files: Vec<(String, Option<Vec<u8>>)>,
    /// The conflicts the merge found.
    pub(crate) conflicts: Vec<Conflict>,
    /// Paths the remote changed that no install may write.
    pub(crate) skipped: Vec<String>,
}

fn parents(repo: &gix::Repository, id: ObjectId) -> Result<Vec<ObjectId>, Error> {
    let c = repo.find_commit(id).map_err(|e| git_error("cannot read a commit", e))?;
    Ok(c.parent_ids().map(|p| p.detach()).collect())
}

/// Every commit reachable from `from`, itself included.
fn ancestors(repo: &gix::Repository, from: ObjectId) -> Result<HashSet<ObjectId>, Error> {
    let mut seen = HashSet::from([from]);
    let mut queue = VecDeque::from([from]);
    while let Some(id) = queue.pop_front() {
        for p in parents(repo, id)? {
            if seen.insert(p) {
                queue.push_back(p);
            }
        }
    }
    Ok(seen)
}

/// How `ours` (the head, if any) relates to `theirs`.
pub(crate) fn relation(
    repo: &gix::Repository,
    ours: Option<ObjectId>,
    theirs: ObjectId,
) -> Result<Relation, Error> {
    let Some(ours) = ours else { return Ok(Relation::Behind) };
    if ours == theirs {
        return Ok(Relation::UpToDate);
    }
    let mine = ancestors(repo, ours)?;
    if mine.contains(&theirs) {
        return Ok(Relation::Ahead);
    }
    let others = ancestors(repo, theirs)?;
    if others.contains(&ours) {
        return Ok(Relation::Behind);
    }
    // The common ancestors are closed under parents, so the best ones are
    // those that are no common ancestor's parent.
    let common: HashSet<ObjectId> = mine.intersection(&others).copied().collect();
    let mut below = HashSet::new();
    for id in &common {
        below.extend(parents(repo, *id)?);
    }
    let mut best = None;
    let bests: Vec<&ObjectId> = common.difference(&below).collect();
    for id in bests.iter().copied() {
        let c = repo.find_commit(*id).map_err(|e| git_error("cannot read a commit", e))?;
        let seconds = c.time().map_err(|e| git_error("cannot read a commit", e))?.seconds;
        if best.is_none_or(|(s, b)| (seconds, *id) > (s, b)) {
            best = Some((seconds, *id));
        }
    }
    Ok(Relation::Diverged(Base { commit: best.map(|(_, id)| id), only: bests.len() <= 1 }))
}

/// The tree of commit `id`.
pub(crate) fn tree_of(repo: &gix::Repository, id: ObjectId) -> Result<ObjectId, Error> {
    let c = repo.find_commit(id).map_err(|e| git_error("cannot read a commit", e))?;
    Ok(c.tree_id().map_err(|e| git_error("cannot read a commit", e))?.detach())
}

fn synced(path: &str) -> bool {
    path.starts_with("topics/") || path.starts_with("sources/")
}

fn bytes_of(repo: &gix::Repository, id: Option<ObjectId>) -> Result<Option<Vec<u8>>, Error> {
    id.map(|id| history::read_blob(repo, id)).transpose()
}

/// The files under `topics/` and `sources/` that differ from tree `from`
/// to tree `to`; what no workspace may hold is left out, its path added to
/// `skipped`.
fn synced_changes(
    repo: &gix::Repository,
    from: Option<ObjectId>,
    to: ObjectId,
    skipped: &mut Vec<String>,
) -> Result<Vec<history::Change>, Error> {
    let (changes, others) = history::changes_and_others(repo, from, Some(to))?;
    skipped.extend(others.into_iter().filter(|p| synced(p)));
    let mut out = Vec::new();
    for ch in changes.into_iter().filter(|ch| synced(&ch.path)) {
        if check_file_path(&ch.path).is_err() {
            skipped.push(ch.path);
        } else {
            out.push(ch);
        }
    }
    Ok(out)
}

/// The files that turn the tree `ours` into `theirs` (a fast-forward).
pub(crate) fn fast_forward(
    repo: &gix::Repository,
    ours: Option<ObjectId>,
    theirs: ObjectId,
) -> Result<Merged, Error> {
    let mut out = Merged::default();
    for ch in synced_changes(repo, ours, theirs, &mut out.skipped)? {
        out.files.push((ch.path, bytes_of(repo, ch.new)?));
    }
    Ok(out)
}

/// The three trees of a merge and the remote commit merged.
pub(crate) struct Sides {
    pub(crate) base: Option<ObjectId>,
    /// Whether the base is the only best common ancestor.
    pub(crate) only_base: bool,
    pub(crate) ours: Option<ObjectId>,
    pub(crate) theirs: ObjectId,
    pub(crate) theirs_commit: ObjectId,
}

/// The files of the three-way merge of `sides` that differ from ours.
pub(crate) fn merge_trees(repo: &gix::Repository, sides: &Sides) -> Result<Merged, Error> {
    let ours: BTreeMap<String, Option<ObjectId>> =
        history::changes(repo, sides.base, sides.ours)?.into_iter().map(|c| (c.path, c.new)).collect();
    let mut out = Merged::default();
    let time = timestamp::now();
    for ch in synced_changes(repo, sides.base, sides.theirs, &mut out.skipped)? {
        let mine = ours.get(&ch.path).copied().unwrap_or(ch.old);
        if mine == ch.new {
            continue;
        }
        if mine == ch.old {
            out.files.push((ch.path.clone(), bytes_of(repo, ch.new)?));
            continue;
        }
        let blobs = [ch.old, mine, ch.new].map(|id| bytes_of(repo, id));
        let [base, mine_bytes, theirs_bytes] = blobs;
        let file = Versions { path: &ch.path, base: base?, ours: mine_bytes?, theirs: theirs_bytes? };
        let stamp = Stamp {
            theirs_commit: sides.theirs_commit.to_string(),
            time: time.clone(),
            only_base: sides.only_base,
        };
        let (bytes, conflicts) = merge_file(&file, &stamp)?;
        out.conflicts.extend(conflicts);
        if bytes != file.ours {
            out.files.push((ch.path.clone(), bytes));
        }
    }
    Ok(out)
}

/// One file's three versions (`None`: absent).
struct Versions<'a> {
    path: &'a str,
    base: Option<Vec<u8>>,
    ours: Option<Vec<u8>>,
    theirs: Option<Vec<u8>>,
}

/// What every conflict of one merge shares.
struct Stamp {
    theirs_commit: String,
    time: String,
    only_base: bool,
}

impl Stamp {
    fn conflict(&self, kind: Kind, path: &str, id: String, ours: String, theirs: String) -> Conflict {
        Conflict {
            id,
            kind,
            path: path.to_owned(),
            block_id: None,
            source_id: None,
            key: None,
            ours,
            theirs,
            theirs_commit: self.theirs_commit.clone(),
            time: self.time.clone(),
        }
    }
}

fn text(bytes: &Option<Vec<u8>>) -> String {
    String::from_utf8_lossy(bytes.as_deref().unwrap_or(b"")).into_owned()
}

/// The merged bytes of a file both sides changed, and its conflicts.
fn merge_file(v: &Versions<'_>, stamp: &Stamp) -> Result<(Option<Vec<u8>>, Vec<Conflict>), Error> {
    let whole = |kept: &Option<Vec<u8>>| {
        let c = stamp.conflict(Kind::File, v.path, v.path.to_owned(), text(&v.ours), text(&v.theirs));
        (kept.clone(), vec![c])
    };
    let (Some(ours), Some(theirs)) = (&v.ours, &v.theirs) else {
        // One side deleted it, the other changed it: the changed one stays.
        return Ok(whole(if v.ours.is_some() { &v.ours } else { &v.theirs }));
    };
    if v.path.starts_with("sources/") {
        // A record's version in one of several bases is no sign of a
        // resolution: without a single base, differing versions conflict.
        let base = if stamp.only_base { v.base.as_deref() } else { None };
        let m = scriptorium_source_archive::merge::merge(v.path, base, ours, theirs)?;
        let conflicts = m
            .conflicts
            .into_iter()
            .map(|c| {
                let id = if c.source_id.is_empty() { v.path.to_owned() } else { c.source_id.clone() };
                let kind = if c.source_id.is_empty() { Kind::File } else { Kind::Record };
                let mut out = stamp.conflict(
                    kind,
                    v.path,
                    id,
                    String::from_utf8_lossy(&c.ours).into_owned(),
                    String::from_utf8_lossy(&c.theirs).into_owned(),
                );
                out.source_id = (!c.source_id.is_empty()).then_some(c.source_id);
                out
            })
            .collect();
        return Ok((Some(m.bytes), conflicts));
    }
    let (Ok(ours_text), Ok(theirs_text)) = (std::str::from_utf8(ours), std::str::from_utf8(theirs)) else {
        return Ok(whole(&v.ours));
    };
    let base_text = v.base.as_deref().map(String::from_utf8_lossy);
    let m = scriptorium_topic_markdown::merge::merge(base_text.as_deref(), ours_text, theirs_text);
    let conflicts = m.conflicts.into_iter().map(|c| topic_conflict(v.path, c, stamp)).collect();
    Ok((Some(m.text.into_bytes()), conflicts))
}

fn topic_conflict(path: &str, c: scriptorium_topic_markdown::merge::Conflict, stamp: &Stamp) -> Conflict {
    use scriptorium_topic_markdown::merge::ConflictKind as K;
    match c.kind {
        K::Block { id } => {
            let mut out = stamp.conflict(Kind::Block, path, id.clone(), c.ours, c.theirs);
            out.block_id = Some(id);
            out
        }
        K::FrontMatter { key } => {
            let mut out = stamp.conflict(
                Kind::FrontMatter,
                path,
                format!("{path}#front-matter:{key}"),
                c.ours,
                c.theirs,
            );
            out.key = Some(key);
            out
        }
        K::Lines { after } => {
            let at = after.map_or_else(|| "start".to_owned(), |a| format!("^{a}"));
            let hash = short_hash(&format!("{}\n{}", c.ours, c.theirs));
            stamp.conflict(Kind::Lines, path, format!("{path}#lines-after-{at}-{hash}"), c.ours, c.theirs)
        }
    }
}

fn short_hash(s: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(s.as_bytes())[..4].iter().map(|b| format!("{b:02x}")).collect()
}
