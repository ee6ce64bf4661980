//! Building the index into bytes, opening it from any `&[u8]`, and top-k
//! BM25 search with filters (FORMAT.md §7).

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use crate::format::{self, fnv1a, get_u32, get_u64, put_u32, put_u64};
use crate::tokenize::{Tokenizer, TokenizerConfig};

/// What a document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A topic block (ranks before a source on equal scores).
    Topic,
    /// An archived source record.
    Source,
}

/// One document to index: its text and what filters and hits need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// Topic block or source record.
    pub kind: Kind,
    /// Workspace-relative path.
    pub path: String,
    /// The block id, or the `source-HASH8` anchor.
    pub anchor: String,
    /// The document's UTC day (days since 1970-01-01), if it has a date.
    pub day: Option<i32>,
    /// Pending documents are found only when asked for.
    pub pending: bool,
    /// Speaker keys a filter may match, already NFC + case folded (empty
    /// for topics and speakerless records).
    pub speakers: Vec<String>,
    /// The text to index.
    pub text: String,
}

/// Filters that compose with each other and with ranking.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filters {
    /// Only this kind.
    pub kind: Option<Kind>,
    /// Only paths starting with these bytes.
    pub path_prefix: Option<String>,
    /// Only documents on or after this UTC day.
    pub day_from: Option<i32>,
    /// Only documents on or before this UTC day.
    pub day_to: Option<i32>,
    /// Only sources with this speaker key (NFC + case folded).
    pub speaker: Option<String>,
    /// Include pending documents.
    pub include_pending: bool,
}

/// BM25 parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bm25 {
    /// Term-frequency saturation.
    pub k1: f64,
    /// Length normalisation.
    pub b: f64,
}

impl Default for Bm25 {
    fn default() -> Bm25 {
        Bm25 { k1: 1.2, b: 0.75 }
    }
}

/// One term's contribution: Lucene's IDF times the saturated frequency.
pub fn term_score(p: Bm25, n: u32, df: u32, tf: u32, dl: u32, avgdl: f64) -> f64 {
    let (n, df, tf, dl) = (f64::from(n), f64::from(df), f64::from(tf), f64::from(dl));
    let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
    let norm = if avgdl > 0.0 { dl / avgdl } else { 0.0 };
    idf * (tf * (p.k1 + 1.0)) / (tf + p.k1 * (1.0 - p.b + p.b * norm))
}

/// Serialises `docs` into an index (format version 1).
pub fn build(docs: &[Document], config: TokenizerConfig) -> Vec<u8> {
    let tokenizer = Tokenizer::new(config);
    let mut postings: BTreeMap<String, Vec<(u32, u32)>> = BTreeMap::new();
    let mut lengths = Vec::with_capacity(docs.len());
    let mut terms = Vec::new();
    let mut total = 0u64;
    for (d, doc) in docs.iter().enumerate() {
        terms.clear();
        tokenizer.terms(&doc.text, &mut terms);
        lengths.push(terms.len() as u32);
        total += terms.len() as u64;
        let mut tf: HashMap<&str, u32> = HashMap::new();
        for t in &terms {
            *tf.entry(t.as_str()).or_default() += 1;
        }
        for (t, f) in tf {
            postings.entry(t.to_owned()).or_default().push((d as u32, f));
        }
    }
    for list in postings.values_mut() {
        list.sort_unstable();
    }
    let mut s_terms = Vec::new();
    let mut s_post = Vec::new();
    let (mut term_bytes, mut entries) = (Vec::new(), Vec::new());
    let mut t_ends = vec![0u32];
    let mut p_ends = vec![0u32];
    for (t, list) in &postings {
        term_bytes.extend_from_slice(t.as_bytes());
        t_ends.push(term_bytes.len() as u32);
        for &(d, f) in list {
            put_u32(&mut entries, d);
            put_u32(&mut entries, f);
        }
        p_ends.push((entries.len() / 8) as u32);
    }
    for e in &t_ends {
        put_u32(&mut s_terms, *e);
    }
    s_terms.extend_from_slice(&term_bytes);
    for e in &p_ends {
        put_u32(&mut s_post, *e);
    }
    s_post.extend_from_slice(&entries);
    let mut s_len = Vec::with_capacity(lengths.len() * 4);
    for l in &lengths {
        put_u32(&mut s_len, *l);
    }
    let mut meta = Vec::new();
    let mut m_ends = vec![0u32];
    let put_str = |out: &mut Vec<u8>, s: &str| {
        put_u32(out, s.len() as u32);
        out.extend_from_slice(s.as_bytes());
    };
    for doc in docs {
        meta.push(u8::from(doc.kind == Kind::Source));
        meta.push(u8::from(doc.pending));
        meta.extend_from_slice(&doc.day.unwrap_or(i32::MIN).to_le_bytes());
        put_str(&mut meta, &doc.path);
        put_str(&mut meta, &doc.anchor);
        put_u32(&mut meta, doc.speakers.len() as u32);
        for s in &doc.speakers {
            put_str(&mut meta, s);
        }
        m_ends.push(meta.len() as u32);
    }
    let mut s_docs = Vec::new();
    for e in &m_ends {
        put_u32(&mut s_docs, *e);
    }
    s_docs.extend_from_slice(&meta);

    let sections = [s_terms, s_post, s_len, s_docs];
    let mut out = Vec::new();
    out.extend_from_slice(format::MAGIC);
    put_u32(&mut out, format::VERSION);
    put_u32(&mut out, config.fingerprint());
    put_u32(&mut out, docs.len() as u32);
    put_u32(&mut out, postings.len() as u32);
    put_u64(&mut out, total);
    put_u32(&mut out, format::SECTIONS as u32);
    put_u32(&mut out, 0);
    let mut offset = format::PREFIX_LEN as u64;
    for s in &sections {
        put_u64(&mut out, offset);
        put_u64(&mut out, s.len() as u64);
        put_u64(&mut out, fnv1a(s));
        offset += s.len() as u64;
    }
    let header_sum = fnv1a(&out);
    put_u64(&mut out, header_sum);
    for s in &sections {
        out.extend_from_slice(s);
    }
    out
}

