//! Keeping git's index (`.git/index`) in step with the commits, for the
//! paths they changed only, so that `git status` and `git diff` in the
//! workspace show what changed since the last transaction and nothing else.

use std::path::Path;

use gix::index::entry::{Flags, Mode, Stage, Stat};

use crate::error::Error;

use super::git_error;

/// Sets the index entries of `changes` (workspace-relative path, the blob
/// now committed or `None` when removed) to what is committed, with the
/// file's current stat so that git need not read it again.
pub(super) fn update(
    repo: &gix::Repository,
    root: &Path,
    changes: &[(String, Option<gix::ObjectId>)],
) -> Result<(), Error> {
    if changes.is_empty() {
        return Ok(());
    }
    let mut file =
        gix::index::File::at_or_default(repo.index_path(), repo.object_hash(), false, Default::default())
            .map_err(|e| git_error("cannot read the index", e))?;
    // New entries are pushed after every lookup: the lookups search the
    // entries by path, which needs them sorted.
    let mut new = Vec::new();
    for (path, id) in changes {
        let key: &gix::bstr::BStr = path.as_str().into();
        match id {
            Some(id) => {
                let meta = gix::index::fs::Metadata::from_path_no_follow(&root.join(path))
                    .map_err(|e| Error::io(&e, "cannot read", &root.join(path)))?;
                let stat = Stat::from_fs(&meta).unwrap_or_default();
                match file.entry_mut_by_path_and_stage(key, Stage::Unconflicted) {
                    Some(e) => {
                        e.id = *id;
                        e.stat = stat;
                        e.mode = Mode::FILE;
                    }
                    None => new.push((stat, *id, key)),
                }
            }
            None => file.remove_entries(|_, p, _| p == key),
        }
    }
    if !new.is_empty() {
        for (stat, id, key) in new {
            file.dangerously_push_entry(stat, id, Flags::empty(), Mode::FILE, key);
        }
        file.sort_entries();
    }
    // The cached trees no longer describe the entries (gix does not update
    // them on write): git rebuilds them when it needs them.
    file.remove_tree();
    file.write(Default::default()).map_err(|e| git_error("cannot write the index", e))
}
