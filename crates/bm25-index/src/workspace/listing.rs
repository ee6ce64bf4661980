//! What the workspace holds: every indexable file with what a directory
//! listing says of it, and reading one file with the stamp it was read
//! under.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::SystemTime;

use scriptorium_source_archive::{fsio, Error};
use scriptorium_topic_markdown::files;

use crate::format::checksum;
use crate::segment::{Kind, Stamp, UnitInfo};

/// What a directory listing says of a file: enough to see it changed
/// without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Listed {
    pub(super) size: u64,
    pub(super) modified: i64,
    pub(super) changed: i64,
    pub(super) inode: u64,
}

impl Listed {
    pub(super) fn of(meta: &fs::Metadata) -> Listed {
        #[cfg(unix)]
        let (changed, inode) = {
            use std::os::unix::fs::MetadataExt;
            (meta.ctime().saturating_mul(1_000_000_000).saturating_add(meta.ctime_nsec()), meta.ino())
        };
        #[cfg(not(unix))]
        let (changed, inode) = (0, 0);
        Listed { size: meta.len(), modified: fsio::unix_nanos(meta.modified()), changed, inode }
    }

    /// The same file, unchanged as far as metadata can tell. The status
    /// change time catches an edit whose modification time was set back
    /// (`touch -d`, `cp -p`, `rsync -t`); the inode catches a replacement.
    pub(super) fn matches(&self, s: &Stamp) -> bool {
        self.size == s.size
            && self.modified == s.modified
            && self.changed == s.changed
            && self.inode == s.inode
    }

    /// The latest of its times, for the racy window.
    pub(super) fn latest(&self) -> i64 {
        self.modified.max(self.changed)
    }
}

/// Every indexable file.
pub(super) type Listing = BTreeMap<(Kind, String), Listed>;

pub(super) fn list_files(root: &Path) -> Result<Listing, Error> {
    let mut out = Listing::new();
    let err = |e: files::ListError| Error::io(e.error, "cannot list", &e.path);
    for (rel, meta) in files::list_md(root, &root.join("topics")).map_err(err)?.files {
        out.insert((Kind::Topic, rel), Listed::of(&meta));
    }
    let sources = root.join("sources");
    let providers = match fs::read_dir(&sources) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(Error::io(e, "cannot list", &sources)),
    };
    for entry in providers {
        let entry = entry.map_err(|e| Error::io(e, "cannot list", &sources))?;
        let ft = entry.file_type().map_err(|e| Error::io(e, "cannot stat", &entry.path()))?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else { continue };
        if !ft.is_dir() {
            continue;
        }
        for dir in [entry.path().join("_v2"), entry.path()] {
            let rd = match fs::read_dir(&dir) {
                Ok(rd) => rd,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io(e, "cannot list", &dir)),
            };
            let sub = if dir.ends_with("_v2") {
                format!("sources/{name}/_v2/")
            } else {
                format!("sources/{name}/")
            };
            for f in rd {
                let f = f.map_err(|e| Error::io(e, "cannot list", &dir))?;
                let ft = f.file_type().map_err(|e| Error::io(e, "cannot stat", &f.path()))?;
                let Some(file) = f.file_name().to_str().map(str::to_owned) else { continue };
                if ft.is_file() && file.ends_with(".md") {
                    let meta = f.metadata().map_err(|e| Error::io(e, "cannot stat", &f.path()))?;
                    out.insert((Kind::Source, format!("{sub}{file}")), Listed::of(&meta));
                }
            }
        }
    }
    Ok(out)
}

/// A file's bytes and the stamp they were read under.
pub(super) fn read(root: &Path, rel: &str, listed: Listed) -> Result<(Vec<u8>, Stamp), Error> {
    let path = root.join(rel);
    let read = fsio::unix_nanos(Ok(SystemTime::now()));
    let bytes = fs::read(&path).map_err(|e| Error::io(e, "cannot read", &path))?;
    let stamp = Stamp {
        size: bytes.len() as u64,
        modified: listed.modified,
        changed: listed.changed,
        inode: listed.inode,
        read,
        hash: checksum(&bytes),
    };
    Ok((bytes, stamp))
}

/// The kind of unit a workspace-relative path would be listed as, if any:
/// a `.md` file under `topics/`, or directly in `sources/<p>/` or
/// `sources/<p>/_v2/`.
fn kind_of(rel: &str) -> Option<Kind> {
    if !rel.ends_with(".md") {
        return None;
    }
    if rel.starts_with("topics/") {
        return Some(Kind::Topic);
    }
    let (_, rest) = rel.strip_prefix("sources/")?.split_once('/')?;
    let file = rest.strip_prefix("_v2/").unwrap_or(rest);
    (!file.contains('/')).then_some(Kind::Source)
}

/// The listing a writer's word gives without walking the workspace: every
/// indexed unit as the index recorded it, and the files in `changed` as
/// they are now (left out when gone or not a regular file).
pub(super) fn listing_after(
    root: &Path,
    indexed: &[UnitInfo<'_>],
    changed: &[String],
) -> Result<Listing, Error> {
    let mut out = Listing::new();
    for u in indexed {
        let s = u.stamp;
        out.insert(
            (u.kind, u.path.to_owned()),
            Listed { size: s.size, modified: s.modified, changed: s.changed, inode: s.inode },
        );
    }
    for rel in changed {
        let Some(kind) = kind_of(rel) else { continue };
        let key = (kind, rel.clone());
        let path = root.join(rel);
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_file() => {
                out.insert(key, Listed::of(&meta));
            }
            Ok(_) => {
                out.remove(&key);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                out.remove(&key);
            }
            Err(e) => return Err(Error::io(e, "cannot stat", &path)),
        }
    }
    Ok(out)
}
