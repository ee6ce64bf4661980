//! The dream pass (`scriptorium sleep`, the watcher's nightly pass,
//! `MemoryBackend::reorganize`), FORMAT.md §8:
//!
//! 1. [`select`]: which conversations it takes (by unreflected volume within
//!    the caps, or as asked: named, the most recent, or a focus), and their
//!    records; the conversations named are checked before anything changes;
//! 2. [`hygiene`]: deterministic offline hygiene, with or without a model,
//!    as its own transaction (duplicate blocks merged, people cards' aliases
//!    sorted);
//! 3. with a model ([`Consolidate`]) and something selected: the model's
//!    consolidation as one transaction; once it succeeded, the ledger
//!    ([`ledger`]) records that the selected records are reflected on, so
//!    the next pass takes new material. A model that fails commits nothing
//!    and moves nothing in the ledger (the hygiene before it stands).
//!
//! Every pass reports what it selected, what it changed and, when it
//! changed nothing, why ([`Report`]).

pub mod hygiene;
pub mod ledger;
pub mod select;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

pub use scriptorium_scheduler::dream::{Hygiene, Report, Selected, Unchanged};
use scriptorium_scheduler::{Code, WriteFailure, Written};
use scriptorium_source_archive::timestamp;
use scriptorium_transaction as transaction;

use crate::input::Turn;

pub use ledger::Ledger;
pub use select::{Caps, Material, Pick};

/// The most characters a focus may hold.
pub const FOCUS_CHARS: usize = 4000;

/// What a pass is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// How it picks its conversations.
    pub pick: Pick,
    /// Free text: what to look at. Handed to the model as data; with
    /// [`Pick::Auto`] it picks the conversations a search for it finds.
    pub focus: Option<String>,
    /// The caps.
    pub caps: Caps,
    /// How long to wait for the workspace lock.
    pub lock_timeout: Duration,
}

/// Consolidation with judgement: a model given the selected records (and
/// the focus), whose edits become one transaction.
pub trait Consolidate {
    /// Consolidates the workspace at `root` in the light of `turns`.
    fn consolidate(
        &mut self,
        root: &Path,
        turns: &[Turn],
        focus: Option<&str>,
        lock_timeout: Duration,
    ) -> Result<Written, WriteFailure>;
}

/// Runs one dream pass over the workspace at `root`: the selection, the
/// hygiene, then, with `model` and something selected, the model's
/// consolidation.
pub fn run(root: &Path, o: &Options, model: Option<&mut dyn Consolidate>) -> Result<Report, WriteFailure> {
    check_focus(o.focus.as_deref())?;
    transaction::snapshot::require(root)?;
    let mut ledger = Ledger::load(root);
    let material = {
        let _reading = transaction::snapshot::Snapshot::open(root, o.lock_timeout)?;
        select::select(root, &o.pick, o.focus.as_deref(), o.caps, &ledger)?
    };
    let done = hygiene::run(root, o.lock_timeout)?;
    let mut changed: BTreeSet<String> = done.written.iter().flat_map(|w| w.changed.iter().cloned()).collect();
    let why = match model {
        None if material.is_empty() => Unchanged::NothingSelected,
        None => Unchanged::NoModel,
        Some(_) if material.is_empty() => Unchanged::NothingSelected,
        Some(m) => {
            let turns: Vec<Turn> =
                material.iter().flat_map(|x| x.records.iter().map(Turn::of_record)).collect();
            let written = m
                .consolidate(root, &turns, o.focus.as_deref(), o.lock_timeout)
                .map_err(|f| after_hygiene(f, &changed))?;
            changed.extend(written.changed);
            let now = timestamp::now();
            for x in &material {
                if let Some(through) = &x.advance_to {
                    ledger.advance(&x.conversation, through, &now);
                }
            }
            if !ledger.save(root) {
                tracing::warn!(
                    "the dream ledger could not be written; the next pass may take the same records"
                );
            }
            Unchanged::NothingToChange
        }
    };
    let changed: Vec<String> = changed.into_iter().collect();
    Ok(Report {
        selected: material
            .iter()
            .map(|x| Selected {
                conversation: x.conversation.clone(),
                records: x.records.len(),
                bytes: x.bytes,
            })
            .collect(),
        reason: changed.is_empty().then_some(why),
        changed,
        hygiene: Hygiene { merged: done.merged, aliases: done.aliases },
        focus: o.focus.clone(),
    })
}

/// A focus is not blank and at most [`FOCUS_CHARS`] characters.
fn check_focus(focus: Option<&str>) -> Result<(), WriteFailure> {
    match focus {
        Some(f) if f.trim().is_empty() => Err(WriteFailure::new(
            Code::InvalidArgument,
            "the focus is blank; give some words, or no --focus",
        )),
        Some(f) if f.chars().count() > FOCUS_CHARS => Err(WriteFailure::new(
            Code::InvalidArgument,
            format!("the focus holds more than {FOCUS_CHARS} characters; say what to look at in fewer words"),
        )),
        _ => Ok(()),
    }
}

/// A model's failure, saying that the hygiene before it stands.
fn after_hygiene(mut f: WriteFailure, changed: &BTreeSet<String>) -> WriteFailure {
    if !changed.is_empty() {
        let list: Vec<&str> = changed.iter().map(String::as_str).collect();
        // Said once: the model's failure may already say nothing was written.
        let base = f.reason.strip_suffix("; nothing was written").unwrap_or(&f.reason);
        f.reason = format!(
            "{base}; nothing of the model's was written, but the offline hygiene before it was committed (changed {})",
            list.join(", ")
        );
    }
    f
}
