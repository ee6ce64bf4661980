//! Reading the history: the commits ([`log`]), naming one ([`resolve`])
//! and what one changed ([`show`]).
//!
//! * **Which commits.** The first-parent chain from `HEAD`, newest first.
//!   A commit made by hand (its message has no `Scriptorium-Revision`)
//!   is listed too, as writer `external`, tier `owner`, with an empty
//!   `revision`: it changed the workspace, and `undo` can name it.
//! * **Cost.** `log --path` compares the ids of one tree entry per commit;
//!   `show` compares two trees, descending only into subtrees whose ids
//!   differ, then parses the changed files alone.

use std::collections::BTreeSet;
use std::path::Path;

use gix::ObjectId;
use serde::Serialize;

use crate::error::{Code, Error};

use super::diff::{self, Change};
use super::{blocks, frames, git_error, repo, Stamp};

/// One commit of the history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogEntry {
    /// The commit id (40 hex digits).
    pub commit: String,
    /// The workspace revision it records (empty for a commit made by hand).
    pub revision: String,
    /// What made it (`external` for a commit made by hand).
    pub writer: String,
    /// The tier it was written at.
    pub tier: String,
    /// The session its turns came from.
    pub session: Option<String>,
    /// The node ids of the turns it wrote.
    pub turns: Vec<String>,
    /// When it was made, RFC 3339 in UTC.
    pub time: String,
    /// Its summary line.
    pub message: String,
}

/// Which commits [`log`] keeps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogFilter {
    /// Only commits that changed this file, or a file under this folder
    /// (workspace-relative).
    pub path: Option<String>,
    /// Only commits whose `Scriptorium-Session` is this.
    pub session: Option<String>,
}

/// The blocks a commit changed, as `path#^id`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Blocks {
    /// Blocks it added.
    pub added: Vec<String>,
    /// Blocks present before and after, with another text.
    pub changed: Vec<String>,
    /// Blocks it removed.
    pub removed: Vec<String>,
}

/// What one commit changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Shown {
    /// The commit itself.
    #[serde(flatten)]
    pub entry: LogEntry,
    /// The topic blocks it changed.
    pub blocks: Blocks,
    /// The source ids of the archive records it added.
    pub sources: Vec<String>,
    /// The workspace-relative paths it changed.
    pub paths: Vec<String>,
}

/// A commit as the walk reads it.
pub(super) struct Walked {
    pub(super) id: ObjectId,
    pub(super) tree: ObjectId,
    /// The first parent's tree (`None` for the first commit).
    pub(super) parent_tree: Option<ObjectId>,
    pub(super) message: String,
    pub(super) seconds: i64,
}

impl Walked {
    pub(super) fn stamp(&self) -> Option<Stamp> {
        Stamp::parse(&self.message)
    }

    /// The commit as [`log`] lists it.
    pub(super) fn entry(&self) -> LogEntry {
        let stamp = self.stamp().unwrap_or_else(|| Stamp {
            writer: "external".into(),
            tier: "owner".into(),
            ..Stamp::default()
        });
        LogEntry {
            commit: self.id.to_string(),
            revision: stamp.revision,
            writer: stamp.writer,
            tier: stamp.tier,
            session: stamp.session,
            turns: stamp.turns,
            time: scriptorium_source_archive::timestamp::format_unix(self.seconds),
            message: self.message.lines().next().unwrap_or("").trim().to_owned(),
        }
    }
}

/// The repository of `root`, if any, with a cache of decoded objects: a
/// walk reads each tree on the way to a path twice (as a commit's tree and
/// as its child's parent tree).
pub(super) fn open(root: &Path) -> Result<Option<gix::Repository>, Error> {
    Ok(repo::open(root)?.map(|mut r| {
        r.object_cache_size_if_unset(16 << 20);
        r
    }))
}

/// A commit's id, tree, first parent, message and time.
fn read_commit(
    repo: &gix::Repository,
    id: ObjectId,
) -> Result<(ObjectId, Option<ObjectId>, String, i64), Error> {
    let c = repo.find_commit(id).map_err(|e| git_error("cannot read a commit", e))?;
    let tree = c.tree_id().map_err(|e| git_error("cannot read a commit", e))?.detach();
    let parent = c.parent_ids().next().map(|p| p.detach());
    let message = c.message_raw().map_err(|e| git_error("cannot read a commit", e))?;
    let message = String::from_utf8_lossy(message).into_owned();
    let seconds = c.time().map_err(|e| git_error("cannot read a commit", e))?.seconds;
    Ok((tree, parent, message, seconds))
}

