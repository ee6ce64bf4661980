//! The transaction: a writer holding the lock, and what it can do — commit
//! a patch, promote pending sources, rebuild what is derived.
//!
//! [`Committer::open`] takes `.scriptorium/write.lock` and recovers any
//! interrupted install before anything else. [`Committer::commit`] then runs
//! FORMAT.md §6 in order: the paths against the disk (`INVALID_ARGUMENT`),
//! the base revision (`CONFLICT`), the archive plan and the edits applied
//! to private copies (`CONFLICT`, `NOT_FOUND`), validation
//! (`VALIDATION_FAILED` with every added diagnostic), the crash-safe install
//! ([`crate::install`]), then the search index and the derived views, then
//! the history line (written with the install, see there). A refusal
//! writes nothing under `topics/` or `sources/`.
//!
//! Staging a patch is in `stage`, promoting sources in `promote`, carrying
//! out the migration of a hand-written `core.md` in `core_migration`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use scriptorium_bm25_index::tokenize::TokenizerConfig;
use scriptorium_bm25_index::workspace as index;
use scriptorium_source_archive::{fsio, timestamp, trust};
use scriptorium_topic_markdown::views::RenderReport;

use crate::core_md;
use crate::derive;
use crate::disk::{Disk, Faults};
use crate::error::{Code, Error};
use crate::history;
use crate::install::{self, Recovered};
use crate::lock::{self, WorkspaceLock};
use crate::observe::{Installed, Provenance};
use crate::patch::{self, Patch, Tier};
use crate::revision;
use crate::validation::{self, TopicIndex};
use crate::views::{self, IndexSources};
use stage::StagedPatch;

mod core_migration;
mod files;
mod promote;
mod stage;

pub use files::FileChange;

/// Whether a commit must name the current revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// `base_revision` must be current (`CONFLICT` otherwise).
    Check,
    /// Any revision: for writes that cannot conflict (archiving records,
    /// which only ever adds).
    Any,
}

/// What a successful commit did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Committed {
    /// The revision now current.
    pub revision: String,
    /// The revision before.
    pub revision_before: String,
    /// Workspace-relative paths changed, sorted (empty: nothing to do).
    pub changed: Vec<String>,
    /// Records newly archived.
    pub appended: usize,
    /// Records already archived (skipped).
    pub duplicates: usize,
    /// Topic files validation looked at.
    pub files_checked: usize,
    /// True when the index and views were rebuilt from every file instead
    /// of following the change (their cache did not describe the revision
    /// before the commit, or a hand-written `core.md` waited).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rebuilt_views: bool,
    /// What went wrong after the install (index or views); the change
    /// itself is installed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// What a promotion did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Promoted {
    /// Ids newly promoted.
    pub promoted: Vec<String>,
    /// Ids that were already trusted (promoted before, or never pending).
    pub already_trusted: Vec<String>,
    /// The revision (a promotion does not change it).
    pub revision: String,
}

/// What rebuilding the derived state did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Derived {
    /// The views report.
    pub views: RenderReport,
    /// What happened to a hand-written root `core.md`, if there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hand_written_core: Option<String>,
    /// What could not be done, and why (a root `core.md` that is not a
    /// regular file).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A writer: holds the write lock until dropped.
#[derive(Debug)]
pub struct Committer<'f> {
    root: PathBuf,
    _lock: WorkspaceLock,
    faults: &'f Faults,
    /// What recovery did when the writer opened.
    pub recovered: Recovered,
    /// The `core.md` token budget used by the views.
    pub budget: usize,
    /// The old layout's entries moved to `<root>-superseded/` on opening.
    pub superseded: Vec<String>,
}

pub use crate::views::stamp::DERIVED_FROM;

static NO_FAULTS: std::sync::LazyLock<Faults> = std::sync::LazyLock::new(Faults::default);

fn history_line(
    tx: &str,
    before: &str,
    after: &str,
    tier: Tier,
    message: &str,
    changed: &[String],
    appended: usize,
) -> String {
    #[derive(Serialize)]
    struct Line<'a> {
        time: String,
        tx: &'a str,
        revision_before: &'a str,
        revision_after: &'a str,
        tier: &'a str,
        message: &'a str,
        changed: &'a [String],
        sources_appended: usize,
    }
    scriptorium_source_archive::json::to_line(&Line {
        time: timestamp::now(),
        tx,
        revision_before: before,
        revision_after: after,
        tier: tier.as_str(),
        message,
        changed,
        sources_appended: appended,
    })
}

