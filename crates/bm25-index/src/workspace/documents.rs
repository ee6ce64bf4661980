//! The documents of workspace files: archive records (v2 and legacy) and
//! the valid blocks of topic files, checked against each other and the
//! records they cite.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;

use scriptorium_source_archive::json::{to_line, RecordView, Trust};
use scriptorium_source_archive::legacy::{self, LegacyRecord};
use scriptorium_source_archive::v2::{self, Expect};
use scriptorium_source_archive::{cited, pct, Code, Error, SourceId, SourceRecord};
use scriptorium_topic_markdown::parse::search_text;
use scriptorium_topic_markdown::validate::{self, dir_of, join, Loaded, Resolution, SourceResolver};
use serde::Serialize;

use super::listing::{read, Listing};
use crate::format::checksum;
use crate::search::View;
use crate::segment::{Damaged, Document, Kind, Span, Stamp, Unit};
use crate::tokenize::Tokenizer;

/// Days since 1970-01-01 of a timestamp's UTC day.
pub(super) fn day_of(timestamp: &str) -> Option<i32> {
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

/// A v2 record's indexed text: who said it as people read it (FORMAT.md
/// §2.3), so a snippet never shows an impostor's label like the person it
/// imitates, a space, the body.
pub(super) fn record_text(r: &SourceRecord) -> String {
    format!("{} {}", r.attribution(), r.content())
}

/// What a hit shows of a v2 record indexed as `pending` or not: a
/// promoted record is trusted from then on, as recall treats it.
pub(super) fn record_view(r: &SourceRecord, pending: bool) -> RecordView {
    let mut view = RecordView::of_record(r);
    if !pending {
        view.trust = Trust::Trusted;
    }
    view
}

/// The document of a v2 record whose frame is at `span` of its file.
pub(super) fn v2_document(r: &SourceRecord, promoted: &BTreeSet<String>, span: Option<Span>) -> Document {
    let id = r.id();
    let sp = r.speaker();
    let key = id.text();
    let pending = r.is_pending() && !promoted.contains(&key);
    Document {
        anchor: id.anchor(),
        day: day_of(r.timestamp()),
        pending,
        key,
        speakers: match sp {
            Some(s) => crate::speaker::trusted_keys(s),
            None => Vec::new(),
        },
        text: record_text(r),
        payload: to_line(&record_view(r, pending)),
        span,
        time: None,
        aliases: String::new(),
    }
}

/// The span of `bytes[offset..offset + len]`, when its length fits.
pub(super) fn span_of(bytes: &[u8], offset: usize, len: usize) -> Option<Span> {
    let part = bytes.get(offset..offset.checked_add(len)?)?;
    Some(Span { offset: offset as u64, len: u32::try_from(len).ok()?, hash: checksum(part) })
}

pub(super) fn legacy_document(r: &LegacyRecord, rel: &str, fallback: Option<(&str, &str)>) -> Document {
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
        span: None,
        time: None,
        aliases: String::new(),
    }
}

/// `sources/<p>/_v2/<t>.md` → (provider dir, thread file stem, is v2).
pub(super) fn source_parts(rel: &str) -> Option<(&str, &str, bool)> {
    let rest = rel.strip_prefix("sources/")?;
    let (provider, rest) = rest.split_once('/')?;
    match rest.strip_prefix("_v2/") {
        Some(file) => Some((provider, file.strip_suffix(".md")?, true)),
        None => Some((provider, rest.strip_suffix(".md")?, false)),
    }
}

pub(super) fn v2_unit(rel: &str, bytes: &[u8], stamp: Stamp, promoted: &BTreeSet<String>) -> Unit {
    let mut docs = Vec::new();
    if let Some((p, t, true)) = source_parts(rel) {
        if let (Ok(p), Ok(t)) = (pct::decode_canonical(p.as_bytes()), pct::decode_canonical(t.as_bytes())) {
            let parsed = v2::parse_prefix(bytes, Some(Expect { provider: &p, thread: &t }));
            docs = parsed
                .frames
                .iter()
                .map(|f| v2_document(&f.to_record(), promoted, span_of(bytes, f.offset, f.len)))
                .collect();
        }
    }
    Unit { kind: Kind::Source, path: rel.to_owned(), stamp, deps: Vec::new(), docs }
}

