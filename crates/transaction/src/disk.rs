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

    /// A fault point for a step made outside this seam (the git history's
    /// writes): nothing is done, but a crash or a failure planned here
    /// stops the step.
    pub fn point(&self, what: &str, path: &Path) -> io::Result<()> {
        self.faults.hit(what, path)
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

    /// Rearranges the file at `path` in place into the document `plan`
    /// describes (each [`Place`] in document order, with its offset), whose
    /// length is `len`; with `durable`, fsyncs it. Runs of the file that
    /// keep their offset are not touched; the others are moved through one
    /// buffer (the ones moving towards the start first, in order, then the
    /// ones moving towards the end, from the last), then the new bytes are
    /// written and the file cut. Nothing the size of the file is held in
    /// memory, and only the bytes after the first change are written (old
    /// runs out of order are assembled in memory instead). Not atomic (see
    /// [`Disk::overwrite`]). Fault points: open, move (towards the start),
    /// move (towards the end), write, truncate, (fsync).
    pub fn rearrange(&self, path: &Path, plan: &[Place<'_>], len: u64, durable: bool) -> io::Result<()> {
        self.faults.hit("open", path)?;
        let mut opts = OpenOptions::new();
        opts.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o644);
        let f = opts.open(path)?;
        let Some(moves) = moves_of(plan, f.metadata()?.len()) else {
            return self.assemble_over(&f, path, plan, len, durable);
        };
        let mut buf = vec![0; MOVE_BUFFER];
        self.faults.hit("move", path)?;
        for m in moves.iter().filter(|m| m.to < m.from) {
            move_range(&f, m, &mut buf)?;
        }
        self.faults.hit("move", path)?;
        for m in moves.iter().rev().filter(|m| m.to > m.from) {
            move_range(&f, m, &mut buf)?;
        }
        self.faults.hit("write", path)?;
        for p in plan {
            if let Source::Bytes(b) = p.what {
                write_at(&f, b, p.at)?;
            }
        }
        self.faults.hit("truncate", path)?;
        f.set_len(len)?;
        if durable {
            self.faults.hit("fsync", path)?;
            f.sync_all()?;
        }
        Ok(())
    }

    /// [`Disk::rearrange`] for a plan whose old runs are out of order:
    /// the document assembled in memory from the file, then written over
    /// it. `InvalidInput` when an old run is not in the file.
    fn assemble_over(
        &self,
        f: &File,
        path: &Path,
        plan: &[Place<'_>],
        len: u64,
        durable: bool,
    ) -> io::Result<()> {
        let file_len = f.metadata()?.len();
        let mut doc = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        for p in plan {
            match p.what {
                Source::Bytes(b) => doc.extend_from_slice(b),
                Source::Old(at, n) => {
                    if at.checked_add(n).is_none_or(|end| end > file_len) {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidInput,
                            "a run past the end of the file",
                        ));
                    }
                    let start = doc.len();
                    doc.resize(start + n as usize, 0);
                    read_at(f, &mut doc[start..], at)?;
                }
            }
        }
        self.faults.hit("write", path)?;
        write_at(f, &doc, 0)?;
        self.faults.hit("truncate", path)?;
        f.set_len(doc.len() as u64)?;
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

/// Where one stretch of a rearranged document comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source<'a> {
    /// `(offset, length)` in the file as it is.
    Old(u64, u64),
    /// These bytes.
    Bytes(&'a [u8]),
}

/// One stretch of a rearranged document: what goes at offset `at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place<'a> {
    /// The offset in the new document.
    pub at: u64,
    /// What goes there.
    pub what: Source<'a>,
}

/// The buffer moves go through (small under test, so that they take many
/// chunks).
const MOVE_BUFFER: usize = if cfg!(test) { 64 } else { 1 << 18 };

/// One range of the file moved: `len` bytes from `from` to `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Move {
    from: u64,
    to: u64,
    len: u64,
}

/// The moves `plan` needs: consecutive old runs that shift alike are one
/// move (the new bytes between them are written after the moves, over
/// what the move brought along); runs that stay put need none.
fn moves_of(plan: &[Place<'_>], file_len: u64) -> Option<Vec<Move>> {
    let mut moves: Vec<Move> = Vec::new();
    let mut open: Option<Move> = None;
    let mut end_of_last = 0;
    for p in plan {
        // Between two runs that shift alike the new bytes take the room the
        // old ones had: the move carries the old, the writes after it put
        // the new.
        let Source::Old(from, len) = p.what else { continue };
        let end = from.checked_add(len).filter(|&e| e <= file_len)?;
        if from < end_of_last {
            return None;
        }
        end_of_last = end;
        match &mut open {
            Some(m) if m.to.wrapping_sub(m.from) == p.at.wrapping_sub(from) => m.len = end - m.from,
            _ => {
                moves.extend(open.take());
                open = Some(Move { from, to: p.at, len });
            }
        }
    }
    moves.extend(open);
    moves.retain(|m| m.from != m.to && m.len > 0);
    Some(moves)
}

fn read_at(f: &File, buf: &mut [u8], at: u64) -> io::Result<()> {
    #[cfg(unix)]
    return std::os::unix::fs::FileExt::read_exact_at(f, buf, at);
    #[cfg(not(unix))]
    {
        use std::io::{Read, Seek};
        let mut f = f;
        f.seek(io::SeekFrom::Start(at))?;
        f.read_exact(buf)
    }
}

fn write_at(f: &File, buf: &[u8], at: u64) -> io::Result<()> {
    #[cfg(unix)]
    return std::os::unix::fs::FileExt::write_all_at(f, buf, at);
    #[cfg(not(unix))]
    {
        use std::io::Seek;
        let mut f = f;
        f.seek(io::SeekFrom::Start(at))?;
        f.write_all(buf)
    }
}

/// Moves one range through `buf`, chunk by chunk, in the direction that
/// never overwrites a chunk not yet read.
fn move_range(f: &File, m: &Move, buf: &mut [u8]) -> io::Result<()> {
    let chunk = buf.len() as u64;
    let chunks = m.len.div_ceil(chunk);
    for k in 0..chunks {
        let k = if m.to < m.from { k } else { chunks - 1 - k };
        let off = k * chunk;
        let n = (m.len - off).min(chunk) as usize;
        read_at(f, &mut buf[..n], m.from + off)?;
        write_at(f, &buf[..n], m.to + off)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