impl<'f> Committer<'f> {
    /// Takes the write lock of the workspace at `root` (waiting at most
    /// `timeout`) and recovers an interrupted install. The folder must
    /// exist; the layout is created in it when missing.
    pub fn open(root: &Path, timeout: Duration) -> Result<Committer<'static>, Error> {
        Committer::open_with(root, timeout, &NO_FAULTS)
    }

    /// [`Committer::open`] with every install write going through `faults`.
    pub fn open_with(root: &Path, timeout: Duration, faults: &'f Faults) -> Result<Committer<'f>, Error> {
        if !root.is_dir() {
            return Err(Error::new(Code::NotFound, format!("no workspace folder at {}", root.display())));
        }
        let lock = lock::acquire(root, timeout)?;
        let recovered = install::recover(root, Disk::new(faults))?;
        if recovered != install::Recovered::Nothing {
            tracing::warn!(?recovered, "an interrupted install was found and settled");
        }
        crate::layout::ensure(root)?;
        let superseded = crate::layout::move_superseded(root)?;
        let mut w = Committer {
            root: root.to_path_buf(),
            _lock: lock,
            faults,
            recovered,
            budget: crate::layout::core_budget(root)?,
            superseded,
        };
        // A change rolled forward, a commit interrupted after its install,
        // or an edit made in an editor: the derived state is rebuilt from
        // what is there now.
        if !derive::is_current(root, &revision::compute(root)?.hex) {
            // Best effort: the next writer tries again.
            let _ = w.rebuild_all(false);
        }
        Ok(w)
    }

    /// The workspace root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn disk(&self) -> Disk<'f> {
        Disk::new(self.faults)
    }

    /// Commits `patch` as `tier` (see the module documentation), made by
    /// an unnamed caller (`external`).
    pub fn commit(&mut self, patch: &Patch, tier: Tier, base: Base) -> Result<Committed, Error> {
        self.commit_as(patch, tier, base, &Provenance::by("external"))
    }

    /// [`Committer::commit`], saying who or what made the change: every
    /// registered [`crate::observe::Observer`] is told of it once it is
    /// installed.
    pub fn commit_as(
        &mut self,
        patch: &Patch,
        tier: Tier,
        base: Base,
        provenance: &Provenance,
    ) -> Result<Committed, Error> {
        let root = self.root.clone();
        let root = root.as_path();
        check_patch(root, patch, tier)?;
        let rev = revision::compute(root)?;
        if base == Base::Check && patch.base_revision != rev.hex {
            return Err(Error::new(
                Code::Conflict,
                format!(
                    "base_revision {} is not the current revision {}; read the workspace again and retry",
                    patch.base_revision, rev.hex
                ),
            ));
        }
        let staged = stage::stage(root, patch)?;
        // Validate against the current workspace.
        let mut index_of_topics = TopicIndex::load(root, &rev)?;
        let outcome = validate(root, &index_of_topics, &staged)?;
        let StagedPatch { plan, topics, .. } = staged;
        let mut changes: Vec<(String, Option<Vec<u8>>)> =
            plan.writes.into_iter().map(|(p, b)| (p, Some(b))).collect();
        changes.extend(topics);
        changes.sort_by(|a, b| a.0.cmp(&b.0));
        let changed: Vec<String> = changes.iter().map(|(p, _)| p.clone()).collect();
        let mut committed = Committed {
            revision: rev.hex.clone(),
            revision_before: rev.hex.clone(),
            changed,
            appended: 0,
            duplicates: plan.report.duplicates,
            files_checked: outcome.files_checked,
            rebuilt_views: false,
            warnings: Vec::new(),
        };
        if changes.is_empty() {
            return Ok(committed);
        }
        for (p, _) in &changes {
            fsio::check_no_links(root, p)?;
        }
        let after = rev.after(&changes);
        let tx = install::new_tx_id();
        let appended = plan.report.appended;
        let line = history_line(&tx, &rev.hex, &after, tier, &patch.message, &committed.changed, appended);
        let planning = Planning {
            tier,
            message: &patch.message,
            provenance,
            rule: history::frames::Rule::Append,
            merge: None,
        };
        let planned = plan_commit(root, &rev, &changes, &after, &planning)?;
        let installing = Installing { tx: &tx, files: &changes, line, planned };
        self.install(installing, &mut index_of_topics, outcome.facts, &mut committed)?;
        tracing::info!(
            revision = %after,
            tier = tier.as_str(),
            paths = committed.changed.len(),
            appended,
            why = ?patch.message,
            "committed"
        );
        committed.revision = after;
        committed.appended = appended;
        self.settle(&index_of_topics, &mut committed, tier, &patch.message, provenance);
        Ok(committed)
    }

    /// After an install: the index and the views brought up to date, and
    /// every observer told.
    fn settle(
        &mut self,
        index_of_topics: &TopicIndex,
        committed: &mut Committed,
        tier: Tier,
        message: &str,
        provenance: &Provenance,
    ) {
        let root = self.root.clone();
        self.derive_after_commit(&root, index_of_topics, committed);
        crate::observe::notify(&Installed {
            root: &root,
            revision_before: &committed.revision_before,
            revision: &committed.revision,
            changed: &committed.changed,
            tier,
            message,
            provenance,
        });
    }

    /// Installs a planned change, says when its git commit had to be
    /// postponed, and records the changed files' facts in the topic table.
    fn install(
        &mut self,
        installing: Installing<'_>,
        index_of_topics: &mut TopicIndex,
        facts: Vec<(String, Option<validation::FileFacts>)>,
        committed: &mut Committed,
    ) -> Result<(), Error> {
        let root = self.root.clone();
        let Installing { tx, files, line, planned } = installing;
        install::install(&root, self.disk(), tx, files, line, planned)?;
        if let Some(why) = history::postponed(&root) {
            committed.warnings.push(format!(
                "the change is installed, but its git commit is postponed to the next write: {why}"
            ));
        }
        for (path, facts) in facts {
            index_of_topics.set(&path, facts);
        }
        index_of_topics.save(&root);
        Ok(())
    }

    /// Brings the index and the views up to date with a commit just
    /// installed; what fails is a warning (the change is installed).
    fn derive_after_commit(&mut self, root: &Path, index_of_topics: &TopicIndex, committed: &mut Committed) {
        let done = derive::after_commit(
            root,
            self.disk(),
            self.budget,
            index_of_topics,
            &committed.revision_before,
            &committed.revision,
            &committed.changed,
        );
        committed.rebuilt_views = done == Ok(derive::AfterCommit::Rebuild);
        let done = match done {
            Ok(derive::AfterCommit::Done) => Ok(()),
            Ok(derive::AfterCommit::Rebuild) => self.rebuild_all(false).map(|_| ()),
            Err(e) => Err(e),
        };
        if let Err(e) = done {
            tracing::warn!(error = %e, "installed, but rebuilding the index or views failed");
            committed
                .warnings
                .push(format!("the change is installed, but rebuilding the index or views failed: {e}"));
        }
        committed.warnings.extend(views::CoreSlot::of(root).warning());
    }

    /// What `render` does: refreshes the search index, moves a
    /// hand-written root `core.md` into `topics/core.md` (or preserves it as
    /// evidence; either is a commit of its own), and rebuilds every derived
    /// view.
    pub fn rebuild_derived(&mut self) -> Result<Derived, Error> {
        self.rebuild_all(true)
    }

    /// Rebuilds the index and every view from all files; a hand-written
    /// `core.md` is promoted only when `promote_core` (never behind the back
    /// of a commit, whose reported revision would then be stale).
    fn rebuild_all(&mut self, promote_core: bool) -> Result<Derived, Error> {
        let root = self.root.clone();
        let mut derived = Derived::default();
        let slot = views::CoreSlot::of(&root);
        derived.warnings.extend(slot.warning());
        if promote_core && slot == views::CoreSlot::HandWritten {
            let core_path = root.join("core.md");
            let opened = index::open(&root, TokenizerConfig::default())?;
            let checkup = views::checkup(&root, &IndexSources::new(&root, &opened.view))?;
            let bytes = std::fs::read(&core_path).map_err(|e| Error::io(&e, "cannot read", &core_path))?;
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let resolver = IndexSources::new(&root, &opened.view);
            let plan = core_md::plan(&bytes, &text, &checkup.topics, &resolver);
            drop(checkup);
            drop(opened);
            let done = self.promote_core(plan);
            derived.hand_written_core = Some(done.note);
            derived.warnings.extend(done.warnings);
        }
        derived.views = derive::rebuild_all(&root, self.disk(), self.budget)?;
        Ok(derived)
    }
}

