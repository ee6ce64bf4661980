//! Who holds a lock: every exclusive holder writes its process id and the
//! time it took the lock into the lock file (best effort, never fsynced;
//! the file is only ever read while the lock is held), so that a process
//! refused with `LOCKED` can tell a person which process to wait for.
//!
//! Readers, who hold the write lock shared, write nothing: a lock that is
//! held only shared counts as free here.

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

/// Whether a lock is held exclusively right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holding {
    /// Nobody holds it exclusively (or its file does not exist).
    Free,
    /// Somebody does: who, when the file says (a holder of an older version
    /// recorded nothing, and a holder that just took it may not have yet).
    Held(Option<Holder>),
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

/// Whether the lock file `rel` of workspace `root` is held exclusively, and
/// by whom. Looks without waiting, never creates the file, and takes the
/// lock shared for an instant when it is free (so it never excludes a
/// reader, and delays a writer by one retry at most).
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
    match file.try_lock_shared() {
        Ok(()) => Ok(Holding::Free),
        Err(TryLockError::WouldBlock) => {
            let holder = std::fs::read(&path).ok().and_then(|b| serde_json::from_slice(&b).ok());
            Ok(Holding::Held(holder))
        }
        Err(TryLockError::Error(e)) => {
            Err(Error::new(Code::Io, format!("cannot look at {rel}: {e}")).at(rel))
        }
    }
}
