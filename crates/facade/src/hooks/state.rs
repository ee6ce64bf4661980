//! The hooks' own files under `.scriptorium/hooks/`: written only inside
//! the workspace, never through a symbolic link (a cloned or tampered
//! workspace may plant one to make a hook write elsewhere).

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use scriptorium_source_archive::{fsio, Code};

use crate::error::Error;

/// The folder of the hooks' files, workspace-relative.
pub(super) const DIR: &str = ".scriptorium/hooks";

/// Refuses a symbolic link on the way to `rel` or to the temporary folder
/// atomic writes go through; creates `rel`'s folder.
fn prepare(root: &Path, rel: &str) -> Result<PathBuf, Error> {
    fsio::check_no_links(root, rel)?;
    fsio::check_no_links(root, ".scriptorium/tmp/x")?;
    let target = root.join(rel);
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::new(Code::Io, format!("cannot create {}: {e}", dir.display())))?;
    }
    // A link made between the check and the creation is refused as well.
    fsio::check_no_links(root, rel)?;
    Ok(target)
}

/// Creates the folder `rel` (and those on its way), never through a
/// symbolic link.
pub(super) fn create_dir(root: &Path, rel: &str) -> Result<(), Error> {
    prepare(root, &format!("{rel}/x")).map(drop)
}

/// Replaces the file at `rel` with `bytes`, atomically (a cache: a lost
/// one costs only a re-read).
pub(super) fn write(root: &Path, rel: &str, bytes: &[u8]) -> Result<(), Error> {
    let target = prepare(root, rel)?;
    Ok(fsio::replace_cache_file(root, &target, bytes)?)
}

/// Opens (creating) the lock file at `rel`.
pub(super) fn lock_file(root: &Path, rel: &str) -> Result<File, Error> {
    let target = prepare(root, rel)?;
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&target)
        .map_err(|e| Error::new(Code::Io, format!("cannot open {}: {e}", target.display())))
}

/// A file name for `key` (a session, a transcript path): 32 hex digits of
/// its SHA-256, so any key makes a plain name.
pub(super) fn name_of(key: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(key)[..16].iter().map(|b| format!("{b:02x}")).collect()
}
