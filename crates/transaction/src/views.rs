//! Rebuilding the derived views (FORMAT.md §4) after an install: every
//! topic file checked against the archive as the search index knows it, the
//! views rendered, and each file whose bytes changed replaced atomically.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use scriptorium_bm25_index::search::View;
use scriptorium_bm25_index::segment::Kind;
use scriptorium_source_archive::fsio;
use scriptorium_topic_markdown::diag::Diagnostic;
use scriptorium_topic_markdown::files;
use scriptorium_topic_markdown::time::Instant;
use scriptorium_topic_markdown::validate::{check, Checked, LinkTarget, Loaded, Resolution, SourceResolver};
use scriptorium_topic_markdown::views::{self, BlockViews, Rendered, CORE_MARKER};

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

/// The view pieces of every topic file, kept between commits, relative to
/// the workspace root.
pub const VIEWS_CACHE: &str = ".scriptorium/views.cache";

const VIEWS_HEADER: &str = "scriptorium views cache 1";

/// The view pieces of every decodable topic file (its eligible blocks'
/// [`BlockViews`]), for the revision they were computed at. A commit
/// replaces the entries of the files whose verdicts it can change and
/// renders the views from all entries, without re-reading the rest.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ViewsCache {
    /// The revision the entries describe.
    pub revision: String,
    /// Path → eligible blocks' pieces.
    pub files: BTreeMap<String, Vec<BlockViews>>,
}

