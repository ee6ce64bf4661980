//! Rebuilding the derived views (FORMAT.md §4) after an install: every
//! topic file checked against the archive as the search index knows it, the
//! views rendered, and each file whose bytes changed replaced atomically.

use std::collections::BTreeMap;
use std::path::Path;

use scriptorium_bm25_index::search::View;
use scriptorium_bm25_index::segment::Kind;
use scriptorium_source_archive::fsio;
use scriptorium_topic_markdown::diag::Diagnostic;
use scriptorium_topic_markdown::files;
use scriptorium_topic_markdown::validate::{check, Checked, Loaded, Resolution, SourceResolver};
use scriptorium_topic_markdown::views::{self, Rendered, CORE_MARKER};

use crate::error::Error;
use crate::validation::load;

/// Resolves citations through the search index (kept in step with the
/// archive, promotions included).
pub struct IndexSources<'v> {
    view: &'v View,
}

impl std::fmt::Debug for IndexSources<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexSources").field("documents", &self.view.len()).finish()
    }
}

impl<'v> IndexSources<'v> {
    /// A resolver over `view`.
    pub fn new(view: &'v View) -> IndexSources<'v> {
        IndexSources { view }
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

/// Renders the views of `c` under `budget` tokens for `core.md`.
pub fn render(c: &Checkup, budget: usize) -> Rendered {
    views::render(&c.topics, &c.checked, budget)
}

fn is_timeline_day(rel: &str) -> bool {
    let p: Vec<&str> = rel.split('/').collect();
    p.len() == 4
        && p[0] == "timeline"
        && p[1].len() == 4
        && p[2].len() == 2
        && p[3].len() == 5
        && p[3].ends_with(".md")
        && p[1..].iter().all(|s| s.trim_end_matches(".md").bytes().all(|b| b.is_ascii_digit()))
}

/// True when the file at `path` starts with the derived `core.md` marker
/// line exactly (a CR before the LF makes it another line).
pub fn is_derived_core(path: &Path) -> bool {
    match std::fs::read(path) {
        Ok(bytes) => {
            let marker = CORE_MARKER.as_bytes();
            bytes.starts_with(marker) && bytes.get(marker.len()).is_none_or(|&b| b == b'\n')
        }
        Err(_) => false,
    }
}

/// Writes every derived file whose bytes changed (atomically), and removes
/// derived files that have nothing left to hold. A hand-written root
/// `core.md` (without the marker) is never overwritten or removed here.
pub fn install(root: &Path, files: &BTreeMap<String, String>) -> Result<(), Error> {
    fsio::check_no_links(root, fsio::TMP_DIR)?;
    for (rel, bytes) in files {
        fsio::check_no_links(root, rel)?;
        let target = root.join(rel);
        if rel == "core.md" && target.exists() && !is_derived_core(&target) {
            continue;
        }
        if std::fs::read(&target).ok().as_deref() == Some(bytes.as_bytes()) {
            continue;
        }
        fsio::replace_file(root, &target, bytes.as_bytes())?;
    }
    let listing = files::list_md(root, &root.join("timeline"))
        .map_err(|e| Error::io(&e.error, "cannot list", &e.path))?;
    for (rel, _) in listing.files.iter().filter(|(r, _)| is_timeline_day(r) && !files.contains_key(r)) {
        fsio::check_no_links(root, rel)?;
        let p = root.join(rel);
        std::fs::remove_file(&p).map_err(|e| Error::io(&e, "cannot remove", &p))?;
        // Remove the month and year folders the removal emptied.
        let mut dir = p.parent().map(Path::to_path_buf);
        while let Some(d) = dir {
            if d == root.join("timeline") || std::fs::remove_dir(&d).is_err() {
                break;
            }
            dir = d.parent().map(Path::to_path_buf);
        }
    }
    for rel in ["recent_events.jsonl", "relations.json"] {
        fsio::check_no_links(root, rel)?;
        let p = root.join(rel);
        if !files.contains_key(rel) && p.is_file() {
            std::fs::remove_file(&p).map_err(|e| Error::io(&e, "cannot remove", &p))?;
        }
    }
    let core = root.join("core.md");
    fsio::check_no_links(root, "core.md")?;
    if !files.contains_key("core.md") && is_derived_core(&core) {
        std::fs::remove_file(&core).map_err(|e| Error::io(&e, "cannot remove", &core))?;
    }
    Ok(())
}
