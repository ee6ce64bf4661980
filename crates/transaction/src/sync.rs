//! One memory on many machines: [`sync`] fetches a git remote, merges what
//! it holds into the workspace as one transaction, and pushes the result.
//!
//! 1. **Fetch** every branch of the remote into `refs/remotes/<remote>/`
//!    (the `git` program moves the objects: [`transport`]). No lock is held.
//! 2. **Merge**, under the workspace's write lock: edits made outside are
//!    committed first (and a tampered archive file refuses the sync with
//!    `TAMPERED`); then, by how the head relates to the remote branch of
//!    the same name ([`merge::relation`]), nothing, a fast-forward (the
//!    remote's files installed, the head moved to its commit), or a
//!    three-way merge ([`merge::merge_trees`]) installed as one validated
//!    transaction (writer `sync`) whose commit has the remote's commit as
//!    second parent. The conflicts it finds are recorded under
//!    `.scriptorium/conflicts/` in the same install ([`conflicts`]). A
//!    result that does not validate is refused with `VALIDATION_FAILED`
//!    and nothing is written.
//! 3. **Push** the head to the remote branch, as a fast-forward only. When
//!    the remote moved in the meantime, start again from 1 (at most
//!    [`Options::attempts`] times).
//!
//! Derived views, the index, the session store and everything else under
//! `.scriptorium/` stay local: each machine rebuilds its own from the
//! merged files.

use std::path::Path;
use std::time::Duration;

use gix::ObjectId;
use serde::Serialize;

use crate::commit::{Committer, FileChange};
use crate::disk::Faults;
use crate::error::{Code, Error};
use crate::history::{self, frames::Rule, Merge, Settings};
use crate::observe::Provenance;
use crate::revision;

pub mod conflicts;
mod merge;
mod moves;
pub mod resolve;
pub mod transport;

use merge::{Relation, Sides};
use transport::Pushed;

/// The remote a sync uses when none is named.
pub const DEFAULT_REMOTE: &str = "origin";

/// How to sync.
#[derive(Debug, Clone)]
pub struct Options {
    /// The remote's name.
    pub remote: String,
    /// How long to wait for the workspace's write lock.
    pub lock_timeout: Duration,
    /// How many times to fetch, merge and push while the remote keeps
    /// moving.
    pub attempts: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options { remote: DEFAULT_REMOTE.to_owned(), lock_timeout: Duration::from_secs(10), attempts: 5 }
    }
}

/// What a sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Synced {
    /// The remote.
    pub remote: String,
    /// The branch synced (the one the head names, on both sides).
    pub branch: String,
    /// `up_to_date`, `pushed` (only this machine had new commits),
    /// `fast_forward` (only the remote had), or `merged`.
    pub outcome: &'static str,
    /// The head after the sync (40 hex digits; empty: no history yet).
    pub head: String,
    /// The workspace revision after the sync.
    pub revision: String,
    /// The files the sync changed in this workspace.
    pub changed: Vec<String>,
    /// The conflicts the merge found (their ids; see `check`).
    pub conflicts: Vec<String>,
    /// Whether the head was pushed.
    pub pushed: bool,
    /// How many fetch-merge-push rounds it took.
    pub attempts: usize,
    /// Files the remote changed that no workspace may hold, left out.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
    /// What went wrong without stopping the sync.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// One merge step's result.
struct Step {
    outcome: &'static str,
    head: Option<ObjectId>,
    theirs: Option<ObjectId>,
    branch: String,
    changed: Vec<String>,
    conflicts: Vec<String>,
    skipped: Vec<String>,
    warnings: Vec<String>,
}

