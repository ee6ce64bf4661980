//! The cross-process write lock of a workspace, `.scriptorium/write.lock`.
//!
//! Every writer takes it exclusively before reading what it will change, so
//! two writers never interleave. It is an advisory `flock`-style lock on a
//! file that is never unlinked or renamed; the operating system releases it
//! when the process ends, however it ends.
//!
//! A reader may find the workspace read-only (a mounted backup, a read-only
//! checkout, a folder it may read but not write). Its shared lock then opens
//! the lock file read-only, which `flock` allows and which still excludes
//! every writer. When the lock file does not exist and cannot be created,
//! the reader goes on without a lock: every writer creates that file before
//! it changes anything, so nobody who cannot create it has written there,
//! and a reader cannot take a lock in a folder it cannot write. (A writer
//! with more rights starting meanwhile is not excluded; the reader then
//! reads what is on disk, as it would without the lock.) [`WorkspaceLock::held`]
//! says which of these happened, so the caller can say so.
//!
//! An exclusive holder writes its process id and the time into the file,
//! and empties it again when it lets go ([`holder`]), so a refused writer
//! can say whom it waited for.

use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

use scriptorium_source_archive::fsio;

use crate::error::{Code, Error};

pub mod holder;

/// The lock file, relative to the workspace root.
pub const LOCK_FILE: &str = ".scriptorium/write.lock";

/// How long a background writer waits.
pub const BACKGROUND_TIMEOUT: Duration = Duration::from_secs(1);

/// How long an interactive writer waits by default.
pub const INTERACTIVE_TIMEOUT: Duration = Duration::from_secs(5);

/// A held write lock; released when dropped (an exclusive holder's
/// record emptied first).
#[derive(Debug)]
pub struct WorkspaceLock {
    file: Option<File>,
    held: Held,
    /// Whether this process recorded itself as the holder.
    recorded: bool,
}

impl Drop for WorkspaceLock {
    fn drop(&mut self) {
        if let (Some(file), true) = (&self.file, self.recorded) {
            // Still held here: the file closes (and the lock goes) after.
            holder::clear(file);
        }
    }
}

/// How a lock is held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Held {
    /// Through the lock file opened for writing, as every writer holds it.
    Writable,
    /// Shared, through the lock file opened read-only, because it could not
    /// be opened for writing (the reason): writers are still excluded, but
    /// nothing in the workspace can be written by this process.
    ReadOnly(String),
    /// Not at all: the lock file does not exist and could not be created
    /// (the reason), so no writer has written there; see the module page.
    Absent(String),
}

impl Held {
    /// Why the workspace cannot be written, when it cannot.
    pub fn not_writable(&self) -> Option<&str> {
        match self {
            Held::Writable => None,
            Held::ReadOnly(why) | Held::Absent(why) => Some(why),
        }
    }
}

impl WorkspaceLock {
    /// How the lock is held: always [`Held::Writable`] for a writer.
    pub fn held(&self) -> &Held {
        &self.held
    }
}

/// Takes the write lock of workspace `root`, waiting at most `timeout`:
/// `LOCKED` when another writer holds it that long, `INVALID_ARGUMENT` when
/// the way to the lock file goes through a symbolic link, `IO` otherwise.
pub fn acquire(root: &Path, timeout: Duration) -> Result<WorkspaceLock, Error> {
    take(root, LOCK_FILE, timeout, false)
}

/// Takes another lock file of the workspace (`rel`, under `.scriptorium/`)
/// exclusively, with the same rules and errors as [`acquire`]: for a layer
/// above that must serialise work longer than one transaction.
pub fn acquire_file(root: &Path, rel: &str, timeout: Duration) -> Result<WorkspaceLock, Error> {
    take(root, rel, timeout, false)
}

/// Takes the lock shared, as a reader: no writer can install while it is
/// held, and readers do not exclude each other. Same errors as [`acquire`];
/// on a workspace this process cannot write it still succeeds, read-only or
/// without a lock ([`WorkspaceLock::held`], the module page).
pub fn acquire_shared(root: &Path, timeout: Duration) -> Result<WorkspaceLock, Error> {
    take(root, LOCK_FILE, timeout, true)
}

/// Opens the lock file: for writing (creating it) when `write`, else
/// read-only.
type Opener = dyn Fn(&Path, bool) -> io::Result<File>;

fn open_file(path: &Path, write: bool) -> io::Result<File> {
    if write {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        OpenOptions::new().create(true).truncate(false).write(true).open(path)
    } else {
        File::open(path)
    }
}

/// Whether `e` says this process may not write there (permissions, a
/// read-only file system), as opposed to a failure worth reporting.
fn cannot_write(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem)
}

