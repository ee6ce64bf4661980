//! Writing the page: mode 0600, either in a fresh folder of mode 0700
//! under the system's temporary folder, or over a named file by an atomic
//! replace (a temporary beside it, renamed over it, the folder fsynced).
//!
//! The archive crate's `fsio::replace_file` does not fit the replace: it
//! stages its temporary under a workspace's `.scriptorium/tmp/` (the page
//! is written outside any workspace, and the rename is atomic only within
//! one file system, so the temporary goes beside the target), gives the
//! file mode 0644 (the page holds memory and stays 0600), and creates
//! missing folders (a missing folder of `--out` is `NOT_FOUND`). Only its
//! `fsio::sync_dir` is used, to make the rename durable.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};

use scriptorium_source_archive::{fsio, Code};

use super::{io_error, FILE_NAME};
use crate::error::Error;

/// Writes the page and returns its absolute path.
///
/// * `out` is `None`: `palace.html` in a fresh folder of mode 0700 under
///   the system's temporary folder.
/// * `out` is a file path: its folder must exist (`NOT_FOUND` otherwise,
///   `INVALID_ARGUMENT` when it is not a folder or `out` names a folder);
///   the page is written to a temporary file in that folder and renamed
///   over `out`, so a reader sees the old page or the new one, never a
///   part.
///
/// The page has mode 0600 either way.
pub fn write(html: &str, out: Option<&Path>) -> Result<PathBuf, Error> {
    let Some(out) = out else {
        return write_fresh(html.as_bytes());
    };
    let (parent, name) = out_folder(out)?;
    let target = parent.join(name);
    if target.is_dir() {
        return Err(at(Code::InvalidArgument, format!("--out {} is a folder", target.display()), &target));
    }
    replace_private(&parent, name, &target, html.as_bytes())?;
    Ok(target)
}

/// An error with `code` and `message` about `path`.
fn at(code: Code, message: String, path: &Path) -> Error {
    let mut e = Error::new(code, message);
    e.path = Some(path.display().to_string());
    e
}

fn fresh_name(prefix: &str) -> String {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{prefix}{nanos:x}-{:x}", std::process::id())
}

/// `palace.html` in a fresh 0700 folder under the system's temporary
/// folder; its absolute path.
fn write_fresh(bytes: &[u8]) -> Result<PathBuf, Error> {
    let base = std::env::temp_dir();
    let mut dir = None;
    for n in 0..100u32 {
        let candidate = base.join(format!("{}-{n}", fresh_name("scriptorium-palace-")));
        match private_dir(&candidate) {
            Ok(()) => {
                dir = Some(candidate);
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io_error(&e, "cannot create the folder", &candidate)),
        }
    }
    let dir = dir.ok_or_else(|| at(Code::Io, "no fresh temporary folder could be made".into(), &base))?;
    let dir = std::fs::canonicalize(&dir).map_err(|e| io_error(&e, "cannot resolve", &dir))?;
    let file = dir.join(FILE_NAME);
    write_private(&file, bytes).map_err(|e| io_error(&e, "cannot write", &file))?;
    Ok(file)
}

/// The resolved folder of `--out` (which must exist and be a folder) and
/// the file name `out` gives in it.
fn out_folder(out: &Path) -> Result<(PathBuf, &OsStr), Error> {
    let Some(name) = out.file_name() else {
        return Err(at(Code::InvalidArgument, format!("--out {} does not name a file", out.display()), out));
    };
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let parent = match std::fs::canonicalize(&parent) {
        Ok(p) => p,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(at(
                Code::NotFound,
                format!("the folder of --out {} does not exist: {}", out.display(), parent.display()),
                &parent,
            ))
        }
        Err(e) => return Err(io_error(&e, "cannot resolve", &parent)),
    };
    if !parent.is_dir() {
        return Err(at(Code::InvalidArgument, format!("{} is not a folder", parent.display()), &parent));
    }
    Ok((parent, name))
}

/// Replaces `target` (named `name` in `parent`) with `bytes` atomically:
/// a private temporary beside it, written and fsynced, renamed over it,
/// and the folder fsynced; the temporary is removed on failure.
fn replace_private(parent: &Path, name: &OsStr, target: &Path, bytes: &[u8]) -> Result<(), Error> {
    let tmp = parent.join(format!(".{}.{}", name.to_string_lossy(), fresh_name("tmp-")));
    if let Err(e) = write_private(&tmp, bytes) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io_error(&e, "cannot write", &tmp));
    }
    if let Err(e) = std::fs::rename(&tmp, target) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io_error(&e, "cannot replace", target));
    }
    // The rename is durable once the folder is; the page is in place
    // either way, so a failure to fsync the folder is not one to report.
    let _ = fsio::sync_dir(parent);
    Ok(())
}

#[cfg(unix)]
fn private_dir(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new().mode(0o700).create(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
}

#[cfg(not(unix))]
fn private_dir(path: &Path) -> std::io::Result<()> {
    std::fs::create_dir(path)
}

/// Creates `path` (which must not exist) with mode 0600 and writes
/// `bytes` to it, flushed to the disk.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    f.write_all(bytes)?;
    f.sync_all()
}
