//! Rebuilding the derived views (FORMAT.md §4) after an install: every
//! topic file checked against the archive as the search index knows it, the
//! views rendered, and each file whose bytes changed replaced atomically.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use scriptorium_bm25_index::search::View;
use scriptorium_bm25_index::segment::Kind;
use scriptorium_source_archive::{cited, fsio};
use scriptorium_topic_markdown::diag::Diagnostic;
use scriptorium_topic_markdown::files;
use scriptorium_topic_markdown::time::Instant;
use scriptorium_topic_markdown::validate::{check, Checked, LinkTarget, Loaded, Resolution, SourceResolver};
use scriptorium_topic_markdown::views::{self, BlockViews, Rendered, CORE_MARKER};

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

/// Writes every derived file whose bytes changed (atomically), and removes
/// derived files that have nothing left to hold. A hand-written root
/// `core.md` (without the marker) is never overwritten or removed here.
pub fn install(root: &Path, files: &BTreeMap<String, String>) -> Result<(), Error> {
    fsio::check_no_links(root, fsio::TMP_DIR)?;
    for (rel, bytes) in files {
        // A hand-written core.md waits for its migration; anything else
        // that is not a regular file there is left alone (reported).
        if rel == "core.md" && matches!(CoreSlot::of(root), CoreSlot::HandWritten | CoreSlot::Blocked(_)) {
            continue;
        }
        fsio::check_no_links(root, rel)?;
        let target = root.join(rel);
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
    if !files.contains_key("core.md") && CoreSlot::of(root) == CoreSlot::Derived {
        std::fs::remove_file(&core).map_err(|e| Error::io(&e, "cannot remove", &core))?;
    }
    Ok(())
}

/// The view pieces of every topic file, kept between commits: a folder
/// relative to the workspace root, with one entry file per topic file and a
/// manifest naming them.
pub const VIEWS_DIR: &str = ".scriptorium/views";

const MANIFEST: &str = "manifest";
const VIEWS_HEADER: &str = "scriptorium views cache 2";

/// The view pieces of every decodable topic file (its eligible blocks'
/// [`BlockViews`]), for the revision they were computed at. A commit
/// replaces the entries of the files whose verdicts it can change, writes
/// only those, and renders the views from all entries without re-reading
/// the topic files.
///
/// On disk: `.scriptorium/views/manifest` (a header with the revision, then
/// one `entry name TAB path as JSON` line per file) and one entry file per
/// topic file, named by a hash of its path and contents, so the manifest is
/// the one file that changes the cache's meaning: it is replaced last, and
/// entries it no longer names are removed after it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ViewsCache {
    /// The revision the entries describe.
    pub revision: String,
    /// Path → eligible blocks' pieces.
    pub files: BTreeMap<String, Vec<BlockViews>>,
    /// Path → entry file name, as on disk.
    names: BTreeMap<String, String>,
    /// Paths whose entries changed since loading.
    dirty: BTreeSet<String>,
}

