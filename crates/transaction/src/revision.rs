//! The revision of a workspace (FORMAT.md §6): SHA-256 over the sorted
//! workspace-relative paths and bytes of the regular files under `topics/`
//! and `sources/`, as 64 hex digits.
//!
//! Exactly: the files are sorted by path bytes (`/`-separated), and the
//! revision is SHA-256 of, for each file in that order, its path bytes, one
//! NUL byte, and the 32-byte SHA-256 of its contents. It changes whenever a
//! path or a byte under `topics/` or `sources/` changes (an edit in an editor
//! included) and never because of derived views or `.scriptorium/`.
//!
//! Cost: the per-file hashes are cached in `.scriptorium/revision.cache` with
//! each file's size and modification time, so an unchanged workspace costs
//! one directory walk and one `stat` per file; only files whose size or time
//! changed — or that were modified just before they were hashed, within one
//! timestamp tick — are read again.

use std::collections::HashMap;
use std::fs;
use std::path::Path;
use std::time::SystemTime;

use scriptorium_source_archive::fsio::{racy_window, unix_nanos};
use sha2::{Digest, Sha256};

use crate::error::Error;

/// The cache file, relative to the workspace.
pub const CACHE: &str = ".scriptorium/revision.cache";

const MAGIC: &[u8; 8] = b"SCRREV2\n";

/// A computed revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    /// 64 lowercase hex digits.
    pub hex: String,
    /// Files covered.
    pub files: usize,
    /// Files whose bytes were read (not served from the cache).
    pub hashed: usize,
    /// Every file's path bytes and content hash, sorted by path.
    pub tree: Vec<(Vec<u8>, [u8; 32])>,
}

impl Revision {
    /// The content hash of the file at workspace-relative `path`.
    pub fn hash_of(&self, path: &str) -> Option<[u8; 32]> {
        let k = self.tree.binary_search_by(|(p, _)| p.as_slice().cmp(path.as_bytes())).ok()?;
        Some(self.tree[k].1)
    }

    /// The revision the workspace has once each `(path, new bytes)` is
    /// written (`None`: removed); nothing is read.
    pub fn after(&self, changes: &[(String, Option<Vec<u8>>)]) -> String {
        let mut tree: std::collections::BTreeMap<Vec<u8>, [u8; 32]> = self.tree.iter().cloned().collect();
        for (path, bytes) in changes {
            match bytes {
                Some(b) => tree.insert(path.as_bytes().to_vec(), Sha256::digest(b).into()),
                None => tree.remove(path.as_bytes()),
            };
        }
        hex_of(tree.iter().map(|(p, h)| (p.as_slice(), h)))
    }
}

fn hex_of<'a>(files: impl Iterator<Item = (&'a [u8], &'a [u8; 32])>) -> String {
    let mut h = Sha256::new();
    for (path, hash) in files {
        h.update(path);
        h.update([0u8]);
        h.update(hash);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    size: u64,
    modified: i64,
    /// The status change time: an edit whose modification time was set
    /// back (`touch -r`, `cp -p`, `rsync -t`) still moves it.
    changed: i64,
    /// A file replaced by another (a rename over it) has another inode.
    inode: u64,
    hashed_at: i64,
    hash: [u8; 32],
}

/// (status change time in nanoseconds, inode) of a file.
fn change_stamp(meta: &fs::Metadata) -> (i64, u64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (meta.ctime().saturating_mul(1_000_000_000).saturating_add(meta.ctime_nsec()), meta.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        (0, 0)
    }
}

fn name_bytes(name: &std::ffi::OsStr) -> Vec<u8> {
    #[cfg(unix)]
    {
        std::os::unix::ffi::OsStrExt::as_bytes(name).to_vec()
    }
    #[cfg(not(unix))]
    {
        name.to_string_lossy().into_owned().into_bytes()
    }
}

/// Every regular file below `dir` (links are not followed), with its
/// workspace-relative path bytes and metadata.
fn walk(dir: &Path, rel: &[u8], out: &mut Vec<(Vec<u8>, fs::Metadata)>) -> Result<(), Error> {
    let rd = match fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(&e, "cannot list", dir)),
    };
    for entry in rd {
        let entry = entry.map_err(|e| Error::io(&e, "cannot list", dir))?;
        let ft = entry.file_type().map_err(|e| Error::io(&e, "cannot stat", &entry.path()))?;
        let mut path = rel.to_vec();
        path.push(b'/');
        path.extend(name_bytes(&entry.file_name()));
        if ft.is_dir() {
            walk(&entry.path(), &path, out)?;
        } else if ft.is_file() {
            let meta = entry.metadata().map_err(|e| Error::io(&e, "cannot stat", &entry.path()))?;
            out.push((path, meta));
        }
    }
    Ok(())
}

