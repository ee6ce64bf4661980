//! What a writer writes from: turns with their evidence, as the scheduler's
//! batches or backfill's uncited records provide them.

use std::path::Path;
use std::time::Duration;

use sha2::{Digest, Sha256};

use scriptorium_scheduler::conflict::Archived;
use scriptorium_scheduler::{Batch, WriteFailure};
use scriptorium_source_archive::writer_input::{self, InputLine};
use scriptorium_source_archive::{timestamp, SourceId, SourceRecord};
use scriptorium_transaction::observe::Provenance;

/// Where a turn's record lives, for a citation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    /// The source id, text form.
    pub source: String,
    /// The record's time, as a topic footnote's `Time` takes it.
    pub time: String,
    /// The workspace-relative archive file that holds the record.
    pub archive_path: String,
    /// `source-HASH8`.
    pub anchor: String,
}

impl Evidence {
    /// The evidence of an id whose record is in `archive_path`.
    pub fn new(id: &SourceId, time: &str, archive_path: &str) -> Evidence {
        Evidence {
            source: id.text(),
            time: time.to_owned(),
            archive_path: archive_path.to_owned(),
            anchor: id.anchor(),
        }
    }

    /// The footnote label citing it: `e-` and ten hex digits of a hash of the
    /// source id, so the same record always gets the same label.
    pub fn label(&self) -> String {
        let d = Sha256::digest(format!("evidence\0{}", self.source).as_bytes());
        format!("e-{}", hex(&d[..5]))
    }

    /// The footnote definition line (no LF) for a block in `topic_path`.
    pub fn definition(&self, topic_path: &str) -> String {
        format!(
            "[^{}]: Time: `{}`; Sources: [{}]({}#{})",
            self.label(),
            self.time,
            self.source,
            relative(topic_path, &self.archive_path),
            self.anchor
        )
    }
}

/// Lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `target` (workspace-relative) as a link from the folder of `from`.
pub fn relative(from: &str, target: &str) -> String {
    let depth = from.matches('/').count();
    format!("{}{target}", "../".repeat(depth))
}

/// A footnote `Time` for a record timestamp: kept when it is one already,
/// else its date; `None` when it has neither.
pub fn footnote_time(ts: &str) -> Option<String> {
    if timestamp::is_valid_legacy(ts) {
        return Some(ts.to_owned());
    }
    let date = ts.get(..10)?;
    let b = date.as_bytes();
    let ok = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    ok.then(|| date.to_owned())
}

/// One turn as a writer sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// The source id, text form (the writer input's `ref`).
    pub source: String,
    /// The trusted speaker's attribution (FORMAT.md §2.3), if the record
    /// has a speaker: what a paragraph names as who spoke.
    pub speaker: Option<String>,
    /// Which person the speaker is, for a person file: [`person_key`] of
    /// the verbatim id (or of the display of a display-only identity).
    pub person: Option<String>,
    /// The trusted speaker's normalised display name (FORMAT.md §2.3), from
    /// the transport, never from the body: the name a people card keeps
    /// among its aliases.
    pub display: Option<String>,
    /// The role, for a speakerless turn.
    pub role: String,
    /// Whether its record is archived pending (an unpaired group member's
    /// text, say): its blocks stay out of recall and `core.md`.
    pub pending: bool,
    /// The body, verbatim.
    pub content: String,
    /// Where to cite it.
    pub evidence: Evidence,
    /// The writer-input line (`{"ref","speaker","content"}`, no LF).
    pub line: String,
}

impl Turn {
    /// The turn of a v2 record (in the archive, or about to be).
    pub fn of_record(r: &SourceRecord) -> Turn {
        let wire = InputLine::of_record(r);
        Turn {
            source: wire.reference.clone(),
            speaker: r.speaker().map(|s| s.attribution()),
            person: r.speaker().map(|s| person_key(s.id(), s.display())),
            display: r.speaker().and_then(|s| s.display()).map(str::to_owned),
            role: r.role().as_str().to_owned(),
            pending: r.is_pending(),
            content: r.content().to_owned(),
            evidence: Evidence::new(r.id(), r.timestamp(), &r.id().v2_path()),
            line: writer_input::encode(&wire),
        }
    }

