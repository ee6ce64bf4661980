//! The page cache, for cold-start benchmarks (Linux; elsewhere nothing is
//! evicted and nothing is reported resident).
//!
//! [`evict_tree`] and [`evict`] drop files' pages from the page cache with
//! `posix_fadvise(POSIX_FADV_DONTNEED)` after writing back any dirty ones
//! (`fdatasync`: a dirty page cannot be dropped). No root is needed, and
//! only the files named are touched. Directory entries and inodes stay
//! cached (only `drop_caches`, which needs root, drops those), and so do
//! pages a running process has mapped (shared libraries such as libc).
//! [`resident`] counts the pages of files that are in the page cache, with
//! `mincore` over a mapping of each: a mapping made and never touched
//! reads nothing, so it measures without disturbing.

use std::fs::File;
use std::path::{Path, PathBuf};

/// Every regular file under `dir`, depth first (symbolic links are not
/// followed).
pub fn files_under(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() {
                out.push(entry.path());
            }
        }
    }
    Ok(out)
}

/// Drops `path`'s pages from the page cache. A file that vanished in the
/// meantime (a temporary renamed away) is skipped.
pub fn evict(path: &Path) -> std::io::Result<()> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    file.sync_data()?;
    fadvise_dontneed(&file)
}

/// Drops the pages of every file under `dir`; the number of files.
pub fn evict_tree(dir: &Path) -> std::io::Result<usize> {
    let files = files_under(dir)?;
    for f in &files {
        evict(f)?;
    }
    Ok(files.len())
}

#[cfg(target_os = "linux")]
fn fadvise_dontneed(file: &File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid open descriptor; offset 0 and length 0 mean the
    // whole file; the call only advises the kernel.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::from_raw_os_error(rc))
    }
}

#[cfg(not(target_os = "linux"))]
fn fadvise_dontneed(_file: &File) -> std::io::Result<()> {
    Ok(())
}

/// Pages of a set of files: how many are in the page cache, of how many.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Residency {
    /// Pages in the page cache.
    pub resident: u64,
    /// Pages of the files.
    pub pages: u64,
}

impl Residency {
    /// The resident share, 0 to 1 (0 for no pages).
    pub fn fraction(self) -> f64 {
        if self.pages == 0 {
            0.0
        } else {
            self.resident as f64 / self.pages as f64
        }
    }
}

/// The resident pages of `paths` (missing and empty files count nothing).
pub fn resident(paths: &[PathBuf]) -> std::io::Result<Residency> {
    let mut total = Residency::default();
    for p in paths {
        let file = match File::open(p) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        if file.metadata()?.len() == 0 {
            continue;
        }
        let r = resident_in(&file)?;
        total.resident += r.resident;
        total.pages += r.pages;
    }
    Ok(total)
}

fn resident_in(file: &File) -> std::io::Result<Residency> {
    let map = resident_pages(file)?;
    let resident = map.iter().filter(|&&r| r).count();
    Ok(Residency { resident: resident as u64, pages: map.len() as u64 })
}

/// The size of a page in bytes.
#[cfg(target_os = "linux")]
pub fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    u64::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096).max(1)
}

/// The size of a page in bytes (assumed off Linux).
#[cfg(not(target_os = "linux"))]
pub fn page_size() -> u64 {
    4096
}

/// Per page of `file`, in order, whether it is in the page cache (an empty
/// file has no page).
#[cfg(target_os = "linux")]
pub fn resident_pages(file: &File) -> std::io::Result<Vec<bool>> {
    if file.metadata()?.len() == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: the mapping is read-only and never read through: only its
    // address range is given to mincore.
    let map = unsafe { memmap2::Mmap::map(file) }?;
    let pages = map.len().div_ceil(page_size() as usize);
    let mut vec = vec![0u8; pages];
    // SAFETY: the range is the whole live mapping (page-aligned by mmap)
    // and `vec` holds one byte per page of it.
    let rc = unsafe { libc::mincore(map.as_ptr() as *mut libc::c_void, map.len(), vec.as_mut_ptr()) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(vec.iter().map(|&b| b & 1 == 1).collect())
}

/// Per page of `file`: nothing is reported resident off Linux.
#[cfg(not(target_os = "linux"))]
pub fn resident_pages(file: &File) -> std::io::Result<Vec<bool>> {
    let pages = file.metadata()?.len().div_ceil(page_size());
    Ok(vec![false; pages as usize])
}