fn read_cache(root: &Path) -> HashMap<Vec<u8>, Entry> {
    let mut out = HashMap::new();
    let Ok(bytes) = fs::read(root.join(CACHE)) else { return out };
    if bytes.len() < MAGIC.len() + 32 || &bytes[..8] != MAGIC {
        return out;
    }
    let (body, sum) = bytes.split_at(bytes.len() - 32);
    if Sha256::digest(body).as_slice() != sum {
        return out;
    }
    let mut at = 8;
    let take = |at: &mut usize, n: usize| -> Option<&[u8]> {
        let s = body.get(*at..*at + n)?;
        *at += n;
        Some(s)
    };
    while at < body.len() {
        let parsed = (|| {
            let len = u32::from_le_bytes(take(&mut at, 4)?.try_into().ok()?) as usize;
            let path = take(&mut at, len)?.to_vec();
            let size = u64::from_le_bytes(take(&mut at, 8)?.try_into().ok()?);
            let modified = i64::from_le_bytes(take(&mut at, 8)?.try_into().ok()?);
            let changed = i64::from_le_bytes(take(&mut at, 8)?.try_into().ok()?);
            let inode = u64::from_le_bytes(take(&mut at, 8)?.try_into().ok()?);
            let hashed_at = i64::from_le_bytes(take(&mut at, 8)?.try_into().ok()?);
            let hash: [u8; 32] = take(&mut at, 32)?.try_into().ok()?;
            Some((path, Entry { size, modified, changed, inode, hashed_at, hash }))
        })();
        match parsed {
            Some((p, e)) => {
                out.insert(p, e);
            }
            None => return HashMap::new(),
        }
    }
    out
}

fn write_cache(root: &Path, entries: &[(Vec<u8>, Entry)]) -> Result<(), Error> {
    let mut body = MAGIC.to_vec();
    for (path, e) in entries {
        body.extend_from_slice(&(path.len() as u32).to_le_bytes());
        body.extend_from_slice(path);
        body.extend_from_slice(&e.size.to_le_bytes());
        body.extend_from_slice(&e.modified.to_le_bytes());
        body.extend_from_slice(&e.changed.to_le_bytes());
        body.extend_from_slice(&e.inode.to_le_bytes());
        body.extend_from_slice(&e.hashed_at.to_le_bytes());
        body.extend_from_slice(&e.hash);
    }
    let sum = Sha256::digest(&body);
    body.extend_from_slice(&sum);
    scriptorium_source_archive::fsio::replace_cache_file(root, &root.join(CACHE), &body)?;
    Ok(())
}

/// The workspace's current revision. Updates the cache when the workspace
/// has a `.scriptorium/` folder (best effort: a cache that cannot be written
/// costs time next call, never a wrong revision).
pub fn compute(root: &Path) -> Result<Revision, Error> {
    let mut files = Vec::new();
    walk(&root.join("topics"), b"topics", &mut files)?;
    walk(&root.join("sources"), b"sources", &mut files)?;
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let cache = read_cache(root);
    let mut entries = Vec::with_capacity(files.len());
    let mut hashed = 0;
    let mut dirty = cache.len() != files.len();
    for (path, meta) in files {
        let modified = unix_nanos(meta.modified());
        let (changed, inode) = change_stamp(&meta);
        let cached = cache.get(&path).filter(|e| {
            e.size == meta.len()
                && e.modified == modified
                && e.changed == changed
                && e.inode == inode
                && modified.max(changed) < e.hashed_at - racy_window(modified)
        });
        let entry = match cached {
            Some(e) => e.clone(),
            None => {
                let full = os_path(root, &path);
                let hashed_at = unix_nanos(Ok(SystemTime::now()));
                let bytes = fs::read(&full).map_err(|e| Error::io(&e, "cannot read", &full))?;
                hashed += 1;
                dirty = true;
                Entry {
                    size: bytes.len() as u64,
                    modified,
                    changed,
                    inode,
                    hashed_at,
                    hash: Sha256::digest(&bytes).into(),
                }
            }
        };
        entries.push((path, entry));
    }
    let hex = hex_of(entries.iter().map(|(p, e)| (p.as_slice(), &e.hash)));
    let entries_len = entries.len();
    if dirty && root.join(".scriptorium").is_dir() {
        // Best effort, see above.
        let _ = write_cache(root, &entries);
    }
    let tree = entries.into_iter().map(|(p, e)| (p, e.hash)).collect();
    Ok(Revision { hex, files: entries_len, hashed, tree })
}