fn js(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

impl ViewsCache {
    /// The pieces of a full check.
    pub fn from_check(topics: &[Loaded], checked: &Checked, revision: &str) -> ViewsCache {
        let mut c = ViewsCache { revision: revision.to_owned(), ..ViewsCache::default() };
        c.replace(&topics.iter().map(|t| t.path.clone()).collect(), topics, checked);
        c
    }

    /// Replaces the entries of the files in `scope` with their pieces from
    /// `checked` (a check of `loaded`, a superset of the scope's files that
    /// exist and decode); a scope file not loaded is dropped.
    pub fn replace(&mut self, scope: &BTreeSet<String>, loaded: &[Loaded], checked: &Checked) {
        for p in scope {
            self.files.remove(p);
            self.dirty.insert(p.clone());
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

    fn encode_file(path: &str, blocks: &[BlockViews]) -> String {
        use std::fmt::Write as _;
        let mut out = String::with_capacity(256 * blocks.len() + 64);
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
        out
    }

    fn decode_file(text: &str) -> Option<(String, Vec<BlockViews>)> {
        let mut path: Option<String> = None;
        let mut blocks: Vec<BlockViews> = Vec::new();
        let num = |s: &str| s.parse::<i64>().ok();
        for line in text.split('\n').filter(|l| !l.is_empty()) {
            let (tag, rest) = line.split_once('\t')?;
            match tag {
                "F" if path.is_none() => path = Some(serde_json::from_str(rest).ok()?),
                "B" => {
                    let id: String = serde_json::from_str(rest).ok()?;
                    blocks.push(BlockViews {
                        path: path.clone()?,
                        id,
                        event: None,
                        days: Vec::new(),
                        links: Vec::new(),
                    });
                }
                "E" => {
                    let mut f = rest.splitn(3, '\t');
                    let t = Instant { seconds: num(f.next()?)?, nanos: u32::try_from(num(f.next()?)?).ok()? };
                    blocks.last_mut()?.event = Some((t, f.next()?.to_owned()));
                }
                "T" => {
                    let mut f = rest.splitn(6, '\t');
                    let day = (num(f.next()?)?, num(f.next()?)?, num(f.next()?)?);
                    let t = Instant { seconds: num(f.next()?)?, nanos: u32::try_from(num(f.next()?)?).ok()? };
                    blocks.last_mut()?.days.push((day, t, f.next()?.to_owned()));
                }
                "L" => {
                    let (p, id) = rest.split_once('\t')?;
                    let target: String = serde_json::from_str(p).ok()?;
                    let block_id: Option<String> = serde_json::from_str(id).ok()?;
                    blocks.last_mut()?.links.push(LinkTarget { path: target, block_id });
                }
                _ => return None,
            }
        }
        Some((path?, blocks))
    }

    fn entry_name(path: &str, body: &str) -> String {
        use sha2::Digest;
        let mut h = sha2::Sha256::new();
        h.update(path.as_bytes());
        h.update([0u8]);
        h.update(body.as_bytes());
        h.finalize().iter().take(16).map(|b| format!("{b:02x}")).collect()
    }

    /// The cache, if it exists, is whole and describes `revision`.
    pub fn load(root: &Path, revision: &str) -> Option<ViewsCache> {
        let dir = root.join(VIEWS_DIR);
        let manifest = std::fs::read_to_string(dir.join(MANIFEST)).ok()?;
        let mut lines = manifest.split('\n');
        let rev = lines.next()?.strip_prefix(VIEWS_HEADER)?.strip_prefix('\t')?;
        if rev != revision {
            return None;
        }
        let mut c = ViewsCache { revision: rev.to_owned(), ..ViewsCache::default() };
        for line in lines.filter(|l| !l.is_empty()) {
            let (name, path) = line.split_once('\t')?;
            let path: String = serde_json::from_str(path).ok()?;
            if name.len() != 32 || !name.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            let text = std::fs::read_to_string(dir.join(name)).ok()?;
            let (p, blocks) = ViewsCache::decode_file(&text)?;
            if p != path {
                return None;
            }
            c.files.insert(path.clone(), blocks);
            c.names.insert(path, name.to_owned());
        }
        Some(c)
    }

    /// Writes the entries that changed, then the manifest, then removes
    /// the entries no longer named (atomic, not fsynced: a cache).
    pub fn save(&mut self, root: &Path) -> Result<(), Error> {
        let rel_manifest = format!("{VIEWS_DIR}/{MANIFEST}");
        fsio::check_no_links(root, &rel_manifest)?;
        let dir = root.join(VIEWS_DIR);
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&e, "cannot create", &dir))?;
        self.names.retain(|p, _| self.files.contains_key(p));
        for path in std::mem::take(&mut self.dirty) {
            let Some(blocks) = self.files.get(&path) else { continue };
            let body = ViewsCache::encode_file(&path, blocks);
            let name = ViewsCache::entry_name(&path, &body);
            if self.names.get(&path) != Some(&name) || !dir.join(&name).is_file() {
                fsio::replace_cache_file(root, &dir.join(&name), body.as_bytes())?;
                self.names.insert(path, name);
            }
        }
        let mut manifest = format!("{VIEWS_HEADER}\t{}\n", self.revision);
        for (path, name) in &self.names {
            manifest.push_str(name);
            manifest.push('\t');
            manifest.push_str(&js(path));
            manifest.push('\n');
        }
        fsio::replace_cache_file(root, &dir.join(MANIFEST), manifest.as_bytes())?;
        let named: BTreeSet<&str> = self.names.values().map(String::as_str).collect();
        if let Ok(rd) = std::fs::read_dir(&dir) {
            for e in rd.filter_map(Result::ok) {
                let n = e.file_name();
                let n = n.to_string_lossy();
                if n != MANIFEST && !named.contains(n.as_ref()) && e.file_type().is_ok_and(|t| t.is_file()) {
                    // Best effort: an unnamed entry is never read.
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
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
            fn content(&self, _: &str, _: &str, _: &str) -> Option<Cow<'_, str>> {
                Some(Cow::Borrowed(""))
            }
        }
        let checked = check(&topics, &All);
        let dir = tempfile::tempdir().unwrap();
        let mut cache = ViewsCache::from_check(&topics, &checked, "rev");
        cache.save(dir.path()).unwrap();
        let back = ViewsCache::load(dir.path(), "rev").unwrap();
        assert_eq!(back.files, cache.files);
        assert!(ViewsCache::load(dir.path(), "other").is_none());
        let core = views::render_core(None, &checked, 2000);
        let full = views::render(&topics, &checked, 2000);
        assert_eq!(back.render(core).files, full.files);
        assert!(full.files.contains_key("recent_events.jsonl"));
    }
}
