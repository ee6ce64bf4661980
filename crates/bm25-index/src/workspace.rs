//! The documents of a workspace and the index files that hold them under
//! `.scriptorium/index/` (FORMAT.md §1, §7).
//!
//! Each workspace file is a *unit*: a v2 archive file, a legacy archive
//! file, or a topic file. [`open`] compares every file's size and
//! modification time with what the index recorded and re-reads only the
//! files that changed (plus, for a file modified just before it was read, a
//! hash of its bytes, so an edit within one timestamp tick is not missed). What a changed file affects beyond itself:
//!
//! * a legacy record is left out when a v2 record has its source id, so a
//!   legacy file depends on the v2 files its ids name;
//! * a topic block's validity and trust depend on the other topic files
//!   (duplicate ids, links) and on the records it cites, so every topic file
//!   is re-checked when any topic file or any cited archive file changed —
//!   but only topic files whose documents changed are re-indexed.
//!
//! The index files are replaced atomically (temporary + rename) and read
//! through a memory map; a reader keeps its map until it reopens. A reader
//! ([`open`], [`search_lines`]) that cannot write them (a read-only
//! workspace, a full disk) keeps the refreshed index in memory for its
//! process instead and says so in [`Report::unsaved`]; see [`unsaved`].

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use scriptorium_source_archive::json::{to_line, RecordView};
use scriptorium_source_archive::legacy::{self, LegacyRecord};
use scriptorium_source_archive::v2::{self, Expect};
use scriptorium_source_archive::{cited, fsio, pct, trust, Error, ErrorKind, SourceId, SourceRecord};
use scriptorium_topic_markdown::files;
use scriptorium_topic_markdown::parse::search_text;
use scriptorium_topic_markdown::validate::{self, dir_of, join, Loaded, Resolution, SourceResolver};
use serde::Serialize;

use crate::delta::{self, Change, Refreshed};
use crate::format::checksum;
use crate::search::View;
use crate::segment::{self, Damaged, Document, Kind, Segment, Stamp, Unit};
use crate::tokenize::TokenizerConfig;

mod unsaved;
use unsaved::Save;

/// The index folder, relative to the workspace.
pub const DIR: &str = ".scriptorium/index";
/// The base segment's file name.
pub const BASE: &str = "base.idx";
/// The delta segment's file name.
pub const DELTA: &str = "delta.idx";
/// The promoted source ids the index reflects, one per line, sorted.
pub const PROMOTED: &str = "promoted";

/// What [`open`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// The index was current.
    Fresh,
    /// Changed files were folded into the delta.
    Refreshed,
    /// Changed files were folded in and the delta merged into a new base.
    Merged,
    /// The index was built from every file.
    Built,
}

/// A report of [`open`] or [`build`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// What was done.
    pub action: Action,
    /// Why the index was rebuilt, when it was unusable.
    pub rebuilt_because: Option<String>,
    /// Files re-read.
    pub files_read: usize,
    /// Units replaced or removed in the index.
    pub units_changed: usize,
    /// Live documents.
    pub documents: u32,
    /// Bytes of the base file.
    pub base_bytes: u64,
    /// Bytes of the delta file (0 when there is none).
    pub delta_bytes: u64,
    /// Why the refreshed index could not be written, when it could not:
    /// it is then kept in memory for this process only (the byte counts
    /// are its size in memory), and the next reader refreshes again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsaved: Option<String>,
}

/// An opened, current index of a workspace.
#[derive(Debug)]
pub struct Opened {
    /// The searchable view.
    pub view: View,
    /// What opening it did.
    pub report: Report,
}

#[derive(Debug)]
struct Mapped(memmap2::Mmap);

impl AsRef<[u8]> for Mapped {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// What a directory listing says of a file: enough to see it changed
/// without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Listed {
    size: u64,
    modified: i64,
    changed: i64,
    inode: u64,
}

impl Listed {
    fn of(meta: &fs::Metadata) -> Listed {
        #[cfg(unix)]
        let (changed, inode) = {
            use std::os::unix::fs::MetadataExt;
            (meta.ctime().saturating_mul(1_000_000_000).saturating_add(meta.ctime_nsec()), meta.ino())
        };
        #[cfg(not(unix))]
        let (changed, inode) = (0, 0);
        Listed { size: meta.len(), modified: fsio::unix_nanos(meta.modified()), changed, inode }
    }

    /// The same file, unchanged as far as metadata can tell. The status
    /// change time catches an edit whose modification time was set back
    /// (`touch -d`, `cp -p`, `rsync -t`); the inode catches a replacement.
    fn matches(&self, s: &Stamp) -> bool {
        self.size == s.size
            && self.modified == s.modified
            && self.changed == s.changed
            && self.inode == s.inode
    }

    /// The latest of its times, for the racy window.
    fn latest(&self) -> i64 {
        self.modified.max(self.changed)
    }
}