fn js(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

impl ViewsCache {
    /// The pieces of a full check.
    pub fn from_check(topics: &[Loaded], checked: &Checked, revision: &str) -> ViewsCache {
        let mut c = ViewsCache { revision: revision.to_owned(), files: BTreeMap::new() };
        c.replace(&topics.iter().map(|t| t.path.clone()).collect(), topics, checked);
        c
    }

    /// Replaces the entries of the files in `scope` with their pieces from
    /// `checked` (a check of `loaded`, a superset of the scope's files that
    /// exist and decode); a scope file not loaded is dropped.
    pub fn replace(&mut self, scope: &BTreeSet<String>, loaded: &[Loaded], checked: &Checked) {
        for p in scope {
            self.files.remove(p);
        }
        for l in loaded.iter().filter(|l| scope.contains(&l.path)) {
            self.files.insert(l.path.clone(), Vec::new());
        }
        for b in views::block_views(loaded, checked) {
            if let Some(v) = self.files.get_mut(&b.path).filter(|_| scope.contains(&b.path)) {
                v.push(b);
            }
        }
    }

    /// Renders every derived view from the entries and the rendered core.
    pub fn render(&self, core: views::CoreRender) -> Rendered {
        let files: Vec<&str> = self.files.keys().map(String::as_str).collect();
        let blocks: Vec<&BlockViews> = self.files.values().flatten().collect();
        views::render_parts(&files, &blocks, core)
    }

    fn encode(&self) -> Vec<u8> {
        use std::fmt::Write as _;
        let mut out = String::with_capacity(256 * self.files.values().map(Vec::len).sum::<usize>() + 64);
        let _ = writeln!(out, "{VIEWS_HEADER}\t{}", self.revision);
        for (path, blocks) in &self.files {
            let _ = writeln!(out, "F\t{}", js(path));
            for b in blocks {
                let _ = writeln!(out, "B\t{}", js(&b.id));
                if let Some((t, line)) = &b.event {
                    let _ = writeln!(out, "E\t{}\t{}\t{line}", t.seconds, t.nanos);
                }
                for ((y, m, d), t, line) in &b.days {
                    let _ = writeln!(out, "T\t{y}\t{m}\t{d}\t{}\t{}\t{line}", t.seconds, t.nanos);
                }
                for l in &b.links {
                    let id = l.block_id.as_deref().map_or_else(|| "null".to_owned(), js);
                    let _ = writeln!(out, "L\t{}\t{id}", js(&l.path));
                }
            }
        }
        out.into_bytes()
    }

    fn decode(text: &str) -> Option<ViewsCache> {
        let mut lines = text.split('\n');
        let revision = lines.next()?.strip_prefix(VIEWS_HEADER)?.strip_prefix('\t')?.to_owned();
        let mut c = ViewsCache { revision, files: BTreeMap::new() };
        let mut path: Option<String> = None;
        let num = |s: &str| s.parse::<i64>().ok();
        for line in lines {
            if line.is_empty() {
                continue;
            }
            let (tag, rest) = line.split_once('\t')?;
            match tag {
                "F" => {
                    let p: String = serde_json::from_str(rest).ok()?;
                    c.files.insert(p.clone(), Vec::new());
                    path = Some(p);
                }
                "B" => {
                    let p = path.clone()?;
                    let id: String = serde_json::from_str(rest).ok()?;
                    c.files.get_mut(&p)?.push(BlockViews {
                        path: p,
                        id,
                        event: None,
                        days: Vec::new(),
                        links: Vec::new(),
                    });
                }
                "E" => {
                    let mut f = rest.splitn(3, '\t');
                    let t = Instant { seconds: num(f.next()?)?, nanos: u32::try_from(num(f.next()?)?).ok()? };
                    let b = c.files.get_mut(path.as_ref()?)?.last_mut()?;
                    b.event = Some((t, f.next()?.to_owned()));
                }
                "T" => {
                    let mut f = rest.splitn(6, '\t');
                    let day = (num(f.next()?)?, num(f.next()?)?, num(f.next()?)?);
                    let t = Instant { seconds: num(f.next()?)?, nanos: u32::try_from(num(f.next()?)?).ok()? };
                    let b = c.files.get_mut(path.as_ref()?)?.last_mut()?;
                    b.days.push((day, t, f.next()?.to_owned()));
                }
                "L" => {
                    let (p, id) = rest.split_once('\t')?;
                    let target: String = serde_json::from_str(p).ok()?;
                    let block_id: Option<String> = serde_json::from_str(id).ok()?;
                    let b = c.files.get_mut(path.as_ref()?)?.last_mut()?;
                    b.links.push(LinkTarget { path: target, block_id });
                }
                _ => return None,
            }
        }
        Some(c)
    }

    /// The cache, if it exists, decodes and describes `revision`.
    pub fn load(root: &Path, revision: &str) -> Option<ViewsCache> {
        let text = std::fs::read_to_string(root.join(VIEWS_CACHE)).ok()?;
        ViewsCache::decode(&text).filter(|c| c.revision == revision)
    }

    /// Writes the cache (atomically).
    pub fn save(&self, root: &Path) -> Result<(), Error> {
        fsio::check_no_links(root, VIEWS_CACHE)?;
        fsio::replace_cache_file(root, &root.join(VIEWS_CACHE), &self.encode())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! The cache keeps exactly what a render needs.
    use super::*;

    #[test]
    fn the_cache_round_trips_and_renders_like_a_full_check() {
        let a = "# A\n\nTab\there [b](b.md#^b1).[^e-0000000001] ^a1\n\n[^e-0000000001]: Time: `2026-08-09T10:11:12.5Z`; Sources: [p/t/m](../sources/p/_v2/t.md#source-1)\n";
        let b = "# B\n\nOther.[^e-0000000002] ^b1\n\n[^e-0000000002]: Time: `2026-08-10`; Sources: [p/t/m](../sources/p/_v2/t.md#source-1)\n";
        let topics = vec![Loaded::parse("topics/a.md", a), Loaded::parse("topics/b\"x.md", b)];
        struct All;
        impl SourceResolver for All {
            fn resolve(&self, _: &str, _: &str, _: &str) -> Resolution {
                Resolution::Trusted
            }
        }
        let checked = check(&topics, &All);
        let cache = ViewsCache::from_check(&topics, &checked, "rev");
        let back = ViewsCache::decode(std::str::from_utf8(&cache.encode()).unwrap()).unwrap();
        assert_eq!(back, cache);
        let core = views::render_core(None, &checked, 2000);
        let full = views::render(&topics, &checked, 2000);
        assert_eq!(back.render(core).files, full.files);
        assert!(full.files.contains_key("recent_events.jsonl"));
    }
}