/// The live source documents of the workspace being indexed: units read
/// in this pass first, then the previous index for files not re-read.
pub(super) struct Sources<'v> {
    pub(super) fresh: HashMap<String, Unit>,
    pub(super) gone: HashSet<String>,
    pub(super) old: Option<&'v View>,
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

pub(super) fn legacy_unit(
    rel: &str,
    bytes: &[u8],
    stamp: Stamp,
    sources: &Sources<'_>,
) -> Result<Unit, Damaged> {
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

/// What the index stores of a block: [`crate::hit::Block`], borrowed.
#[derive(Serialize)]
struct TopicPayload<'a> {
    path: &'a str,
    block_id: &'a str,
    text: &'a str,
    time: Option<&'a str>,
    trust: Trust,
}

/// A file's aliases as search reads them: each decoded with its terms
/// (the first ones within `parse::ALIAS_CHARS` characters; one whose words
/// are all stop words has none and is left out).
fn aliases_of(l: &Loaded, tok: &Tokenizer) -> Vec<(String, Vec<String>)> {
    let Some(fm) = l.file.front_matter.as_ref() else { return Vec::new() };
    let mut out = Vec::new();
    for name in fm.searchable_aliases() {
        let mut terms = Vec::new();
        tok.terms(&name, &mut terms);
        if !terms.is_empty() {
            out.push((name.into_owned(), terms));
        }
    }
    out
}

/// What a block of a file with `aliases` is indexed as: its `text`, then
/// `(aliases: a, b)` naming the aliases whose terms the text does not all
/// hold already (a name the paragraph says is not counted twice).
fn with_aliases(text: String, aliases: &[(String, Vec<String>)], tok: &Tokenizer) -> String {
    if aliases.is_empty() {
        return text;
    }
    let mut own = Vec::new();
    tok.terms(&text, &mut own);
    let own: HashSet<&str> = own.iter().map(String::as_str).collect();
    let missing: Vec<&str> = aliases
        .iter()
        .filter(|(_, terms)| !terms.iter().all(|t| own.contains(t.as_str())))
        .map(|(name, _)| name.as_str())
        .collect();
    if missing.is_empty() {
        text
    } else {
        format!("{text}\n(aliases: {})", missing.join(", "))
    }
}

/// Every topic file as a unit (or only those in `only`), checked against
/// each other and `sources`; `tok` is the index's tokenizer (for the
/// aliases a block is also indexed with).
pub(super) fn topic_units(
    root: &Path,
    listing: &Listing,
    sources: &Sources<'_>,
    files_read: &mut usize,
    only: Option<&BTreeSet<String>>,
    tok: &Tokenizer,
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
        return Err(Error::new(Code::Io, d.to_string()));
    }
    let by_path: HashMap<&str, &Loaded> = loaded.iter().map(|l| (l.path.as_str(), l)).collect();
    let aliases: HashMap<&str, Vec<(String, Vec<String>)>> =
        loaded.iter().map(|l| (l.path.as_str(), aliases_of(l, tok))).collect();
    for state in &checked.blocks {
        let (Some(id), true) = (&state.id, state.valid) else { continue };
        let Some(l) = by_path.get(state.path.as_str()) else { continue };
        let Some(block) = l.file.blocks.get(state.index) else { continue };
        let (offset, source) = l.file.block_source(block);
        let text = search_text(&l.file.block_text(block), Some(id));
        let newest = state.newest();
        let trust = Trust::of(state.pending);
        let span = span_of(source.as_bytes(), 0, source.len()).map(|s| Span { offset: offset as u64, ..s });
        let payload = to_line(&TopicPayload {
            path: &state.path,
            block_id: id,
            text: &text,
            time: newest.map(|n| n.0.as_str()),
            trust,
        });
        // The file's names find each of its blocks; the hit's text stays
        // the block's own.
        let own = text.len();
        let indexed = match aliases.get(state.path.as_str()) {
            Some(names) => with_aliases(text, names, tok),
            None => text,
        };
        let doc = Document {
            anchor: id.clone(),
            key: String::new(),
            day: newest.and_then(|n| i32::try_from(n.1.seconds.div_euclid(86_400)).ok()),
            pending: state.pending,
            speakers: Vec::new(),
            aliases: indexed[own..].to_owned(),
            text: indexed,
            payload,
            span,
            time: newest.map(|n| n.0.clone()),
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
