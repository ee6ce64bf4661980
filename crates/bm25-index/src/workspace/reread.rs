//! A document's text and hit fields read back from its file. The index
//! stores where a v2 record's frame and a topic block's bytes are in their
//! file (a span and the checksum of those bytes), not their text: a hit,
//! an embedding or a refresh reads those bytes again, checks the checksum,
//! and re-derives exactly what the document was built from (the same
//! functions the build uses). Bytes that no longer match are
//! [`Damaged`]: the index is stale, and the caller rebuilds it.

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use scriptorium_source_archive::json::Trust;
use scriptorium_source_archive::{fsio, pct, v2};
use scriptorium_topic_markdown::parse::{block_text_of, search_text};

use super::documents::{record_text, record_view, source_parts};
use crate::format::checksum;
use crate::hit::{Block, Found};
use crate::search::View;
use crate::segment::{Damaged, Document, Kind, Origin, Segment, Span, Stored, UnitInfo};

/// A document's text as it was indexed, and what a hit shows of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reread {
    /// The indexed text.
    pub indexed: String,
    /// The block or record.
    pub found: Found,
}

/// Reads documents back from the files of the workspace at a root.
pub(crate) struct Files {
    root: PathBuf,
    /// Read each file whole, once (for reading many documents of a unit),
    /// rather than each document's span alone.
    whole: bool,
    /// The last file read whole (`None`: it could not be read).
    last: Option<(String, Option<Vec<u8>>)>,
}

impl Files {
    /// Reads each document's span alone (a few hits).
    pub(crate) fn spans(root: &Path) -> Files {
        Files { root: root.to_owned(), whole: false, last: None }
    }

    /// Reads each file whole, once for all its documents (a unit's
    /// documents, in order).
    pub(crate) fn whole(root: &Path) -> Files {
        Files { root: root.to_owned(), whole: true, last: None }
    }

    /// The bytes of `span` of the file at `path`, checked against its
    /// checksum.
    fn bytes(&mut self, path: &str, span: Span) -> Result<Vec<u8>, Damaged> {
        let stale = |why: String| Damaged(format!("{path} changed since it was indexed: {why}"));
        // Only a workspace file is ever read, as the listing names them.
        let inside = (path.starts_with("topics/") || path.starts_with("sources/"))
            && path.split('/').all(|c| !c.is_empty() && c != "." && c != "..");
        if !inside {
            return Err(Damaged(format!("the index names {path:?}, not a workspace file")));
        }
        let full = self.root.join(path);
        let (start, len) = (span.offset, span.len as usize);
        let bytes = if self.whole {
            if self.last.as_ref().is_none_or(|(p, _)| p != path) {
                let all =
                    fsio::check_no_links(&self.root, path).ok().and_then(|()| std::fs::read(&full).ok());
                self.last = Some((path.to_owned(), all));
            }
            let all = match &self.last {
                Some((_, Some(all))) => all.as_slice(),
                _ => return Err(stale("it cannot be read".into())),
            };
            let at = usize::try_from(start).map_err(|_| stale("a span past the end".into()))?;
            let part = at.checked_add(len).and_then(|end| all.get(at..end));
            part.ok_or_else(|| stale("a span past the end".into()))?.to_vec()
        } else {
            fsio::check_no_links(&self.root, path).map_err(|e| stale(e.to_string()))?;
            let file = std::fs::File::open(&full).map_err(|e| stale(e.to_string()))?;
            let mut buf = vec![0u8; len];
            file.read_exact_at(&mut buf, start).map_err(|e| stale(e.to_string()))?;
            buf
        };
        if checksum(&bytes) != span.hash {
            return Err(stale("its bytes differ".into()));
        }
        Ok(bytes)
    }

    /// The text and hit fields of a stored document.
    pub(crate) fn read(&mut self, stored: &Stored<'_>) -> Result<Reread, Damaged> {
        match stored.origin {
            Origin::Inline { text, payload } => {
                let found = Found::decode(stored.kind, payload)
                    .map_err(|e| Damaged(format!("a stored document does not decode: {e}")))?;
                Ok(Reread { indexed: text.to_owned(), found })
            }
            Origin::Span { span, time, aliases } => {
                let bytes = self.bytes(stored.path, span)?;
                rederive(stored, &bytes, time, aliases).ok_or_else(|| {
                    Damaged(format!("{} at {}: not the indexed document", stored.path, span.offset))
                })
            }
        }
    }
}

impl crate::delta::DeletedText for Files {
    /// The indexed text of a stored document, when it can still be read
    /// (a span whose bytes no longer match gives `None`).
    fn text(&mut self, stored: &Stored<'_>) -> Option<String> {
        self.read(stored).ok().map(|r| r.indexed)
    }
}

/// What a document was built from its bytes: a v2 record's frame, or a
/// topic block's lines (with the aliases line and time stored beside).
fn rederive(stored: &Stored<'_>, bytes: &[u8], time: Option<&str>, aliases: &str) -> Option<Reread> {
    match stored.kind {
        Kind::Source => {
            let (p, t, true) = source_parts(stored.path)? else { return None };
            let (p, t) =
                (pct::decode_canonical(p.as_bytes()).ok()?, pct::decode_canonical(t.as_bytes()).ok()?);
            let frame = v2::parse_frame(bytes, v2::Expect { provider: &p, thread: &t })?;
            let r = frame.to_record();
            let id = r.id();
            if id.anchor() != stored.anchor || id.text() != stored.key {
                return None;
            }
            let view = record_view(&r, stored.pending);
            Some(Reread { indexed: record_text(&r), found: Found::Record(Box::new(view)) })
        }
        Kind::Topic => {
            let source = std::str::from_utf8(bytes).ok()?;
            let text = search_text(&block_text_of(source), Some(stored.anchor));
            let indexed = format!("{text}{aliases}");
            let block = Block {
                path: stored.path.to_owned(),
                block_id: stored.anchor.to_owned(),
                text,
                time: time.map(str::to_owned),
                trust: Trust::of(stored.pending),
            };
            Some(Reread { indexed, found: Found::Block(block) })
        }
    }
}

/// The documents of a live unit of `view` (as [`View::units`] gives it)
/// with their indexed text, and what a hit shows of each, read back from
/// the unit's file under `root` once.
pub fn unit_documents(
    root: &Path,
    view: &View,
    unit: &UnitInfo<'_>,
) -> Result<Vec<(Document, Found)>, Damaged> {
    let Some((k, info)) = view.locate(unit.kind, unit.path)? else { return Ok(Vec::new()) };
    let seg: &Segment = &view.segments()[k];
    let mut files = Files::whole(root);
    let mut out = Vec::with_capacity(info.count as usize);
    for d in info.first..info.first + info.count {
        let stored = seg.stored_in(info.path, d)?;
        let read = files.read(&stored)?;
        let mut doc = stored.to_document();
        doc.text = read.indexed;
        out.push((doc, read.found));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