/// Syncs the workspace at `root` with `options.remote` (see the module
/// documentation).
pub fn sync(root: &Path, options: &Options, faults: &Faults) -> Result<Synced, Error> {
    if !Settings::read(root)?.enabled {
        return Err(Error::new(
            Code::InvalidArgument,
            "sync needs the workspace's history, and scriptorium.toml sets memory.history = \"off\"",
        ));
    }
    // The repository exists before git is asked about its remotes.
    history::Writer::open(root)?;
    transport::remote_url(root, &options.remote)?;
    let mut last_rejection = String::new();
    for attempt in 1..=options.attempts.max(1) {
        transport::fetch(root, &options.remote)?;
        let step = {
            let mut writer = Committer::open_with(root, options.lock_timeout, faults)?;
            merge_step(&mut writer, &options.remote)?
        };
        let mut out = Synced {
            remote: options.remote.clone(),
            branch: step.branch.clone(),
            outcome: step.outcome,
            head: step.head.map(|h| h.to_string()).unwrap_or_default(),
            revision: revision::compute(root)?.hex,
            changed: step.changed,
            conflicts: step.conflicts,
            pushed: false,
            attempts: attempt,
            skipped: step.skipped,
            warnings: step.warnings,
        };
        let Some(head) = step.head else { return Ok(out) };
        if step.theirs == Some(head) {
            return Ok(out);
        }
        match transport::push(root, &options.remote, &head.to_string(), &step.branch)? {
            Pushed::Done => {
                out.pushed = true;
                if out.outcome == "up_to_date" {
                    out.outcome = "pushed";
                }
                return Ok(out);
            }
            Pushed::Rejected(why) => {
                tracing::info!(attempt, %why, "sync: the remote moved; fetching again");
                last_rejection = why;
            }
        }
    }
    Err(Error::new(
        Code::Conflict,
        format!(
            "the remote {:?} kept moving during {} attempts ({last_rejection}); what was merged is committed here, run sync again",
            options.remote, options.attempts
        ),
    ))
}

/// Fetched already: commits outside edits, merges the remote branch under
/// the lock `writer` holds.
fn merge_step(writer: &mut Committer<'_>, remote: &str) -> Result<Step, Error> {
    let root = writer.root().to_path_buf();
    let root = root.as_path();
    let Some(history_writer) = history::Writer::open(root)? else {
        return Err(Error::new(Code::InvalidArgument, "sync needs the workspace's history"));
    };
    history::commit_postponed(root, crate::disk::Disk::new(&Faults::default()))?;
    let outside = history_writer.commit_outside(&revision::compute(root)?)?;
    if let Some(t) = outside.tampered.first() {
        return Err(Error::new(
            Code::Tampered,
            format!("{t}; nothing was synced. Restore the committed file (git -C <workspace> checkout HEAD -- '{}') and retry", t.path),
        )
        .at(t.path.clone()));
    }
    drop(history_writer);
    let repo =
        history::open(root)?.ok_or_else(|| Error::new(Code::Io, "the workspace's repository is gone"))?;
    let branch = branch_of(&repo)?;
    let ours = history::head(&repo)?;
    let theirs = remote_head(&repo, remote, &branch)?;
    let mut step = Step {
        outcome: "up_to_date",
        head: ours.as_ref().map(|h| h.id),
        theirs,
        branch,
        changed: Vec::new(),
        conflicts: Vec::new(),
        skipped: Vec::new(),
        warnings: Vec::new(),
    };
    let Some(theirs) = theirs else { return Ok(step) };
    let relation = merge::relation(&repo, ours.as_ref().map(|h| h.id), theirs)?;
    if matches!(relation, Relation::Behind | Relation::Diverged(_)) {
        refuse_tampered_history(&repo, ours.as_ref().map(|h| h.id), theirs, remote)?;
    }
    let (merged, merge, outcome) = match relation {
        Relation::UpToDate | Relation::Ahead => return Ok(step),
        Relation::Behind => {
            let tree = merge::tree_of(&repo, theirs)?;
            (
                merge::fast_forward(&repo, ours.as_ref().map(|h| h.tree), tree)?,
                Merge::Adopt(theirs.to_string()),
                "fast_forward",
            )
        }
        Relation::Diverged(base) => {
            let sides = Sides {
                base: base.commit.map(|b| merge::tree_of(&repo, b)).transpose()?,
                only_base: base.only,
                ours: ours.as_ref().map(|h| h.tree),
                theirs: merge::tree_of(&repo, theirs)?,
                theirs_commit: theirs,
            };
            let mut merged = merge::merge_trees(&repo, &sides)?;
            moves::follow(&repo, &sides, &mut merged)?;
            moves::one_place(&repo, &sides, &mut merged)?;
            (merged, Merge::With(theirs.to_string()), "merged")
        }
    };
    let message = match outcome {
        "merged" => format!("sync: merge {remote}/{} ({} files)", step.branch, merged.files.len()),
        _ => format!("sync: fast-forward to {remote}/{}", step.branch),
    };
    refuse_twins(root, &merged.files)?;
    let change = FileChange {
        files: merged.files,
        local: merged.conflicts.iter().map(|c| (c.record_path(), Some(c.to_record()))).collect(),
        message,
        // The remote's commits were verified one by one; the merge holds
        // every record of both sides, in one version and the canonical order.
        rule: Some(Rule::Union),
        merge: Some(merge),
    };
    let committed = writer.commit_files(&change, &Provenance::by("sync"))?;
    step.outcome = outcome;
    step.changed = committed.changed;
    step.warnings = committed.warnings;
    step.conflicts = merged.conflicts.into_iter().map(|c| c.id).collect();
    step.skipped = merged.skipped;
    step.head = history::head(&repo)?.map(|h| h.id);
    Ok(step)
}

