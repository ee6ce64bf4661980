//! Atomic whole-file replacement and memory-mapped reading.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};

/// The runtime folder for private temporaries, relative to the workspace.
pub const TMP_DIR: &str = ".scriptorium/tmp";

/// Bytes of a file: memory-mapped when large, read into memory otherwise.
#[derive(Debug)]
pub enum FileBytes {
    /// A small file read whole.
    Owned(Vec<u8>),
    /// A large file mapped read-only.
    Mapped(memmap2::Mmap),
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Owned(v) => v,
            FileBytes::Mapped(m) => m,
        }
    }
}

/// Files at least this large are memory-mapped by [`read_file`].
pub const MAP_THRESHOLD: u64 = 1 << 20;

/// Reads a file, memory-mapping it when it is at least [`MAP_THRESHOLD`].
///
/// The map is read-only. Archive files are only ever replaced by rename,
/// never modified in place, so a mapped file keeps its bytes while mapped;
/// a person truncating the file in place while it is mapped is the one case
/// this cannot guard against (reads would fault), which is the usual
/// obligation of memory-mapped I/O.
pub fn read_file(path: &Path) -> Result<FileBytes> {
    let file = File::open(path).map_err(|e| Error::io(e, "cannot open", path))?;
    let len = file.metadata().map_err(|e| Error::io(e, "cannot stat", path))?.len();
    if len >= MAP_THRESHOLD {
        // SAFETY: the map is read-only and archive files are replaced by
        // rename, never written in place (see above).
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(e, "cannot map", path))?;
        return Ok(FileBytes::Mapped(map));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    std::io::Read::read_to_end(&mut &file, &mut bytes).map_err(|e| Error::io(e, "cannot read", path))?;
    Ok(FileBytes::Owned(bytes))
}

/// Fsyncs a folder, so the entries created or renamed in it are durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        let d = File::open(dir).map_err(|e| Error::io(e, "cannot open directory", dir))?;
        d.sync_all().map_err(|e| Error::io(e, "cannot fsync directory", dir))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Creates `dir` and its missing parents, fsyncing each parent a new
/// directory was created in.
pub fn create_dir_durable(dir: &Path) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        if !parent.as_os_str().is_empty() {
            create_dir_durable(parent)?;
        }
    }
    match fs::create_dir(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => return Ok(()),
        Err(e) => return Err(Error::io(e, "cannot create directory", dir)),
    }
    if let Some(parent) = dir.parent() {
        if !parent.as_os_str().is_empty() {
            sync_dir(parent)?;
        }
    }
    Ok(())
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn temp_path(tmp_dir: &Path) -> PathBuf {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    tmp_dir.join(format!("write-{}-{nanos:x}-{n}.tmp", std::process::id()))
}

/// Replaces `target` (inside workspace `root`) with `bytes` atomically: a
/// private temporary under `<root>/.scriptorium/tmp/`, written, flushed and
/// fsynced, given mode 0644, renamed over the target, and the target's
/// directory fsynced. A crash leaves the old file or the new one, never a
/// mixture.
pub fn replace_file(root: &Path, target: &Path, bytes: &[u8]) -> Result<()> {
    replace(root, target, true, |f| f.write_all(bytes))
}

/// [`replace_file`] without the fsyncs, for caches whose loss after a
/// power failure costs only a rebuild (they carry what they describe, so a
/// stale or torn one is recognised and ignored). Still atomic with respect
/// to other processes and to a crash of this one.
pub fn replace_cache_file(root: &Path, target: &Path, bytes: &[u8]) -> Result<()> {
    replace(root, target, false, |f| f.write_all(bytes))
}

/// [`replace_cache_file`] with the bytes written by `fill` (buffered): a
/// large cache is never held whole in memory.
pub fn replace_cache_file_with(
    root: &Path,
    target: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<()> {
    replace(root, target, false, |f| {
        let mut out = io::BufWriter::with_capacity(1 << 16, f);
        fill(&mut out)?;
        out.flush()
    })
}

fn replace(
    root: &Path,
    target: &Path,
    durable: bool,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> Result<()> {
    let tmp_dir = root.join(TMP_DIR);
    create_dir_durable(&tmp_dir)?;
    let dir = target.parent().unwrap_or(Path::new("."));
    create_dir_durable(dir)?;
    let tmp = temp_path(&tmp_dir);
    let result = (|| {
        let mut opts = OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        let mut f = opts.open(&tmp).map_err(|e| Error::io(e, "cannot create", &tmp))?;
        fill(&mut f).map_err(|e| Error::io(e, "cannot write", &tmp))?;
        f.flush().map_err(|e| Error::io(e, "cannot flush", &tmp))?;
        if durable {
            f.sync_all().map_err(|e| Error::io(e, "cannot fsync", &tmp))?;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            f.set_permissions(fs::Permissions::from_mode(0o644))
                .map_err(|e| Error::io(e, "cannot set the mode of", &tmp))?;
        }
        drop(f);
        fs::rename(&tmp, target).map_err(|e| Error::io(e, "cannot rename into place", target))?;
        if durable {
            sync_dir(dir)?;
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Refuses to write through a symbolic link anywhere below `root` on the
/// way to `rel` (a `/`-separated workspace-relative path): nothing written
/// through this crate ever leaves its workspace.
pub fn check_no_links(root: &Path, rel: &str) -> Result<()> {
    let mut path = root.to_path_buf();
    for component in rel.split('/') {
        path.push(component);
        match fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => {
                let shown = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
                return Err(Error::invalid(format!(
                    "{} is a symbolic link; nothing is written through links, nothing was written",
                    shown.display()
                ))
                .with_path(shown));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(Error::io(e, "cannot stat", &path)),
        }
    }
    Ok(())
}

/// Nanoseconds since the Unix epoch of `t` (0 when unknown or earlier).
pub fn unix_nanos(t: std::io::Result<std::time::SystemTime>) -> i64 {
    t.ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// How long after a file's modification time (`modified`, ns) a reader of
/// it must wait before its size and times prove it unchanged: a write in the
/// same timestamp tick leaves them equal. Two seconds where the file system
/// keeps whole-second times (the time has no fraction), a tenth of a second
/// where it keeps finer ones (Linux file systems tick every few
/// milliseconds). Caches keyed by file metadata re-read a file read within
/// this window of its change.
pub fn racy_window(modified: i64) -> i64 {
    if modified % 1_000_000_000 == 0 {
        2_000_000_000
    } else {
        100_000_000
    }
}
