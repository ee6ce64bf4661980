//! The cross-process write lock of a workspace, `.scriptorium/write.lock`.
//!
//! Every writer takes it exclusively before reading what it will change, so
//! two writers never interleave. It is an advisory `flock`-style lock on a
//! file that is never unlinked or renamed; the operating system releases it
//! when the process ends, however it ends.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;
use std::time::{Duration, Instant};

/// The lock file, relative to the workspace root.
pub(crate) const LOCK_FILE: &str = ".scriptorium/write.lock";

/// A held write lock; released when dropped.
#[derive(Debug)]
pub(crate) struct WriteLock {
    _file: File,
}

/// Why the lock was not taken.
#[derive(Debug)]
pub(crate) enum LockError {
    /// Another writer held it for the whole timeout.
    Timeout(Duration),
    /// The lock file could not be created or locked.
    Io(std::io::Error),
    /// The way to the lock file goes through a symbolic link.
    Refused(scriptorium::archive::Error),
}

/// Takes the write lock of workspace `root`, waiting at most `timeout`.
pub(crate) fn acquire(root: &Path, timeout: Duration) -> Result<WriteLock, LockError> {
    let path = root.join(LOCK_FILE);
    // Never create or lock anything through a link that leaves the workspace.
    scriptorium::archive::fsio::check_no_links(root, LOCK_FILE).map_err(LockError::Refused)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(LockError::Io)?;
    }
    let file =
        OpenOptions::new().create(true).truncate(false).write(true).open(&path).map_err(LockError::Io)?;
    let start = Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(WriteLock { _file: file }),
            Err(TryLockError::WouldBlock) => {
                if start.elapsed() >= timeout {
                    return Err(LockError::Timeout(timeout));
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(TryLockError::Error(e)) => return Err(LockError::Io(e)),
        }
    }
}