/// Calls `f` on each commit of the first-parent chain from `HEAD`, newest
/// first, until it returns `false`. Nothing without a repository or a
/// commit.
pub(super) fn walk(root: &Path, mut f: impl FnMut(Walked) -> Result<bool, Error>) -> Result<(), Error> {
    let Some(repo) = open(root)? else { return Ok(()) };
    walk_repo(&repo, &mut f)
}

/// [`walk`] over an open repository.
pub(super) fn walk_repo(
    repo: &gix::Repository,
    f: &mut dyn FnMut(Walked) -> Result<bool, Error>,
) -> Result<(), Error> {
    let head = repo.head().map_err(|e| git_error("cannot read HEAD", e))?;
    let Some(mut next) = head.id().map(|i| i.detach()) else { return Ok(()) };
    let (mut tree, mut parent, mut message, mut seconds) = read_commit(repo, next)?;
    loop {
        let id = next;
        let (parent_tree, after) = match parent {
            Some(p) => {
                let read = read_commit(repo, p)?;
                (Some(read.0), Some((p, read)))
            }
            None => (None, None),
        };
        let walked = Walked { id, tree, parent_tree, message, seconds };
        if !f(walked)? {
            return Ok(());
        }
        let Some((p, read)) = after else { return Ok(()) };
        next = p;
        (tree, parent, message, seconds) = read;
    }
}

/// A `--path`: workspace-relative with `/`, no empty, `.` or `..`
/// component, not absolute (a trailing `/` names a folder).
fn check_log_path(path: &str) -> Result<(), Error> {
    let bad = |why: &str| {
        Err(Error::new(
            Code::InvalidArgument,
            format!("--path {path:?} {why}; give a workspace-relative path such as topics/people"),
        )
        .at("--path"))
    };
    if path.starts_with('/') {
        return bad("is absolute");
    }
    if path.contains('\\') || path.contains('\0') {
        return bad("contains a backslash or NUL");
    }
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() || trimmed.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
        return bad("has an empty, `.` or `..` component");
    }
    Ok(())
}

/// The commits of the workspace's history that `filter` keeps, newest
/// first; none when the workspace has no repository.
pub fn log(root: &Path, filter: &LogFilter) -> Result<Vec<LogEntry>, Error> {
    if let Some(p) = &filter.path {
        check_log_path(p)?;
    }
    let Some(repo) = open(root)? else { return Ok(Vec::new()) };
    let path = filter.path.as_deref().map(|p| p.trim_end_matches('/')).filter(|p| !p.is_empty());
    let mut out = Vec::new();
    // The entry at `path` in the last tree looked up: a commit's parent
    // tree is the next commit's tree, looked up once.
    let mut last: Option<(ObjectId, Option<ObjectId>)> = None;
    let mut entry_at = |tree: Option<ObjectId>, p: &str| -> Result<Option<ObjectId>, Error> {
        match (tree, last) {
            (Some(t), Some((seen, entry))) if t == seen => Ok(entry),
            (Some(t), _) => {
                let entry = diff::entry_at(&repo, Some(t), p)?;
                last = Some((t, entry));
                Ok(entry)
            }
            (None, _) => Ok(None),
        }
    };
    walk_repo(&repo, &mut |c| {
        if let Some(s) = &filter.session {
            if c.stamp().and_then(|st| st.session).as_ref() != Some(s) {
                return Ok(true);
            }
        }
        if let Some(p) = path {
            if entry_at(Some(c.tree), p)? == entry_at(c.parent_tree, p)? {
                return Ok(true);
            }
        }
        out.push(c.entry());
        Ok(true)
    })?;
    Ok(out)
}