/// Every indexable file.
type Listing = BTreeMap<(Kind, String), Listed>;

fn list_files(root: &Path) -> Result<Listing, Error> {
    let mut out = Listing::new();
    let err = |e: files::ListError| Error::io(e.error, "cannot list", &e.path);
    for (rel, meta) in files::list_md(root, &root.join("topics")).map_err(err)?.files {
        out.insert((Kind::Topic, rel), Listed::of(&meta));
    }
    let sources = root.join("sources");
    let providers = match fs::read_dir(&sources) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(Error::io(e, "cannot list", &sources)),
    };
    for entry in providers {
        let entry = entry.map_err(|e| Error::io(e, "cannot list", &sources))?;
        let ft = entry.file_type().map_err(|e| Error::io(e, "cannot stat", &entry.path()))?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else { continue };
        if !ft.is_dir() {
            continue;
        }
        for dir in [entry.path().join("_v2"), entry.path()] {
            let rd = match fs::read_dir(&dir) {
                Ok(rd) => rd,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io(e, "cannot list", &dir)),
            };
            let sub = if dir.ends_with("_v2") {
                format!("sources/{name}/_v2/")
            } else {
                format!("sources/{name}/")
            };
            for f in rd {
                let f = f.map_err(|e| Error::io(e, "cannot list", &dir))?;
                let ft = f.file_type().map_err(|e| Error::io(e, "cannot stat", &f.path()))?;
                let Some(file) = f.file_name().to_str().map(str::to_owned) else { continue };
                if ft.is_file() && file.ends_with(".md") {
                    let meta = f.metadata().map_err(|e| Error::io(e, "cannot stat", &f.path()))?;
                    out.insert((Kind::Source, format!("{sub}{file}")), Listed::of(&meta));
                }
            }
        }
    }
    Ok(out)
}

/// A file's bytes and the stamp they were read under.
fn read(root: &Path, rel: &str, listed: Listed) -> Result<(Vec<u8>, Stamp), Error> {
    let path = root.join(rel);
    let read = fsio::unix_nanos(Ok(SystemTime::now()));
    let bytes = fs::read(&path).map_err(|e| Error::io(e, "cannot read", &path))?;
    let stamp = Stamp {
        size: bytes.len() as u64,
        modified: listed.modified,
        changed: listed.changed,
        inode: listed.inode,
        read,
        hash: checksum(&bytes),
    };
    Ok((bytes, stamp))
}

/// Days since 1970-01-01 of a timestamp's UTC day.
fn day_of(timestamp: &str) -> Option<i32> {
    let instant = scriptorium_topic_markdown::time::parse(timestamp)?;
    i32::try_from(instant.seconds.div_euclid(86_400)).ok()
}

/// The `YYYY-MM-DD` a filter names, as a day number.
pub fn parse_day(s: &str) -> Option<i32> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    day_of(s)
}

fn v2_document(r: &SourceRecord, promoted: &BTreeSet<String>) -> Document {
    let id = r.id();
    let sp = r.speaker();
    let key = id.text();
    let pending = r.is_pending() && !promoted.contains(&key);
    let mut view = RecordView::of_record(r);
    if !pending {
        // Promoted by the owner: trusted from now on, as recall treats it.
        view.trust = "trusted";
    }
    Document {
        anchor: id.anchor(),
        day: day_of(r.timestamp()),
        pending,
        key,
        speakers: match sp {
            Some(s) => crate::speaker::trusted_keys(s),
            None => Vec::new(),
        },
        // Who said it as people read it (FORMAT.md §2.3), so a snippet
        // never shows an impostor's label like the person it imitates.
        text: format!("{} {}", r.attribution(), r.content()),
        payload: to_line(&view),
    }
}

fn legacy_document(r: &LegacyRecord, rel: &str, fallback: Option<(&str, &str)>) -> Document {
    Document {
        anchor: r.anchor.clone().unwrap_or_default(),
        key: r.id.as_ref().map(SourceId::text).unwrap_or_default(),
        day: day_of(&r.timestamp),
        pending: false,
        speakers: match &r.hint {
            Some(h) => crate::speaker::hint_keys(h),
            None => Vec::new(),
        },
        // The role: a hint is text of the body, which holds it already.
        text: format!("{} {}", r.role.as_str(), r.content),
        payload: to_line(&RecordView::of_legacy(r, rel, fallback)),
    }
}

/// `sources/<p>/_v2/<t>.md` → (provider dir, thread file stem, is v2).
fn source_parts(rel: &str) -> Option<(&str, &str, bool)> {
    let rest = rel.strip_prefix("sources/")?;
    let (provider, rest) = rest.split_once('/')?;
    match rest.strip_prefix("_v2/") {
        Some(file) => Some((provider, file.strip_suffix(".md")?, true)),
        None => Some((provider, rest.strip_suffix(".md")?, false)),
    }
}