/// A planned change about to be installed.
struct Installing<'a> {
    tx: &'a str,
    /// Every file: the revision's, then this machine's own.
    files: &'a [(String, Option<Vec<u8>>)],
    /// The history line.
    line: String,
    planned: Option<history::Planned>,
}

/// What a transaction's commit is planned from, besides its files.
struct Planning<'a> {
    tier: Tier,
    message: &'a str,
    provenance: &'a Provenance,
    /// What the archive files written may do besides appending.
    rule: history::frames::Rule,
    merge: Option<history::Merge>,
}

/// The git commit of a transaction about to be installed: edits made
/// outside Scriptorium are committed first (their own `external` commit),
/// and a change that would commit a tampered archive file is refused
/// (`TAMPERED`). `None` when the workspace keeps no history.
fn plan_commit(
    root: &Path,
    rev: &revision::Revision,
    changes: &[(String, Option<Vec<u8>>)],
    after: &str,
    planning: &Planning<'_>,
) -> Result<Option<history::Planned>, Error> {
    let Planning { tier, message, provenance, .. } = *planning;
    let Some(repo) = history::Writer::open(root)? else { return Ok(None) };
    history::commit_postponed(root, Disk::new(&NO_FAULTS))?;
    repo.commit_outside(rev)?;
    let written = changes.iter().filter_map(|(p, b)| b.as_deref().map(|b| (p.as_str(), b)));
    repo.check_archive_writes(written, planning.rule)?;
    let stamp = history::Stamp {
        revision: after.to_owned(),
        writer: provenance.writer.clone(),
        tier: tier.as_str().to_owned(),
        session: provenance.session.clone(),
        turns: provenance.turns.clone(),
    };
    let summary = match message.trim() {
        "" => format!("{}: {} files", provenance.writer, changes.len()),
        m => m.to_owned(),
    };
    Ok(Some(history::Planned {
        summary,
        stamp,
        paths: changes.iter().map(|(p, _)| p.clone()).collect(),
        merge: planning.merge.clone(),
    }))
}