fn is_hex(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The commit `rev` names (40 hex digits): a full or abbreviated (four or
/// more hex digits) commit id on the first-parent chain from `HEAD`; a
/// workspace revision (64 hex digits: the newest commit recording it);
/// `HEAD` or `HEAD~N`. An abbreviation that fits several commits is
/// `INVALID_ARGUMENT` naming them; nothing found is `NOT_FOUND`.
pub fn resolve(root: &Path, rev: &str) -> Result<String, Error> {
    Ok(resolve_walked(root, rev)?.id.to_string())
}

pub(super) fn resolve_walked(root: &Path, rev: &str) -> Result<Walked, Error> {
    let rev = rev.trim();
    let back = match rev.strip_prefix("HEAD") {
        Some("") => Some(0),
        Some(n) => match n.strip_prefix('~').map(|n| if n.is_empty() { Ok(1) } else { n.parse::<usize>() }) {
            Some(Ok(n)) => Some(n),
            _ => return Err(Error::new(Code::InvalidArgument, format!("{rev:?} is not HEAD~N"))),
        },
        None => None,
    };
    let lower = rev.to_ascii_lowercase();
    if back.is_none() && !(is_hex(rev) && (rev.len() == 64 || (4..=40).contains(&rev.len()))) {
        return Err(Error::new(Code::InvalidArgument, format!(
            "{rev:?} is not a commit id (4 to 40 hex digits), a workspace revision (64 hex digits), HEAD or HEAD~N"
        )));
    }
    let mut found: Vec<Walked> = Vec::new();
    let mut k = 0usize;
    walk(root, |c| {
        let hit = match back {
            Some(n) => k == n,
            None if lower.len() == 64 => c.stamp().is_some_and(|s| s.revision == lower),
            None => c.id.to_string().starts_with(&lower),
        };
        k += 1;
        let stop = hit && (back.is_some() || lower.len() == 64);
        if hit {
            found.push(c);
        }
        Ok(!stop)
    })?;
    match found.len() {
        0 => Err(Error::new(Code::NotFound, format!("no commit {rev} in the workspace's history"))),
        1 => Ok(found.remove(0)),
        n => {
            let names: Vec<String> = found.iter().take(10).map(|c| c.id.to_string()).collect();
            Err(Error::new(
                Code::InvalidArgument,
                format!(
                    "{rev} names {n} commits: {}{}; give more digits",
                    names.join(", "),
                    if n > 10 { ", …" } else { "" }
                ),
            ))
        }
    }
}

/// The files a walked commit changed against its first parent.
pub(super) fn changes_of(repo: &gix::Repository, c: &Walked) -> Result<Vec<Change>, Error> {
    diff::changes(repo, c.parent_tree, Some(c.tree))
}

/// The repository of `root` (`NOT_FOUND` when there is none).
pub(super) fn require_repo(root: &Path) -> Result<gix::Repository, Error> {
    open(root)?.ok_or_else(|| Error::new(Code::NotFound, "the workspace keeps no history (no .git)"))
}

/// What the commit `rev` ([`resolve`]) changed: its blocks, the records it
/// archived, its paths.
pub fn show(root: &Path, rev: &str) -> Result<Shown, Error> {
    let repo = require_repo(root)?;
    let c = resolve_walked(root, rev)?;
    let mut shown =
        Shown { entry: c.entry(), blocks: Blocks::default(), sources: Vec::new(), paths: Vec::new() };
    for ch in changes_of(&repo, &c)? {
        if ch.path.starts_with("topics/") && ch.path.ends_with(".md") {
            let d = blocks::diff(&diff::blob(&repo, ch.old)?, &diff::blob(&repo, ch.new)?);
            let name = |ids: Vec<String>| ids.into_iter().map(|id| format!("{}#^{id}", ch.path));
            shown.blocks.added.extend(name(d.added));
            shown.blocks.changed.extend(name(d.changed));
            shown.blocks.removed.extend(name(d.removed));
        } else if ch.path.starts_with("sources/") {
            let old: BTreeSet<String> =
                frames::source_ids(&ch.path, &diff::blob(&repo, ch.old)?).into_iter().collect();
            let new = frames::source_ids(&ch.path, &diff::blob(&repo, ch.new)?);
            shown.sources.extend(new.into_iter().filter(|id| !old.contains(id)));
        }
        shown.paths.push(ch.path);
    }
    Ok(shown)
}

#[cfg(test)]
mod tests;
