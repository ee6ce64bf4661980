//! Promoting pending sources: the owner's word, one line of the audit log,
//! after which the records and the blocks citing them count as trusted.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;

use scriptorium_source_archive::{fsio, timestamp, trust, SourceId};

use super::{Committer, Promoted};
use crate::error::{Code, Error};
use crate::revision;

impl Committer<'_> {
    /// Promotes pending sources (owner only): one line in
    /// `.scriptorium/audit.jsonl`, after which they and the blocks citing
    /// them count as trusted. Every id must be archived (`NOT_FOUND`).
    pub fn promote(&mut self, ids: &[String], by: &str) -> Result<Promoted, Error> {
        let root = self.root.clone();
        let already = trust::promoted(&root)?;
        let mut promoted = Vec::new();
        let mut already_trusted = Vec::new();
        let mut seen = BTreeSet::new();
        // Every id must be well formed before any is looked up.
        let mut parsed = Vec::with_capacity(ids.len());
        for text in ids {
            parsed.push(SourceId::parse(text).map_err(|e| {
                Error::new(Code::InvalidArgument, format!("{text:?} is not a source id: {}", e.message()))
            })?);
        }
        for id in parsed {
            let key = id.text();
            if !seen.insert(key.clone()) {
                continue;
            }
            let pending = match archived_pending(&root, &id)? {
                Some(p) => p,
                None => {
                    return Err(
                        Error::new(Code::NotFound, format!("no archived record {key}")).at(id.v2_path())
                    )
                }
            };
            if pending && !already.contains(&key) {
                promoted.push(key);
            } else {
                already_trusted.push(key);
            }
        }
        let rev = revision::compute(&root)?;
        if !promoted.is_empty() {
            #[derive(Serialize)]
            struct Line<'a> {
                time: String,
                action: &'a str,
                who: &'a str,
                sources: &'a [String],
                revision: &'a str,
            }
            let mut line = scriptorium_source_archive::json::to_line(&Line {
                time: timestamp::now(),
                action: "promote",
                who: by,
                sources: &promoted,
                revision: &rev.hex,
            })
            .into_bytes();
            line.push(b'\n');
            let path = root.join(trust::AUDIT_FILE);
            fsio::check_no_links(&root, trust::AUDIT_FILE)?;
            // A torn last line (a crash mid-append) is ended first.
            if std::fs::read(&path).ok().and_then(|b| b.last().copied()).is_some_and(|b| b != b'\n') {
                line.insert(0, b'\n');
            }
            self.disk().append(&path, &line).map_err(|e| Error::io(&e, "cannot append to", &path))?;
            self.rebuild_all(false)?;
        }
        Ok(Promoted { promoted, already_trusted, revision: rev.hex })
    }
}

/// The pending flag of the archived v2 record `id`, `None` when absent.
fn archived_pending(root: &Path, id: &SourceId) -> Result<Option<bool>, Error> {
    let rel = id.v2_path();
    fsio::check_no_links(root, &rel)?;
    let bytes = match std::fs::read(root.join(&rel)) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&e, "cannot read", &root.join(&rel))),
    };
    let expect = scriptorium_source_archive::v2::Expect { provider: id.provider(), thread: id.thread() };
    let anchor = id.anchor();
    let key = id.text();
    for f in scriptorium_source_archive::v2::parse_prefix(&bytes, Some(expect)).frames {
        let r = f.to_record();
        if r.id().anchor() == anchor && r.id().text() == key {
            return Ok(Some(r.is_pending()));
        }
    }
    Ok(None)
}
