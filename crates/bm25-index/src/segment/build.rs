//! Writing a segment: tokenizing units ([`build`]) and the pieces every
//! writer shares ([`Sections`]), which [`super::merge`] also uses to copy
//! already-built postings.

use std::collections::{BTreeMap, BinaryHeap, HashMap};

use rayon::prelude::*;

use super::postings;
use super::{DeltaInfo, Document, Kind, Lengths, Stamp, Unit, BLOCK};
use crate::format::{self, checksum, get_u64, put_str, put_u32, put_u64, sec};
use crate::tokenize::{Tokenizer, TokenizerConfig};

/// The most distinct words a build thread remembers the term of.
const WORD_CACHE_MAX: usize = 1 << 20;

/// Postings of one chunk of documents: sorted terms, each with its
/// `(document, frequency)` list, and the chunk's document lengths.
type TermPostings = Vec<(String, Vec<(u32, u32)>)>;

struct ChunkPostings {
    terms: TermPostings,
    lengths: Vec<u32>,
}

fn index_chunk(tok: &Tokenizer, first: u32, texts: &[&str]) -> ChunkPostings {
    // Folded word → its term's id in this chunk (`None`: a stop word), so
    // a repeated word costs one lookup; term → id for new words only.
    // Keyed hashing (std's SipHash with a random key): the words come from
    // untrusted text, and an unkeyed hash lets crafted or merely regular
    // words (`w1 w2 … w2500000`) pile into a few buckets, which made
    // indexing quadratic in the number of distinct words.
    let mut words: HashMap<String, Option<u32>> = HashMap::default();
    let mut dict: HashMap<String, u32> = HashMap::default();
    let mut postings: Vec<Vec<(u32, u32)>> = Vec::new();
    let mut lengths = Vec::with_capacity(texts.len());
    let mut ids: Vec<u32> = Vec::new();
    type Dict = HashMap<String, u32>;
    fn intern(term: &str, dict: &mut Dict, postings: &mut Vec<Vec<(u32, u32)>>) -> u32 {
        match dict.get(term) {
            Some(&id) => id,
            None => {
                let id = postings.len() as u32;
                dict.insert(term.to_owned(), id);
                postings.push(Vec::new());
                id
            }
        }
    }
    for (k, text) in texts.iter().enumerate() {
        ids.clear();
        tok.each_word(text, &mut |word, whole| {
            if whole {
                ids.push(intern(word, &mut dict, &mut postings));
                return;
            }
            let id = match words.get(word) {
                Some(id) => *id,
                None => {
                    let id = tok.term_of(word).map(|t| intern(&t, &mut dict, &mut postings));
                    if words.len() < WORD_CACHE_MAX {
                        words.insert(word.to_owned(), id);
                    }
                    id
                }
            };
            if let Some(id) = id {
                ids.push(id);
            }
        });
        lengths.push(ids.len() as u32);
        ids.sort_unstable();
        let doc = first + k as u32;
        let mut at = 0;
        while at < ids.len() {
            let id = ids[at];
            let run = ids[at..].iter().take_while(|&&x| x == id).count();
            postings[id as usize].push((doc, run as u32));
            at += run;
        }
    }
    let mut terms: Vec<(String, Vec<(u32, u32)>)> =
        dict.into_iter().map(|(t, id)| (t, std::mem::take(&mut postings[id as usize]))).collect();
    terms.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    ChunkPostings { terms, lengths }
}

fn offsets32(out: &mut Vec<u8>, ends: &[u32]) {
    for e in ends {
        put_u32(out, *e);
    }
}

