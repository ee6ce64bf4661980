//! Making the commits: the one an install planned ([`commit_installed`]),
//! and the one recording edits made outside Scriptorium
//! ([`commit_outside`]).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use gix::objs::tree::EntryKind;
use gix::ObjectId;

use crate::disk::Disk;
use crate::error::{Code, Error};
use crate::revision::Revision;

use super::frames::{self, Tampered};
use super::objects::{blob_at, head, read_blob, working, Head};
use super::repo::{self, Settings, GITIGNORE};
use super::{git_error, index_file, Merge, Planned, Stamp};

/// What a commit is made of besides its files.
struct Made<'a> {
    stamp: &'a Stamp,
    summary: &'a str,
    /// The other parent of a merge commit.
    merged: Option<ObjectId>,
}

/// Commits `changes` (path, new blob or `None`) on top of `head` as
/// `made` says, then brings the index in step.
fn commit(
    repo: &gix::Repository,
    root: &Path,
    settings: &Settings,
    head: Option<&Head>,
    changes: &[(String, Option<ObjectId>)],
    made: &Made<'_>,
) -> Result<ObjectId, Error> {
    let _writing = repo::Writing::begin(root, repo)?;
    let base = head.map_or_else(|| ObjectId::empty_tree(repo.object_hash()), |h| h.tree);
    let mut editor = repo.edit_tree(base).map_err(|e| git_error("cannot read the head tree", e))?;
    for (path, id) in changes {
        match id {
            Some(id) => editor.upsert(path.as_str(), EntryKind::Blob, *id),
            None => editor.remove(path.as_str()),
        }
        .map_err(|e| git_error(&format!("cannot stage {path}"), e))?;
    }
    let tree = editor.write().map_err(|e| git_error("cannot write a tree", e))?.detach();
    let sig = repo::signature(settings);
    let (mut t1, mut t2) = (gix::date::parse::TimeBuf::default(), gix::date::parse::TimeBuf::default());
    let parents: Vec<ObjectId> = head.map(|h| h.id).into_iter().chain(made.merged).collect();
    let message = made.stamp.message(made.summary);
    let id = repo
        .commit_as(sig.to_ref(&mut t1), sig.to_ref(&mut t2), "HEAD", message, tree, parents)
        .map_err(|e| git_error("cannot commit", e))?
        .detach();
    index_file::update(repo, root, changes)?;
    Ok(id)
}

/// The blob of the working file at `path` (written), or `None` when the
/// file is gone.
fn stage(repo: &gix::Repository, root: &Path, path: &str) -> Result<Option<ObjectId>, Error> {
    match working(root, path)? {
        Some(bytes) => {
            Ok(Some(repo.write_blob(bytes).map_err(|e| git_error("cannot write a blob", e))?.detach()))
        }
        None => Ok(None),
    }
}

/// Makes the commit `planned` describes, once: nothing when the head
/// already records its revision (recovery after the commit was made), or
/// when the workspace keeps no history. The files must be installed.
pub fn commit_installed(root: &Path, disk: Disk<'_>, planned: &Planned) -> Result<(), Error> {
    let settings = Settings::read(root)?;
    if !settings.enabled {
        return Ok(());
    }
    let git = root.join(".git");
    disk.point("open", &git).map_err(|e| Error::io(&e, "cannot open", &git))?;
    let repo = repo::open_or_init(root)?;
    let head = head(&repo)?;
    let mut paths: Vec<&str> = planned.paths.iter().map(String::as_str).collect();
    paths.push(GITIGNORE);
    disk.point("write objects", &git).map_err(|e| Error::io(&e, "cannot write objects in", &git))?;
    let mut changes = Vec::with_capacity(paths.len());
    for path in paths {
        changes.push((path.to_owned(), stage(&repo, root, path)?));
    }
    disk.point("commit", &git).map_err(|e| Error::io(&e, "cannot commit in", &git))?;
    let merged = match &planned.merge {
        Some(Merge::Adopt(id)) => {
            return adopt(&repo, root, &settings, head.as_ref(), parse_id(id)?, &changes)
        }
        Some(Merge::With(id)) => Some(parse_id(id)?),
        None => None,
    };
    // A merge is made when the head is not yet it (its revision may be the
    // head's: the other side brought nothing new); any other commit when the
    // head does not record its revision.
    let made = match (merged, &head) {
        (Some(other), Some(h)) => {
            let commit = repo.find_commit(h.id).map_err(|e| git_error("cannot read the head commit", e))?;
            let is_it = commit.parent_ids().any(|p| p.detach() == other);
            is_it
        }
        (Some(_), None) => false,
        (None, _) => {
            head.as_ref().and_then(|h| h.stamp.as_ref()).is_some_and(|s| s.revision == planned.stamp.revision)
        }
    };
    if made {
        // Made before an interruption; the index may lag behind it.
        let _writing = repo::Writing::begin(root, &repo)?;
        return index_file::update(&repo, root, &changes);
    }
    let made = Made { stamp: &planned.stamp, summary: &planned.summary, merged };
    let id = commit(&repo, root, &settings, head.as_ref(), &changes, &made)?;
    tracing::debug!(commit = %id, revision = %planned.stamp.revision, "history: committed");
    Ok(())
}

