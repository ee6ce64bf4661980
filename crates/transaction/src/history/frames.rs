//! Tamper evidence for one archive file: every frame a commit holds must
//! still be in a later version of the file, byte-identical and in the same
//! relative order. New frames may only be added (at the end, or between
//! committed ones, where a sync merge's canonical order puts them); only a
//! resolution may give a record another version of itself ([`Rule`]).
//!
//! A v2 file is compared frame by frame (its marker line and anything
//! after its valid prefix count as frames without an id); any other file
//! under `sources/` (a legacy one, read and never written) must keep its
//! committed bytes as a prefix.

use serde::{Deserialize, Serialize};

use scriptorium_source_archive::v2::{self, Expect};
use scriptorium_source_archive::SourceId;

/// How a committed frame was broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Breach {
    /// Its bytes changed (a frame with its id is there, different).
    Changed,
    /// It is gone.
    Removed,
    /// It is there, byte-identical, but out of its committed order.
    Reordered,
    /// A frame was put between committed ones, which only a merge may do
    /// (the source id is the inserted frame's).
    Inserted,
}

/// What a new version of an archive file may do besides keeping every
/// committed frame, byte-identical, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Add frames after the committed ones: every transaction, every edit.
    Append,
    /// Also put frames between committed ones, in a sync's canonical
    /// order (a commit whose writer is `sync`).
    Merge,
    /// Also give a committed frame the bytes of another frame with its
    /// source id: a conflict's resolution (writer `resolve`).
    Resolve,
    /// Only keep every committed record, in any version and any order: a
    /// merge commit (two parents) against each parent. It holds one version
    /// of a record its parents hold differently, and the canonical order
    /// cannot keep two orders of the same records (unrelated histories).
    Union,
}

impl Breach {
    /// The word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Breach::Changed => "changed",
            Breach::Removed => "removed",
            Breach::Reordered => "reordered",
            Breach::Inserted => "inserted",
        }
    }
}

/// A committed frame an archive file no longer holds as committed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tampered {
    /// The workspace-relative archive file.
    pub path: String,
    /// The first broken frame's source id (`None`: the file's marker line,
    /// a legacy file, or bytes that are not a frame).
    pub source_id: Option<String>,
    /// What happened to it.
    pub breach: Breach,
}

impl std::fmt::Display for Tampered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.source_id {
            Some(id) => write!(f, "{}: the committed record {id} was {}", self.path, self.breach.as_str()),
            None => write!(f, "{}: committed bytes were {}", self.path, self.breach.as_str()),
        }
    }
}

/// One committed unit of a file: its bytes and its source id.
struct Piece<'a> {
    bytes: &'a [u8],
    id: Option<String>,
}

/// The parse of the v2 file at `path`, or `None` when it is not one.
pub(crate) fn parse<'a>(path: &str, bytes: &'a [u8]) -> Option<v2::Parsed<'a>> {
    let (provider, thread) = scriptorium_source_archive::id::conversation_of(path)?;
    Some(v2::parse_prefix(bytes, Some(Expect { provider: &provider, thread: &thread })))
}

/// Whether `old` is kept whole by every file that starts with it: a legacy
/// file, or a v2 file that parses to its end (its frames say their length,
/// so bytes added after it never change them).
fn complete(path: &str, old: &[u8]) -> bool {
    parse(path, old).is_none_or(|p| p.valid_len == old.len())
}

/// The pieces of a v2 file at `path`, or `None` when it is not one.
fn pieces<'a>(path: &str, bytes: &'a [u8]) -> Option<Vec<Piece<'a>>> {
    let parsed = parse(path, bytes)?;
    let mut out = Vec::with_capacity(parsed.frames.len() + 2);
    let first = parsed.frames.first().map_or(parsed.valid_len, |f| f.offset);
    out.push(Piece { bytes: &bytes[..first], id: None });
    for f in &parsed.frames {
        let id = SourceId::parse(f.source_text).map(|i| i.text()).ok();
        out.push(Piece { bytes: &bytes[f.offset..f.offset + f.len], id });
    }
    if parsed.valid_len < bytes.len() {
        out.push(Piece { bytes: &bytes[parsed.valid_len..], id: None });
    }
    Some(out)
}

/// The source ids of the frames of the v2 archive file at `path`, in file
/// order (none for any other file).
pub(super) fn source_ids(path: &str, bytes: &[u8]) -> Vec<String> {
    pieces(path, bytes).unwrap_or_default().into_iter().filter_map(|p| p.id).collect()
}

/// The first way `new` breaks what `old` (a committed version of the
/// archive file at `path`) holds, or `None` when `new` keeps it all. A
/// file gone (`new` empty) is its first record removed.
pub fn check(path: &str, old: &[u8], new: &[u8]) -> Option<Tampered> {
    check_with(path, old, new, Rule::Append)
}

/// [`check`] under `rule`.
pub fn check_with(path: &str, old: &[u8], new: &[u8], rule: Rule) -> Option<Tampered> {
    if old == new {
        return None;
    }
    if new.is_empty() {
        // The file is gone (or emptied): its first record was removed.
        let first = pieces(path, old).and_then(|p| p.into_iter().find_map(|p| p.id));
        return Some(Tampered { path: path.to_owned(), source_id: first, breach: Breach::Removed });
    }
    if new.starts_with(old) && complete(path, old) {
        // An append, the common case: `new` need not be parsed.
        return None;
    }
    let breach = match (pieces(path, old), pieces(path, new)) {
        (Some(old), Some(new)) => {
            return first_breach(&old, &new, rule).map(|(id, breach)| Tampered {
                path: path.to_owned(),
                source_id: id,
                breach,
            })
        }
        _ if new.starts_with(old) => return None,
        _ if new.len() < old.len() => Breach::Removed,
        _ => Breach::Changed,
    };
    Some(Tampered { path: path.to_owned(), source_id: None, breach })
}

