//! Validation of topic files against each other and the archive, and the
//! trust of every block (FORMAT.md §3).
//!
//! The archive is reached only through a [`SourceResolver`], built once by
//! the caller ([`ArchiveResolver`] over a scanned
//! [`scriptorium_source_archive::archive::Archive`]), so checking a
//! citation is one hash lookup and never re-reads the archive.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use scriptorium_source_archive::archive::Archive;

use crate::diag::{Code, Diagnostic};
use crate::parse::{Link, ParseProblem, TopicFile};
use crate::time::Instant;

/// What a citation resolves to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// An archived, trusted record.
    Trusted,
    /// An archived record still pending (e.g. unpaired group text).
    Pending,
    /// No archived record with that id at that path and anchor.
    Unknown,
}

/// Resolves citations to archived records.
pub trait SourceResolver {
    /// Resolves the citation of `source_id` (its text form) at the
    /// workspace-relative archive `path` with fragment `anchor`.
    fn resolve(&self, source_id: &str, path: &str, anchor: &str) -> Resolution;

    /// The content (body) of the record [`SourceResolver::resolve`] finds
    /// there, trusted or pending, exactly as archived; `None` when it finds
    /// none. Quotations are grounded in it.
    fn content(&self, source_id: &str, path: &str, anchor: &str) -> Option<Cow<'_, str>>;
}

#[derive(Debug, Clone)]
struct Location<'a> {
    path: String,
    anchor: String,
    pending: bool,
    content: Cow<'a, str>,
}

/// A [`SourceResolver`] over a scanned archive: a v2 record resolves at its
/// own file and anchor; a legacy record resolves at its file and anchor.
/// It borrows the records' contents from the archive.
#[derive(Debug, Default, Clone)]
pub struct ArchiveResolver<'a> {
    by_id: HashMap<String, Vec<Location<'a>>>,
}

impl<'a> ArchiveResolver<'a> {
    /// Indexes every record of `archive` once.
    pub fn new(archive: &'a Archive) -> ArchiveResolver<'a> {
        let mut r = ArchiveResolver::default();
        for rec in archive.v2_records() {
            let id = rec.id();
            r.insert(id.text(), id.v2_path(), id.anchor(), rec.is_pending(), rec.content());
        }
        for (path, rec) in archive.legacy_records() {
            if let (Some(id), Some(anchor)) = (&rec.id, &rec.anchor) {
                r.insert(id.text(), path.to_owned(), anchor.clone(), false, rec.content.as_str());
            }
        }
        r
    }

    /// Adds one record: its location, trust and content (for resolvers
    /// built without an archive).
    pub fn insert(
        &mut self,
        source_id: String,
        path: String,
        anchor: String,
        pending: bool,
        content: impl Into<Cow<'a, str>>,
    ) {
        let content = content.into();
        self.by_id.entry(source_id).or_default().push(Location { path, anchor, pending, content });
    }

    /// Counts the records with these ids as trusted from now on (their
    /// promotion by an owner, `scriptorium_source_archive::trust`).
    pub fn promote<'i>(&mut self, ids: impl IntoIterator<Item = &'i String>) {
        for id in ids {
            if let Some(locs) = self.by_id.get_mut(id.as_str()) {
                for l in locs {
                    l.pending = false;
                }
            }
        }
    }

    /// The number of distinct source ids known.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// True when no source is known.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }
}

impl ArchiveResolver<'_> {
    fn find(&self, source_id: &str, path: &str, anchor: &str) -> Option<&Location<'_>> {
        self.by_id.get(source_id)?.iter().find(|l| l.path == path && l.anchor == anchor)
    }
}

impl SourceResolver for ArchiveResolver<'_> {
    fn resolve(&self, source_id: &str, path: &str, anchor: &str) -> Resolution {
        match self.find(source_id, path, anchor) {
            Some(l) if l.pending => Resolution::Pending,
            Some(_) => Resolution::Trusted,
            None => Resolution::Unknown,
        }
    }

    fn content(&self, source_id: &str, path: &str, anchor: &str) -> Option<Cow<'_, str>> {
        self.find(source_id, path, anchor).map(|l| Cow::Borrowed(l.content.as_ref()))
    }
}

/// Joins a relative link `target` to the folder `dir` (both `/`-separated,
/// workspace-relative), resolving `.` and `..`; `None` when it is absolute
/// or climbs out of the workspace.
pub fn join(dir: &str, target: &str) -> Option<String> {
    if target.starts_with('/') || target.contains('\\') {
        return None;
    }
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for seg in target.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// The folder of a workspace-relative file path.
pub fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// True when `target` starts with a URL scheme (`https:`, `mailto:`, …).
fn has_scheme(target: &str) -> bool {
    let Some(colon) = target.find(':') else { return false };
    let scheme = &target[..colon];
    !scheme.is_empty()
        && scheme.as_bytes()[0].is_ascii_alphabetic()
        && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-'))
        && !target[..colon].contains('/')
}

/// Where a link points, once resolved.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkTarget {
    /// Workspace-relative path of the topic file.
    pub path: String,
    /// The block, for a `#^id` link.
    pub block_id: Option<String>,
}

/// A link that cannot point at any topic: absolute, climbing out of the
/// workspace, or naming a block or topic outside `topics/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeavesWorkspace;