/// `TAMPERED` when the remote's history changes, removes or reorders a
/// record one of its commits held (a commit made by hand): merging it would
/// put the breach in this workspace's history too.
fn refuse_tampered_history(
    repo: &gix::Repository,
    ours: Option<ObjectId>,
    theirs: ObjectId,
    remote: &str,
) -> Result<(), Error> {
    let brought = history::tamper::breaches_brought_by(repo, ours, theirs)?;
    let Some(t) = brought.first() else { return Ok(()) };
    Err(Error::new(
        Code::Tampered,
        format!(
            "the history of {remote} breaks the archive ({t}); nothing was merged. The remote's history was rewritten by hand: repair it there (git log -p -- '{}' shows where), then sync again",
            t.path
        ),
    )
    .at(t.path.clone()))
}

/// `CONFLICT` when a file the remote brings and one this workspace holds
/// (or two it brings) differ only in case or Unicode normalisation: on many
/// file systems they would be one file.
fn refuse_twins(root: &Path, files: &[(String, Option<Vec<u8>>)]) -> Result<(), Error> {
    let written: Vec<&str> = files.iter().filter(|(_, b)| b.is_some()).map(|(p, _)| p.as_str()).collect();
    crate::patch::check_files_on_disk(root, &written).map_err(|e| {
        if !(e.message.contains("twin") || e.message.contains("differ only")) {
            return e;
        }
        Error::new(
            Code::Conflict,
            format!(
                "{}; nothing was synced. Rename one of the two (`git mv` or a topic edit) on a machine that holds it, sync that machine, then sync here again",
                e.message
            ),
        )
        .at(e.path.unwrap_or_default())
    })
}

/// The branch the head names (`main` in a workspace Scriptorium created).
fn branch_of(repo: &gix::Repository) -> Result<String, Error> {
    let name = repo.head_name().map_err(|e| history::git_error("cannot read HEAD", e))?;
    let Some(name) = name else {
        return Err(Error::new(
            Code::InvalidArgument,
            "the workspace's HEAD is detached; check out a branch (git -C <workspace> switch main) and retry",
        )
        .at(".git"));
    };
    Ok(name.shorten().to_string())
}

/// The commit the remote's branch pointed at when fetched.
fn remote_head(repo: &gix::Repository, remote: &str, branch: &str) -> Result<Option<ObjectId>, Error> {
    let name = format!("refs/remotes/{remote}/{branch}");
    match repo.try_find_reference(name.as_str()) {
        Ok(Some(mut r)) => {
            let id = r.peel_to_id().map_err(|e| history::git_error("cannot read the remote branch", e))?;
            Ok(Some(id.detach()))
        }
        Ok(None) => Ok(None),
        Err(e) => Err(history::git_error("cannot read the remote branch", e)),
    }
}
