//! `write(session, force)`: cut the pending turns into batches, hand each to
//! a [`BatchWriter`], and mark exactly the turns of every batch whose
//! transaction succeeded.
//!
//! A write is due at the token threshold, when forced, or by the
//! reflection cadence: once a session recorded [`Scheduler::every_steps`]
//! agent steps (assistant turns and tool calls) since its newest written
//! turn, its write is a forced one, whoever asked for it (`write`, the
//! watcher, a hook's background write).
//!
//! Restart safety: before a batch goes to the writer, its turns are
//! *claimed* in the store; the mark drops the claim. A batch's records are
//! archived by the same transaction that writes its topics, so a claimed
//! turn whose record is in the v2 archive was written even if the process
//! died before marking it: the next run marks the leading run of such turns
//! without calling the writer again (nothing is written twice, and every
//! citation already made stays valid), and drops claims whose records never
//! reached the archive (that transaction did not happen).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use scriptorium_source_archive::{v2, SourceRecord};
use scriptorium_transaction::observe::Provenance;
use scriptorium_transaction::{self as transaction, Base, Patch, Tier};
use serde::Serialize;

use crate::clock::{self, Clock, SystemClock};
use crate::conflict::Archived;
use crate::error::{Code, Error, Result, WriteFailure};
use crate::limits::LimitHit;
use crate::pending::{self, Cut, DEFAULT_EVERY_STEPS, DEFAULT_THRESHOLD};
use crate::status;
use crate::store::SessionStore;

/// How long a background write waits for the workspace lock before giving
/// up (retryably) rather than making a person wait.
pub const BACKGROUND_LOCK_TIMEOUT: Duration = Duration::from_secs(1);

/// One batch, as a writer receives it.
#[derive(Debug, Clone, Copy)]
pub struct Batch<'a> {
    /// The workspace.
    pub root: &'a Path,
    /// The session the turns come from.
    pub session: &'a str,
    /// The turns' archive records, oldest first: the writer archives them in
    /// its transaction and cites them.
    pub records: &'a [SourceRecord],
    /// The turns as the writer's input, one JSON object per line
    /// (`{"ref","speaker","content"}`, no LF).
    pub lines: &'a [String],
    /// The lines' `o200k_base` tokens, each with its LF.
    pub tokens: usize,
    /// How long to wait for the workspace lock.
    pub lock_timeout: Duration,
    /// Whether the transaction archives `records` (false when they are in
    /// the archive already, as for backfill).
    pub archive: bool,
}

impl Batch<'_> {
    /// Who makes a batch's transaction: `writer` writing these turns of
    /// this session.
    pub fn provenance(&self, writer: &str) -> Provenance {
        let turns = self.records.iter().map(|r| r.id().message().to_owned()).collect();
        Provenance::of_turns(writer, self.session, turns)
    }
}

/// What a successful batch transaction did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// The revision after it.
    pub revision: String,
    /// Workspace-relative paths it changed.
    pub changed: Vec<String>,
    /// What it left out to keep people cards within their limits.
    pub limits: Vec<LimitHit>,
}

/// Turns a batch into one transaction.
pub trait BatchWriter {
    /// The writer's name, as `write` reports it.
    fn name(&self) -> &str;
    /// Writes the batch as one transaction, or says why not and whether a
    /// later pass could.
    fn write_batch(&mut self, batch: &Batch<'_>) -> Result<Written, WriteFailure>;
}

/// The writer that archives each batch verbatim and writes no topic: what a
/// model-driven write does when it finishes with no edits. `backfill`
/// distils uncited records later.
#[derive(Debug, Clone, Copy, Default)]
pub struct ArchiveWriter;

impl BatchWriter for ArchiveWriter {
    fn name(&self) -> &str {
        "archive"
    }

    fn write_batch(&mut self, batch: &Batch<'_>) -> Result<Written, WriteFailure> {
        let mut w = transaction::Committer::open(batch.root, batch.lock_timeout)?;
        let patch = Patch {
            base_revision: String::new(),
            message: format!("archive {} turns of session {}", batch.records.len(), batch.session),
            sources: if batch.archive { batch.records.to_vec() } else { Vec::new() },
            edits: Vec::new(),
        };
        let done = w.commit_as(&patch, Tier::Owner, Base::Any, &batch.provenance("archive"))?;
        Ok(Written { revision: done.revision, changed: done.changed, limits: Vec::new() })
    }
}

/// What `write` did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct WriteReport {
    /// Real turns handed to the writer and marked (0: nothing was owed).
    pub turns: usize,
    /// Batches written.
    pub batches: usize,
    /// The revision after the last batch, if any was written.
    pub revision: Option<String>,
    /// Every path the batches changed, sorted, once each.
    pub changed: Vec<String>,
    /// Turns found already archived (written before a restart, never
    /// marked) and marked without writing them again.
    pub settled: usize,
    /// What the batches left out to keep people cards within their limits
    /// ([`crate::limits::merge`]d).
    pub limits: Vec<LimitHit>,
}

