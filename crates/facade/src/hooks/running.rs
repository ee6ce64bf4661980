//! One background write per session at a time, and every trigger covered:
//! a write a hook starts while another of the same session runs is
//! *coalesced*. The first such trigger queues exactly one follow-up, which
//! waits for the running write and then writes what is pending by then; any
//! later trigger while that follow-up waits is absorbed by it (a forced
//! trigger makes it forced). So a session never has two writes at once, a
//! trigger never waits behind more than one, and the turns a trigger
//! recorded before it fired are always read by a write that starts after
//! it. (Two writes never write the same turns either way: the scheduler's
//! lock serialises them and marks what each wrote.)
//!
//! Three files per session under `.scriptorium/hooks/writing/`, each an
//! advisory lock the system releases when its process ends, however it
//! ends: `<name>.lock` is held by the running write, `<name>.next` by the
//! queued follow-up, and `<name>.gate` for an instant by whoever looks at
//! the other two. The gate file's length is the flag "an absorbed trigger
//! was forced" (0 or 1 byte), read and cleared by the write that starts
//! next.

use std::fs::{File, TryLockError};
use std::path::Path;
use std::time::{Duration, Instant};

use scriptorium_source_archive::Code;

use crate::error::Error;

/// The least a trigger waits for the gate.
const GATE_WAIT: Duration = Duration::from_secs(1);

/// Held while a session's background write runs (released when dropped).
#[derive(Debug)]
pub(super) struct Running {
    _file: File,
    /// Whether the write is forced: it was, or a trigger it absorbed was.
    pub(super) force: bool,
}

/// What a trigger gets.
#[derive(Debug)]
pub(super) enum Claim {
    /// Write now, holding the session's write.
    Run(Running),
    /// A queued follow-up covers this trigger: nothing to do.
    Absorbed,
}

/// The three lock files of `session`'s writes.
struct Files {
    gate: File,
    run: File,
    next: File,
    /// `run`'s workspace-relative path, for errors.
    run_rel: String,
}

impl Files {
    fn open(root: &Path, session: &str) -> Result<Files, Error> {
        let base = format!("{}/writing/{}", super::state::DIR, super::state::name_of(session.as_bytes()));
        let open = |ext: &str| super::state::lock_file(root, &format!("{base}.{ext}"));
        Ok(Files {
            gate: open("gate")?,
            run: open("lock")?,
            next: open("next")?,
            run_rel: format!("{base}.lock"),
        })
    }
}

/// Claims `session`'s write for a trigger (`force`: everything pending).
/// [`Claim::Run`] at once when no write of the session runs; else the
/// trigger queues the one follow-up, which waits up to `deadline` for the
/// running write (then `LOCKED`, retryable, its forced flag kept for the
/// next write), or is [`Claim::Absorbed`] by a follow-up already queued.
pub(super) fn claim(root: &Path, session: &str, force: bool, deadline: Duration) -> Result<Claim, Error> {
    let started = Instant::now();
    let f = Files::open(root, session)?;
    let io = |e: std::io::Error| {
        Error::new(Code::Io, format!("cannot claim the session's write: {e}")).at(&f.run_rel)
    };
    // The gate is held for an instant at a time: worth a second's wait even
    // for a trigger that may not wait for the running write.
    let gate = Gate::enter(&f.gate, deadline.max(GATE_WAIT), io)?;
    if take(&f.run).map_err(io)? {
        let forced = gate.take_forced().map_err(io)?;
        return Ok(Claim::Run(Running { _file: f.run, force: force || forced }));
    }
    let queued = take(&f.next).map_err(io)?;
    if force {
        gate.set_forced().map_err(io)?;
    }
    drop(gate);
    if !queued {
        return Ok(Claim::Absorbed);
    }
    // The follow-up: wait for the running write, then start under the gate,
    // so a trigger either sees this one queued (and is absorbed, its flag
    // read here) or sees the queue free after it (and queues the next).
    loop {
        if take(&f.run).map_err(io)? {
            break;
        }
        if started.elapsed() >= deadline {
            return Err(Error::new(
                Code::Locked,
                format!("another write of session {session:?} still ran after {} s", deadline.as_secs()),
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let rest = deadline.saturating_sub(started.elapsed()).max(GATE_WAIT);
    let gate = Gate::enter(&f.gate, rest, io)?;
    let forced = gate.take_forced().map_err(io)?;
    drop(f.next);
    drop(gate);
    Ok(Claim::Run(Running { _file: f.run, force: force || forced }))
}

/// Takes `file`'s lock if nobody holds it; whether it did.
fn take(file: &File) -> std::io::Result<bool> {
    match file.try_lock() {
        Ok(()) => Ok(true),
        Err(TryLockError::WouldBlock) => Ok(false),
        Err(TryLockError::Error(e)) => Err(e),
    }
}

/// The gate, held: released when dropped.
struct Gate<'a>(&'a File);

impl<'a> Gate<'a> {
    /// Enters the gate (held only for an instant by others), waiting up to
    /// `deadline`.
    fn enter(
        file: &'a File,
        deadline: Duration,
        io: impl Fn(std::io::Error) -> Error,
    ) -> Result<Gate<'a>, Error> {
        let started = Instant::now();
        while !take(file).map_err(&io)? {
            if started.elapsed() >= deadline {
                return Err(Error::new(Code::Locked, "the session's write gate stayed held"));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(Gate(file))
    }

    /// Notes that a forced trigger was absorbed.
    fn set_forced(&self) -> std::io::Result<()> {
        self.0.set_len(1)
    }

    /// Whether a forced trigger was absorbed since the last write started;
    /// clears it.
    fn take_forced(&self) -> std::io::Result<bool> {
        let forced = self.0.metadata()?.len() > 0;
        if forced {
            self.0.set_len(0)?;
        }
        Ok(forced)
    }
}

impl Drop for Gate<'_> {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

#[cfg(test)]
mod tests;
