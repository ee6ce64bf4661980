//! The transaction: a writer holding the lock, and what it can do — commit
//! a patch, promote pending sources, rebuild what is derived.
//!
//! [`Writer::open`] takes `.scriptorium/write.lock` and recovers any
//! interrupted install before anything else. [`Writer::commit`] then runs
//! FORMAT.md §6 in order: the paths against the disk (`INVALID_ARGUMENT`),
//! the base revision (`CONFLICT`), the archive plan and the edits applied
//! to private copies (`CONFLICT`, `NOT_FOUND`), validation
//! (`VALIDATION_FAILED` with every added diagnostic), the crash-safe install
//! ([`crate::install`]), then the search index and the derived views, then
//! the history line (written with the install, see there). A refusal
//! writes nothing under `topics/` or `sources/`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use scriptorium_bm25_index::tokenize::TokenizerConfig;
use scriptorium_bm25_index::workspace as index;
use scriptorium_source_archive::{append, fsio, timestamp, trust, SourceId};
use scriptorium_topic_markdown::views::RenderReport;

use crate::disk::{Disk, Faults};
use crate::error::{Code, Error};
use crate::install::{self, Recovered};
use crate::lock::{self, WriteLock};
use crate::patch::{self, Edit, Patch, Tier};
use crate::revision;
use crate::validation::{self, TopicIndex};
use crate::views::{self, IndexSources};

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
pub struct Writer<'f> {
    root: PathBuf,
    _lock: WriteLock,
    faults: &'f Faults,
    /// What recovery did when the writer opened.
    pub recovered: Recovered,
    /// The `core.md` token budget used by the views.
    pub budget: usize,
    /// The old layout's entries moved to `<root>-superseded/` on opening.
    pub superseded: Vec<String>,
}

/// The revision the derived views and the index were last built from.
pub const DERIVED_FROM: &str = ".scriptorium/derived.revision";

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

fn not_found(k: usize, path: &str, what: &str) -> Error {
    Error::new(Code::NotFound, format!("edits[{k}]: {what}")).at(path)
}