/// Serializes `units` into a segment. Units are ordered by kind and path
/// (which must be unique), documents within a unit by anchor. `delta` makes
/// it a delta over the segments it names.
pub fn build(mut units: Vec<Unit>, config: TokenizerConfig, delta: Option<&DeltaInfo>) -> Vec<u8> {
    units.sort_by(|a, b| a.kind.cmp(&b.kind).then_with(|| a.path.cmp(&b.path)));
    for u in &mut units {
        u.docs.sort_by(|a, b| a.anchor.cmp(&b.anchor));
    }
    let docs: Vec<(&Unit, &Document)> =
        units.iter().flat_map(|u| u.docs.iter().map(move |d| (u, d))).collect();
    let n = docs.len();
    let tok = Tokenizer::new(config);
    // Postings: per chunk of documents in parallel, then a k-way merge.
    let threads = rayon::current_num_threads().max(1);
    let per_chunk = n.div_ceil(threads * 4).max(4096);
    let texts: Vec<&str> = docs.iter().map(|(_, d)| d.text.as_str()).collect();
    let chunks: Vec<ChunkPostings> = texts
        .par_chunks(per_chunk)
        .enumerate()
        .map(|(c, ts)| index_chunk(&tok, (c * per_chunk) as u32, ts))
        .collect();
    let lengths: Vec<u32> = chunks.iter().flat_map(|c| c.lengths.iter().copied()).collect();
    let chunks: Vec<TermPostings> = chunks.into_iter().map(|c| c.terms).collect();
    let mut cursors = vec![0usize; chunks.len()];
    let mut heap: BinaryHeap<std::cmp::Reverse<(&str, usize)>> = BinaryHeap::new();
    for (c, list) in chunks.iter().enumerate() {
        if let Some((t, _)) = list.first() {
            heap.push(std::cmp::Reverse((t.as_str(), c)));
        }
    }
    let mut s = Sections::new(lengths);
    let mut list: Vec<(u32, u32)> = Vec::new();
    while let Some(std::cmp::Reverse((term, _))) = heap.peek().copied() {
        list.clear();
        while let Some(&std::cmp::Reverse((t, c))) = heap.peek() {
            if t != term {
                break;
            }
            heap.pop();
            list.extend_from_slice(&chunks[c][cursors[c]].1);
            cursors[c] += 1;
            if let Some((next, _)) = chunks[c].get(cursors[c]) {
                heap.push(std::cmp::Reverse((next.as_str(), c)));
            }
        }
        s.push_term(term.as_bytes(), &list);
    }
    let mut speakers: BTreeMap<&[u8], Vec<u32>> = BTreeMap::new();
    for (d, (unit, doc)) in docs.iter().enumerate() {
        let mut stored = Vec::new();
        stored_fields(&mut stored, doc);
        put_u32(&mut stored, doc.speakers.len() as u32);
        for k in &doc.speakers {
            put_str(&mut stored, k);
            let list = speakers.entry(k.as_bytes()).or_default();
            if list.last() != Some(&(d as u32)) {
                list.push(d as u32);
            }
        }
        let flags = u8::from(unit.kind == Kind::Source) | (u8::from(doc.pending) << 1);
        s.push_doc(doc.day.unwrap_or(i32::MIN), flags, &stored);
    }
    s.speakers(&speakers);
    let removed: Vec<&(Kind, String)> = delta.map(|d| d.removed.iter().collect()).unwrap_or_default();
    let mut entries: Vec<Entry<'_>> = units
        .iter()
        .map(|u| Entry {
            kind: u.kind,
            path: &u.path,
            stamp: u.stamp,
            deps: u.deps.iter().map(String::as_str).collect(),
            removed: false,
            count: u.docs.len() as u32,
        })
        .collect();
    entries.extend(removed.iter().map(|(k, p)| Entry::removal(*k, p)));
    s.finish(entries, config, delta, &[])
}

/// A document's stored fields before its speakers: anchor, key, then its
/// text and payload (tag 0) or, when they can be read again from its file,
/// its span (tag 1), and for a block its time and aliases line (tag 2).
fn stored_fields(out: &mut Vec<u8>, doc: &Document) {
    put_str(out, &doc.anchor);
    put_str(out, &doc.key);
    match doc.span {
        None => {
            out.push(0);
            put_str(out, &doc.text);
            put_str(out, &doc.payload);
        }
        Some(span) => {
            let block = doc.time.is_some() || !doc.aliases.is_empty();
            out.push(if block { 2 } else { 1 });
            put_u64(out, span.offset);
            put_u32(out, span.len);
            put_u64(out, span.hash);
            if block {
                match &doc.time {
                    None => out.push(0),
                    Some(t) => {
                        out.push(1);
                        put_str(out, t);
                    }
                }
                put_str(out, &doc.aliases);
            }
        }
    }
}

