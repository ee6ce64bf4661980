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
    let path = root.join(LOCK_FILE);
    // Never create or lock anything through a link that leaves the workspace.
    fsio::check_no_links(root, LOCK_FILE)?;
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
        match file.try_lock() {
            Ok(()) => return Ok(WriteLock { _file: file }),
            Err(TryLockError::WouldBlock) => {
                if start.elapsed() >= timeout {
                    return Err(Error::new(
                        Code::Locked,
                        format!(
                            "another writer holds {LOCK_FILE} (waited {} ms); nothing was written, try again",
                            timeout.as_millis()
                        ),
                    )
                    .at(LOCK_FILE));
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