impl WriteReport {
    fn absorb(&mut self, other: WriteReport) {
        self.turns += other.turns;
        self.batches += other.batches;
        self.settled += other.settled;
        if other.revision.is_some() {
            self.revision = other.revision;
        }
        self.changed.extend(other.changed);
        self.changed.sort();
        self.changed.dedup();
        crate::limits::merge(&mut self.limits, other.limits);
    }
}

/// Decides when memory is written and which turns.
pub struct Scheduler<'a, S: SessionStore + ?Sized> {
    store: &'a S,
    root: PathBuf,
    workspace: String,
    clock: &'a dyn Clock,
    /// The batch threshold in `o200k_base` tokens (default 16,000).
    pub threshold: usize,
    /// The reflection cadence: a session's write is forced once it
    /// recorded this many agent steps since its newest written turn
    /// (default 25; 0: never).
    pub every_steps: usize,
    /// How long a write waits for the workspace lock (default 1 s).
    pub lock_timeout: Duration,
}

impl<S: SessionStore + ?Sized> std::fmt::Debug for Scheduler<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler")
            .field("root", &self.root)
            .field("workspace", &self.workspace)
            .field("threshold", &self.threshold)
            .field("every_steps", &self.every_steps)
            .field("lock_timeout", &self.lock_timeout)
            .finish_non_exhaustive()
    }
}

impl<'a, S: SessionStore + ?Sized> Scheduler<'a, S> {
    /// A scheduler for the workspace at `root` whose id is `workspace`.
    pub fn new(store: &'a S, root: &Path, workspace: &str) -> Scheduler<'a, S> {
        Scheduler {
            store,
            root: root.to_owned(),
            workspace: workspace.to_owned(),
            clock: &SystemClock,
            threshold: DEFAULT_THRESHOLD,
            every_steps: DEFAULT_EVERY_STEPS,
            lock_timeout: BACKGROUND_LOCK_TIMEOUT,
        }
    }

    /// Uses `clock` for the status file's times.
    pub fn with_clock(mut self, clock: &'a dyn Clock) -> Scheduler<'a, S> {
        self.clock = clock;
        self
    }

    /// The store.
    pub fn store(&self) -> &'a S {
        self.store
    }

    /// The workspace id marks are made for.
    pub fn workspace(&self) -> &str {
        &self.workspace
    }

    /// The workspace folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The clock.
    pub fn clock(&self) -> &'a dyn Clock {
        self.clock
    }

    /// Pending real turns over every session (distinct nodes).
    pub fn pending_turns(&self) -> Result<usize> {
        pending::pending_turns(self.store, &self.workspace)
    }

    /// Whether the reflection cadence makes `session`'s write due: it
    /// recorded [`Scheduler::every_steps`] agent steps or more since its
    /// newest written turn (never when `every_steps` is 0).
    pub fn steps_due(&self, session: &str) -> Result<bool> {
        if self.every_steps == 0 {
            return Ok(false);
        }
        Ok(self.store.agent_steps_since_mark(session, &self.workspace)? >= self.every_steps)
    }

    /// Writes what `session` owes.
    ///
    /// Not forced: the head's pending turns, if they reach the threshold, as
    /// one batch; under it, nothing (`turns: 0`, a success) — unless the
    /// reflection cadence makes the write due ([`Scheduler::steps_due`]),
    /// and then it is a forced one. Forced: batches
    /// until nothing is pending, the head first, then every other live tip
    /// (a prefix shared with a tip already written is marked, so it is never
    /// written again). A failure stops the call: batches before it stay
    /// written and marked, the failed one and the rest stay pending. A
    /// `CONFLICT` from the writer is retried once before it is reported.
    ///
    /// Writes for one workspace are serialised by `.scriptorium/scheduler.lock`
    /// (waited for up to `lock_timeout`, then `LOCKED`, retryable), taken
    /// before the pending turns are read: two processes never hand the same
    /// turns to a writer.
    pub fn write(
        &self,
        writer: &mut dyn BatchWriter,
        session: &str,
        force: bool,
    ) -> Result<WriteReport, WriteFailure> {
        let result = self.write_one(writer, session, force);
        self.note(&result, true);
        result
    }

