//! `backfill`: trusted records no topic block cites, through the normal
//! writer transaction in bounded batches, without archiving them again.
//!
//! The candidates are the v2 records that are trusted (not pending, or
//! promoted) and the legacy records with a source id and a speaking role
//! (a v2 record with the same id shadows a legacy one), minus every id a
//! topic block cites. They go in archive order (file, then time, then id).
//! A retryable failure stops the run; the next run starts again from the
//! first record still uncited, so a run resumes where the last one failed.
//! A batch refused for good is retried one record at a time, and a record
//! refused alone is skipped. A record the writer leaves uncited is tried
//! once per run; running backfill again then changes nothing. Legacy
//! records are taken only where their file names the id's own anchor and
//! the file's path can be a link target as it is.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use scriptorium_scheduler::{limits, LimitHit, WriteFailure, Written};
use scriptorium_source_archive::legacy::LegacyRole;
use scriptorium_source_archive::writer_input::{self, InputLine};
use scriptorium_source_archive::SourceId;
use scriptorium_transaction as transaction;
use scriptorium_transaction::snapshot::Checkup;

use crate::agent::ModelWriter;
use crate::input::{footnote_time, Evidence, Input, Turn};
use crate::model::Model;
use crate::offline;

/// The default batch size, in records.
pub const DEFAULT_BATCH: usize = 50;

/// A writer backfill can drive.
pub trait InputWriter {
    /// Writes `input` as one transaction.
    fn write_input(&mut self, input: &Input<'_>) -> Result<Written, WriteFailure>;
}

impl InputWriter for offline::Offline {
    fn write_input(&mut self, input: &Input<'_>) -> Result<Written, WriteFailure> {
        offline::write_within(input, self.limits)
    }
}

impl<M: Model> InputWriter for ModelWriter<M> {
    fn write_input(&mut self, input: &Input<'_>) -> Result<Written, WriteFailure> {
        ModelWriter::write_input(self, input)
    }
}

/// What a backfill run did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Backfilled {
    /// Batches written.
    pub batches: usize,
    /// Records handed to the writer.
    pub records: usize,
    /// Paths changed, sorted, once each.
    pub changed: Vec<String>,
    /// What the writer left out to keep people cards within their limits
    /// (FORMAT §8).
    pub limits: Vec<LimitHit>,
    /// Records the writer refused even alone (left uncited; not printed by
    /// the CLI, whose shape is FORMAT §8's).
    #[serde(skip)]
    pub refused: usize,
}

/// The uncited trusted records of the workspace, as writer turns, in
/// archive order.
pub fn uncited(root: &Path) -> Result<Vec<Turn>, WriteFailure> {
    let Checkup { archive, promoted, checked, .. } = transaction::snapshot::checkup(root)?;
    let cited: HashSet<&str> =
        checked.blocks.iter().flat_map(|b| b.sources.iter().map(String::as_str)).collect();
    let mut out: Vec<(String, String, Turn)> = Vec::new();
    for r in archive.v2_records() {
        let text = r.id().text();
        if cited.contains(text.as_str()) || (r.is_pending() && !promoted.contains(&text)) {
            continue;
        }
        let mut t = Turn::of_record(r);
        // Promoted: trusted from now on.
        t.pending = false;
        out.push((t.evidence.archive_path.clone(), r.timestamp().to_owned(), t));
    }
    for (path, r) in archive.legacy_records() {
        let Some(id) = &r.id else { continue };
        let text = id.text();
        if cited.contains(text.as_str()) || r.role == LegacyRole::Tool {
            continue;
        }
        let Some(time) = footnote_time(&r.timestamp) else { continue };
        // Citable only where the file names the id's own anchor, and from a
        // path a footnote link can hold as it is.
        if r.anchor.as_deref() != Some(id.anchor().as_str()) || !link_safe(path) {
            continue;
        }
        out.push((
            path.to_owned(),
            r.timestamp.clone(),
            legacy_turn(id, r.role.as_str(), &r.content, &time, path),
        ));
    }
    out.sort_by(|a, b| (&a.0, &a.1, &a.2.source).cmp(&(&b.0, &b.1, &b.2.source)));
    Ok(out.into_iter().map(|(_, _, t)| t).collect())
}

/// Whether a path can be a footnote link target as it is.
fn link_safe(path: &str) -> bool {
    path.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-~%".contains(&b))
}

fn legacy_turn(id: &SourceId, role: &str, content: &str, time: &str, path: &str) -> Turn {
    let wire = InputLine { reference: id.text(), speaker: role.to_owned(), content: content.to_owned() };
    Turn {
        source: wire.reference.clone(),
        speaker: None,
        person: None,
        display: None,
        role: role.to_owned(),
        pending: false,
        content: content.to_owned(),
        evidence: Evidence::new(id, time, path),
        line: writer_input::encode(&wire),
    }
}

/// Writes the trusted records among `ids` that no block cites yet through
/// `writer`, as one transaction, without archiving them again: what
/// `promote` does after its audit line. A named record already cited (or
/// still pending) is skipped; with none left, nothing is written.
pub fn write_named(
    root: &Path,
    ids: &[String],
    writer: &mut dyn InputWriter,
    lock_timeout: Duration,
) -> Result<Backfilled, WriteFailure> {
    let wanted: HashSet<&str> = ids.iter().map(String::as_str).collect();
    let turns: Vec<Turn> =
        uncited(root)?.into_iter().filter(|t| wanted.contains(t.source.as_str())).collect();
    if turns.is_empty() {
        return Ok(Backfilled::default());
    }
    let records = turns.len();
    let input = Input { root, origin: "promote".to_owned(), turns, archive: Vec::new(), lock_timeout };
    let written = writer.write_input(&input)?;
    let mut changed = written.changed;
    changed.sort();
    changed.dedup();
    let mut report = Backfilled { batches: 1, records, changed, ..Backfilled::default() };
    limits::merge(&mut report.limits, written.limits);
    Ok(report)
}

/// Runs backfill: batches of `batch` uncited records through `writer`.
/// `progress(done, total)` is called after each batch.
pub fn backfill(
    root: &Path,
    writer: &mut dyn InputWriter,
    batch: usize,
    lock_timeout: Duration,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Backfilled, WriteFailure> {
    let turns = uncited(root)?;
    let mut report = Backfilled::default();
    for chunk in turns.chunks(batch.max(1)) {
        let input = Input {
            root,
            origin: "backfill".to_owned(),
            turns: chunk.to_vec(),
            archive: Vec::new(),
            lock_timeout,
        };
        let written = match writer.write_input(&input) {
            Ok(w) => vec![w],
            // One record the writer cannot cite must not stall the rest
            // forever: the batch is tried again one record at a time, and
            // the records refused alone are left for the next run.
            Err(f) if !f.retryable && chunk.len() > 1 => {
                let mut done = Vec::new();
                for t in chunk {
                    let one = Input { turns: vec![t.clone()], ..input.clone() };
                    match writer.write_input(&one) {
                        Ok(w) => done.push(w),
                        Err(f) if !f.retryable => report.refused += 1,
                        Err(f) => return Err(f),
                    }
                }
                done
            }
            Err(f) => return Err(f),
        };
        report.batches += 1;
        report.records += chunk.len();
        for w in written {
            report.changed.extend(w.changed);
            limits::merge(&mut report.limits, w.limits);
        }
        report.changed.sort();
        report.changed.dedup();
        progress(report.records, turns.len());
    }
    Ok(report)
}