/// Why bytes are not a usable index (the caller rebuilds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenError(pub String);

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unusable index: {}", self.0)
    }
}

impl std::error::Error for OpenError {}

/// An opened index over any bytes (a `Vec<u8>` in tests, a memory map in
/// production). Never panics for any input.
#[derive(Debug)]
pub struct Index<'a> {
    config: TokenizerConfig,
    n: u32,
    n_terms: u32,
    avgdl: f64,
    terms: &'a [u8],
    postings: &'a [u8],
    lengths: &'a [u8],
    docs: &'a [u8],
}

/// A document's stored fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocRef<'a> {
    /// Topic or source.
    pub kind: Kind,
    /// Pending.
    pub pending: bool,
    /// UTC day.
    pub day: Option<i32>,
    /// Path.
    pub path: &'a str,
    /// Block id or anchor.
    pub anchor: &'a str,
    /// Speaker keys.
    pub speakers: Vec<&'a str>,
}

/// One hit.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// Index of the document in build order.
    pub doc: u32,
    /// BM25 score.
    pub score: f64,
}

fn err<T>(why: impl Into<String>) -> Result<T, OpenError> {
    Err(OpenError(why.into()))
}

impl<'a> Index<'a> {
    /// Opens and verifies `bytes` as an index built with `config`.
    pub fn open(bytes: &'a [u8], config: TokenizerConfig) -> Result<Index<'a>, OpenError> {
        if bytes.len() < format::PREFIX_LEN {
            return err("truncated header");
        }
        if get_u64(bytes, format::PREFIX_LEN - 8) != Some(fnv1a(&bytes[..format::PREFIX_LEN - 8])) {
            return err("header checksum mismatch");
        }
        if &bytes[..8] != format::MAGIC {
            return err("not a Scriptorium BM25 index (magic)");
        }
        let version = get_u32(bytes, 8).unwrap_or(0);
        if version != format::VERSION {
            return err(format!("format version {version}, expected {}", format::VERSION));
        }
        if get_u32(bytes, 12) != Some(config.fingerprint()) {
            return err("built with another tokenizer configuration");
        }
        let n = get_u32(bytes, 16).unwrap_or(0);
        let n_terms = get_u32(bytes, 20).unwrap_or(0);
        let total = get_u64(bytes, 24).unwrap_or(0);
        if get_u32(bytes, 32) != Some(format::SECTIONS as u32) {
            return err("unexpected section count");
        }
        let mut sections: [&[u8]; format::SECTIONS] = [&[]; format::SECTIONS];
        for (k, slot) in sections.iter_mut().enumerate() {
            let at = format::HEADER_LEN + k * format::SECTION_ENTRY;
            let (off, len, sum) = (get_u64(bytes, at), get_u64(bytes, at + 8), get_u64(bytes, at + 16));
            let (Some(off), Some(len), Some(sum)) = (off, len, sum) else {
                return err("truncated section table");
            };
            let end = off.checked_add(len).filter(|&e| e <= bytes.len() as u64);
            let Some(end) = end else { return err(format!("section {k} lies past the end")) };
            let s = &bytes[off as usize..end as usize];
            if fnv1a(s) != sum {
                return err(format!("section {k} checksum mismatch"));
            }
            *slot = s;
        }
        let [terms, postings, lengths, docs] = sections;
        let words = |s: &[u8], count: u32| s.len() >= (count as usize + 1) * 4;
        if !words(terms, n_terms)
            || !words(postings, n_terms)
            || lengths.len() != n as usize * 4
            || !words(docs, n)
        {
            return err("section sizes do not match the header");
        }
        let avgdl = if n > 0 { total as f64 / f64::from(n) } else { 0.0 };
        Ok(Index { config, n, n_terms, avgdl, terms, postings, lengths, docs })
    }

    /// The number of documents.
    pub fn len(&self) -> u32 {
        self.n
    }

    /// True when the index holds no document.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    fn term(&self, k: u32) -> Option<&'a [u8]> {
        let start = get_u32(self.terms, k as usize * 4)? as usize;
        let end = get_u32(self.terms, k as usize * 4 + 4)? as usize;
        let base = (self.n_terms as usize + 1) * 4;
        self.terms.get(base + start..base + end)
    }

