//! The records of one archive file by anchor: what a topic block's
//! citation of `path#anchor` finds there (FORMAT.md §3, source links).

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;

use crate::id::SourceId;
use crate::v2::{self, Expect};
use crate::{fsio, legacy, pct};

/// One record as a citation finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cited {
    /// The record's source id (text form).
    pub source_id: String,
    /// Archived as pending (before any promotion).
    pub pending: bool,
    /// The body, verbatim.
    pub content: String,
}

/// The records of the archive file at the workspace-relative `path` that
/// holds `bytes`, by anchor. A v2 file (`sources/<p>/_v2/<t>.md`, canonical
/// PCT names) gives the frames of its valid prefix; a legacy file
/// (`sources/<p>/<t>.md`) gives its records that name an id and an anchor,
/// the first one of an anchor winning; any other path gives nothing.
pub fn by_anchor(path: &str, bytes: &[u8]) -> HashMap<String, Cited> {
    let mut out = HashMap::new();
    let Some(rest) = path.strip_prefix("sources/") else { return out };
    let Some((provider, file)) = rest.split_once('/') else { return out };
    if let Some(thread) = file.strip_prefix("_v2/").and_then(|f| f.strip_suffix(".md")) {
        let (Ok(p), Ok(t)) =
            (pct::decode_canonical(provider.as_bytes()), pct::decode_canonical(thread.as_bytes()))
        else {
            return out;
        };
        for f in v2::parse_prefix(bytes, Some(Expect { provider: &p, thread: &t })).frames {
            let Ok(id) = SourceId::parse(f.source_text) else { continue };
            let cited = Cited { source_id: id.text(), pending: f.pending, content: f.body.to_owned() };
            out.insert(id.anchor(), cited);
        }
    } else if !file.contains('/') {
        for r in legacy::parse(bytes) {
            if let (Some(id), Some(anchor)) = (r.id, r.anchor) {
                out.entry(anchor).or_insert(Cited {
                    source_id: id.text(),
                    pending: false,
                    content: r.content,
                });
            }
        }
    }
    out
}

/// [`by_anchor`] of the file on disk under `root`: nothing when the path
/// leaves `sources/`, passes through a symbolic link, or cannot be read.
pub fn read(root: &Path, path: &str) -> HashMap<String, Cited> {
    if !path.starts_with("sources/") || fsio::check_no_links(root, path).is_err() {
        return HashMap::new();
    }
    match fsio::read_file(&root.join(path)) {
        Ok(bytes) => by_anchor(path, &bytes),
        Err(_) => HashMap::new(),
    }
}

/// The archive files of a workspace read on demand, each once.
#[derive(Debug)]
pub struct Files<'r> {
    root: &'r Path,
    read: RefCell<HashMap<String, HashMap<String, Cited>>>,
}

impl<'r> Files<'r> {
    /// Nothing read yet, under `root`.
    pub fn new(root: &'r Path) -> Files<'r> {
        Files { root, read: RefCell::new(HashMap::new()) }
    }

    /// The content of record `source_id` at `path#anchor`, as on disk.
    pub fn content(&self, source_id: &str, path: &str, anchor: &str) -> Option<String> {
        let mut read = self.read.borrow_mut();
        let records = read.entry(path.to_owned()).or_insert_with(|| self::read(self.root, path));
        records.get(anchor).filter(|c| c.source_id == source_id).map(|c| c.content.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEAM: &[u8] = include_bytes!("../tests/data/team-1.md");

    #[test]
    fn a_v2_file_gives_its_records_by_anchor() {
        let records = by_anchor("sources/chat/_v2/team-1.md", TEAM);
        let m1 = &records["source-99a7df07"];
        assert_eq!(
            (m1.source_id.as_str(), m1.pending, m1.content.as_str()),
            ("chat/team-1/m1", false, "the budget is 50k")
        );
        // The names must be the file's own: a copy elsewhere gives nothing.
        assert!(by_anchor("sources/chat/_v2/other.md", TEAM).is_empty());
        assert!(by_anchor("topics/x.md", TEAM).is_empty());
        assert!(by_anchor("sources/chat/deeper/x/team-1.md", TEAM).is_empty());
    }

    #[test]
    fn a_legacy_file_gives_records_naming_an_id_and_an_anchor() {
        let legacy = "<a id=\"source-1\"></a>\n<!-- source:chat/t/m1 -->\n[2024-03-15T10:00:00Z] user: hello there\n\n[2024-03-15T10:01:00Z] user: no anchor\n";
        let records = by_anchor("sources/chat/t.md", legacy.as_bytes());
        assert_eq!(records.len(), 1, "{records:?}");
        assert_eq!(
            (records["source-1"].source_id.as_str(), records["source-1"].content.as_str()),
            ("chat/t/m1", "hello there")
        );
    }

    #[test]
    fn files_are_read_once_and_checked_for_the_id() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sources/chat/_v2")).unwrap();
        std::fs::write(dir.path().join("sources/chat/_v2/team-1.md"), TEAM).unwrap();
        let files = Files::new(dir.path());
        let path = "sources/chat/_v2/team-1.md";
        assert_eq!(
            files.content("chat/team-1/m1", path, "source-99a7df07").as_deref(),
            Some("the budget is 50k")
        );
        assert_eq!(files.content("chat/team-1/m2", path, "source-99a7df07"), None);
        std::fs::remove_file(dir.path().join(path)).unwrap();
        assert!(files.content("chat/team-1/m1", path, "source-99a7df07").is_some(), "read once");
        assert_eq!(Files::new(dir.path()).content("chat/team-1/m1", path, "source-99a7df07"), None);
    }
}