/// The checks of a patch made under the lock, before anything is read:
/// every path (again: callers may build patches themselves), the paths
/// against the disk, the tier.
fn check_patch(root: &Path, patch: &Patch, tier: Tier) -> Result<(), Error> {
    for (k, e) in patch.edits.iter().enumerate() {
        patch::check_path(e.path()).map_err(|err| Error { path: Some(format!("edits[{k}].path")), ..err })?;
    }
    patch::check_paths_on_disk(root, patch)?;
    // Re-checked here for callers that built the patch themselves.
    patch::check_tier(patch, tier)?;
    Ok(())
}

/// Validates the staged change against the current workspace (`index`):
/// `VALIDATION_FAILED` with every diagnostic it would add.
fn validate(root: &Path, index: &TopicIndex, staged: &StagedPatch) -> Result<validation::Outcome, Error> {
    validate_files(root, index, &staged.topics, &staged.sources, "patch")
}

/// Validates changing `topics` with the archive files `sources` against the
/// current workspace (`index`): `VALIDATION_FAILED` with every diagnostic
/// the change (`what`: the patch, the result) would add.
fn validate_files(
    root: &Path,
    index: &TopicIndex,
    topics: &std::collections::BTreeMap<String, Option<Vec<u8>>>,
    sources: &std::collections::HashMap<String, Vec<u8>>,
    what: &str,
) -> Result<validation::Outcome, Error> {
    let promoted = trust::promoted(root)?;
    let outcome = validation::validate(root, index, topics, sources, &promoted)?;
    if !outcome.added.is_empty() {
        let listed: Vec<String> = outcome.added.iter().map(ToString::to_string).collect();
        return Err(Error::new(
            Code::ValidationFailed,
            format!(
                "the {what} would add {} diagnostic(s); nothing was written:\n{}",
                listed.len(),
                listed.join("\n")
            ),
        )
        .with_diagnostics(outcome.added));
    }
    Ok(outcome)
}