    /// The attribution (or role) a paragraph made from this turn opens with.
    pub fn who(&self) -> &str {
        self.speaker.as_deref().unwrap_or(&self.role)
    }
}

/// Sixteen hex digits naming a person: of the verbatim id when there is
/// one (so a renamed person stays one person), else of the normalised
/// display, each with its own prefix, so an id and a display never share a
/// key and two different ids practically never do.
pub fn person_key(id: Option<&str>, display: Option<&str>) -> String {
    let text = match id {
        Some(i) => format!("id\0{i}"),
        None => format!("display\0{}", display.unwrap_or("")),
    };
    hex(&Sha256::digest(text.as_bytes())[..8])
}

/// A writer's input.
#[derive(Debug, Clone)]
pub struct Input<'a> {
    /// The workspace.
    pub root: &'a Path,
    /// What the turns are (a session id, or "backfill").
    pub origin: String,
    /// The turns, oldest first.
    pub turns: Vec<Turn>,
    /// Records to archive in the same transaction.
    pub archive: Vec<SourceRecord>,
    /// How long to wait for the workspace lock.
    pub lock_timeout: Duration,
}

impl Input<'_> {
    /// Who makes the transaction of this input: `writer` (`offline`,
    /// `model:<name>`) writing a session's turns, or `backfill` /
    /// `promote` writing archived records.
    pub fn provenance(&self, writer: &str) -> Provenance {
        let ids: Vec<String> = self
            .turns
            .iter()
            .map(|t| {
                SourceId::parse(&t.source).map_or_else(|_| t.source.clone(), |id| id.message().to_owned())
            })
            .collect();
        match self.origin.as_str() {
            "backfill" | "promote" => Provenance { writer: self.origin.clone(), session: None, turns: ids },
            session => Provenance::of_turns(writer, session, ids),
        }
    }

    /// Refuses a record to archive whose id the archive already holds with
    /// another message (other words, another speaker or trust): the
    /// archive keeps the first record of an id, so the turn would quote one
    /// thing and cite another. `CONFLICT`, not retryable, naming the id and
    /// both sides; the scheduler finds such a turn before a batch reaches a
    /// writer, so this holds only against a record archived in between.
    pub fn refuse_conflicts(&self) -> Result<(), WriteFailure> {
        match Archived::default().first_conflict(self.root, &self.archive) {
            Some((_, conflict)) => Err(conflict.failure()),
            None => Ok(()),
        }
    }
}

impl<'a> Input<'a> {
    /// The input of a scheduler batch.
    pub fn of_batch(batch: &Batch<'a>) -> Input<'a> {
        Input {
            root: batch.root,
            origin: batch.session.to_owned(),
            turns: batch.records.iter().map(Turn::of_record).collect(),
            archive: if batch.archive { batch.records.to_vec() } else { Vec::new() },
            lock_timeout: batch.lock_timeout,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_links_and_times() {
        assert_eq!(relative("topics/core.md", "sources/a/_v2/b.md"), "../sources/a/_v2/b.md");
        assert_eq!(relative("topics/people/ada.md", "sources/a/_v2/b.md"), "../../sources/a/_v2/b.md");
        assert_eq!(footnote_time("2024-03-16T09:30:00Z").as_deref(), Some("2024-03-16T09:30:00Z"));
        assert_eq!(footnote_time("2024-03-16T09:30:00+02:00").as_deref(), Some("2024-03-16T09:30:00+02:00"));
        assert_eq!(footnote_time("2024-03-16 09:30").as_deref(), Some("2024-03-16"));
        assert_eq!(footnote_time("yesterday"), None);
        let e = Evidence::new(
            &SourceId::new("chat", "team-1", "m1").unwrap(),
            "2026-08-09T10:11:12Z",
            "sources/chat/_v2/team-1.md",
        );
        assert_eq!(
            e.definition("topics/budget.md"),
            format!("[^{}]: Time: `2026-08-09T10:11:12Z`; Sources: [chat/team-1/m1](../sources/chat/_v2/team-1.md#source-99a7df07)", e.label())
        );
        assert_eq!(e.label().len(), 12);
    }
}