/// The first old piece `new` does not keep in order, and how.
fn first_breach(old: &[Piece<'_>], new: &[Piece<'_>], rule: Rule) -> Option<(Option<String>, Breach)> {
    if rule == Rule::Union {
        let ids: std::collections::HashSet<&str> = new.iter().filter_map(|p| p.id.as_deref()).collect();
        let lost = old.iter().filter_map(|p| p.id.as_deref()).find(|id| !ids.contains(id))?;
        return Some((Some(lost.to_owned()), Breach::Removed));
    }
    let kept = |o: &Piece<'_>, n: &Piece<'_>| {
        o.bytes == n.bytes || (rule == Rule::Resolve && o.id.is_some() && o.id == n.id)
    };
    let mut k = 0;
    for piece in new {
        if k < old.len() && kept(&old[k], piece) {
            k += 1;
        }
    }
    let Some(lost) = old.get(k) else {
        // Every committed frame kept in order: anything new must follow them
        // unless a merge put it there.
        let inserted = (rule == Rule::Append)
            .then(|| old.iter().zip(new).find(|(o, n)| o.bytes != n.bytes).map(|(_, n)| n))
            .flatten()?;
        return Some((inserted.id.clone(), Breach::Inserted));
    };
    let breach = if new.iter().any(|p| p.bytes == lost.bytes) {
        Breach::Reordered
    } else if match &lost.id {
        // A record whose id is still there, with other bytes.
        Some(_) => new.iter().any(|p| p.id == lost.id),
        // The marker line (or bytes before the first frame).
        None => k == 0,
    } {
        Breach::Changed
    } else {
        Breach::Removed
    };
    Some((lost.id.clone(), breach))
}

#[cfg(test)]
mod tests {
    use super::*;
    use scriptorium_source_archive::{Role, SourceRecord};

    const PATH: &str = "sources/chat/_v2/t.md";

    fn file(ids: &[&str]) -> Vec<u8> {
        let records: Vec<SourceRecord> = ids
            .iter()
            .map(|m| {
                let id = SourceId::new("chat", "t", m).unwrap();
                SourceRecord::new(id, Role::User, "2026-01-02T03:04:05Z", None, false, format!("said {m}"))
                    .unwrap()
            })
            .collect();
        v2::write_file(&records)
    }

    #[test]
    fn appending_keeps_the_committed_frames_and_only_a_merge_may_insert() {
        let old = file(&["a", "c"]);
        assert_eq!(check(PATH, &old, &file(&["a", "c", "d"])), None);
        assert_eq!(check_with(PATH, &old, &file(&["a", "b", "c"]), Rule::Merge), None);
        let t = check(PATH, &old, &file(&["a", "b", "c"])).unwrap();
        assert_eq!((t.source_id.as_deref(), t.breach), (Some("chat/t/b"), Breach::Inserted));
    }

    #[test]
    fn a_changed_byte_a_removed_frame_and_a_swap_are_each_found() {
        let old = file(&["a", "b", "c"]);
        let mut edited = old.clone();
        let at = memchr::memmem::find(&edited, b"said b").unwrap();
        edited[at + 5] = b'x';
        let t = check(PATH, &old, &edited).unwrap();
        assert_eq!((t.source_id.as_deref(), t.breach), (Some("chat/t/b"), Breach::Changed));
        let t = check(PATH, &old, &file(&["a", "c"])).unwrap();
        assert_eq!((t.source_id.as_deref(), t.breach), (Some("chat/t/b"), Breach::Removed));
        let t = check(PATH, &old, &file(&["a", "c", "b"])).unwrap();
        assert_eq!(t.breach, Breach::Reordered);
    }

    #[test]
    fn only_a_resolution_may_give_a_record_another_version() {
        let old = file(&["a", "b"]);
        let mut other = old.clone();
        let at = memchr::memmem::find(&other, b"said b").unwrap();
        other[at + 5] = b'x';
        assert_eq!(check_with(PATH, &old, &other, Rule::Merge).unwrap().breach, Breach::Changed);
        assert_eq!(check_with(PATH, &old, &other, Rule::Resolve), None);
        // A resolution still may not drop a record.
        let t = check_with(PATH, &old, &file(&["a"]), Rule::Resolve).unwrap();
        assert_eq!((t.source_id.as_deref(), t.breach), (Some("chat/t/b"), Breach::Removed));
    }

    #[test]
    fn a_merge_keeps_the_other_parents_records_in_any_order() {
        let old = file(&["a", "b"]);
        assert_eq!(check_with(PATH, &old, &file(&["b", "c", "a"]), Rule::Union), None);
        let t = check_with(PATH, &old, &file(&["b", "c"]), Rule::Union).unwrap();
        assert_eq!((t.source_id.as_deref(), t.breach), (Some("chat/t/a"), Breach::Removed));
    }

    #[test]
    fn a_legacy_file_keeps_its_committed_bytes_as_a_prefix() {
        let path = "sources/chat/old.md";
        assert_eq!(check(path, b"one\n", b"one\ntwo\n"), None);
        assert_eq!(
            check(path, b"one\n", b""),
            Some(Tampered { path: path.into(), source_id: None, breach: Breach::Removed })
        );
        assert_eq!(check(path, b"one\n", b"onf\n").unwrap().breach, Breach::Changed);
    }
}