fn v2_unit(rel: &str, bytes: &[u8], stamp: Stamp, promoted: &BTreeSet<String>) -> Unit {
    let mut docs = Vec::new();
    if let Some((p, t, true)) = source_parts(rel) {
        if let (Ok(p), Ok(t)) = (pct::decode_canonical(p.as_bytes()), pct::decode_canonical(t.as_bytes())) {
            let parsed = v2::parse_prefix(bytes, Some(Expect { provider: &p, thread: &t }));
            docs = parsed.frames.iter().map(|f| v2_document(&f.to_record(), promoted)).collect();
        }
    }
    Unit { kind: Kind::Source, path: rel.to_owned(), stamp, deps: Vec::new(), docs }
}

/// The live source documents of the workspace being indexed: units read
/// in this pass first, then the previous index for files not re-read.
struct Sources<'v> {
    fresh: HashMap<String, Unit>,
    gone: HashSet<String>,
    old: Option<&'v View>,
}

impl Sources<'_> {
    /// The source id and trust of the record at this path and anchor.
    fn lookup(&self, path: &str, anchor: &str) -> Result<Option<(String, bool)>, Damaged> {
        if anchor.is_empty() {
            return Ok(None);
        }
        if let Some(u) = self.fresh.get(path) {
            let k = u.docs.partition_point(|d| d.anchor.as_str() < anchor);
            return Ok(u.docs.get(k).filter(|d| d.anchor == anchor).map(|d| (d.key.clone(), d.pending)));
        }
        if self.gone.contains(path) {
            return Ok(None);
        }
        match self.old {
            Some(view) => Ok(view.find(Kind::Source, path, anchor)?.map(|s| (s.key.to_owned(), s.pending))),
            None => Ok(None),
        }
    }

    fn v2_has(&self, id: &SourceId) -> Result<bool, Damaged> {
        let key = id.text();
        Ok(self.lookup(&id.v2_path(), &id.anchor())?.is_some_and(|(k, _)| k == key))
    }
}

/// Citations resolved through the sources being indexed; the content of a
/// cited record, which only quotations need, read from its archive file.
struct Resolver<'s, 'v> {
    sources: &'s Sources<'v>,
    files: cited::Files<'s>,
    damaged: std::cell::RefCell<Option<Damaged>>,
}

impl SourceResolver for Resolver<'_, '_> {
    fn resolve(&self, source_id: &str, path: &str, anchor: &str) -> Resolution {
        match self.sources.lookup(path, anchor) {
            Ok(Some((key, pending))) if key == source_id => {
                if pending {
                    Resolution::Pending
                } else {
                    Resolution::Trusted
                }
            }
            Ok(_) => Resolution::Unknown,
            Err(e) => {
                self.damaged.borrow_mut().get_or_insert(e);
                Resolution::Unknown
            }
        }
    }

    fn content(&self, source_id: &str, path: &str, anchor: &str) -> Option<Cow<'_, str>> {
        match self.resolve(source_id, path, anchor) {
            Resolution::Unknown => None,
            _ => self.files.content(source_id, path, anchor).map(Cow::Owned),
        }
    }
}

fn legacy_unit(rel: &str, bytes: &[u8], stamp: Stamp, sources: &Sources<'_>) -> Result<Unit, Damaged> {
    let fallback =
        source_parts(rel).and_then(|(p, t, _)| Some((pct::decode_lenient(p)?, pct::decode_lenient(t)?)));
    let fallback = fallback.as_ref().map(|(p, t)| (p.as_str(), t.as_str()));
    let mut docs = Vec::new();
    let mut deps = BTreeSet::new();
    for r in legacy::parse(bytes) {
        if let Some(id) = &r.id {
            deps.insert(id.v2_path());
            if sources.v2_has(id)? {
                continue;
            }
        }
        docs.push(legacy_document(&r, rel, fallback));
    }
    docs.sort_by(|a, b| a.anchor.cmp(&b.anchor));
    Ok(Unit { kind: Kind::Source, path: rel.to_owned(), stamp, deps: deps.into_iter().collect(), docs })
}

#[derive(Serialize)]
struct TopicPayload<'a> {
    path: &'a str,
    block_id: &'a str,
    text: &'a str,
    time: Option<&'a str>,
    trust: &'static str,
}

