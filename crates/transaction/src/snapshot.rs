//! The read gateway: a [`Snapshot`] of a workspace, opened under the shared
//! lock after any interrupted install is completed, that every reader (the
//! CLI's `status`, `check`, `search`, `recall`, `prompt`, the tools, the
//! palace, backfill) reads through; and [`checkup`], the whole workspace
//! checked against the archive with promotions applied, for a reader that
//! holds the lock already.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use scriptorium_source_archive::archive::Archive;
use scriptorium_source_archive::trust;
use scriptorium_topic_markdown::diag::Diagnostic;
use scriptorium_topic_markdown::validate::{check, ArchiveResolver, Checked, Loaded};

use crate::error::{Code, Error};
use crate::lock::WorkspaceLock;

type Result<T> = std::result::Result<T, Error>;

/// Why a workspace is read as it is on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadOnly {
    /// Why it cannot be written.
    pub reason: String,
    /// Whether an interrupted install is left that could not be completed.
    pub interrupted_install: bool,
}

/// A workspace held for reading: no install runs while it lives.
///
/// Opening completes an interrupted install first (and rebuilds views torn
/// since they were written), under the write lock; then the lock is held
/// shared. A workspace this process cannot write is read as it is on disk,
/// and [`Snapshot::read_only`] says why.
#[derive(Debug)]
pub struct Snapshot {
    root: PathBuf,
    lock: WorkspaceLock,
    superseded: Vec<String>,
}

/// Every topic file of a workspace with what is wrong with it.
#[derive(Debug)]
pub struct Topics {
    /// The decodable topic files, parsed, sorted by path.
    pub loaded: Vec<Loaded>,
    /// `BAD_ENCODING` diagnostics of files and names that cannot be read.
    pub unreadable: Vec<Diagnostic>,
}

/// The whole workspace checked: topics against the archive, promotions
/// counted.
#[derive(Debug)]
pub struct Checkup {
    /// The topic files.
    pub topics: Topics,
    /// The archive, scanned.
    pub archive: Archive,
    /// Source ids promoted since they were archived (FORMAT §6).
    pub promoted: BTreeSet<String>,
    /// The check of every block.
    pub checked: Checked,
    /// Every diagnostic, unreadable files included, sorted by path, line
    /// and code.
    pub diagnostics: Vec<Diagnostic>,
}

impl Checkup {
    /// The archive as the check resolved it: promoted records trusted.
    pub fn resolver(&self) -> ArchiveResolver<'_> {
        let mut resolver = ArchiveResolver::new(&self.archive);
        resolver.promote(&self.promoted);
        resolver
    }
}

impl Snapshot {
    /// Opens the workspace at `root`, waiting at most `wait` for a writer's
    /// lock. `NOT_FOUND` when there is no folder.
    pub fn open(root: &Path, wait: Duration) -> Result<Snapshot> {
        require(root)?;
        let shared = crate::lock::acquire_shared(root, wait)?;
        let settled = !crate::install::pending(root) && !crate::views::stamp::views_torn(root);
        if shared.held().not_writable().is_some() || settled {
            return Ok(Snapshot { root: root.to_owned(), lock: shared, superseded: Vec::new() });
        }
        drop(shared);
        let writer = crate::Committer::open(root, wait)?;
        let superseded = writer.superseded.clone();
        drop(writer);
        let lock = crate::lock::acquire_shared(root, wait)?;
        Ok(Snapshot { root: root.to_owned(), lock, superseded })
    }

    /// The workspace folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Why the workspace is read as it is on disk, when this process cannot
    /// write it.
    pub fn read_only(&self) -> Option<ReadOnly> {
        self.lock.held().not_writable().map(|why| ReadOnly {
            reason: why.to_owned(),
            interrupted_install: crate::install::pending(&self.root),
        })
    }

    /// Files of an old layout the settling writer moved aside (FORMAT §1).
    pub fn superseded(&self) -> &[String] {
        &self.superseded
    }

    /// The revision (FORMAT §6).
    pub fn revision(&self) -> Result<String> {
        Ok(crate::revision::compute(&self.root)?.hex)
    }

    /// Every topic file, parsed.
    pub fn topics(&self) -> Result<Topics> {
        topics(&self.root)
    }

