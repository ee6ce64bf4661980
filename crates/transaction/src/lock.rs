//! The cross-process write lock of a workspace, `.scriptorium/write.lock`.
//!
//! Every writer takes it exclusively before reading what it will change, so
//! two writers never interleave. It is an advisory `flock`-style lock on a
//! file that is never unlinked or renamed; the operating system releases it
//! when the process ends, however it ends.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;
use std::time::{Duration, Instant};

use scriptorium_source_archive::fsio;

use crate::error::{Code, Error};

/// The lock file, relative to the workspace root.
pub const LOCK_FILE: &str = ".scriptorium/write.lock";

/// How long a background writer waits.
pub const BACKGROUND_TIMEOUT: Duration = Duration::from_secs(1);

/// How long an interactive writer waits by default.
pub const INTERACTIVE_TIMEOUT: Duration = Duration::from_secs(5);

/// A held write lock; released when dropped.
#[derive(Debug)]
pub struct WriteLock {
    _file: File,
}

/// Takes the write lock of workspace `root`, waiting at most `timeout`:
/// `LOCKED` when another writer holds it that long, `INVALID_ARGUMENT` when
/// the way to the lock file goes through a symbolic link, `IO` otherwise.
pub fn acquire(root: &Path, timeout: Duration) -> Result<WriteLock, Error> {
    take(root, LOCK_FILE, timeout, false)
}

/// Takes another lock file of the workspace (`rel`, under `.scriptorium/`)
/// exclusively, with the same rules and errors as [`acquire`]: for a layer
/// above that must serialise work longer than one transaction.
pub fn acquire_file(root: &Path, rel: &str, timeout: Duration) -> Result<WriteLock, Error> {
    take(root, rel, timeout, false)
}

/// Takes the lock shared, as a reader: no writer can install while it is
/// held, and readers do not exclude each other. Same errors as [`acquire`].
pub fn acquire_shared(root: &Path, timeout: Duration) -> Result<WriteLock, Error> {
    take(root, LOCK_FILE, timeout, true)
}

fn take(root: &Path, rel: &str, timeout: Duration, shared: bool) -> Result<WriteLock, Error> {
    let path = root.join(rel);
    // Never create or lock anything through a link that leaves the workspace.
    fsio::check_no_links(root, rel)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(&e, "cannot create", dir))?;
    }
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io(&e, "cannot open the write lock", &path))?;
    let start = Instant::now();
    loop {
        let attempt = if shared { file.try_lock_shared() } else { file.try_lock() };
        match attempt {
            Ok(()) => return Ok(WriteLock { _file: file }),
            Err(TryLockError::WouldBlock) => {
                if start.elapsed() >= timeout {
                    return Err(Error::new(
                        Code::Locked,
                        format!(
                            "another process holds {rel} (waited {} ms); nothing was done, try again",
                            timeout.as_millis()
                        ),
                    )
                    .at(rel));
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(TryLockError::Error(e)) => return Err(Error::io(&e, "cannot lock", &path)),
        }
    }
}

#[cfg(test)]
mod tests {
    //! One holder at a time; the file stays put.
    use super::*;

    #[test]
    fn a_second_writer_waits_then_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let held = acquire(dir.path(), Duration::ZERO).unwrap();
        #[cfg(unix)]
        let inode =
            std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(dir.path().join(LOCK_FILE)).unwrap());
        let e = acquire(dir.path(), Duration::from_millis(30)).unwrap_err();
        assert_eq!(e.code, Code::Locked);
        drop(held);
        let again = acquire(dir.path(), Duration::ZERO).unwrap();
        #[cfg(unix)]
        assert_eq!(
            std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(dir.path().join(LOCK_FILE)).unwrap()),
            inode
        );
        drop(again);
    }

    #[test]
    fn readers_share_and_exclude_writers() {
        let dir = tempfile::tempdir().unwrap();
        let r1 = acquire_shared(dir.path(), Duration::ZERO).unwrap();
        let r2 = acquire_shared(dir.path(), Duration::ZERO).unwrap();
        assert_eq!(acquire(dir.path(), Duration::from_millis(20)).unwrap_err().code, Code::Locked);
        drop((r1, r2));
        let w = acquire(dir.path(), Duration::ZERO).unwrap();
        assert_eq!(acquire_shared(dir.path(), Duration::from_millis(20)).unwrap_err().code, Code::Locked);
        drop(w);
    }

    #[cfg(unix)]
    #[test]
    fn never_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join(".scriptorium")).unwrap();
        assert_eq!(acquire(dir.path(), Duration::ZERO).unwrap_err().code, Code::InvalidArgument);
        assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());
    }
}