fn parse_id(hex: &str) -> Result<ObjectId, Error> {
    ObjectId::from_hex(hex.as_bytes()).map_err(|e| git_error("a planned commit id is not one", e))
}

/// A fast-forward: the head becomes `target` (once: nothing when it is
/// already), and the index follows the installed `changes`.
fn adopt(
    repo: &gix::Repository,
    root: &Path,
    settings: &Settings,
    head: Option<&Head>,
    target: ObjectId,
    changes: &[(String, Option<ObjectId>)],
) -> Result<(), Error> {
    use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
    let _writing = repo::Writing::begin(root, repo)?;
    if head.map(|h| h.id) != Some(target) {
        let edit = RefEdit {
            change: Change::Update {
                log: LogChange {
                    mode: RefLog::AndReference,
                    force_create_reflog: false,
                    message: "sync: fast-forward".into(),
                },
                expected: head
                    .map_or(PreviousValue::MustNotExist, |h| PreviousValue::MustExistAndMatch(h.id.into())),
                new: gix::refs::Target::Object(target),
            },
            name: "HEAD".try_into().map_err(|e| git_error("cannot name HEAD", e))?,
            deref: true,
        };
        let sig = repo::signature(settings);
        let mut t = gix::date::parse::TimeBuf::default();
        repo.edit_references_as(Some(edit), Some(sig.to_ref(&mut t)))
            .map_err(|e| git_error("cannot move the head", e))?;
    }
    index_file::update(repo, root, changes)
}

/// What [`commit_outside`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outside {
    /// The `external` commit made, if the workspace had changed.
    pub commit: Option<String>,
    /// The workspace-relative paths it committed.
    pub paths: Vec<String>,
    /// Archive files whose committed frames changed: left as committed.
    pub tampered: Vec<Tampered>,
}

/// Every blob under `topics/` and `sources/` in `tree`, by path.
fn committed_files(repo: &gix::Repository, tree: ObjectId) -> Result<BTreeMap<String, ObjectId>, Error> {
    let mut out = BTreeMap::new();
    let mut stack: Vec<(String, ObjectId)> = Vec::new();
    let root = repo.find_tree(tree).map_err(|e| git_error("cannot read a tree", e))?;
    for e in root.decode().map_err(|e| git_error("cannot read a tree", e))?.entries {
        if e.mode.is_tree() && (e.filename == "topics" || e.filename == "sources") {
            stack.push((e.filename.to_string(), e.oid.to_owned()));
        }
    }
    while let Some((dir, id)) = stack.pop() {
        let t = repo.find_tree(id).map_err(|e| git_error("cannot read a tree", e))?;
        for e in t.decode().map_err(|e| git_error("cannot read a tree", e))?.entries {
            let path = format!("{dir}/{}", e.filename);
            if e.mode.is_tree() {
                stack.push((path, e.oid.to_owned()));
            } else if e.mode.is_blob() {
                out.insert(path, e.oid.to_owned());
            }
        }
    }
    Ok(out)
}

/// Commits what changed in the workspace since the head commit, when its
/// revision (`rev`, just computed) is not the one the head records: one
/// `external` commit, made before a transaction so that the
/// transaction's own commit shows only its change. Archive files whose
/// committed frames changed are not committed ([`Outside::tampered`]).
/// Nothing when the workspace keeps no history; the repository is created
/// here on the first write.
pub fn commit_outside(root: &Path, rev: &Revision) -> Result<Outside, Error> {
    match Writer::open(root)? {
        Some(w) => w.commit_outside(rev),
        None => Ok(Outside::default()),
    }
}