/// Two lists sorted by term, summed per term; zeros left out.
fn sum_sorted<'a>(a: &[(&'a [u8], i32)], b: &[(&'a [u8], i32)]) -> Vec<(&'a [u8], i32)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let take_a = j >= b.len() || (i < a.len() && a[i].0 <= b[j].0);
        let take_b = i >= a.len() || (j < b.len() && b[j].0 <= a[i].0);
        let term = if take_a { a[i].0 } else { b[j].0 };
        let mut v = 0;
        if take_a {
            v += a[i].1;
            i += 1;
        }
        if take_b {
            v += b[j].1;
            j += 1;
        }
        match out.last_mut() {
            Some((t, w)) if *t == term => *w += v,
            _ => out.push((term, v)),
        }
    }
    out.retain(|(_, v)| *v != 0);
    out
}

/// One unit or removal record as a writer records it.
pub(super) struct Entry<'a> {
    pub(super) kind: Kind,
    pub(super) path: &'a str,
    pub(super) stamp: Stamp,
    pub(super) deps: Vec<&'a str>,
    pub(super) removed: bool,
    pub(super) count: u32,
}

impl Entry<'_> {
    pub(super) fn removal(kind: Kind, path: &str) -> Entry<'_> {
        Entry { kind, path, stamp: Stamp::default(), deps: Vec::new(), removed: true, count: 0 }
    }
}

/// The sections of a segment being written: terms pushed in byte order
/// with their postings, then documents in number order, then speakers,
/// then the units.
pub(super) struct Sections {
    s: Vec<Vec<u8>>,
    lengths: Vec<u32>,
    term_ends: Vec<u32>,
    /// Skip entries written so far.
    n_blocks: u32,
    stored_ends: Vec<u8>,
    stored: Vec<u8>,
    by_day: BTreeMap<i32, Vec<u32>>,
    docs: u32,
}

impl Sections {
    /// A writer for documents of these lengths.
    pub(super) fn new(lengths: Vec<u32>) -> Sections {
        let mut stored_ends = Vec::with_capacity((lengths.len() + 1) * 8);
        put_u64(&mut stored_ends, 0);
        Sections {
            s: vec![Vec::new(); format::SECTIONS],
            lengths,
            term_ends: vec![0],
            n_blocks: 0,
            stored_ends,
            stored: Vec::new(),
            by_day: BTreeMap::new(),
            docs: 0,
        }
    }

    /// One term (greater than the last) and its `(document, frequency)`
    /// postings, ascending.
    pub(super) fn push_term(&mut self, term: &[u8], list: &[(u32, u32)]) {
        let s = &mut self.s;
        s[sec::TERM_BYTES].extend_from_slice(term);
        self.term_ends.push(s[sec::TERM_BYTES].len() as u32);
        let start = s[sec::POSTINGS].len() as u64;
        let lengths = &self.lengths;
        let length = |d: u32| lengths.get(d as usize).copied().unwrap_or(0);
        let (data, skips) = two_mut(s, sec::POSTINGS, sec::SKIPS);
        let m = postings::encode(list, length, data, skips);
        put_u64(&mut s[sec::TERM_INFO], start);
        for v in [list.len() as u32, self.n_blocks, m.max_tf, m.min_dl] {
            put_u32(&mut s[sec::TERM_INFO], v);
        }
        if list.len() > BLOCK {
            self.n_blocks += list.len().div_ceil(BLOCK) as u32;
        }
    }

    /// The next document: its day (`i32::MIN`: none), flags and stored
    /// bytes.
    pub(super) fn push_doc(&mut self, day: i32, flags: u8, stored: &[u8]) {
        let d = self.docs;
        self.s[sec::DAYS].extend_from_slice(&day.to_le_bytes());
        self.s[sec::FLAGS].push(flags);
        if day != i32::MIN {
            self.by_day.entry(day).or_default().push(d);
        }
        self.stored.extend_from_slice(stored);
        put_u64(&mut self.stored_ends, self.stored.len() as u64);
        self.docs += 1;
    }

