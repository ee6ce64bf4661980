//! Every write the install makes goes through [`Disk`], so that tests can
//! stop it after any step or make any one call fail ([`Faults`]).
//!
//! A *crash* after step `i` makes every later call fail, cleanup included,
//! exactly as if the process had died there: the files stay as the first
//! `i` calls left them, and the next writer's recovery has to cope. An
//! *I/O error* at call `i` fails that call (once, or from then on); the
//! commit must then report the error and leave the old or the new revision.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What the fault seam does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Nothing: every call is made.
    Off,
    /// Calls after the first `n` are not made (the process "died").
    CrashAfter(usize),
    /// Call number `n` (from 0) fails; the others are made.
    FailOnce(usize),
    /// Calls from number `n` (from 0) on fail.
    FailFrom(usize),
}

/// A fault plan and a count of the write calls made so far.
#[derive(Debug)]
pub struct Faults {
    mode: Mode,
    calls: AtomicUsize,
}

impl Default for Faults {
    fn default() -> Faults {
        Faults::new(Mode::Off)
    }
}

impl Faults {
    /// A plan.
    pub fn new(mode: Mode) -> Faults {
        Faults { mode, calls: AtomicUsize::new(0) }
    }

    /// The write calls attempted so far.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// True once a [`Mode::CrashAfter`] plan has stopped calls.
    pub fn crashed(&self) -> bool {
        matches!(self.mode, Mode::CrashAfter(n) if self.calls() > n)
    }

    fn hit(&self, what: &str, path: &Path) -> io::Result<()> {
        let k = self.calls.fetch_add(1, Ordering::SeqCst);
        let fail = match self.mode {
            Mode::Off => false,
            Mode::CrashAfter(n) => k >= n,
            Mode::FailOnce(n) => k == n,
            Mode::FailFrom(n) => k >= n,
        };
        if fail {
            Err(io::Error::other(format!("injected fault at write call {k} ({what} {})", path.display())))
        } else {
            Ok(())
        }
    }
}

/// The write calls of the install, each one fault point.
#[derive(Debug, Clone, Copy)]
pub struct Disk<'f> {
    faults: &'f Faults,
}

impl<'f> Disk<'f> {
    /// Calls made through `faults`.
    pub fn new(faults: &'f Faults) -> Disk<'f> {
        Disk { faults }
    }

    /// Creates `path` (which must not exist), writes `bytes`, fsyncs it:
    /// three fault points (create, write, fsync).
    pub fn write_new(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        self.faults.hit("create", path)?;
        let mut opts = OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o644);
        let mut f = opts.open(path)?;
        self.faults.hit("write", path)?;
        f.write_all(bytes)?;
        self.faults.hit("fsync", path)?;
        f.sync_all()
    }

    /// Replaces `target` with `bytes` through a new file `tmp` renamed
    /// over it; with `durable`, the file and then `target`'s folder are
    /// fsynced. Fault points: create, write, (fsync), rename, (fsync
    /// folder). The temporary is removed when a step fails.
    pub fn replace(&self, tmp: &Path, target: &Path, bytes: &[u8], durable: bool) -> io::Result<()> {
        let made = (|| {
            self.faults.hit("create", tmp)?;
            let mut opts = OpenOptions::new();
            opts.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o644);
            let mut f = opts.open(tmp)?;
            self.faults.hit("write", tmp)?;
            f.write_all(bytes)?;
            if durable {
                self.faults.hit("fsync", tmp)?;
                f.sync_all()?;
            }
            drop(f);
            self.rename(tmp, target)
        })();
        // A crashed process cleans nothing up.
        if made.is_err() && !self.faults.crashed() {
            let _ = fs::remove_file(tmp);
        }
        made?;
        match target.parent() {
            Some(dir) if durable => self.sync_dir(dir),
            _ => Ok(()),
        }
    }

    /// Writes what `fill` writes over the file at `path` in place (created
    /// when missing) and cuts it to that length; with `durable`, fsyncs it.
    /// Far cheaper than [`Disk::replace`] for a large file that changes a
    /// little (the cached pages are reused, not allocated anew), but not
    /// atomic: a crash can leave it torn, so only files whose integrity
    /// something else vouches for are written so. Fault points: open,
    /// write, truncate, (fsync).
    pub fn overwrite(
        &self,
        path: &Path,
        durable: bool,
        fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()> {
        self.faults.hit("open", path)?;
        let mut opts = OpenOptions::new();
        opts.write(true).create(true).truncate(false);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o644);
        let mut f = opts.open(path)?;
        self.faults.hit("write", path)?;
        let mut out = Counted { inner: &mut f, len: 0 };
        fill(&mut out)?;
        let len = out.len;
        self.faults.hit("truncate", path)?;
        f.set_len(len)?;
        if durable {
            self.faults.hit("fsync", path)?;
            f.sync_all()?;
        }
        Ok(())
    }

    /// Appends `bytes` to `path` (created when missing) and fsyncs it.
    pub fn append(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        self.faults.hit("open for append", path)?;
        let mut f = OpenOptions::new().create(true).append(true).open(path)?;
        self.faults.hit("append", path)?;
        f.write_all(bytes)?;
        self.faults.hit("fsync", path)?;
        f.sync_all()
    }

    /// Renames `from` over `to`.
    pub fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.faults.hit("rename", to)?;
        fs::rename(from, to)
    }

    /// Removes a file; a missing one is fine.
    pub fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.faults.hit("remove", path)?;
        match fs::remove_file(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            r => r,
        }
    }

    /// Removes an empty folder; a missing or non-empty one is left.
    pub fn remove_empty_dir(&self, path: &Path) -> io::Result<()> {
        self.faults.hit("remove folder", path)?;
        let _ = fs::remove_dir(path);
        Ok(())
    }

    /// Creates a folder and its missing parents, fsyncing each parent a
    /// folder was created in.
    pub fn create_dirs(&self, dir: &Path) -> io::Result<()> {
        if dir.is_dir() {
            return Ok(());
        }
        if let Some(parent) = dir.parent() {
            if !parent.as_os_str().is_empty() {
                self.create_dirs(parent)?;
            }
        }
        self.faults.hit("create folder", dir)?;
        match fs::create_dir(dir) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => return Ok(()),
            r => r?,
        }
        match dir.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => self.sync_dir(parent),
            _ => Ok(()),
        }
    }

    /// Fsyncs a folder, making the renames and removals in it durable.
    pub fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.faults.hit("fsync folder", dir)?;
        #[cfg(unix)]
        File::open(dir)?.sync_all()?;
        Ok(())
    }
}

/// A writer that counts the bytes written through it.
struct Counted<'a> {
    inner: &'a mut File,
    len: u64,
}

impl Write for Counted<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
