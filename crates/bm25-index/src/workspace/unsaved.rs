//! An index a reader could not write: kept in memory for its process.
//!
//! The index is a cache. A reader of a workspace it may not write (a
//! mounted backup, a read-only checkout, another user's folder) or of a
//! full disk still answers from what is on disk: it refreshes or builds the
//! index as usual, and when writing the result fails with an I/O error it
//! searches the bytes it just made instead. Nothing is lost but time: the
//! next reader does the same work again. A writer ([`super::open_scoped`],
//! [`super::build`]) keeps failing, and a symbolic link on the way is
//! refused either way.

use std::sync::Arc;

use scriptorium_source_archive::{Code, Error};

use super::{Opened, Report};
use crate::delta::Refreshed;
use crate::search::View;
use crate::segment::{self, Segment};
use crate::tokenize::TokenizerConfig;

/// Whether an index that cannot be written may be kept in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Save {
    /// It must be written (a writer, `index build`).
    Required,
    /// It is written when possible, else kept in memory (a reader).
    IfPossible,
}

/// Why the index is kept in memory, or the error itself when it may not be.
pub(super) fn reason(save: Save, e: Error) -> Result<String, Error> {
    if save == Save::Required || e.code() != Code::Io {
        return Err(e);
    }
    Ok(format!("{}; the index is kept in memory for this process only", e.message()))
}

/// The index `refreshed` made, searched from memory, after writing it failed
/// with `e`: a new base alone, or a new head over the segments of `old`
/// (the index it refreshed) that it stands on.
pub(super) fn keep(
    old: Option<&View>,
    config: TokenizerConfig,
    save: Save,
    e: Error,
    refreshed: Refreshed,
    mut report: Report,
) -> Result<Opened, Error> {
    let why = reason(save, e)?;
    let unusable =
        |d: segment::Damaged| Error::new(Code::Io, format!("the index made in memory is unusable: {d}"));
    let segs = match (refreshed, old) {
        (Refreshed::Base(bytes), _) => {
            report.base_bytes = bytes.len() as u64;
            report.delta_bytes = 0;
            vec![Segment::open(Arc::new(bytes), config).map_err(unusable)?]
        }
        (Refreshed::Delta(bytes), Some(old)) => {
            report.base_bytes = old.base().byte_len() as u64;
            report.delta_bytes = bytes.len() as u64;
            let head = Segment::open(Arc::new(bytes), config).map_err(unusable)?;
            let below = head.stack().map_err(unusable)?.len();
            let mut segs = Vec::with_capacity(below + 1);
            for seg in old.segments().iter().take(below) {
                segs.push(seg.reopen().map_err(unusable)?);
            }
            segs.push(head);
            segs
        }
        (Refreshed::Delta(_), None) => {
            return Err(Error::new(Code::Io, "a delta was made without an index to amend"))
        }
    };
    let view = View::stack(segs).map_err(unusable)?;
    report.documents = view.len();
    report.unsaved = Some(why);
    Ok(Opened { view, report })
}

#[cfg(test)]
mod tests {
    //! The fallback itself, whoever runs the tests (root ignores
    //! permissions, so the failure to write is made another way: the
    //! temporary folder is a file).
    use super::super::BASE;
    use super::super::{open, open_scoped, search, Action, DIR};
    use super::*;
    use crate::search::{Bm25, Filters};
    use std::path::Path;

    const RECORD: &str = "{\"provider\":\"chat\",\"thread\":\"t\",\"message\":\"m1\",\"role\":\"user\",\"timestamp\":\"2026-08-09T10:11:12Z\",\"speaker_id\":\"1\",\"content\":\"the budget is fifty\"}";

    fn archive(root: &Path, message: &str, content: &str) {
        let line = RECORD.replace("\"m1\"", &format!("{message:?}")).replace("the budget is fifty", content);
        let records = scriptorium_source_archive::input::read_records(line.as_bytes()).unwrap();
        let plan = scriptorium_source_archive::append::plan(root, &records).unwrap();
        for (rel, bytes) in plan.writes {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
    }

    /// Nothing can be written under `.scriptorium/` any more.
    fn unwritable(root: &Path) {
        let tmp = root.join(scriptorium_source_archive::fsio::TMP_DIR);
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(tmp.parent().unwrap()).unwrap();
        std::fs::write(tmp, b"not a folder").unwrap();
    }

    fn hits(root: &Path, query: &str) -> usize {
        search(root, TokenizerConfig::default(), query, &Filters::default(), None, 10, Bm25::default())
            .unwrap()
            .len()
    }

    #[test]
    fn a_reader_that_cannot_write_builds_and_refreshes_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        archive(root, "m1", "the budget is fifty");
        unwritable(root);
        // No index yet: built in memory, found, nothing written.
        let opened = open(root, TokenizerConfig::default()).unwrap();
        assert_eq!(opened.report.action, Action::Built);
        assert!(opened.report.unsaved.as_deref().unwrap().contains("kept in memory"), "{:?}", opened.report);
        assert!(opened.report.base_bytes > 0 && opened.view.len() == 1);
        assert!(!root.join(DIR).join(BASE).exists());
        assert_eq!(hits(root, "budget"), 1);
        // A writer is refused instead.
        assert_eq!(open_scoped(root, TokenizerConfig::default(), None).unwrap_err().code(), Code::Io);

        // With an index on disk, a change is folded in as a delta in memory.
        std::fs::remove_file(root.join(scriptorium_source_archive::fsio::TMP_DIR)).unwrap();
        let saved = open(root, TokenizerConfig::default()).unwrap();
        assert_eq!(saved.report.unsaved, None);
        drop(saved);
        let base = std::fs::read(root.join(DIR).join(BASE)).unwrap();
        archive(root, "m2", "a second budget line");
        unwritable(root);
        let opened = open(root, TokenizerConfig::default()).unwrap();
        assert_eq!(opened.report.action, Action::Refreshed);
        assert!(opened.report.unsaved.is_some());
        assert_eq!(opened.view.len(), 2);
        assert_eq!(hits(root, "second"), 1);
        assert_eq!(std::fs::read(root.join(DIR).join(BASE)).unwrap(), base, "nothing written");
        assert!(!root.join(DIR).join(super::super::DELTA).exists());
    }

    #[test]
    fn only_an_io_failure_of_a_reader_is_kept_in_memory() {
        let io = || Error::new(Code::Io, "cannot create directory x: Read-only file system");
        assert!(reason(Save::IfPossible, io()).unwrap().starts_with("cannot create directory x"));
        assert_eq!(reason(Save::Required, io()).unwrap_err().code(), Code::Io);
        let link = Error::new(Code::InvalidArgument, ".scriptorium/index is a symbolic link");
        assert_eq!(reason(Save::IfPossible, link).unwrap_err().code(), Code::InvalidArgument);
    }
}