/// Every topic file as a unit (or only those in `only`), checked against
/// each other and `sources`.
fn topic_units(
    root: &Path,
    listing: &Listing,
    sources: &Sources<'_>,
    files_read: &mut usize,
    only: Option<&BTreeSet<String>>,
) -> Result<Vec<Unit>, Error> {
    let mut loaded = Vec::new();
    let mut units: BTreeMap<String, Unit> = BTreeMap::new();
    for ((kind, rel), listed) in listing {
        if *kind != Kind::Topic || only.is_some_and(|o| !o.contains(rel)) {
            continue;
        }
        let (bytes, stamp) = read(root, rel, *listed)?;
        *files_read += 1;
        let mut deps = BTreeSet::new();
        if let Ok(text) = std::str::from_utf8(&bytes) {
            let l = Loaded::parse(rel, text);
            for def in &l.file.definitions {
                if let Some(Ok(ev)) = &def.evidence {
                    for s in &ev.sources {
                        if let Some(p) = join(dir_of(rel), &s.path) {
                            deps.insert(p);
                        }
                    }
                }
            }
            loaded.push(l);
        }
        let unit = Unit {
            kind: Kind::Topic,
            path: rel.clone(),
            stamp,
            deps: deps.into_iter().collect(),
            docs: Vec::new(),
        };
        units.insert(rel.clone(), unit);
    }
    let resolver =
        Resolver { sources, files: cited::Files::new(root), damaged: std::cell::RefCell::new(None) };
    let checked = validate::check(&loaded, &resolver);
    if let Some(d) = resolver.damaged.into_inner() {
        return Err(Error::new(ErrorKind::Io, d.to_string()));
    }
    let by_path: HashMap<&str, &Loaded> = loaded.iter().map(|l| (l.path.as_str(), l)).collect();
    for state in &checked.blocks {
        let (Some(id), true) = (&state.id, state.valid) else { continue };
        let Some(l) = by_path.get(state.path.as_str()) else { continue };
        let Some(block) = l.file.blocks.get(state.index) else { continue };
        let text = search_text(&l.file.block_text(block), Some(id));
        let newest = state.newest();
        let trust = if state.pending { "pending" } else { "trusted" };
        let payload = to_line(&TopicPayload {
            path: &state.path,
            block_id: id,
            text: &text,
            time: newest.map(|n| n.0.as_str()),
            trust,
        });
        let doc = Document {
            anchor: id.clone(),
            key: String::new(),
            day: newest.and_then(|n| i32::try_from(n.1.seconds.div_euclid(86_400)).ok()),
            pending: state.pending,
            speakers: Vec::new(),
            text,
            payload,
        };
        if let Some(u) = units.get_mut(&state.path) {
            u.docs.push(doc);
        }
    }
    let mut out: Vec<Unit> = units.into_values().collect();
    for u in &mut out {
        u.docs.sort_by(|a, b| a.anchor.cmp(&b.anchor));
    }
    Ok(out)
}

/// The longest snippet a hit carries, in characters.
pub const SNIPPET_CHARS: usize = 160;

/// A hit as one `--json` line (FORMAT.md §7): the stored record or block,
/// with `kind`, `score` and `snippet`.
pub fn hit_line(view: &View, hit: &crate::search::Hit, terms: &[String]) -> Result<String, Damaged> {
    let stored = view.stored(hit)?;
    let inner = stored
        .payload
        .strip_prefix('{')
        .and_then(|p| p.strip_suffix('}'))
        .ok_or_else(|| Damaged("a stored payload is not a JSON object".into()))?;
    let tok = crate::tokenize::Tokenizer::new(view.base().config());
    let snippet = to_line(&tok.snippet(stored.text, terms, SNIPPET_CHARS));
    let sep = if inner.is_empty() { "" } else { "," };
    Ok(format!(
        "{{\"kind\":\"{}\"{sep}{inner},\"score\":{},\"snippet\":{snippet}}}",
        stored.kind.as_str(),
        hit.score
    ))
}

/// Searches the workspace at `root` (refreshing its index first) and
/// returns the hits as `--json` lines, best first. `speaker`, as a person
/// names one, keeps only that speaker's records ([`crate::speaker::resolve`]);
/// a name several identities have is `INVALID_ARGUMENT` listing their
/// attributions, and it replaces any speaker key `filters` holds. An index
/// found damaged while answering (a chunk read for the first time fails its
/// checksum) is rebuilt and the search run again: never a wrong answer,
/// never a stuck index.
pub fn search_lines(
    root: &Path,
    config: TokenizerConfig,
    query: &str,
    filters: &crate::search::Filters,
    speaker: Option<&str>,
    limit: usize,
    bm25: crate::search::Bm25,
) -> Result<Vec<String>, Error> {
    let answer = |view: &View| -> Result<Result<Vec<String>, Error>, Damaged> {
        let mut filters = filters.clone();
        if let Some(name) = speaker {
            match crate::speaker::resolve(view, name)? {
                crate::speaker::Resolved::Key(k) => filters.speaker = Some(k),
                crate::speaker::Resolved::Nobody => return Ok(Ok(Vec::new())),
                crate::speaker::Resolved::Ambiguous(who) => return Ok(Err(ambiguous(name, &who))),
            }
        }
        let terms = view.query_terms(query);
        let hits = view.search(query, &filters, limit, bm25)?;
        hits.iter().map(|h| hit_line(view, h, &terms)).collect::<Result<_, _>>().map(Ok)
    };
    let opened = open(root, config)?;
    let why = match answer(&opened.view) {
        Ok(lines) => return lines,
        Err(d) => d.to_string(),
    };
    drop(opened);
    let rebuilt = build_because(root, config, Some(why), Save::IfPossible, &mut |_, _| {})?;
    answer(&rebuilt.view)
        .map_err(|d| Error::new(ErrorKind::Io, format!("the rebuilt index is unusable: {d}")))?
}