/// The first tampering `new_files` (workspace-relative archive path, the
/// bytes a transaction is about to install) would commit: a transaction
/// may add frames to an archive file, never launder a changed one.
pub fn check_archive_writes<'a>(
    root: &Path,
    new_files: impl IntoIterator<Item = (&'a str, &'a [u8])>,
) -> Result<(), Error> {
    match Writer::open(root)? {
        Some(w) => w.check_archive_writes(new_files, frames::Rule::Append),
        None => Ok(()),
    }
}

/// The repository of a workspace about to be written, opened once for
/// what comes before a transaction's install ([`Writer::commit_outside`],
/// [`Writer::check_archive_writes`]).
#[derive(Debug)]
pub struct Writer {
    root: std::path::PathBuf,
    repo: gix::Repository,
    settings: Settings,
}

impl Writer {
    /// The repository of the workspace at `root`, created when missing;
    /// `None` when the workspace keeps no history.
    pub fn open(root: &Path) -> Result<Option<Writer>, Error> {
        let settings = Settings::read(root)?;
        if !settings.enabled {
            return Ok(None);
        }
        let repo = repo::open_or_init(root)?;
        Ok(Some(Writer { root: root.to_path_buf(), repo, settings }))
    }

    /// [`commit_outside`].
    pub fn commit_outside(&self, rev: &Revision) -> Result<Outside, Error> {
        let (root, repo, settings) = (self.root.as_path(), &self.repo, &self.settings);
        let head = head(repo)?;
        if head.as_ref().and_then(|h| h.stamp.as_ref()).is_some_and(|s| s.revision == rev.hex) {
            return Ok(Outside::default());
        }
        let committed = match &head {
            Some(h) => committed_files(repo, h.tree)?,
            None => BTreeMap::new(),
        };
        let mut out = Outside::default();
        let mut changes = Vec::new();
        for (path, _) in &rev.tree {
            let path = String::from_utf8_lossy(path).into_owned();
            if path.split('/').any(|c| c.eq_ignore_ascii_case(".git")) {
                // Git keeps no file under a folder named `.git`.
                tracing::warn!(%path, "history: a file under a .git folder is not committed");
                continue;
            }
            let Some(bytes) = working(root, &path)? else { continue };
            let id = gix::objs::compute_hash(repo.object_hash(), gix::objs::Kind::Blob, &bytes)
                .map_err(|e| git_error("cannot hash a file", e))?;
            match committed.get(&path) {
                Some(old) if *old == id => continue,
                Some(old) if path.starts_with("sources/") => {
                    if let Some(t) = frames::check(&path, &read_blob(repo, *old)?, &bytes) {
                        out.tampered.push(t);
                        continue;
                    }
                }
                _ => {}
            }
            repo.write_blob(&bytes).map_err(|e| git_error("cannot write a blob", e))?;
            changes.push((path, Some(id)));
        }
        for (path, old) in &committed {
            if rev.hash_of(path).is_some() {
                continue;
            }
            if path.starts_with("sources/") && crate::patch::check_file_path(path).is_err() {
                // No workspace holds it (a sync left it out): it stays as
                // committed, and is no record of the archive.
                continue;
            }
            if path.starts_with("sources/") {
                let removed = frames::check(path, &read_blob(repo, *old)?, b"");
                out.tampered.extend(removed);
            } else {
                changes.push((path.clone(), None));
            }
        }
        let ignore = stage(repo, root, GITIGNORE)?;
        let committed_ignore = match &head {
            Some(h) => blob_at(repo, h.tree, GITIGNORE)?,
            None => None,
        };
        if ignore != committed_ignore {
            changes.push((GITIGNORE.to_owned(), ignore));
        }
        for t in &out.tampered {
            tracing::warn!(%t, "history: an archive file's committed records changed; left as committed");
        }
        // A new repository's `.gitignore` alone goes into the first
        // transaction's commit.
        if changes.is_empty() || (head.is_none() && changes.len() == 1 && changes[0].0 == GITIGNORE) {
            return Ok(out);
        }
        let stamp = Stamp {
            revision: rev.hex.clone(),
            writer: "external".into(),
            tier: "owner".into(),
            ..Stamp::default()
        };
        let summary = match &head {
            Some(_) => format!("edits made outside Scriptorium ({} files)", changes.len()),
            None => format!("the workspace as found ({} files)", changes.len()),
        };
        let made = Made { stamp: &stamp, summary: &summary, merged: None };
        let id = commit(repo, root, settings, head.as_ref(), &changes, &made)?;
        out.commit = Some(id.to_string());
        out.paths = changes.into_iter().map(|(p, _)| p).collect();
        Ok(out)
    }