/// Opens the lock file for writing; for a reader that may not write, opens
/// it read-only, or goes without it when it does not exist.
fn open_lock(root: &Path, rel: &str, shared: bool, open: &Opener) -> Result<(Option<File>, Held), Error> {
    let path = root.join(rel);
    let e = match open(&path, true) {
        Ok(file) => return Ok((Some(file), Held::Writable)),
        Err(e) => e,
    };
    let refused = || Error::io(&e, "cannot open the write lock", &path).at(rel);
    if !shared || !cannot_write(&e) {
        return Err(refused());
    }
    let why = format!("cannot open {rel} for writing: {e}");
    match open(&path, false) {
        Ok(file) => Ok((Some(file), Held::ReadOnly(why))),
        Err(n) if n.kind() == io::ErrorKind::NotFound => Ok((None, Held::Absent(why))),
        Err(_) => Err(refused()),
    }
}

fn take(root: &Path, rel: &str, timeout: Duration, shared: bool) -> Result<WorkspaceLock, Error> {
    take_with(root, rel, timeout, shared, &open_file)
}

fn take_with(
    root: &Path,
    rel: &str,
    timeout: Duration,
    shared: bool,
    open: &Opener,
) -> Result<WorkspaceLock, Error> {
    // Never create or lock anything through a link that leaves the workspace.
    fsio::check_no_links(root, rel)?;
    let path = root.join(rel);
    let (file, held) = open_lock(root, rel, shared, open)?;
    let Some(file) = file else { return Ok(WorkspaceLock { file: None, held, recorded: false }) };
    let start = Instant::now();
    loop {
        let attempt = if shared { file.try_lock_shared() } else { file.try_lock() };
        match attempt {
            Ok(()) => {
                if !shared {
                    holder::record(&file);
                }
                return Ok(WorkspaceLock { file: Some(file), held, recorded: !shared });
            }
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
    fn an_exclusive_holder_says_who_it_is_and_readers_are_told_apart() {
        use holder::{probe, Holding};
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(probe(dir.path(), LOCK_FILE).unwrap(), Holding::Free, "no file yet: free");
        let held = acquire(dir.path(), Duration::ZERO).unwrap();
        let Holding::Held(Some(h)) = probe(dir.path(), LOCK_FILE).unwrap() else { panic!("held") };
        assert_eq!(h.pid, std::process::id());
        assert!(scriptorium_source_archive::timestamp::is_valid(&h.since), "{}", h.since);
        drop(held);
        assert_eq!(probe(dir.path(), LOCK_FILE).unwrap(), Holding::Free);
        // The record went with the holder.
        assert_eq!(std::fs::read(dir.path().join(LOCK_FILE)).unwrap(), b"");
        // Readers hold it shared: they write nothing, and a probe says only
        // readers hold it, without disturbing them.
        let r = acquire_shared(dir.path(), Duration::ZERO).unwrap();
        assert_eq!(probe(dir.path(), LOCK_FILE).unwrap(), Holding::Shared);
        assert_eq!(std::fs::read(dir.path().join(LOCK_FILE)).unwrap(), b"");
        assert_eq!(acquire(dir.path(), Duration::ZERO).unwrap_err().code, Code::Locked);
        let r2 = acquire_shared(dir.path(), Duration::ZERO).unwrap();
        drop((r, r2));
        assert_eq!(probe(dir.path(), LOCK_FILE).unwrap(), Holding::Free);
        assert!(acquire(dir.path(), Duration::ZERO).is_ok(), "a probe leaves nothing held");
        // Another lock file of the workspace records its holder the same way;
        // a holder that wrote nothing (an older version) is held, unnamed.
        let other = acquire_file(dir.path(), ".scriptorium/other.lock", Duration::ZERO).unwrap();
        assert!(matches!(probe(dir.path(), ".scriptorium/other.lock").unwrap(), Holding::Held(Some(_))));
        std::fs::write(dir.path().join(".scriptorium/other.lock"), b"").unwrap();
        assert_eq!(probe(dir.path(), ".scriptorium/other.lock").unwrap(), Holding::Held(None));
        drop(other);
    }

    /// Holds `rel` exclusively as a process that records nothing would
    /// (`flock(1)`, an older version): through its own open file.
    fn held_unrecorded(root: &Path, rel: &str) -> File {
        let f = open_file(&root.join(rel), true).unwrap();
        f.try_lock().unwrap();
        f
    }

    #[test]
    fn a_record_that_outlived_its_holder_names_nobody() {
        use holder::{probe, Holding};
        let dir = tempfile::tempdir().unwrap();
        let rel = ".scriptorium/scheduler.lock";
        // A holder that ended without letting go left its record; a process
        // that records nothing holds the lock now.
        let other = held_unrecorded(dir.path(), rel);
        let ended = serde_json::json!({"pid": u32::MAX, "since": "2026-01-02T03:04:05Z"}).to_string();
        std::fs::write(dir.path().join(rel), &ended).unwrap();
        let seen = probe(dir.path(), rel).unwrap();
        if cfg!(target_os = "linux") {
            assert_eq!(seen, Holding::Held(None), "a pid that does not run is not named");
        } else {
            assert!(matches!(seen, Holding::Held(_)), "{seen:?}");
        }
        // A record naming a process that runs (this one) is named.
        let me = serde_json::json!({"pid": std::process::id(), "since": "2026-01-02T03:04:05Z"}).to_string();
        std::fs::write(dir.path().join(rel), &me).unwrap();
        let Holding::Held(Some(h)) = probe(dir.path(), rel).unwrap() else { panic!("named") };
        assert_eq!(h.pid, std::process::id());
        drop(other);
        assert_eq!(probe(dir.path(), rel).unwrap(), Holding::Free);
        // A holder of ours that takes it over writes its own record and
        // empties it when it lets go.
        let ours = acquire_file(dir.path(), rel, Duration::ZERO).unwrap();
        let Holding::Held(Some(h)) = probe(dir.path(), rel).unwrap() else { panic!("named") };
        assert_ne!(h.since, "2026-01-02T03:04:05Z");
        drop(ours);
        assert_eq!(std::fs::read(dir.path().join(rel)).unwrap(), b"");
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

    /// Opens as a read-only workspace would: writing fails with `kind`.
    fn read_only(kind: io::ErrorKind) -> impl Fn(&Path, bool) -> io::Result<File> {
        move |path, write| if write { Err(io::Error::from(kind)) } else { open_file(path, false) }
    }

    #[test]
    fn a_reader_of_a_read_only_workspace_locks_read_only_and_still_excludes_writers() {
        for kind in [io::ErrorKind::ReadOnlyFilesystem, io::ErrorKind::PermissionDenied] {
            let dir = tempfile::tempdir().unwrap();
            drop(acquire(dir.path(), Duration::ZERO).unwrap());
            let r = take_with(dir.path(), LOCK_FILE, Duration::ZERO, true, &read_only(kind)).unwrap();
            assert!(matches!(r.held(), Held::ReadOnly(_)), "{:?}", r.held());
            assert!(r.held().not_writable().unwrap().contains(LOCK_FILE));
            assert_eq!(acquire(dir.path(), Duration::from_millis(20)).unwrap_err().code, Code::Locked);
            drop(r);
            // A writer held: the read-only reader waits for it like any.
            let w = acquire(dir.path(), Duration::ZERO).unwrap();
            let e = take_with(dir.path(), LOCK_FILE, Duration::from_millis(20), true, &read_only(kind));
            assert_eq!(e.unwrap_err().code, Code::Locked);
            drop(w);
        }
    }

    #[test]
    fn without_a_lock_file_that_cannot_be_created_a_reader_goes_on_unlocked() {
        let dir = tempfile::tempdir().unwrap();
        let r = take_with(
            dir.path(),
            LOCK_FILE,
            Duration::ZERO,
            true,
            &read_only(io::ErrorKind::ReadOnlyFilesystem),
        )
        .unwrap();
        assert!(matches!(r.held(), Held::Absent(_)), "{:?}", r.held());
        assert!(!dir.path().join(".scriptorium").exists(), "nothing was created");
    }

    #[test]
    fn a_writer_on_a_read_only_workspace_is_refused_naming_the_lock_file() {
        let dir = tempfile::tempdir().unwrap();
        drop(acquire(dir.path(), Duration::ZERO).unwrap());
        let e = take_with(
            dir.path(),
            LOCK_FILE,
            Duration::ZERO,
            false,
            &read_only(io::ErrorKind::ReadOnlyFilesystem),
        )
        .unwrap_err();
        assert_eq!(e.code, Code::Io);
        assert_eq!(e.path.as_deref(), Some(LOCK_FILE));
        assert!(e.message.contains("cannot open the write lock"), "{e}");
        // Any other failure is reported to a reader too, never skipped.
        let other = |_: &Path, _: bool| -> io::Result<File> { Err(io::Error::other("disk on fire")) };
        let e = take_with(dir.path(), LOCK_FILE, Duration::ZERO, true, &other).unwrap_err();
        assert_eq!(e.code, Code::Io);
    }
}