/// The refusal of a speaker name several identities have.
fn ambiguous(name: &str, who: &[String]) -> Error {
    let list: Vec<String> = who.iter().map(|w| format!("\"{w}\"")).collect();
    let message = format!(
        "speaker {name:?} names {} archived identities: {}; give an exact id or one of these attributions",
        who.len(),
        list.join(", ")
    );
    Error::new(ErrorKind::InvalidArgument, message)
}

/// Same bytes on disk, whenever they were read.
fn same_file(a: &Stamp, b: &Stamp) -> bool {
    a.size == b.size
        && a.modified == b.modified
        && a.changed == b.changed
        && a.inode == b.inode
        && a.hash == b.hash
}

fn index_dir(root: &Path) -> PathBuf {
    root.join(DIR)
}

fn map(path: &Path) -> Result<Option<segment::Bytes>, Error> {
    let file = match fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(e, "cannot open", path)),
    };
    // SAFETY: the map is read-only, and index files are only ever replaced
    // by rename, never written in place, so the mapped bytes do not change
    // while mapped (a person truncating the file in place is the usual
    // obligation of memory-mapped I/O, as for archive files).
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(e, "cannot map", path))?;
    Ok(Some(Arc::new(Mapped(map))))
}

/// Opens the index files as they are, without checking them against the
/// workspace: `Ok(None)` when there is no usable index.
pub fn open_existing(root: &Path, config: TokenizerConfig) -> Result<Result<View, String>, Error> {
    let dir = index_dir(root);
    let Some(base) = map(&dir.join(BASE))? else { return Ok(Err("no index yet".into())) };
    let base = match Segment::open(base, config) {
        Ok(s) => s,
        Err(e) => return Ok(Err(e.to_string())),
    };
    let delta = match map(&dir.join(DELTA))? {
        Some(bytes) => match Segment::open(bytes, config) {
            Ok(d) if d.is_delta() && d.base_id() == base.id() => Some(d),
            // A delta of another base (a concurrent refresh) is ignored:
            // the files it covers read as changed and are re-read.
            _ => None,
        },
        None => None,
    };
    match View::new(base, delta) {
        Ok(v) => Ok(Ok(v)),
        Err(e) => Ok(Err(e.to_string())),
    }
}

fn publish(root: &Path, name: &str, bytes: &[u8]) -> Result<(), Error> {
    fsio::check_no_links(root, &format!("{DIR}/{name}"))?;
    fsio::check_no_links(root, fsio::TMP_DIR)?;
    fsio::replace_file(root, &index_dir(root).join(name), bytes)
}

/// The promotions the index was last written with (none when unknown).
fn reflected_promotions(root: &Path) -> BTreeSet<String> {
    match fs::read(index_dir(root).join(PROMOTED)) {
        Ok(b) => String::from_utf8_lossy(&b).lines().filter(|l| !l.is_empty()).map(str::to_owned).collect(),
        Err(_) => BTreeSet::new(),
    }
}

fn record_promoted(root: &Path, promoted: &BTreeSet<String>) -> Result<(), Error> {
    if promoted.is_empty() && !index_dir(root).join(PROMOTED).exists() {
        return Ok(());
    }
    let mut text = String::new();
    for id in promoted {
        text.push_str(id);
        text.push('\n');
    }
    publish(root, PROMOTED, text.as_bytes())
}

fn remove_delta(root: &Path) -> Result<(), Error> {
    let p = index_dir(root).join(DELTA);
    match fs::remove_file(&p) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(e, "cannot remove", &p)),
    }
}

fn damaged(e: Damaged) -> Error {
    Error::new(ErrorKind::Io, e.to_string())
}

fn file_size(path: &Path) -> u64 {
    fs::metadata(path).map_or(0, |m| m.len())
}

fn finish(root: &Path, config: TokenizerConfig, mut report: Report) -> Result<Opened, Error> {
    let view = match open_existing(root, config)? {
        Ok(v) => v,
        Err(why) => {
            return Err(Error::new(ErrorKind::Io, format!("the index just written is unusable: {why}")))
        }
    };
    report.documents = view.len();
    report.base_bytes = file_size(&index_dir(root).join(BASE));
    report.delta_bytes = if view.delta().is_some() { file_size(&index_dir(root).join(DELTA)) } else { 0 };
    Ok(Opened { view, report })
}