impl<'f> Writer<'f> {
    /// Takes the write lock of the workspace at `root` (waiting at most
    /// `timeout`) and recovers an interrupted install. The folder must
    /// exist; the layout is created in it when missing.
    pub fn open(root: &Path, timeout: Duration) -> Result<Writer<'static>, Error> {
        Writer::open_with(root, timeout, &NO_FAULTS)
    }

    /// [`Writer::open`] with every install write going through `faults`.
    pub fn open_with(root: &Path, timeout: Duration, faults: &'f Faults) -> Result<Writer<'f>, Error> {
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
        let mut w = Writer {
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
        let built_from = std::fs::read_to_string(root.join(DERIVED_FROM)).unwrap_or_default();
        if built_from.trim() != revision::compute(root)?.hex {
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

    /// Commits `patch` as `tier` (see the module documentation).
    pub fn commit(&mut self, patch: &Patch, tier: Tier, base: Base) -> Result<Committed, Error> {
        let root = self.root.clone();
        let root = root.as_path();
        for (k, e) in patch.edits.iter().enumerate() {
            patch::check_path(e.path())
                .map_err(|err| Error { path: Some(format!("edits[{k}].path")), ..err })?;
        }
        patch::check_paths_on_disk(root, patch)?;
        // Re-checked here for callers that built the patch themselves.
        patch::check_tier(patch, tier)?;
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
        // Stage: the archive plan, then the edits on private copies.
        // Which refusal wins: CONFLICT, then NOT_FOUND, then
        // VALIDATION_FAILED; so every edit is tried, and the first of each
        // kind kept.
        let mut conflict: Option<Error> = None;
        let mut missing: Option<Error> = None;
        let mut damaged: Option<Error> = None;
        let plan = match append::plan(root, &patch.sources) {
            Ok(p) => p,
            Err(e) => {
                let e = Error::from(e);
                match e.code {
                    Code::Conflict => conflict = Some(e),
                    Code::ValidationFailed => damaged = Some(e),
                    _ => return Err(e),
                }
                append::AppendPlan { writes: Vec::new(), report: Default::default() }
            }
        };
        let staged_sources: HashMap<String, Vec<u8>> = plan.writes.iter().cloned().collect();
        let mut topics: BTreeMap<String, Option<Vec<u8>>> = BTreeMap::new();
        let mut originals: HashMap<String, Option<Vec<u8>>> = HashMap::new();
        for (k, edit) in patch.edits.iter().enumerate() {
            let path = edit.path();
            if !topics.contains_key(path) {
                let current = read_topic(root, path)?;
                originals.insert(path.to_owned(), current.clone());
                topics.insert(path.to_owned(), current);
            }
            let slot = topics.get_mut(path).expect("just inserted");
            let refused = match (edit, slot.as_mut()) {
                (Edit::Create { .. }, Some(_)) => Some(
                    Error::new(Code::Conflict, format!("edits[{k}]: create {path}: the file already exists"))
                        .at(path),
                ),
                (Edit::Create { content, .. }, None) => {
                    *slot = Some(content.as_bytes().to_vec());
                    None
                }
                (Edit::Append { content, .. }, Some(bytes)) => {
                    bytes.extend_from_slice(content.as_bytes());
                    None
                }
                (Edit::Replace { content, .. }, Some(bytes)) => {
                    *bytes = content.as_bytes().to_vec();
                    None
                }
                (Edit::StrReplace { old, new, .. }, Some(bytes)) => {
                    match memchr::memmem::find(bytes, old.as_bytes()) {
                        Some(at) => {
                            bytes.splice(at..at + old.len(), new.as_bytes().iter().copied());
                            None
                        }
                        None => {
                            Some(not_found(k, path, &format!("str_replace in {path}: `old` does not occur")))
                        }
                    }
                }
                (Edit::Delete { .. }, Some(_)) => {
                    *slot = None;
                    None
                }
                (e, None) => Some(not_found(k, path, &format!("{} {path}: no such file", e.op()))),
            };
            match refused {
                Some(e) if e.code == Code::Conflict => {
                    conflict.get_or_insert(e);
                }
                Some(e) => {
                    missing.get_or_insert(e);
                }
                None => {}
            }
        }
        if let Some(e) = conflict.or(missing).or(damaged) {
            return Err(e);
        }
        topics.retain(|p, new| originals.get(p) != Some(new));
        // Validate against the current workspace.
        let mut index_of_topics = TopicIndex::load(root, &rev)?;
        let promoted = trust::promoted(root)?;
        let outcome = validation::validate(root, &index_of_topics, &topics, &staged_sources, &promoted)?;
        if !outcome.added.is_empty() {
            let listed: Vec<String> = outcome.added.iter().map(ToString::to_string).collect();
            return Err(Error::new(
                Code::ValidationFailed,
                format!(
                    "the patch would add {} diagnostic(s); nothing was written:\n{}",
                    listed.len(),
                    listed.join("\n")
                ),
            )
            .with_diagnostics(outcome.added));
        }
        let mut changes: Vec<(String, Option<Vec<u8>>)> =
            plan.writes.iter().map(|(p, b)| (p.clone(), Some(b.clone()))).collect();
        changes.extend(topics);
        changes.sort_by(|a, b| a.0.cmp(&b.0));
        let changed: Vec<String> = changes.iter().map(|(p, _)| p.clone()).collect();
        if changes.is_empty() {
            return Ok(Committed {
                revision: rev.hex.clone(),
                revision_before: rev.hex,
                changed,
                appended: 0,
                duplicates: plan.report.duplicates,
                files_checked: outcome.files_checked,
                warnings: Vec::new(),
            });
        }
        for (p, _) in &changes {
            fsio::check_no_links(root, p)?;
        }
        let after = rev.after(&changes);
        let tx = install::new_tx_id();
        let line = history_line(&tx, &rev.hex, &after, tier, &patch.message, &changed, plan.report.appended);
        install::install(root, self.disk(), &tx, &changes, line)?;
        for (path, facts) in outcome.facts {
            index_of_topics.set(&path, facts);
        }
        index_of_topics.save(root);
        tracing::info!(
            revision = %after,
            tier = tier.as_str(),
            paths = changed.len(),
            appended = plan.report.appended,
            why = ?patch.message,
            "committed"
        );
        let mut warnings = Vec::new();
        if let Err(e) = self.rebuild_after_commit(&index_of_topics, &rev.hex, &after, &changed) {
            tracing::warn!(error = %e, "installed, but rebuilding the index or views failed");
            warnings.push(format!("the change is installed, but rebuilding the index or views failed: {e}"));
        }
        warnings.extend(views::CoreSlot::of(root).warning());
        Ok(Committed {
            revision: after,
            revision_before: rev.hex,
            changed,
            appended: plan.report.appended,
            duplicates: plan.report.duplicates,
            files_checked: outcome.files_checked,
            warnings,
        })
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
        let derived = self.rebuild_views(promote_core)?;
        // Recorded last: the revision the derived state was built from.
        record_derived(&root, &revision::compute(&root)?.hex)?;
        Ok(derived)
    }

    /// The derived state after a commit from revision `before` to `after`
    /// that changed `changed`: the index and the views re-check only the
    /// topic files the change can affect ([`TopicIndex::scope`]) and keep
    /// the other files' view pieces ([`views::ViewsCache`]). Falls back to
    /// [`Writer::rebuild_derived`] when the cache does not describe
    /// `before`, or a hand-written `core.md` waits.
    fn rebuild_after_commit(
        &mut self,
        topics: &TopicIndex,
        before: &str,
        after: &str,
        changed: &[String],
    ) -> Result<(), Error> {
        let root = self.root.clone();
        let core_path = root.join("core.md");
        let hand_written = views::CoreSlot::of(&root) == views::CoreSlot::HandWritten;
        let cache = if hand_written { None } else { views::ViewsCache::load(&root, before) };
        let Some(mut cache) = cache else {
            return self.rebuild_all(false).map(|_| ());
        };
        let opened = index::open_scoped(&root, TokenizerConfig::default(), Some(topics))?;
        let sources: BTreeSet<String> =
            changed.iter().filter(|p| p.starts_with("sources/")).cloned().collect();
        let mut dirty: BTreeSet<String> =
            changed.iter().filter(|p| p.starts_with("topics/")).cloned().collect();
        dirty.extend(topics.citing(&sources)?);
        let core_exists = topics.contains("topics/core.md");
        if core_exists && views::CoreSlot::of(&root) == views::CoreSlot::Empty {
            // The rendered core.md went missing: render it again.
            dirty.insert("topics/core.md".to_owned());
        }
        let (scope, load) = topics.scope(&dirty)?;
        let mut loaded = Vec::new();
        for path in load.iter().filter(|p| topics.contains(p)) {
            let full = root.join(path);
            let bytes = std::fs::read(&full).map_err(|e| Error::io(&e, "cannot read", &full))?;
            if let Ok(l) = validation::load(path, &bytes) {
                loaded.push(l);
            }
        }
        let checked =
            scriptorium_topic_markdown::validate::check(&loaded, &IndexSources::new(&root, &opened.view));
        cache.replace(&scope, &loaded, &checked);
        cache.revision = after.to_owned();
        // core.md changes only when a verdict of topics/core.md can have.
        let core = if scope.contains("topics/core.md") || !core_exists {
            scriptorium_topic_markdown::views::render_core(
                loaded.iter().find(|l| l.path == "topics/core.md"),
                &checked,
                self.budget,
            )
        } else if views::CoreSlot::of(&root) != views::CoreSlot::Derived {
            // Not read through a link; `install` leaves the slot alone.
            scriptorium_topic_markdown::views::CoreRender::default()
        } else {
            let bytes = std::fs::read(&core_path).map_err(|e| Error::io(&e, "cannot read", &core_path))?;
            let bytes = String::from_utf8(bytes)
                .map_err(|_| Error::new(Code::Io, "the rendered core.md is not UTF-8").at("core.md"))?;
            scriptorium_topic_markdown::views::CoreRender { bytes: Some(bytes), report: Default::default() }
        };
        let rendered = cache.render(core);
        views::install(&root, &rendered.files)?;
        cache.save(&root)?;
        record_derived(&root, after)
    }

    fn rebuild_views(&mut self, promote_core: bool) -> Result<Derived, Error> {
        let root = self.root.clone();
        let opened = index::open(&root, TokenizerConfig::default())?;
        let checkup = views::checkup(&root, &IndexSources::new(&root, &opened.view))?;
        let mut derived = Derived::default();
        let core_path = root.join("core.md");
        let slot = views::CoreSlot::of(&root);
        derived.warnings.extend(slot.warning());
        if promote_core && slot == views::CoreSlot::HandWritten {
            let bytes = std::fs::read(&core_path).map_err(|e| Error::io(&e, "cannot read", &core_path))?;
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let resolver = IndexSources::new(&root, &opened.view);
            let plan = crate::core_md::plan(&bytes, &text, &checkup.topics, &resolver);
            drop(checkup);
            drop(opened);
            let done = self.promote_core(plan);
            derived.hand_written_core = Some(done.note);
            derived.warnings.extend(done.warnings);
            let opened = index::open(&root, TokenizerConfig::default())?;
            let checkup = views::checkup(&root, &IndexSources::new(&root, &opened.view))?;
            derived.views = self.install_full(&checkup)?;
            return Ok(derived);
        }
        derived.views = self.install_full(&checkup)?;
        Ok(derived)
    }

    /// Writes the views of a full check, and the cache of their pieces.
    fn install_full(&self, checkup: &views::Checkup) -> Result<RenderReport, Error> {
        let rendered = views::render(checkup, self.budget);
        views::install(&self.root, &rendered.files)?;
        let rev = revision::compute(&self.root)?;
        views::ViewsCache::from_check(&checkup.topics, &checkup.checked, &rev.hex).save(&self.root)?;
        Ok(rendered.report)
    }

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

/// Records the revision the derived state was last built from.
fn record_derived(root: &Path, revision: &str) -> Result<(), Error> {
    fsio::check_no_links(root, DERIVED_FROM)?;
    fsio::replace_file(root, &root.join(DERIVED_FROM), format!("{revision}\n").as_bytes())?;
    Ok(())
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

/// The current bytes of a topic file, `None` when it does not exist;
/// `INVALID_ARGUMENT` when the path is a folder or not a regular file.
fn read_topic(root: &Path, path: &str) -> Result<Option<Vec<u8>>, Error> {
    let full = root.join(path);
    match std::fs::symlink_metadata(&full) {
        Ok(m) if m.is_file() => {
            std::fs::read(&full).map(Some).map_err(|e| Error::io(&e, "cannot read", &full))
        }
        Ok(_) => {
            Err(Error::new(Code::InvalidArgument, format!("{path} exists and is not a regular file"))
                .at(path))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => Err(Error::new(
            Code::InvalidArgument,
            format!("{path}: a component of the path is a file, not a folder"),
        )
        .at(path)),
        Err(e) => Err(Error::io(&e, "cannot stat", &full)),
    }
}