/// Resolves a link found in the topic file at `path`; `Ok(None)` when it is
/// not a link between topics (a URL, an image, a non-Markdown file, a link
/// into `sources/`), an error when it cannot point anywhere.
pub fn link_target(path: &str, link: &Link) -> Result<Option<LinkTarget>, LeavesWorkspace> {
    let target = match link {
        Link::Markdown { target, .. } | Link::Wiki { target, .. } => target.as_str(),
    };
    let (p, fragment) = match target.split_once('#') {
        Some((p, f)) => (p, Some(f)),
        None => (target, None),
    };
    let wiki = matches!(link, Link::Wiki { .. });
    // URLs, protocol-relative ones included, are not checked.
    if !wiki && (has_scheme(target) || target.starts_with("//")) {
        return Ok(None);
    }
    let file = if p.is_empty() {
        path.to_owned()
    } else if wiki {
        let with_md = if p.ends_with(".md") { p.to_owned() } else { format!("{p}.md") };
        join("topics", &with_md).ok_or(LeavesWorkspace)?
    } else if p.ends_with(".md") {
        join(dir_of(path), p).ok_or(LeavesWorkspace)?
    } else {
        return Ok(None);
    };
    let block_id = fragment.and_then(|f| f.strip_prefix('^')).map(str::to_owned);
    if !file.starts_with("topics/") {
        // A block lives only under topics/, and a wiki link always names a
        // topic: such a link can never resolve. A plain link to another
        // file (sources/, a derived view) is not a link between topics.
        if block_id.is_some() || matches!(link, Link::Wiki { .. }) {
            return Err(LeavesWorkspace);
        }
        return Ok(None);
    }
    Ok(Some(LinkTarget { path: file, block_id }))
}

/// Who may see a block: the same vocabulary as the authority tiers of the
/// transaction layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Visibility {
    /// Only the account's owner.
    Owner,
    /// Everyone the account approves (paired); every block today.
    Paired,
}

impl Visibility {
    /// `owner` or `paired`.
    pub fn as_str(self) -> &'static str {
        match self {
            Visibility::Owner => "owner",
            Visibility::Paired => "paired",
        }
    }
}

/// The verdict on one block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockState {
    /// Workspace-relative path of its file.
    pub path: String,
    /// Index of the block in its file's `blocks`.
    pub index: usize,
    /// The block id, if it has one.
    pub id: Option<String>,
    /// No diagnostic concerns it (its file, its id, its citations, links).
    pub valid: bool,
    /// Some citation is pending or unresolvable (all or nothing).
    pub pending: bool,
    /// The `Time` of every cited evidence definition, as written and parsed,
    /// in citation order.
    pub times: Vec<(String, Instant)>,
    /// The cited source ids, in citation order, each once.
    pub sources: Vec<String>,
    /// The topic files and blocks it links to, resolved.
    pub links: Vec<LinkTarget>,
    /// Who may see it (trust decides whether it is shown at all).
    pub visibility: Visibility,
}

impl BlockState {
    /// Valid and not pending: what derived views and recall may show.
    pub fn eligible(&self) -> bool {
        self.valid && !self.pending
    }

    /// The newest evidence time, as written and parsed.
    pub fn newest(&self) -> Option<&(String, Instant)> {
        self.times.iter().max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
    }
}

/// The result of checking a set of topic files.
#[derive(Debug, Clone, Default)]
pub struct Checked {
    /// Every problem, sorted by path, line and code.
    pub diagnostics: Vec<Diagnostic>,
    /// One state per block, in path order then file order.
    pub blocks: Vec<BlockState>,
}

/// A topic file as loaded by a caller: workspace-relative path, tree, and
/// the problems its parse found.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// Workspace-relative path (`topics/…`).
    pub path: String,
    /// The parsed file.
    pub file: TopicFile,
    /// What the grammar found.
    pub problems: Vec<ParseProblem>,
}

impl Loaded {
    /// Parses `text` leniently as the file at `path`.
    pub fn parse(path: &str, text: &str) -> Loaded {
        let (file, problems) = TopicFile::parse_lenient(text);
        Loaded { path: path.to_owned(), file, problems }
    }
}

fn diag(code: Code, path: &str, line0: usize, block_id: Option<&str>, message: String) -> Diagnostic {
    Diagnostic {
        code,
        path: path.to_owned(),
        line: line0 + 1,
        block_id: block_id.map(str::to_owned),
        message,
    }
}

/// Checks every file of `topics` against each other and `resolver`.
pub fn check(topics: &[Loaded], resolver: &dyn SourceResolver) -> Checked {
    let mut out = Checked::default();
    let mut texts = ground::Texts::new(resolver);
    let places = block::Places::of(topics);
    for t in topics {
        let f = file::FileState::check(t, resolver, &mut out.diagnostics);
        for (index, b) in t.file.blocks.iter().enumerate() {
            let state = block::check_block(&f, &places, &mut texts, index, b, &mut out.diagnostics);
            out.blocks.push(state);
        }
    }
    out.diagnostics.sort_by(|a, b| (&a.path, a.line, a.code).cmp(&(&b.path, b.line, b.code)));
    out.diagnostics.dedup();
    out
}

/// The diagnostics a check of only the files in `named` reports: theirs,
/// plus every occurrence of a block id duplicated in one of them.
pub fn only_named(checked: &Checked, named: &[String]) -> Vec<Diagnostic> {
    let named: HashSet<&str> = named.iter().map(String::as_str).collect();
    let dup_ids: HashSet<&str> = checked
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::DuplicateBlockId && named.contains(d.path.as_str()))
        .filter_map(|d| d.block_id.as_deref())
        .collect();
    checked
        .diagnostics
        .iter()
        .filter(|d| {
            named.contains(d.path.as_str())
                || (d.code == Code::DuplicateBlockId
                    && d.block_id.as_deref().is_some_and(|i| dup_ids.contains(i)))
        })
        .cloned()
        .collect()
}

mod block;
mod file;
mod ground;

#[cfg(test)]
pub(crate) mod tests;
