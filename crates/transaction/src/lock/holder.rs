//! Who holds a lock: every exclusive holder writes its process id and the
//! time it took the lock into the lock file (best effort, never fsynced),
//! and empties the file again before it lets go, so that a process refused
//! with `LOCKED` can tell a person which process to wait for.
//!
//! A record can still outlive its holder: one that ended without letting
//! go (killed, crashed) leaves it, and a process that holds the lock
//! without recording itself (an older version, `flock(1)`) leaves the
//! previous holder's record in place. So [`probe`] names a recorded process
//! only when it still runs (on Linux, when `/proc/<pid>` exists; where that
//! cannot be told, the record is taken as written, which its emptying on
//! release makes right unless a holder ended without letting go).
//!
//! Readers, who hold the write lock shared, write nothing; [`probe`] tells
//! a lock only they hold from a free one.

use std::fs::{File, TryLockError};
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use scriptorium_source_archive::{fsio, timestamp};

use crate::error::{Code, Error};

/// What an exclusive holder recorded of itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// Its process id.
    pub pid: u32,
    /// When it took the lock (UTC, `YYYY-MM-DDTHH:MM:SSZ`).
    pub since: String,
}

/// Whether a lock is held right now, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holding {
    /// Nobody holds it (or its file does not exist).
    Free,
    /// Somebody holds it exclusively: who, when the file names a process
    /// that still runs (`None`: the holder did not record itself, or has
    /// not yet, or the record names a process that has ended).
    Held(Option<Holder>),
    /// Only readers hold it, shared (they record nothing).
    Shared,
}

/// Records this process as the holder of the lock open in `file`.
pub(super) fn record(file: &File) {
    let me = Holder { pid: std::process::id(), since: timestamp::now() };
    let Ok(bytes) = serde_json::to_vec(&me) else { return };
    let mut f = file;
    let written = f.set_len(0).and_then(|()| f.seek(SeekFrom::Start(0))).and_then(|_| f.write_all(&bytes));
    if let Err(e) = written {
        tracing::debug!(why = %e, "cannot record the lock's holder");
    }
}

/// Empties the record of the lock open in `file`, which this process
/// holds exclusively and is about to let go.
pub(super) fn clear(file: &File) {
    if let Err(e) = file.set_len(0) {
        tracing::debug!(why = %e, "cannot clear the lock's holder");
    }
}

/// Whether the lock file `rel` of workspace `root` is held, how, and by
/// whom. Looks without waiting and never creates the file: it takes the
/// lock for an instant when it can (exclusively, then shared), so it
/// delays a writer or a reader by one retry at most and never blocks.
///
/// Errors: `INVALID_ARGUMENT` when the way to the file goes through a
/// symbolic link; `IO` when it cannot be opened or locked.
pub fn probe(root: &Path, rel: &str) -> Result<Holding, Error> {
    fsio::check_no_links(root, rel)?;
    let path = root.join(rel);
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Holding::Free),
        Err(e) => return Err(Error::io(&e, "cannot open the lock file", &path).at(rel)),
    };
    // Where an exclusive lock cannot be taken through a read-only file
    // (a lock emulated over `fcntl`), only the shared look below tells.
    let readers = match file.try_lock() {
        Ok(()) => return Ok(Holding::Free),
        Err(TryLockError::WouldBlock) => true,
        Err(TryLockError::Error(_)) => false,
    };
    match file.try_lock_shared() {
        Ok(()) if readers => Ok(Holding::Shared),
        Ok(()) => Ok(Holding::Free),
        Err(TryLockError::WouldBlock) => {
            let holder: Option<Holder> =
                std::fs::read(&path).ok().and_then(|b| serde_json::from_slice(&b).ok());
            Ok(Holding::Held(holder.filter(|h| runs(h.pid))))
        }
        Err(TryLockError::Error(e)) => {
            Err(Error::new(Code::Io, format!("cannot look at {rel}: {e}")).at(rel))
        }
    }
}

/// Whether process `pid` runs: on Linux, whether `/proc/<pid>` exists
/// (where `/proc` is not mounted, it cannot be told: `true`); elsewhere
/// `true`, the record taken as written.
fn runs(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    if cfg!(target_os = "linux") && Path::new("/proc/self").exists() {
        return Path::new("/proc").join(pid.to_string()).exists();
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_runs_and_an_ended_one_does_not() {
        assert!(runs(std::process::id()));
        if cfg!(target_os = "linux") {
            // Above the largest pid Linux hands out (2^22).
            assert!(!runs(u32::MAX));
            let mut child = std::process::Command::new("true").spawn().unwrap();
            let pid = child.id();
            child.wait().unwrap();
            // Reaped: its pid is free (reused only after the counter wraps).
            assert!(!runs(pid) || Path::new("/proc").join(pid.to_string()).exists());
        }
    }
}
