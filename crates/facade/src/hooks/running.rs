//! One background write per session at a time: a write a hook starts while
//! another of the same session runs is coalesced (not forced: the running
//! one covers it) or waits its turn (forced: extract before discard must
//! see every turn).

use std::fs::{File, TryLockError};
use std::path::Path;
use std::time::{Duration, Instant};

use scriptorium_source_archive::Code;

use crate::error::Error;

/// Held while a session's background write runs (released when dropped).
#[derive(Debug)]
pub(super) struct Running(#[allow(dead_code)] File);

/// Claims `session`'s write: `None` when another runs and this one is not
/// forced; a forced one waits up to `deadline`, then `LOCKED` (retryable).
pub(super) fn claim(
    root: &Path,
    session: &str,
    force: bool,
    deadline: Duration,
) -> Result<Option<Running>, Error> {
    let rel = format!("{}/writing/{}.lock", super::state::DIR, super::state::name_of(session.as_bytes()));
    let file = super::state::lock_file(root, &rel)?;
    let io =
        |e: std::io::Error| Error::new(Code::Io, format!("cannot claim the session's write: {e}")).at(&rel);
    let started = Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(Some(Running(file))),
            Err(TryLockError::WouldBlock) if !force => return Ok(None),
            Err(TryLockError::WouldBlock) if started.elapsed() >= deadline => {
                return Err(Error::new(
                    Code::Locked,
                    format!("another write of session {session:?} still ran after {} s", deadline.as_secs()),
                ))
            }
            Err(TryLockError::WouldBlock) => std::thread::sleep(Duration::from_millis(50)),
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
    }
}
