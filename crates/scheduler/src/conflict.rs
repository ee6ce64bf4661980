//! A turn whose source id the archive already holds with another record.
//!
//! The archive keeps the first record of an id (FORMAT.md §2.5), so such a
//! turn can never be archived under its id: writing it would cite what
//! someone else archived there (a `paired` caller's pending text, say) as
//! the turn's words. It is found before a batch goes to a writer and
//! reported, never silently replaced.

use std::collections::HashMap;
use std::path::Path;

use scriptorium_source_archive::archive;
use scriptorium_source_archive::json::RecordView;
use scriptorium_source_archive::SourceRecord;

use crate::error::{Code, WriteFailure};

/// One turn against the archived record holding its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The source id, text form.
    pub source: String,
    /// The archive file holding the other record.
    pub path: String,
    /// The archived record.
    pub archived: RecordView,
    /// The turn's record.
    pub turn: RecordView,
}

impl Conflict {
    /// The refusal: `CONFLICT`, not retryable (the archive keeps its first
    /// record of an id, so no later pass can archive the turn).
    pub fn failure(&self) -> WriteFailure {
        WriteFailure {
            code: Code::Conflict,
            reason: format!(
                "{} ({}): the archive holds another record under this id ({}); the turn ({}) \
                 cannot be archived under it and is not written",
                self.source,
                self.path,
                side(&self.archived),
                side(&self.turn)
            ),
            retryable: false,
        }
    }
}

/// `pending user` / `trusted Ada [id 7391]`, and the role when a speaker is named.
fn side(v: &RecordView) -> String {
    if v.speaker_trusted {
        format!("{} {}, role {}", v.trust, v.attribution, v.role)
    } else {
        format!("{} {}, no speaker", v.trust, v.role)
    }
}

/// Whether two records of one id are the same message: the same role, the
/// same speaker (trusted or not, id and display), the same trust and the
/// same words. The time is not compared: a citation shows the archived one.
pub fn same_message(a: &RecordView, b: &RecordView) -> bool {
    a.role == b.role
        && a.speaker_trusted == b.speaker_trusted
        && a.speaker_id == b.speaker_id
        && a.speaker_display == b.speaker_display
        && a.trust == b.trust
        && a.content == b.content
}

/// The archived records of every v2 file `records` go to, read once each.
#[derive(Debug, Default)]
pub struct Archived {
    files: HashMap<String, Vec<RecordView>>,
}

impl Archived {
    /// The first record of `records` whose id the archive holds with another
    /// message, and its index. A file that cannot be read or parsed is taken
    /// as it parses (its valid prefix): the transaction refuses a damaged
    /// file on its own.
    pub fn first_conflict(&mut self, root: &Path, records: &[SourceRecord]) -> Option<(usize, Conflict)> {
        records.iter().enumerate().find_map(|(k, r)| self.conflict(root, r).map(|c| (k, c)))
    }

    /// The conflict of one record, if any.
    pub fn conflict(&mut self, root: &Path, record: &SourceRecord) -> Option<Conflict> {
        let path = record.id().v2_path();
        let source = record.id().text();
        let views = self
            .files
            .entry(path.clone())
            .or_insert_with(|| archive::dump(&root.join(&path)).map(|d| d.records).unwrap_or_default());
        let archived = views.iter().find(|v| v.source_id.as_deref() == Some(source.as_str()))?;
        let turn = RecordView::of_record(record);
        (!same_message(archived, &turn)).then(|| Conflict { source, path, archived: archived.clone(), turn })
    }
}