    /// [`check_archive_writes`], the new files held to `rule` (a sync's
    /// merge and a resolution may do more than append).
    pub fn check_archive_writes<'a>(
        &self,
        new_files: impl IntoIterator<Item = (&'a str, &'a [u8])>,
        rule: frames::Rule,
    ) -> Result<(), Error> {
        let repo = &self.repo;
        let archive: Vec<(&str, &[u8])> =
            new_files.into_iter().filter(|(p, _)| p.starts_with("sources/")).collect();
        if archive.is_empty() {
            return Ok(());
        }
        let Some(head) = head(repo)? else { return Ok(()) };
        // Broken in a commit (one made by hand): never written on top of.
        let in_history = super::tamper::history_breaches(&self.root, repo, head.id)?;
        for (path, bytes) in archive {
            let committed = match blob_at(repo, head.tree, path)? {
                Some(old) => frames::check_with(path, &read_blob(repo, old)?, bytes, rule),
                None => None,
            };
            if let Some(t) = in_history.get(path).cloned().or(committed) {
                return Err(Error::new(
                    Code::Tampered,
                    format!(
                        "{t}; nothing was written. The archive is append-only: restore the committed file (git -C <workspace> checkout HEAD -- '{path}') and retry"
                    ),
                )
                .at(path));
            }
        }
        Ok(())
    }
}

/// A commit that could not be made after its install, relative to the
/// workspace: the [`Planned`] commit and why, made by the next writer.
pub const POSTPONED: &str = ".scriptorium/journal/commit-postponed";

#[derive(serde::Serialize, serde::Deserialize)]
struct Postponed {
    planned: Planned,
    why: String,
}

/// Records `planned` as postponed because of `error` (durably, through
/// `disk`: a crash here keeps the intent instead).
pub(crate) fn postpone(root: &Path, disk: Disk<'_>, planned: &Planned, error: &Error) -> Result<(), Error> {
    let path = root.join(POSTPONED);
    let tmp = root.join(format!("{POSTPONED}.tmp"));
    let body = serde_json::to_vec(&Postponed { planned: planned.clone(), why: error.message.clone() })
        .map_err(|e| Error::new(Code::Io, e.to_string()))?;
    let _ = fs::remove_file(&tmp);
    disk.replace(&tmp, &path, &body, true).map_err(|e| Error::io(&e, "cannot write", &path))?;
    tracing::warn!(error = %error, "history: the commit is postponed to the next write");
    Ok(())
}

/// Why the last install's commit is postponed, if it is.
pub fn postponed(root: &Path) -> Option<String> {
    let bytes = fs::read(root.join(POSTPONED)).ok()?;
    let p: Postponed = serde_json::from_slice(&bytes).ok()?;
    Some(p.why)
}

/// Makes a postponed commit, if there is one: before anything else a
/// writer commits, so that history keeps its provenance. `IO` (retryable)
/// when git still refuses; nothing else is then committed.
pub fn commit_postponed(root: &Path, disk: Disk<'_>) -> Result<(), Error> {
    let path = root.join(POSTPONED);
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(&e, "cannot read", &path)),
    };
    if let Ok(p) = serde_json::from_slice::<Postponed>(&bytes) {
        commit_installed(root, disk, &p.planned).map_err(|e| {
            Error::new(
                Code::Io,
                format!(
                    "the git commit of the last transaction is still postponed ({}); if no git program is running, remove the lock file it names and retry",
                    e.message
                ),
            )
            .at(".git")
        })?;
    }
    fs::remove_file(&path).map_err(|e| Error::io(&e, "cannot remove", &path))
}