    /// Every speaker key, sorted, with its documents, ascending.
    pub(super) fn speakers<K: AsRef<[u8]>>(&mut self, speakers: &BTreeMap<K, Vec<u32>>) {
        let (mut ends, mut post) = (vec![0u32], vec![0u32]);
        for (k, list) in speakers {
            self.s[sec::SPK_BYTES].extend_from_slice(k.as_ref());
            ends.push(self.s[sec::SPK_BYTES].len() as u32);
            for d in list {
                put_u32(&mut self.s[sec::SPK_DOCS], *d);
            }
            post.push(post.last().copied().unwrap_or(0) + list.len() as u32);
        }
        offsets32(&mut self.s[sec::SPK_OFFS], &ends);
        offsets32(&mut self.s[sec::SPK_POST], &post);
    }

    /// The units (and a delta's removal records), then the whole segment.
    /// A delta's adjustments are `carried` (sorted by term) plus its own.
    pub(super) fn finish(
        mut self,
        mut entries: Vec<Entry<'_>>,
        config: TokenizerConfig,
        delta: Option<&DeltaInfo>,
        carried: &[(&[u8], i32)],
    ) -> Vec<u8> {
        let n = self.docs;
        let n_terms = self.term_ends.len() as u32 - 1;
        let s = &mut self.s;
        offsets32(&mut s[sec::TERM_OFFS], &self.term_ends);
        Lengths::write(&self.lengths, &mut s[sec::LENGTHS]);
        let (mut day_post, mut day_docs) = (vec![0u32], Vec::new());
        for (day, list) in &self.by_day {
            s[sec::DAY_KEYS].extend_from_slice(&day.to_le_bytes());
            for d in list {
                put_u32(&mut day_docs, *d);
            }
            day_post.push(day_post.last().copied().unwrap_or(0) + list.len() as u32);
        }
        offsets32(&mut s[sec::DAY_POST], &day_post);
        s[sec::DAY_DOCS] = day_docs;
        s[sec::STORED_OFFS] = std::mem::take(&mut self.stored_ends);
        s[sec::STORED] = std::mem::take(&mut self.stored);
        // Units and removal records, in (kind, path) order; a removal record
        // has no documents, so every unit stays a contiguous document range.
        entries.sort_by(|a, b| (a.kind, a.path).cmp(&(b.kind, b.path)));
        let (mut unit_ends, mut unit_bytes) = (Vec::new(), Vec::new());
        put_u64(&mut unit_ends, 0);
        let mut first = 0u32;
        for e in &entries {
            let lo = first as usize;
            let hi = lo + e.count as usize;
            let start = get_u64(&s[sec::STORED_OFFS], lo * 8).unwrap_or(0) as usize;
            let end = get_u64(&s[sec::STORED_OFFS], hi * 8).unwrap_or(0) as usize;
            let mut h = checksum(&s[sec::STORED][start..end]);
            h ^= checksum(&s[sec::DAYS][lo * 4..hi * 4]).rotate_left(17);
            h ^= checksum(&s[sec::FLAGS][lo..hi]).rotate_left(34);
            unit_bytes.push(u8::from(e.kind == Kind::Source) | if e.removed { 2 } else { 0 });
            put_str(&mut unit_bytes, e.path);
            let st = e.stamp;
            for v in [st.size, st.modified as u64, st.changed as u64, st.inode, st.read as u64, st.hash, h] {
                put_u64(&mut unit_bytes, v);
            }
            put_u32(&mut unit_bytes, first);
            put_u32(&mut unit_bytes, e.count);
            put_u32(&mut unit_bytes, e.deps.len() as u32);
            for dep in &e.deps {
                put_str(&mut unit_bytes, dep);
            }
            put_u64(&mut unit_ends, unit_bytes.len() as u64);
            first += e.count;
        }
        debug_assert_eq!(first, n, "the units cover every document");
        let n_units = entries.len() as u32;
        s[sec::UNITS_OFFS] = unit_ends;
        s[sec::UNITS] = unit_bytes;
        let total: u64 = self.lengths.iter().map(|&l| u64::from(l)).sum();
        let (base_id, live_docs, live_total) = match delta {
            Some(d) => {
                s[sec::TOMBS] = d.tombstones.clone();
                let mut adj: Vec<(&[u8], i32)> = d.adjust.iter().map(|(t, v)| (t.as_bytes(), *v)).collect();
                adj.sort_by(|a, b| a.0.cmp(b.0));
                let (mut ends, mut bytes, mut vals) = (vec![0u32], Vec::new(), Vec::new());
                for (t, v) in sum_sorted(carried, &adj) {
                    bytes.extend_from_slice(t);
                    ends.push(bytes.len() as u32);
                    vals.extend_from_slice(&v.to_le_bytes());
                }
                offsets32(&mut s[sec::ADJ_OFFS], &ends);
                s[sec::ADJ_BYTES] = bytes;
                s[sec::ADJ_VALS] = vals;
                for &(id, docs) in &d.stack {
                    put_u64(&mut s[sec::STACK], id);
                    put_u64(&mut s[sec::STACK], u64::from(docs));
                }
                let base_id = d.stack.first().map_or(0, |x| x.0);
                (base_id, d.below_live_docs + n, d.below_live_total + total)
            }
            None => {
                put_u32(&mut s[sec::ADJ_OFFS], 0);
                (0, n, total)
            }
        };
        assemble(s, config, delta.is_some(), [n, n_terms, n_units], total, base_id, live_docs, live_total)
    }
}