/// The on-disk path of workspace-relative path bytes (which may not be UTF-8).
fn os_path(root: &Path, rel: &[u8]) -> std::path::PathBuf {
    #[cfg(unix)]
    {
        root.join(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(rel))
    }
    #[cfg(not(unix))]
    {
        root.join(String::from_utf8_lossy(rel).as_ref())
    }
}

#[cfg(test)]
mod tests {
    //! The revision follows the files and only the files.
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    #[test]
    fn follows_topics_and_sources_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        crate::layout::ensure(root).unwrap();
        let empty = compute(root).unwrap();
        assert_eq!(empty.hex.len(), 64);
        write(root, "topics/a.md", "alpha");
        let a = compute(root).unwrap();
        assert_ne!(a.hex, empty.hex);
        // Derived views and runtime state never change it.
        write(root, "core.md", "derived");
        write(root, "timeline/2026/01/01.md", "derived");
        write(root, ".scriptorium/history.jsonl", "{}");
        let again = compute(root).unwrap();
        assert_eq!(again.hex, a.hex);
        // A same-size edit right away is seen (the racy window).
        write(root, "topics/a.md", "alphb");
        let b = compute(root).unwrap();
        assert_ne!(b.hex, a.hex);
        // A rename is a change; a move back restores the revision.
        fs::rename(root.join("topics/a.md"), root.join("topics/b.md")).unwrap();
        let c = compute(root).unwrap();
        assert_ne!(c.hex, b.hex);
        fs::rename(root.join("topics/b.md"), root.join("topics/a.md")).unwrap();
        assert_eq!(compute(root).unwrap().hex, b.hex);
        write(root, "sources/chat/_v2/t.md", "x");
        assert_ne!(compute(root).unwrap().hex, b.hex);
    }

    #[test]
    fn a_same_size_edit_with_its_time_set_back_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        crate::layout::ensure(root).unwrap();
        write(root, "topics/a.md", "block ^c1");
        let p = root.join("topics/a.md");
        let old_time = fs::metadata(&p).unwrap().modified().unwrap();
        let wait = u64::try_from(racy_window(unix_nanos(Ok(old_time)))).unwrap() + 50_000_000;
        std::thread::sleep(std::time::Duration::from_nanos(wait));
        let before = compute(root).unwrap();
        let settled = compute(root).unwrap();
        assert_eq!(settled.hashed, 0, "served from the cache once settled");
        std::thread::sleep(std::time::Duration::from_nanos(wait));
        write(root, "topics/a.md", "block ^a9");
        fs::File::options().write(true).open(&p).unwrap().set_modified(old_time).unwrap();
        assert_eq!(fs::metadata(&p).unwrap().modified().unwrap(), old_time);
        assert_ne!(compute(root).unwrap().hex, before.hex);
    }

    #[test]
    fn equals_the_definition_and_uses_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        crate::layout::ensure(root).unwrap();
        write(root, "topics/z.md", "zz");
        write(root, "topics/people/ada.md", "ada");
        write(root, "sources/p/_v2/t.md", "records");
        let mut want = Sha256::new();
        for (p, bytes) in
            [("sources/p/_v2/t.md", "records"), ("topics/people/ada.md", "ada"), ("topics/z.md", "zz")]
        {
            want.update(p.as_bytes());
            want.update([0u8]);
            want.update(Sha256::digest(bytes.as_bytes()));
        }
        let want: String = want.finalize().iter().map(|b| format!("{b:02x}")).collect();
        let first = compute(root).unwrap();
        assert_eq!(first.hex, want);
        assert_eq!(first.files, 3);
        // Once the files are older than the racy window, nothing is re-read.
        assert_eq!(first.hashed, 3);
        let modified = unix_nanos(fs::metadata(root.join("topics/z.md")).unwrap().modified());
        let wait = u64::try_from(racy_window(modified)).unwrap() + 50_000_000;
        std::thread::sleep(std::time::Duration::from_nanos(wait));
        // Hashed within the window of their change: read once more, then
        // served from the cache.
        assert_eq!(compute(root).unwrap().hex, want);
        let third = compute(root).unwrap();
        assert_eq!(third.hex, want);
        assert_eq!(third.hashed, 0, "{third:?}");
        // A damaged cache is ignored, never believed.
        fs::write(root.join(CACHE), b"SCRREV1\ngarbage-garbage-garbage-garbage-garbage").unwrap();
        assert_eq!(compute(root).unwrap().hex, want);
    }
}