    /// [`Scheduler::write`] over every session, in id order. A failure no
    /// retry can fix does not stop the others; a retryable one (the lock, the
    /// model) stops the call. The first failure is returned once every
    /// session was tried.
    pub fn write_all(&self, writer: &mut dyn BatchWriter, force: bool) -> Result<WriteReport, WriteFailure> {
        let result = self.write_every(writer, force);
        self.note(&result, true);
        result
    }

    fn write_every(&self, writer: &mut dyn BatchWriter, force: bool) -> Result<WriteReport, WriteFailure> {
        let _serial = self.serialise()?;
        let mut report = WriteReport::default();
        let mut first_failure = None;
        for s in self.store.sessions()? {
            match self.write_inner(writer, &s.id, force) {
                Ok(r) => report.absorb(r),
                Err(f) if f.retryable => return Err(f),
                Err(f) => {
                    let f = WriteFailure { reason: format!("session {:?}: {}", s.id, f.reason), ..f };
                    first_failure.get_or_insert(f);
                }
            }
        }
        match first_failure {
            Some(f) => Err(f),
            None => Ok(report),
        }
    }

    /// [`Scheduler::write`] without the status file's pending recount (the
    /// watcher recounts once per poll).
    pub(crate) fn write_one(
        &self,
        writer: &mut dyn BatchWriter,
        session: &str,
        force: bool,
    ) -> Result<WriteReport, WriteFailure> {
        let _serial = self.serialise()?;
        self.write_inner(writer, session, force)
    }

    fn serialise(&self) -> Result<transaction::lock::WorkspaceLock, WriteFailure> {
        transaction::lock::acquire_file(&self.root, SCHEDULER_LOCK, self.lock_timeout)
            .map_err(WriteFailure::from)
    }

    /// Records the outcome in the status file (best effort).
    pub(crate) fn note(&self, result: &Result<WriteReport, WriteFailure>, recount: bool) {
        let now = clock::format(self.clock.now());
        match result {
            Ok(r) if r.batches > 0 || r.settled > 0 => {
                tracing::info!(turns = r.turns, batches = r.batches, settled = r.settled, "memory written");
                status::record_success(&self.root, &now);
            }
            // Nothing owed: nothing changed, the status stands.
            Ok(_) => return,
            Err(f) => {
                tracing::warn!(code = f.code.as_str(), retryable = f.retryable, reason = ?f.reason, "write failed");
                status::record_failure(&self.root, &now, f);
            }
        }
        if recount {
            self.record_pending();
        }
    }

    /// Recounts the pending turns into the status file (best effort).
    pub fn record_pending(&self) {
        if let Ok(n) = self.pending_turns() {
            status::record_pending(&self.root, n);
        }
    }

    fn write_inner(
        &self,
        writer: &mut dyn BatchWriter,
        session: &str,
        force: bool,
    ) -> Result<WriteReport, WriteFailure> {
        let force = force || {
            let due = self.steps_due(session)?;
            if due {
                tracing::info!(
                    session,
                    every_steps = self.every_steps,
                    "a write is due by the reflection cadence"
                );
            }
            due
        };
        let tips = if force {
            pending::tips_head_first(self.store, session)?
        } else {
            pending::head_tip(self.store, session)?.into_iter().collect()
        };
        let mut report = WriteReport::default();
        self.release_stale_claims(session)?;
        for tip in tips {
            // One walk per tip: the batches are cut one after another from it
            // (only this call marks them while it holds the scheduler lock).
            let ids = pending::suffix(self.store, session, &tip, &self.workspace, None)?;
            let settled = self.settle(session, &ids)?;
            report.settled += settled;
            let mut at = settled;
            while at < ids.len() {
                let Some(cut) = pending::cut(self.store, session, &ids[at..], self.threshold, force)? else {
                    break;
                };
                at += cut.ids.len();
                report.absorb(self.write_batch(writer, session, &cut)?);
                if !force {
                    return Ok(report);
                }
            }
            if !force {
                break;
            }
        }
        Ok(report)
    }

    fn write_batch(
        &self,
        writer: &mut dyn BatchWriter,
        session: &str,
        cut: &Cut,
    ) -> Result<WriteReport, WriteFailure> {
        let Some((k, conflict)) = Archived::default().first_conflict(&self.root, &cut.records) else {
            return self.write_cut(writer, session, cut);
        };
        // The turns before it are written as usual; the turn itself can
        // never be archived under its id, so it is marked handled (its text
        // stays in the session store) and the write fails loudly, naming
        // both records: the next write goes on after it.
        if k > 0 {
            self.write_cut(writer, session, &cut.prefix(k))?;
        }
        self.store.mark(session, &cut.ids[k..=k], &self.workspace)?;
        Err(conflict.failure())
    }

