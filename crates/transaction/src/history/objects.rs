//! Reading the repository's objects and the working files the history
//! compares with them: the head commit, a committed blob, a working file.

use std::fs;
use std::path::Path;

use gix::ObjectId;

use crate::error::Error;

use super::{git_error, Stamp};

/// The head commit: its id, tree and stamp (`None` for a commit made by
/// hand).
pub(crate) struct Head {
    pub(crate) id: ObjectId,
    pub(crate) tree: ObjectId,
    pub(crate) stamp: Option<Stamp>,
}

pub(crate) fn head(repo: &gix::Repository) -> Result<Option<Head>, Error> {
    let head = repo.head().map_err(|e| git_error("cannot read HEAD", e))?;
    let Some(id) = head.id() else { return Ok(None) };
    let commit = repo.find_commit(id).map_err(|e| git_error("cannot read the head commit", e))?;
    let tree = commit.tree_id().map_err(|e| git_error("cannot read the head commit", e))?.detach();
    let message = commit.message_raw().map_err(|e| git_error("cannot read the head commit", e))?;
    let stamp = Stamp::parse(&String::from_utf8_lossy(message));
    Ok(Some(Head { id: id.detach(), tree, stamp }))
}

/// The blob committed at `path` in `tree`, if any.
pub(crate) fn blob_at(repo: &gix::Repository, tree: ObjectId, path: &str) -> Result<Option<ObjectId>, Error> {
    let tree = repo.find_tree(tree).map_err(|e| git_error("cannot read a tree", e))?;
    let entry = tree.lookup_entry_by_path(path).map_err(|e| git_error("cannot read a tree", e))?;
    Ok(entry.filter(|e| e.mode().is_blob()).map(|e| e.object_id()))
}

pub(crate) fn read_blob(repo: &gix::Repository, id: ObjectId) -> Result<Vec<u8>, Error> {
    Ok(repo.find_blob(id).map_err(|e| git_error("cannot read a blob", e))?.take_data())
}

/// The working file at `path`: its bytes, `None` when it is not a regular
/// file.
pub(super) fn working(root: &Path, path: &str) -> Result<Option<Vec<u8>>, Error> {
    let p = root.join(path);
    match fs::symlink_metadata(&p) {
        Ok(m) if m.is_file() => fs::read(&p).map(Some).map_err(|e| Error::io(&e, "cannot read", &p)),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(&e, "cannot read", &p)),
    }
}
