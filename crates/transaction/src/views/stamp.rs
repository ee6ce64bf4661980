//! What the derived state was built from, and whether the views written
//! without fsync are still the ones written.
//!
//! `.scriptorium/derived.revision` (fsynced, replaced atomically) holds the
//! revision on its first line, then `boot <id>` (the boot the views were
//! written in, when the system names its boots) and one `view <path> <len>
//! <modified> <inode>` (or `view <path> absent`) line per view written
//! without fsync. A view is intact when its file still has that length,
//! modification time and inode: truncated, torn by hand, deleted or
//! replaced by an older copy, it does not, and is rebuilt. A writer removes
//! the record before it writes any view and writes it again after the
//! last, so a crash in between leaves no record to trust. Within one boot
//! the files are exactly what was written before the record (the page
//! cache is coherent); after a reboot a file written without fsync may
//! hold anything, so a writer that finds another boot id rebuilds every
//! view and the views cache's state.
//! Where the system has no boot id the views are written with fsync.

use std::path::Path;

use scriptorium_source_archive::fsio;

use crate::error::Error;

/// The record, relative to the workspace root.
pub const DERIVED_FROM: &str = ".scriptorium/derived.revision";

/// The views written without fsync (when the system has a boot id).
pub const UNSYNCED_VIEWS: [&str; 2] = ["recent_events.jsonl", "relations.json"];

/// What identifies a file's bytes as written, without reading them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// Length in bytes.
    pub len: u64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub modified: i64,
    /// Inode number (0 where the system has none).
    pub inode: u64,
}

impl Stamp {
    /// The stamp of the regular file at `path`; `None` when there is none
    /// (a symbolic link is not followed).
    pub fn of(path: &Path) -> Option<Stamp> {
        let m = std::fs::symlink_metadata(path).ok().filter(std::fs::Metadata::is_file)?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&m);
        #[cfg(not(unix))]
        let inode = 0;
        Some(Stamp { len: m.len(), modified: fsio::unix_nanos(m.modified()), inode })
    }
}

/// The id of the running boot, where the system names it (Linux).
pub fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let id = id.trim();
    (!id.is_empty() && id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')).then(|| id.to_owned())
}

/// The parsed record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Record {
    /// The revision the derived state describes.
    pub revision: String,
    /// The boot the unsynced views were written in.
    pub boot: Option<String>,
    /// Each unsynced view's stamp (`None`: the view was absent).
    pub views: Vec<(String, Option<Stamp>)>,
}

impl Record {
    /// The record of workspace `root` (empty when missing or unreadable).
    pub fn read(root: &Path) -> Record {
        let text = std::fs::read_to_string(root.join(DERIVED_FROM)).unwrap_or_default();
        let mut lines = text.lines();
        let mut r = Record { revision: lines.next().unwrap_or("").trim().to_owned(), ..Record::default() };
        for line in lines {
            let f: Vec<&str> = line.split(' ').collect();
            match f.as_slice() {
                ["boot", id] => r.boot = Some((*id).to_owned()),
                ["view", path, "absent"] => r.views.push(((*path).to_owned(), None)),
                ["view", path, len, modified, inode] => {
                    let stamp = (|| {
                        Some(Stamp {
                            len: len.parse().ok()?,
                            modified: modified.parse().ok()?,
                            inode: inode.parse().ok()?,
                        })
                    })();
                    match stamp {
                        Some(s) => r.views.push(((*path).to_owned(), Some(s))),
                        // A line that does not parse describes nothing.
                        None => r.views.clear(),
                    }
                }
                _ => {}
            }
        }
        r
    }

    /// The record of the views now on disk at `root`, for `revision`.
    pub fn now(root: &Path, revision: &str, boot: Option<String>) -> Record {
        let views = UNSYNCED_VIEWS.iter().map(|v| ((*v).to_owned(), Stamp::of(&root.join(v)))).collect();
        Record { revision: revision.to_owned(), boot, views }
    }

    /// True when every unsynced view is as recorded (and, when `boot` is
    /// given, they were written in this boot).
    pub fn views_intact(&self, root: &Path, boot: Option<&str>) -> bool {
        if self.views.len() != UNSYNCED_VIEWS.len() {
            return false;
        }
        if !self.same_boot(boot) {
            return false;
        }
        self.views.iter().all(|(path, stamp)| {
            UNSYNCED_VIEWS.contains(&path.as_str()) && Stamp::of(&root.join(path)) == *stamp
        })
    }

    /// False when `boot` is given and the record names another boot.
    pub fn same_boot(&self, boot: Option<&str>) -> bool {
        match (boot, self.boot.as_deref()) {
            (Some(now), Some(then)) => now == then,
            _ => true,
        }
    }

    /// Writes the record (fsynced: it is what makes the views trusted).
    pub fn write(&self, root: &Path) -> Result<(), Error> {
        let mut out = format!("{}\n", self.revision);
        if let Some(b) = &self.boot {
            out.push_str(&format!("boot {b}\n"));
        }
        for (path, stamp) in &self.views {
            match stamp {
                Some(s) => out.push_str(&format!("view {path} {} {} {}\n", s.len, s.modified, s.inode)),
                None => out.push_str(&format!("view {path} absent\n")),
            }
        }
        fsio::check_no_links(root, DERIVED_FROM)?;
        fsio::replace_file(root, &root.join(DERIVED_FROM), out.as_bytes())?;
        Ok(())
    }
}

/// True when a reader should have a writer rebuild the views first: the
/// unsynced views of workspace `root` are not the ones its record names
/// (truncated, torn by hand, deleted, replaced by an older copy). The boot
/// is not compared here: readers never read these views, and a rebuild
/// after every reboot is the next writer's cost, not a search's.
pub fn views_torn(root: &Path) -> bool {
    let r = Record::read(root);
    !r.revision.is_empty() && !r.views_intact(root, None)
}
