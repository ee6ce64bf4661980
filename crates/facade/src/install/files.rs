//! Reading and replacing an agent's settings file: a symbolic link is
//! followed only to a regular file, a changed file is backed up beside
//! itself first, and the new text replaces the old through a temporary
//! file in the same folder renamed over it, keeping the file's mode.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::BACKUP_SUFFIX;
use crate::{Code, Error};

/// A settings file as found.
#[derive(Debug)]
pub(crate) struct Current {
    /// Its text; `None` when there is no file.
    pub(crate) text: Option<String>,
    /// Where its bytes are: the file itself, or the regular file its
    /// symbolic link leads to.
    real: PathBuf,
    /// Whether the path is a symbolic link (never removed, only rewritten).
    pub(crate) link: bool,
    /// Its permission bits (Unix), kept by every rewrite.
    mode: Option<u32>,
}

/// An `IO` error about `path`.
fn io_error(e: &io::Error, what: &str, path: &Path) -> Error {
    Error::new(Code::Io, format!("cannot {what} {}: {e}", path.display())).at(path.display().to_string())
}

/// A refusal about `path`.
fn refuse(path: &Path, why: &str) -> Error {
    Error::invalid(format!("{} {why}; nothing was written", path.display())).at(path.display().to_string())
}

/// Reads `path`: missing is `text: None`; a symbolic link is followed
/// when it leads to a regular file and refused otherwise, as is anything
/// that is not a regular file or not UTF-8 text.
pub(crate) fn read(path: &Path) -> Result<Current, Error> {
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(Current { text: None, real: path.to_owned(), link: false, mode: None });
        }
        Err(e) => return Err(io_error(&e, "read", path)),
    };
    let link = meta.file_type().is_symlink();
    let (real, meta) = if link {
        let target = fs::metadata(path)
            .map_err(|e| refuse(path, &format!("is a symbolic link that leads nowhere readable ({e})")))?;
        if !target.is_file() {
            return Err(refuse(path, "is a symbolic link to something other than a regular file"));
        }
        (fs::canonicalize(path).map_err(|e| io_error(&e, "resolve", path))?, target)
    } else {
        if !meta.is_file() {
            return Err(refuse(path, "is not a regular file"));
        }
        (path.to_owned(), meta)
    };
    let bytes = fs::read(&real).map_err(|e| io_error(&e, "read", path))?;
    let text = String::from_utf8(bytes).map_err(|_| refuse(path, "is not UTF-8 text"))?;
    Ok(Current { text: Some(text), real, link, mode: mode_of(&meta) })
}

/// The permission bits of a file.
#[cfg(unix)]
fn mode_of(meta: &fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    Some(meta.permissions().mode() & 0o7777)
}

/// No permission bits outside Unix.
#[cfg(not(unix))]
fn mode_of(_: &fs::Metadata) -> Option<u32> {
    None
}

/// The backup of `path`: beside it (beside the link, for a link).
pub(crate) fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(BACKUP_SUFFIX);
    path.with_file_name(name)
}

/// Replaces the file with `text`: the old text first copied to the backup
/// (replacing an older backup), then the new one written through a
/// temporary file renamed over it. A new file gets its missing folders.
/// Returns the backup written, if any.
pub(crate) fn write(path: &Path, current: &Current, text: &str) -> Result<Option<PathBuf>, Error> {
    let backup = match &current.text {
        Some(old) => {
            let backup = backup_path(path);
            replace(&backup, old.as_bytes(), current.mode)?;
            Some(backup)
        }
        None => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                fs::create_dir_all(dir).map_err(|e| io_error(&e, "create the folder", dir))?;
            }
            None
        }
    };
    replace(&current.real, text.as_bytes(), current.mode)?;
    Ok(backup)
}

/// Removes the file (only a regular file, never a link).
pub(crate) fn remove(path: &Path) -> Result<(), Error> {
    fs::remove_file(path).map_err(|e| io_error(&e, "remove", path))?;
    sync_parent(path);
    Ok(())
}

/// Writes `bytes` to `target` atomically: a new temporary file beside it
/// (mode `mode` when given), written and flushed to disk, renamed over it.
fn replace(target: &Path, bytes: &[u8], mode: Option<u32>) -> Result<(), Error> {
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let tmp = target.with_file_name(format!(".{name}.scriptorium-{}-{nanos:x}.tmp", std::process::id()));
    let written = (|| {
        let mut file = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        set_mode(&file, mode)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, target)
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(io_error(&e, "write", target));
    }
    sync_parent(target);
    Ok(())
}

/// Gives an open file the permission bits `mode`, when given.
#[cfg(unix)]
fn set_mode(file: &fs::File, mode: Option<u32>) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    match mode {
        Some(mode) => file.set_permissions(fs::Permissions::from_mode(mode)),
        None => Ok(()),
    }
}

/// No permission bits outside Unix.
#[cfg(not(unix))]
fn set_mode(_: &fs::File, _: Option<u32>) -> io::Result<()> {
    Ok(())
}

/// Flushes the folder holding `path` to disk, so a rename or removal in it
/// lasts (best effort: a folder that cannot be opened is left as it is).
fn sync_parent(path: &Path) {
    #[cfg(unix)]
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}
