//! The derived state after a write: the search index refreshed and the
//! views rebuilt, either from every file or from the files a commit can
//! affect, then the revision they describe recorded
//! (`.scriptorium/derived.revision`, with the stamps of the views written
//! without fsync).

use std::collections::BTreeSet;
use std::path::Path;

use scriptorium_bm25_index::tokenize::TokenizerConfig;
use scriptorium_bm25_index::workspace as index;
use scriptorium_source_archive::fsio;
use scriptorium_topic_markdown::views::{render_core, CoreRender, RenderReport};

use crate::disk::Disk;
use crate::error::{Code, Error};
use crate::revision;
use crate::validation::{self, TopicIndex};
use crate::views::apply::{self, Before};
use crate::views::cache::{self, Scope};
use crate::views::stamp::{self, Record};
use crate::views::{self, CoreSlot, IndexSources};

/// True when the derived state describes `revision` and the views written
/// without fsync are intact, in this boot.
pub fn is_current(root: &Path, revision: &str) -> bool {
    let r = Record::read(root);
    r.revision == revision && r.views_intact(root, stamp::boot_id().as_deref())
}

fn record(root: &Path, revision: &str, boot: Option<String>) -> Result<(), Error> {
    Record::now(root, revision, boot).write(root)
}

/// Refreshes the index and rebuilds every view from every topic file.
pub fn rebuild_all(root: &Path, disk: Disk<'_>, budget: usize) -> Result<RenderReport, Error> {
    let opened = index::open(root, TokenizerConfig::default())?;
    let checkup = views::checkup(root, &IndexSources::new(root, &opened.view))?;
    let core =
        render_core(checkup.topics.iter().find(|t| t.path == "topics/core.md"), &checkup.checked, budget);
    let rev = revision::compute(root)?.hex;
    let after = cache::build(root, &checkup.topics, &checkup.checked, &rev);
    let boot = stamp::boot_id();
    let report = cache::write(root, disk, after, core, Scope::Whole, boot.is_none(), &[])?;
    // Recorded last: the revision the derived state was built from.
    record(root, &revision::compute(root)?.hex, boot)?;
    Ok(report)
}

/// What [`after_commit`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterCommit {
    /// The index and views follow the commit.
    Done,
    /// The cache does not describe the revision before the commit, or a
    /// hand-written `core.md` waits: everything must be rebuilt.
    Rebuild,
}

/// The derived state after a commit from revision `before` to `after` that
/// changed `changed`: the index and the views re-check only the topic
/// files the change can affect ([`TopicIndex`]'s scope) and keep the other
/// files' pieces.
pub fn after_commit(
    root: &Path,
    disk: Disk<'_>,
    budget: usize,
    topics: &TopicIndex,
    before: &str,
    after: &str,
    changed: &[String],
) -> Result<AfterCommit, Error> {
    if CoreSlot::of(root) == CoreSlot::HandWritten {
        return Ok(AfterCommit::Rebuild);
    }
    let Some(state) = cache::load_state(root, before) else { return Ok(AfterCommit::Rebuild) };
    let boot = stamp::boot_id();
    let trusted = is_current(root, before);
    let recent = if trusted { std::fs::read(root.join("recent_events.jsonl")).ok() } else { None };
    // Mapped when large: only the runs' keys and lengths are looked at (the
    // file is rearranged in place after). Only a writer holding the write
    // lock changes the views, and this writer holds it; a person truncating
    // the file by hand during the commit could make a read fault and end the
    // process: after the install, before the derived record, so the next
    // writer finds no record and rebuilds the views (the change is durable).
    let relations = if trusted { fsio::read_file(&root.join("relations.json")).ok() } else { None };
    // The commit names what changed: the index looks at those files only,
    // while it still describes the revision before.
    let commit = index::Commit { before, after, changed };
    let opened = index::open_committed(root, TokenizerConfig::default(), Some(topics), commit)?;
    let sources: BTreeSet<String> = changed.iter().filter(|p| p.starts_with("sources/")).cloned().collect();
    let mut dirty: BTreeSet<String> = changed.iter().filter(|p| p.starts_with("topics/")).cloned().collect();
    dirty.extend(topics.citing(&sources)?);
    let core_exists = topics.contains("topics/core.md");
    if core_exists && CoreSlot::of(root) == CoreSlot::Empty {
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
        scriptorium_topic_markdown::validate::check(&loaded, &IndexSources::new(root, &opened.view));
    let fresh = cache::fresh(&loaded, &checked, Some(&scope));
    let gone: BTreeSet<String> = scope.iter().filter(|p| !fresh.contains_key(*p)).cloned().collect();
    // An index that cannot answer makes every file a linker: slower, right.
    let linking_to = |p: &str| {
        topics.linking_to(p).unwrap_or_else(|_| topics.hashes().into_iter().map(|(path, _)| path).collect())
    };
    let prior = Before { state, relations: relations.as_deref(), recent: recent.as_deref() };
    let next = apply::apply(root, &prior, &fresh, &gone, &linking_to, after);
    // core.md changes only when a verdict of topics/core.md can have.
    let core = if scope.contains("topics/core.md") || !core_exists {
        render_core(loaded.iter().find(|l| l.path == "topics/core.md"), &checked, budget)
    } else if CoreSlot::of(root) != CoreSlot::Derived {
        // Not read through a link; the write leaves the slot alone.
        CoreRender::default()
    } else {
        let core_path = root.join("core.md");
        let bytes = std::fs::read(&core_path).map_err(|e| Error::io(&e, "cannot read", &core_path))?;
        let bytes = String::from_utf8(bytes)
            .map_err(|_| Error::new(Code::Io, "the rendered core.md is not UTF-8").at("core.md"))?;
        CoreRender { bytes: Some(bytes), report: Default::default() }
    };
    cache::write(
        root,
        disk,
        next,
        core,
        Scope::Change,
        boot.is_none(),
        relations.as_deref().unwrap_or_default(),
    )?;
    record(root, after, boot)?;
    Ok(AfterCommit::Done)
}