/// Sections `a` and `b` (`a < b`), both mutable.
fn two_mut(s: &mut [Vec<u8>], a: usize, b: usize) -> (&mut Vec<u8>, &mut Vec<u8>) {
    let (lo, hi) = s.split_at_mut(b);
    (&mut lo[a], &mut hi[0])
}

#[allow(clippy::too_many_arguments)]
fn assemble(
    s: &[Vec<u8>],
    config: TokenizerConfig,
    is_delta: bool,
    counts: [u32; 3],
    total: u64,
    base_id: u64,
    live_docs: u32,
    live_total: u64,
) -> Vec<u8> {
    let data_len: usize = s.iter().map(Vec::len).sum();
    let chunks = format::chunks_for(data_len);
    let prefix = format::prefix_len(chunks);
    let mut out = Vec::with_capacity(prefix + data_len);
    out.extend_from_slice(format::MAGIC);
    put_u32(&mut out, format::VERSION);
    put_u32(&mut out, config.fingerprint());
    put_u32(&mut out, u32::from(is_delta));
    for c in counts {
        put_u32(&mut out, c);
    }
    put_u64(&mut out, total);
    put_u64(&mut out, base_id);
    put_u32(&mut out, live_docs);
    put_u32(&mut out, 0);
    put_u64(&mut out, live_total);
    put_u64(&mut out, format::CHUNK as u64);
    debug_assert_eq!(out.len(), format::HEADER_LEN);
    let mut offset = prefix as u64;
    for sect in s {
        put_u64(&mut out, offset);
        put_u64(&mut out, sect.len() as u64);
        offset += sect.len() as u64;
    }
    put_u64(&mut out, chunks as u64);
    let sums_at = out.len();
    out.resize(sums_at + chunks * 8, 0);
    let sum_at = out.len();
    put_u64(&mut out, 0);
    for sect in s {
        out.extend_from_slice(sect);
    }
    let sums: Vec<u64> = out[prefix..].par_chunks(format::CHUNK).map(checksum).collect();
    for (k, h) in sums.iter().enumerate() {
        out[sums_at + k * 8..sums_at + k * 8 + 8].copy_from_slice(&h.to_le_bytes());
    }
    let head = checksum(&out[..sum_at]);
    out[sum_at..sum_at + 8].copy_from_slice(&head.to_le_bytes());
    out
}