/// Builds the index of the workspace at `root` from every file, replacing
/// whatever was there.
pub fn build(root: &Path, config: TokenizerConfig) -> Result<Opened, Error> {
    build_because(root, config, None, Save::Required, &mut |_, _| {})
}

/// [`build`], calling `progress(files read, files)` as it reads.
pub fn build_with_progress(
    root: &Path,
    config: TokenizerConfig,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Opened, Error> {
    build_because(root, config, None, Save::Required, progress)
}

fn build_because(
    root: &Path,
    config: TokenizerConfig,
    why: Option<String>,
    save: Save,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Opened, Error> {
    let listing = list_files(root)?;
    let promoted = trust::promoted(root)?;
    let total = listing.len();
    let mut files_read = 0;
    let mut sources = Sources { fresh: HashMap::new(), gone: HashSet::new(), old: None };
    let (legacy, v2): (Vec<_>, Vec<_>) = listing
        .iter()
        .filter(|((k, _), _)| *k == Kind::Source)
        .partition(|((_, rel), _)| source_parts(rel).is_some_and(|p| !p.2));
    for ((_, rel), listed) in v2 {
        let (bytes, stamp) = read(root, rel, *listed)?;
        files_read += 1;
        progress(files_read, total);
        let mut unit = v2_unit(rel, &bytes, stamp, &promoted);
        unit.docs.sort_by(|a, b| a.anchor.cmp(&b.anchor));
        sources.fresh.insert(rel.clone(), unit);
    }
    let mut legacy_units = Vec::new();
    for ((_, rel), listed) in legacy {
        let (bytes, stamp) = read(root, rel, *listed)?;
        files_read += 1;
        progress(files_read, total);
        legacy_units.push(legacy_unit(rel, &bytes, stamp, &sources).map_err(damaged)?);
    }
    for unit in legacy_units {
        sources.fresh.insert(unit.path.clone(), unit);
    }
    let topics = topic_units(root, &listing, &sources, &mut files_read, None)?;
    progress(files_read, total);
    let mut units: Vec<Unit> = sources.fresh.into_values().collect();
    units.extend(topics);
    let units_changed = units.len();
    let bytes = segment::build(units, config, None);
    let report = Report {
        action: Action::Built,
        rebuilt_because: why,
        files_read,
        units_changed,
        documents: 0,
        base_bytes: 0,
        delta_bytes: 0,
        unsaved: None,
    };
    match save_base(root, &bytes, &promoted) {
        Ok(()) => finish(root, config, report),
        Err(e) => unsaved::keep(root, config, save, e, Refreshed::Base(bytes), report),
    }
}

/// Writes a new base: no delta, the promotions it reflects.
fn save_base(root: &Path, bytes: &[u8], promoted: &BTreeSet<String>) -> Result<(), Error> {
    publish(root, BASE, bytes)?;
    remove_delta(root)?;
    record_promoted(root, promoted)
}

/// Opens the index of the workspace at `root`, first folding in every file
/// that changed since it was written; builds it when it is missing or
/// unusable (truncated, corrupted, foreign, another format version or
/// tokenizer). For a reader: when the result cannot be written (an I/O
/// error under `.scriptorium/`), it is kept in memory for this process and
/// [`Report::unsaved`] says why.
pub fn open(root: &Path, config: TokenizerConfig) -> Result<Opened, Error> {
    open_with(root, config, None, Save::IfPossible)
}

/// Which topic files a refresh re-checks when some changed.
///
/// A topic block's validity depends on other files (a duplicated id, a
/// link's target), so by default a refresh re-checks every topic file when
/// any changed. A caller that keeps an index of ids and links can name the
/// files that can be affected instead, and the refresh costs what the
/// change touches.
pub trait TopicScope {
    /// Given the topic files that changed, appeared or disappeared, and the
    /// files citing an archive file that changed: the files whose blocks
    /// must be re-checked (`S`, a superset of `dirty`) and the files to
    /// load to judge them (`L ⊇ S`: what `S` links to and shares ids with).
    /// `None` re-checks everything.
    fn scope(&self, dirty: &BTreeSet<String>) -> Option<(BTreeSet<String>, BTreeSet<String>)>;
}

/// [`open`] for a writer, re-checking only the topic files `scope` names:
/// an index that cannot be written is an error, never kept in memory.
pub fn open_scoped(
    root: &Path,
    config: TokenizerConfig,
    scope: Option<&dyn TopicScope>,
) -> Result<Opened, Error> {
    open_with(root, config, scope, Save::Required)
}

fn open_with(
    root: &Path,
    config: TokenizerConfig,
    scope: Option<&dyn TopicScope>,
    save: Save,
) -> Result<Opened, Error> {
    let view = match open_existing(root, config)? {
        Ok(v) => v,
        Err(why) => return build_because(root, config, Some(why), save, &mut |_, _| {}),
    };
    match refresh(root, &view, scope) {
        Ok(Folded::Changes { refreshed, promoted, report }) => {
            drop(view);
            match save_refreshed(root, &refreshed, &promoted) {
                Ok(()) => finish(root, config, report),
                Err(e) => unsaved::keep(root, config, save, e, refreshed, report),
            }
        }
        Ok(folded @ (Folded::Nothing | Folded::Promotions(_))) => {
            let unsaved = match folded {
                Folded::Promotions(promoted) => match record_promoted(root, &promoted) {
                    Ok(()) => None,
                    Err(e) => Some(unsaved::reason(save, e)?),
                },
                _ => None,
            };
            let report = Report {
                action: Action::Fresh,
                rebuilt_because: None,
                files_read: 0,
                units_changed: 0,
                documents: view.len(),
                base_bytes: file_size(&index_dir(root).join(BASE)),
                delta_bytes: if view.delta().is_some() { file_size(&index_dir(root).join(DELTA)) } else { 0 },
                unsaved,
            };
            Ok(Opened { view, report })
        }
        Err(RefreshError::Damaged(d)) => {
            drop(view);
            build_because(root, config, Some(d.to_string()), save, &mut |_, _| {})
        }
        Err(RefreshError::Other(e)) => Err(e),
    }
}

/// Writes what a refresh folded in.
fn save_refreshed(root: &Path, refreshed: &Refreshed, promoted: &BTreeSet<String>) -> Result<(), Error> {
    match refreshed {
        Refreshed::Delta(bytes) => {
            publish(root, DELTA, bytes)?;
            record_promoted(root, promoted)
        }
        Refreshed::Base(bytes) => save_base(root, bytes, promoted),
    }
}

/// What [`refresh`] found.
enum Folded {
    /// The index is current.
    Nothing,
    /// The index is current, but the promotions it reflects are to be
    /// recorded again (none of their files is in the workspace).
    Promotions(BTreeSet<String>),
    /// The index with the changed files folded in, not yet written.
    Changes { refreshed: Refreshed, promoted: BTreeSet<String>, report: Report },
}

enum RefreshError {
    Damaged(Damaged),
    Other(Error),
}

impl From<Damaged> for RefreshError {
    fn from(d: Damaged) -> RefreshError {
        RefreshError::Damaged(d)
    }
}

impl From<Error> for RefreshError {
    fn from(e: Error) -> RefreshError {
        RefreshError::Other(e)
    }
}

/// Folds changed files into the index, writing nothing.
fn refresh(root: &Path, view: &View, scope: Option<&dyn TopicScope>) -> Result<Folded, RefreshError> {
    let listing = list_files(root)?;
    let promoted = trust::promoted(root)?;
    let reflected = reflected_promotions(root);
    let indexed = view.units()?;
    let mut old: HashMap<(Kind, &str), &segment::UnitInfo<'_>> = HashMap::new();
    for u in &indexed {
        old.insert((u.kind, u.path), u);
    }
    let mut files_read = 0;
    // Files whose bytes may differ from what was indexed.
    let mut changed: BTreeSet<(Kind, String)> = BTreeSet::new();
    let mut reread: HashMap<(Kind, String), (Vec<u8>, Stamp)> = HashMap::new();
    // Files read within a timestamp tick of their last change that proved
    // unchanged long enough after it: recorded again with the new read time,
    // so they are not re-hashed on every open.
    let mut settled: Vec<(&segment::UnitInfo<'_>, Stamp)> = Vec::new();
    for (key, listed) in &listing {
        match old.get(&(key.0, key.1.as_str())) {
            Some(u) if listed.matches(&u.stamp) => {
                if listed.latest() >= u.stamp.read - fsio::racy_window(listed.modified) {
                    let (bytes, stamp) = read(root, &key.1, *listed)?;
                    files_read += 1;
                    if stamp.hash != u.stamp.hash {
                        changed.insert(key.clone());
                        reread.insert(key.clone(), (bytes, stamp));
                    } else if listed.latest() < stamp.read - fsio::racy_window(listed.modified) {
                        settled.push((u, stamp));
                    }
                }
            }
            _ => {
                changed.insert(key.clone());
            }
        }
    }
    // Records promoted (or, after a hand edit of the audit log, demoted)
    // since the index was written: their files are read again.
    for id in promoted.symmetric_difference(&reflected) {
        if let Ok(id) = SourceId::parse(id) {
            let key = (Kind::Source, id.v2_path());
            if listing.contains_key(&key) {
                changed.insert(key);
            }
        }
    }
    let gone: Vec<(Kind, String)> = indexed
        .iter()
        .filter(|u| !listing.contains_key(&(u.kind, u.path.to_owned())))
        .map(|u| (u.kind, u.path.to_owned()))
        .collect();
    if changed.is_empty() && gone.is_empty() && settled.is_empty() {
        return Ok(if promoted != reflected { Folded::Promotions(promoted) } else { Folded::Nothing });
    }
    let mut sources = Sources { fresh: HashMap::new(), gone: HashSet::new(), old: Some(view) };
    for (k, p) in &gone {
        if *k == Kind::Source {
            sources.gone.insert(p.clone());
        }
    }
    let mut take = |key: &(Kind, String), listed: Listed| -> Result<(Vec<u8>, Stamp), Error> {
        match reread.remove(key) {
            Some(x) => Ok(x),
            None => {
                files_read += 1;
                read(root, &key.1, listed)
            }
        }
    };
    // v2 files first: legacy shadowing and topic citations look them up.
    let mut touched_sources: BTreeSet<String> = sources.gone.iter().cloned().collect();
    for key in changed.iter().filter(|(k, p)| *k == Kind::Source && source_parts(p).is_some_and(|x| x.2)) {
        let (bytes, stamp) = take(key, listing[key])?;
        let mut unit = v2_unit(&key.1, &bytes, stamp, &promoted);
        unit.docs.sort_by(|a, b| a.anchor.cmp(&b.anchor));
        touched_sources.insert(key.1.clone());
        sources.fresh.insert(key.1.clone(), unit);
    }
    // Legacy files that changed, or whose v2 files did.
    let mut legacy_keys: BTreeSet<(Kind, String)> = changed
        .iter()
        .filter(|(k, p)| *k == Kind::Source && source_parts(p).is_some_and(|x| !x.2))
        .cloned()
        .collect();
    for u in &indexed {
        if u.kind == Kind::Source && u.deps.iter().any(|d| touched_sources.contains(*d)) {
            let key = (u.kind, u.path.to_owned());
            if listing.contains_key(&key) {
                legacy_keys.insert(key);
            }
        }
    }
    let mut legacy_units = Vec::new();
    for key in &legacy_keys {
        let (bytes, stamp) = take(key, listing[key])?;
        legacy_units.push(legacy_unit(&key.1, &bytes, stamp, &sources)?);
        touched_sources.insert(key.1.clone());
    }
    for unit in legacy_units {
        sources.fresh.insert(unit.path.clone(), unit);
    }
    let mut changes: Vec<Change> = Vec::new();
    let topics_changed =
        changed.iter().any(|(k, _)| *k == Kind::Topic) || gone.iter().any(|(k, _)| *k == Kind::Topic);
    let cited =
        indexed.iter().any(|u| u.kind == Kind::Topic && u.deps.iter().any(|d| touched_sources.contains(*d)));
    if topics_changed || cited {
        let mut dirty: BTreeSet<String> = changed
            .iter()
            .chain(gone.iter())
            .filter(|(k, _)| *k == Kind::Topic)
            .map(|(_, p)| p.clone())
            .collect();
        for u in &indexed {
            if u.kind == Kind::Topic && u.deps.iter().any(|d| touched_sources.contains(*d)) {
                dirty.insert(u.path.to_owned());
            }
        }
        let scoped = scope.and_then(|s| s.scope(&dirty));
        let topics = topic_units(root, &listing, &sources, &mut files_read, scoped.as_ref().map(|(_, l)| l))?;
        for unit in topics {
            if scoped.as_ref().is_some_and(|(s, _)| !s.contains(&unit.path)) {
                continue;
            }
            let same = match old.get(&(Kind::Topic, unit.path.as_str())) {
                Some(u) => {
                    same_file(&u.stamp, &unit.stamp)
                        && u.deps.iter().copied().eq(unit.deps.iter().map(String::as_str))
                        && view.unit_docs(u)? == unit.docs
                }
                None => false,
            };
            if !same {
                changes.push(Change::Put(unit));
            }
        }
    }
    changes.extend(sources.fresh.into_values().map(Change::Put));
    let put: HashSet<(Kind, String)> = changes
        .iter()
        .filter_map(|c| match c {
            Change::Put(u) => Some((u.kind, u.path.clone())),
            Change::Remove(..) => None,
        })
        .collect();
    for (u, stamp) in settled {
        if !put.contains(&(u.kind, u.path.to_owned())) {
            let docs = view.unit_docs(u)?;
            let deps = u.deps.iter().map(|d| (*d).to_owned()).collect();
            changes.push(Change::Put(Unit { kind: u.kind, path: u.path.to_owned(), stamp, deps, docs }));
        }
    }
    changes.extend(gone.into_iter().map(|(k, p)| Change::Remove(k, p)));
    let units_changed = changes.len();
    let refreshed = delta::refresh(view, changes)?;
    let action = match refreshed {
        Refreshed::Delta(_) => Action::Refreshed,
        Refreshed::Base(_) => Action::Merged,
    };
    let report = Report {
        action,
        rebuilt_because: None,
        files_read,
        units_changed,
        documents: 0,
        base_bytes: 0,
        delta_bytes: 0,
        unsaved: None,
    };
    Ok(Folded::Changes { refreshed, promoted, report })
}