    fn find_term(&self, t: &str) -> Option<u32> {
        let (mut lo, mut hi) = (0u32, self.n_terms);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.term(mid)?.cmp(t.as_bytes()) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    fn postings(&self, k: u32) -> Option<&'a [u8]> {
        let start = get_u32(self.postings, k as usize * 4)? as usize;
        let end = get_u32(self.postings, k as usize * 4 + 4)? as usize;
        let base = (self.n_terms as usize + 1) * 4;
        self.postings.get(base + start * 8..base + end.checked_mul(8)?)
    }

    /// The stored fields of document `d`, if the bytes hold them.
    pub fn doc(&self, d: u32) -> Option<DocRef<'a>> {
        let start = get_u32(self.docs, d as usize * 4)? as usize;
        let end = get_u32(self.docs, d as usize * 4 + 4)? as usize;
        let base = (self.n as usize + 1) * 4;
        let b = self.docs.get(base + start..base + end)?;
        let kind = match b.first()? {
            0 => Kind::Topic,
            1 => Kind::Source,
            _ => return None,
        };
        let pending = *b.get(1)? != 0;
        let day = i32::from_le_bytes(b.get(2..6)?.try_into().ok()?);
        let mut at = 6;
        let mut string = || -> Option<&'a str> {
            let len = get_u32(b, at)? as usize;
            let s = std::str::from_utf8(b.get(at + 4..at + 4 + len)?).ok()?;
            at += 4 + len;
            Some(s)
        };
        let path = string()?;
        let anchor = string()?;
        let count = {
            let c = get_u32(b, at)?;
            at += 4;
            c
        };
        let mut speakers = Vec::new();
        for _ in 0..count.min(1024) {
            let len = get_u32(b, at)? as usize;
            speakers.push(std::str::from_utf8(b.get(at + 4..at + 4 + len)?).ok()?);
            at += 4 + len;
        }
        Some(DocRef { kind, pending, day: (day != i32::MIN).then_some(day), path, anchor, speakers })
    }

    fn passes(&self, doc: &DocRef<'_>, f: &Filters) -> bool {
        (f.include_pending || !doc.pending)
            && f.kind.is_none_or(|k| k == doc.kind)
            && f.path_prefix.as_deref().is_none_or(|p| doc.path.as_bytes().starts_with(p.as_bytes()))
            && f.day_from.is_none_or(|from| doc.day.is_some_and(|d| d >= from))
            && f.day_to.is_none_or(|to| doc.day.is_some_and(|d| d <= to))
            && f.speaker.as_deref().is_none_or(|s| doc.kind == Kind::Source && doc.speakers.contains(&s))
    }

    /// The best `limit` documents for `query` that pass `filters`, best
    /// first; ties broken by kind (topic first), then path, then anchor.
    pub fn search(&self, query: &str, filters: &Filters, limit: usize, p: Bm25) -> Vec<Hit> {
        let tokenizer = Tokenizer::new(self.config);
        let mut terms = Vec::new();
        tokenizer.terms(query, &mut terms);
        let mut seen = std::collections::HashSet::new();
        terms.retain(|t| seen.insert(t.clone()));
        let mut scores: HashMap<u32, f64> = HashMap::new();
        for t in &terms {
            let Some(k) = self.find_term(t) else { continue };
            let Some(list) = self.postings(k) else { continue };
            let df = (list.len() / 8) as u32;
            for e in list.chunks_exact(8) {
                let d = u32::from_le_bytes([e[0], e[1], e[2], e[3]]);
                let tf = u32::from_le_bytes([e[4], e[5], e[6], e[7]]);
                let Some(dl) = get_u32(self.lengths, d as usize * 4) else { continue };
                *scores.entry(d).or_insert(0.0) += term_score(p, self.n, df, tf, dl, self.avgdl);
            }
        }
        let mut hits: Vec<(Hit, DocRef<'a>)> = scores
            .into_iter()
            .filter_map(|(doc, score)| {
                let r = self.doc(doc)?;
                self.passes(&r, filters).then_some((Hit { doc, score }, r))
            })
            .collect();
        hits.sort_by(|(a, ra), (b, rb)| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| ra.kind.cmp(&rb.kind))
                .then_with(|| ra.path.cmp(rb.path))
                .then_with(|| ra.anchor.cmp(rb.anchor))
        });
        hits.truncate(limit);
        hits.into_iter().map(|(h, _)| h).collect()
    }
}

#[cfg(test)]
mod tests;