    fn write_cut(
        &self,
        writer: &mut dyn BatchWriter,
        session: &str,
        cut: &Cut,
    ) -> Result<WriteReport, WriteFailure> {
        let batch = Batch {
            root: &self.root,
            session,
            records: &cut.records,
            lines: &cut.lines,
            tokens: cut.tokens,
            lock_timeout: self.lock_timeout,
            archive: true,
        };
        self.store.claim(session, &cut.ids, &self.workspace)?;
        let written = match writer.write_batch(&batch) {
            Err(f) if f.code == Code::Conflict => writer.write_batch(&batch),
            other => other,
        };
        let written = match written {
            Ok(w) => w,
            Err(f) => {
                // The transaction did not happen: the claims go. (Should this
                // fail too, the next run finds the records unarchived and
                // drops the claims then.)
                let _ = self.store.release(session, &cut.ids, &self.workspace);
                return Err(f);
            }
        };
        self.store.mark(session, &cut.ids, &self.workspace).map_err(|e| {
            WriteFailure::new(
                Code::Io,
                format!(
                    "the batch was written ({}) but its turns could not be marked: {e}",
                    written.revision
                ),
            )
        })?;
        let mut changed = written.changed;
        changed.sort();
        changed.dedup();
        Ok(WriteReport {
            turns: cut.ids.len(),
            batches: 1,
            revision: Some(written.revision),
            changed,
            settled: 0,
            limits: written.limits,
        })
    }

    /// Drops the claims of turns whose records are not archived: their
    /// writer's transaction never happened (the process died before it).
    fn release_stale_claims(&self, session: &str) -> Result<()> {
        let claimed = self.store.claimed(session, &self.workspace)?;
        if claimed.is_empty() {
            return Ok(());
        }
        let mut archive = ArchivedIds::default();
        let mut stale = Vec::new();
        for id in claimed {
            match self.store.node(session, &id)? {
                Some(node)
                    if node.record().is_ok_and(|r| archive.contains(&self.root, &r).unwrap_or(false)) => {}
                _ => stale.push(id),
            }
        }
        self.store.release(session, &stale, &self.workspace)
    }

    /// Marks the leading run of `pending` that was handed to a writer
    /// (claimed) and whose records are archived: its transaction succeeded
    /// and only the mark was lost. Returns the run's length.
    fn settle(&self, session: &str, pending: &[String]) -> Result<usize> {
        let claimed: HashSet<String> = self.store.claimed(session, &self.workspace)?.into_iter().collect();
        if claimed.is_empty() {
            return Ok(0);
        }
        let mut archive = ArchivedIds::default();
        let mut conflicts = Archived::default();
        let mut run = 0;
        for id in pending {
            if !claimed.contains(id) {
                break;
            }
            let Some(node) = self.store.node(session, id)? else { break };
            let Ok(record) = node.record() else { break };
            // Archived under its id, and as this very message: a record of
            // another (see `conflict`) is no sign that this turn was written.
            if !archive.contains(&self.root, &record)? || conflicts.conflict(&self.root, &record).is_some() {
                break;
            }
            run += 1;
        }
        if run > 0 {
            self.store.mark(session, &pending[..run], &self.workspace)?;
        }
        Ok(run)
    }
}

/// The scheduler's own lock file, relative to the workspace.
pub const SCHEDULER_LOCK: &str = ".scriptorium/scheduler.lock";

/// The ids archived in v2 files, read once per file.
#[derive(Default)]
struct ArchivedIds {
    files: HashMap<String, HashSet<String>>,
}

impl ArchivedIds {
    fn contains(&mut self, root: &Path, record: &SourceRecord) -> Result<bool> {
        let rel = record.id().v2_path();
        if !self.files.contains_key(&rel) {
            let ids = archived_ids(root, &rel, record)?;
            self.files.insert(rel.clone(), ids);
        }
        Ok(self.files[&rel].contains(&record.id().text()))
    }
}

/// The source ids (text form) of the valid prefix of one v2 file; empty
/// when it does not exist.
fn archived_ids(root: &Path, rel: &str, like: &SourceRecord) -> Result<HashSet<String>> {
    let bytes = match std::fs::read(root.join(rel)) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashSet::new()),
        Err(e) => return Err(Error::io(&e, &format!("cannot read {rel}")).at(rel)),
    };
    let expect = v2::Expect { provider: like.id().provider(), thread: like.id().thread() };
    let parsed = v2::parse_prefix(&bytes, Some(expect));
    Ok(parsed.frames.iter().map(|f| f.source_text.to_string()).collect())
}
