//! Rebuilding the derived views (FORMAT.md §4) after an install: the topic
//! files a change can affect checked against the archive as the search
//! index knows it, their view pieces made anew, and the views assembled
//! from those and the pieces kept from earlier commits ([`cache`],
//! [`apply`]); `recent_events.jsonl` and `relations.json` are written
//! without fsync and recognised when torn ([`stamp`]).

pub mod apply;
pub mod cache;
pub mod entries;
pub mod relations_out;
pub mod stamp;
pub mod state;

use std::borrow::Cow;
use std::path::Path;

use scriptorium_bm25_index::search::View;
use scriptorium_bm25_index::segment::Kind;
use scriptorium_source_archive::cited;
use scriptorium_topic_markdown::diag::Diagnostic;
use scriptorium_topic_markdown::files;
use scriptorium_topic_markdown::validate::{check, Checked, Loaded, Resolution, SourceResolver};
use scriptorium_topic_markdown::views::CORE_MARKER;

use crate::error::Error;
use crate::validation::load;

/// Resolves citations through the search index (kept in step with the
/// archive, promotions included); the content of a cited record, which
/// only quotations need, is read from its archive file under `root`.
pub struct IndexSources<'v> {
    view: &'v View,
    files: cited::Files<'v>,
}

impl std::fmt::Debug for IndexSources<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexSources").field("documents", &self.view.len()).finish()
    }
}

impl<'v> IndexSources<'v> {
    /// A resolver over `view`, for the workspace at `root`.
    pub fn new(root: &'v Path, view: &'v View) -> IndexSources<'v> {
        IndexSources { view, files: cited::Files::new(root) }
    }
}

impl SourceResolver for IndexSources<'_> {
    fn resolve(&self, source_id: &str, path: &str, anchor: &str) -> Resolution {
        match self.view.find(Kind::Source, path, anchor) {
            Ok(Some(s)) if s.key == source_id => {
                if s.pending {
                    Resolution::Pending
                } else {
                    Resolution::Trusted
                }
            }
            _ => Resolution::Unknown,
        }
    }

    fn content(&self, source_id: &str, path: &str, anchor: &str) -> Option<Cow<'_, str>> {
        match self.resolve(source_id, path, anchor) {
            Resolution::Unknown => None,
            _ => self.files.content(source_id, path, anchor).map(Cow::Owned),
        }
    }
}

/// Every topic file, parsed, sorted by path, with a `BAD_ENCODING`
/// diagnostic for each file or name that is not UTF-8.
pub fn load_topics(root: &Path) -> Result<(Vec<Loaded>, Vec<Diagnostic>), Error> {
    let listing = files::list_md(root, &root.join("topics"))
        .map_err(|e| Error::io(&e.error, "cannot list", &e.path))?;
    let mut bad: Vec<Diagnostic> = listing
        .bad_names
        .into_iter()
        .map(|path| Diagnostic {
            code: scriptorium_topic_markdown::diag::Code::BadEncoding,
            path,
            line: 1,
            block_id: None,
            message: "the file or folder name is not valid UTF-8; it is not read".into(),
        })
        .collect();
    let mut paths: Vec<String> = listing.files.into_iter().map(|(p, _)| p).collect();
    paths.sort();
    let mut loaded = Vec::with_capacity(paths.len());
    for rel in paths {
        let full = root.join(&rel);
        let bytes = std::fs::read(&full).map_err(|e| Error::io(&e, "cannot read", &full))?;
        match load(&rel, &bytes) {
            Ok(l) => loaded.push(l),
            Err(d) => bad.push(d),
        }
    }
    Ok((loaded, bad))
}

/// The topics checked for rendering.
#[derive(Debug)]
pub struct Checkup {
    /// Every decodable topic file.
    pub topics: Vec<Loaded>,
    /// The check of them.
    pub checked: Checked,
}

/// Loads and checks every topic file against `resolver`.
pub fn checkup(root: &Path, resolver: &dyn SourceResolver) -> Result<Checkup, Error> {
    let (topics, _) = load_topics(root)?;
    let checked = check(&topics, resolver);
    Ok(Checkup { topics, checked })
}

pub(crate) fn is_timeline_day(rel: &str) -> bool {
    let p: Vec<&str> = rel.split('/').collect();
    p.len() == 4
        && p[0] == "timeline"
        && p[1].len() == 4
        && p[2].len() == 2
        && p[3].len() == 5
        && p[3].ends_with(".md")
        && p[1..].iter().all(|s| s.trim_end_matches(".md").bytes().all(|b| b.is_ascii_digit()))
}

/// What holds the workspace root's `core.md` name. It is looked at, never
/// followed: only a regular file is read, replaced, migrated or removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoreSlot {
    /// Nothing is there.
    Empty,
    /// The rendered view (a regular file starting with the marker line).
    Derived,
    /// A regular file without the marker: a hand-written `core.md`.
    HandWritten,
    /// A symbolic link, a folder or another kind of entry (what it is):
    /// left alone, so the rendered view cannot be written there.
    Blocked(&'static str),
}

impl CoreSlot {
    /// What is in the slot at `root`.
    pub fn of(root: &Path) -> Self {
        let path = root.join("core.md");
        match std::fs::symlink_metadata(&path) {
            Err(_) => CoreSlot::Empty,
            Ok(m) if m.file_type().is_symlink() => CoreSlot::Blocked("a symbolic link"),
            Ok(m) if m.is_dir() => CoreSlot::Blocked("a folder"),
            Ok(m) if !m.is_file() => CoreSlot::Blocked("not a regular file"),
            Ok(_) if is_derived_core(&path) => CoreSlot::Derived,
            Ok(_) => CoreSlot::HandWritten,
        }
    }

    /// The warning for a blocked slot, `None` otherwise.
    pub fn warning(self) -> Option<String> {
        match self {
            CoreSlot::Blocked(what) => Some(format!(
                "core.md is {what}: it is not followed, migrated or removed, and the rendered core.md \
                 cannot be written until it is moved away (memory is written to topics/ as usual)"
            )),
            _ => None,
        }
    }
}

/// True when the file at `path` starts with the derived `core.md` marker
/// line exactly (a CR before the LF makes it another line); a symbolic
/// link is never read.
pub fn is_derived_core(path: &Path) -> bool {
    if std::fs::symlink_metadata(path).map_or(true, |m| !m.is_file()) {
        return false;
    }
    match std::fs::read(path) {
        Ok(bytes) => {
            let marker = CORE_MARKER.as_bytes();
            bytes.starts_with(marker) && bytes.get(marker.len()).is_none_or(|&b| b == b'\n')
        }
        Err(_) => false,
    }
}