    /// Source ids promoted since they were archived.
    pub fn promoted(&self) -> Result<BTreeSet<String>> {
        Ok(trust::promoted(&self.root)?)
    }

    /// The whole workspace checked against the archive, promotions counted.
    pub fn checkup(&self) -> Result<Checkup> {
        checkup(&self.root)
    }
}

/// Every topic file of the workspace at `root`, parsed, for a caller that
/// holds its lock (a [`Snapshot`] or a writer).
pub fn topics(root: &Path) -> Result<Topics> {
    let (loaded, unreadable) = crate::views::load_topics(root)?;
    Ok(Topics { loaded, unreadable })
}

/// The whole workspace at `root` checked against the archive, promotions
/// counted, for a caller that holds its lock (a [`Snapshot`] or a writer).
pub fn checkup(root: &Path) -> Result<Checkup> {
    let topics = topics(root)?;
    let archive = Archive::scan(root)?;
    let promoted = trust::promoted(root)?;
    let checked = {
        let mut resolver = ArchiveResolver::new(&archive);
        resolver.promote(&promoted);
        check(&topics.loaded, &resolver)
    };
    let mut diagnostics = topics.unreadable.clone();
    diagnostics.extend(checked.diagnostics.iter().cloned());
    sort(&mut diagnostics);
    Ok(Checkup { topics, archive, promoted, checked, diagnostics })
}

/// Some topic files checked: the named ones with every file their verdicts
/// depend on ([`check_files`]).
#[derive(Debug, Default)]
pub struct FilesCheck {
    /// Every topic file read for the check (the named ones that exist and
    /// decode, and those their verdicts depend on), sorted by path.
    pub loaded: Vec<Loaded>,
    /// The check of their blocks; only the named files' verdicts are those
    /// the whole workspace's check would give (the others' neighbours were
    /// not all read).
    pub checked: Checked,
}

/// The topic files `paths` (workspace-relative) of the workspace at `root`
/// checked as the whole workspace's check would judge them, at a cost that
/// follows them rather than the workspace: read with every topic file
/// their verdicts depend on (those they link to, those linking to them,
/// those sharing a block id with them: the id and link index, FORMAT.md
/// §6), citations resolved by reading only the cited archive files,
/// promotions counted. A named path that is not a regular file of the
/// revision (missing, a symbolic link) is left out; when none is, nothing
/// else is read. For a caller that holds the lock, or that reads the
/// workspace as it is (a hook, which never waits for a writer).
pub fn check_files(root: &Path, paths: &[&str]) -> Result<FilesCheck> {
    let regular = |p: &&str| std::fs::symlink_metadata(root.join(p)).is_ok_and(|m| m.is_file());
    if !paths.iter().any(regular) {
        return Ok(FilesCheck::default());
    }
    let rev = crate::revision::compute(root)?;
    let named: BTreeSet<String> =
        paths.iter().filter(|p| rev.hash_of(p).is_some()).map(|p| (*p).to_owned()).collect();
    if named.is_empty() {
        return Ok(FilesCheck::default());
    }
    let index = crate::validation::TopicIndex::load(root, &rev)?;
    let (_, load_set) = index.scope(&named)?;
    let mut loaded = Vec::with_capacity(load_set.len());
    for path in &load_set {
        let full = root.join(path);
        match std::fs::read(&full) {
            // A file not decodable has no block to judge.
            Ok(bytes) => loaded.extend(crate::validation::load(path, &bytes).ok()),
            // Removed since the revision was read (a reader without the
            // lock): judged as gone.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&e, "cannot read", &full)),
        }
    }
    let promoted = trust::promoted(root)?;
    let staged = std::collections::HashMap::new();
    let read = crate::validation::FileRecords::default();
    let sources = crate::validation::Sources::new(root, &staged, &promoted, &read);
    let checked = check(&loaded, &sources);
    Ok(FilesCheck { loaded, checked })
}

/// Diagnostics in the order every verb prints them: path, line, code.
pub fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by(|a, b| (&a.path, a.line, a.code).cmp(&(&b.path, b.line, b.code)));
}

/// `NOT_FOUND` unless `root` is a folder.
pub fn require(root: &Path) -> Result<()> {
    if root.is_dir() {
        return Ok(());
    }
    Err(Error::new(Code::NotFound, format!("no workspace at {}", root.display()))
        .at(root.to_string_lossy().into_owned()))
}
