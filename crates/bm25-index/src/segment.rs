//! One immutable segment: building it into bytes (in parallel), and opening
//! it from any `&[u8]` with lazy, chunk-wise checksum verification.
//!
//! A segment holds *units* (one per workspace file), each with its
//! documents. Documents are numbered in ranking tie-break order: by kind
//! (topics first), then path, then anchor, so a unit is a contiguous range
//! of document numbers and a path prefix is a range of units.

use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

use crate::format::{self, checksum, get_u32, get_u64, sec};
use crate::tokenize::{Tokenizer, TokenizerConfig};

mod build;
pub mod merge;
mod postings;
#[cfg(test)]
mod postings_tests;
mod storage;
mod tables;
mod verify;
pub use build::build;
pub(crate) use postings::{Lengths, PostingCursor, Postings};
pub use storage::{MappedFile, Storage};

/// Postings per block (the unit of skipping).
pub const BLOCK: usize = 128;

/// What a document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A topic block (ranks before a source on equal scores).
    Topic,
    /// An archived source record.
    Source,
}

impl serde::Serialize for Kind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl Kind {
    /// `topic` or `source`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Topic => "topic",
            Kind::Source => "source",
        }
    }
}

/// One document of a unit.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Document {
    /// The block id, or the `source-HASH8` anchor.
    pub anchor: String,
    /// The source id text of a source record; empty for a topic block.
    pub key: String,
    /// The document's UTC day (days since 1970-01-01), if it has a date.
    pub day: Option<i32>,
    /// Pending documents are found only when asked for.
    pub pending: bool,
    /// Speaker keys a filter may match, already NFC + case folded.
    pub speakers: Vec<String>,
    /// The text to index. Stored only when the document has no
    /// [`span`](Document::span); read back empty otherwise.
    pub text: String,
    /// What a hit shows of it (the block's or record's JSON fields). Stored
    /// only when the document has no [`span`](Document::span); read back
    /// empty otherwise.
    pub payload: String,
    /// Where in its unit's file the document's text can be read again:
    /// then its text and payload are not stored, only the span.
    pub span: Option<Span>,
    /// A topic block's newest evidence time, stored with its span (the
    /// block's bytes do not hold it); `None` for every other document.
    pub time: Option<String>,
    /// What a topic block's text is indexed with after the text its bytes
    /// give (its file's `(aliases: …)` line, from the front matter), stored
    /// with its span; empty for every other document.
    pub aliases: String,
}

impl Document {
    /// The document as a segment gives it back: with a span, its text
    /// and payload empty; without one, no time.
    pub fn stored_form(&self) -> Document {
        let mut d = self.clone();
        if d.span.is_some() {
            d.text.clear();
            d.payload.clear();
        } else {
            d.time = None;
            d.aliases.clear();
        }
        d
    }
}

/// A byte range of a unit's file and the checksum of those bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    /// The first byte.
    pub offset: u64,
    /// How many bytes.
    pub len: u32,
    /// [`checksum`](crate::format::checksum) of exactly those bytes.
    pub hash: u64,
}

/// A file's identity on disk when it was indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Stamp {
    /// Size in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub modified: i64,
    /// Status change time (ctime), nanoseconds since the Unix epoch; 0
    /// where the platform has none.
    pub changed: i64,
    /// The file's inode number; 0 where the platform has none.
    pub inode: u64,
    /// When the file was read, nanoseconds since the Unix epoch.
    pub read: i64,
    /// [`checksum`](crate::format::checksum) of the bytes that were read.
    pub hash: u64,
}

/// One workspace file and the documents it yields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// Topic file or archive file.
    pub kind: Kind,
    /// Workspace-relative path; also the path of every document in it.
    pub path: String,
    /// The file's stamp when it was read.
    pub stamp: Stamp,
    /// Paths whose change must re-derive this unit's documents.
    pub deps: Vec<String>,
    /// Its documents.
    pub docs: Vec<Document>,
}

/// What a delta carries about the segments below it (the base first,
/// then older deltas): it is the newest segment of a stack, and the only
/// one whose tombstones and statistics count.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeltaInfo {
    /// The segments below, oldest first: their ids ([`Segment::id`]) and
    /// document counts.
    pub stack: Vec<(u64, u32)>,
    /// Per segment below, in order, one bit per document (LSB first, whole
    /// bytes per segment): deleted.
    pub tombstones: Vec<u8>,
    /// Per term, what to add to the sum of its document frequencies in the
    /// segments below (minus one per deleted document holding it).
    pub adjust: Vec<(String, i32)>,
    /// Live documents of the segments below.
    pub below_live_docs: u32,
    /// Total length in terms of the live documents below.
    pub below_live_total: u64,
    /// Removal records: units gone whose path a segment below still holds.
    pub removed: Vec<(Kind, String)>,
}

/// Why bytes are not a usable segment (the caller rebuilds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damaged(pub String);

impl fmt::Display for Damaged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unusable index: {}", self.0)
    }
}

impl std::error::Error for Damaged {}

fn damaged<T>(why: impl Into<String>) -> Result<T, Damaged> {
    Err(Damaged(why.into()))
}

/// The terms of `text`, each once, sorted, as the index counts them.
pub fn distinct_terms(tok: &Tokenizer, text: &str) -> Vec<String> {
    let mut all = Vec::new();
    tok.terms(text, &mut all);
    all.sort_unstable();
    all.dedup();
    all
}

/// One unit as a segment records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitInfo<'a> {
    /// Topic file or archive file.
    pub kind: Kind,
    /// A delta's record that the file is gone (it has no documents).
    pub removed: bool,
    /// Workspace-relative path.
    pub path: &'a str,
    /// The stamp the file had.
    pub stamp: Stamp,
    /// A hash of its documents.
    pub docs_hash: u64,
    /// Its first document number.
    pub first: u32,
    /// How many documents it has.
    pub count: u32,
    /// Paths it depends on.
    pub deps: Vec<&'a str>,
}

/// A document's stored fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored<'a> {
    /// Topic or source.
    pub kind: Kind,
    /// Pending.
    pub pending: bool,
    /// UTC day.
    pub day: Option<i32>,
    /// Path (the unit's).
    pub path: &'a str,
    /// Block id or anchor.
    pub anchor: &'a str,
    /// Source id text, or empty.
    pub key: &'a str,
    /// Its text and payload, or where they are.
    pub origin: Origin<'a>,
    /// Speaker keys.
    pub speakers: Vec<&'a str>,
}

/// Where a stored document's text and payload are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin<'a> {
    /// In the segment.
    Inline {
        /// The indexed text.
        text: &'a str,
        /// The payload.
        payload: &'a str,
    },
    /// In the unit's file, at this span (the workspace layer reads them
    /// back).
    Span {
        /// Where.
        span: Span,
        /// A topic block's newest evidence time.
        time: Option<&'a str>,
        /// A topic block's indexed text after its own ([`Document::aliases`]).
        aliases: &'a str,
    },
}

impl Stored<'_> {
    /// The owned document ([`Document::stored_form`]).
    pub fn to_document(&self) -> Document {
        let (text, payload, span, time, aliases) = match self.origin {
            Origin::Inline { text, payload } => {
                (text.to_owned(), payload.to_owned(), None, None, String::new())
            }
            Origin::Span { span, time, aliases } => {
                (String::new(), String::new(), Some(span), time.map(str::to_owned), aliases.to_owned())
            }
        };
        Document {
            anchor: self.anchor.to_owned(),
            key: self.key.to_owned(),
            day: self.day,
            pending: self.pending,
            speakers: self.speakers.iter().map(|s| (*s).to_owned()).collect(),
            text,
            payload,
            span,
            time,
            aliases,
        }
    }
}

/// The bytes a segment reads: a [`MappedFile`], a `Vec<u8>`, any
/// [`Storage`].
pub type Bytes = std::sync::Arc<dyn Storage>;

/// A speaker key and its documents (u32, ascending), as stored.
pub(crate) type KeyDocs<'a> = (&'a [u8], &'a [u8]);

/// An opened segment over any bytes. Opening reads only the prefix;
/// every other byte is checksummed the first time it is used. Never panics.
pub struct Segment {
    bytes: Bytes,
    config: TokenizerConfig,
    id: u64,
    delta: bool,
    docs: u32,
    terms: u32,
    units: u32,
    total: u64,
    base_id: u64,
    live_docs: u32,
    live_total: u64,
    data_start: usize,
    sums: (usize, usize),
    sections: [(usize, usize); format::SECTIONS],
    verified: Vec<AtomicU64>,
    whole: [AtomicU8; format::SECTIONS],
}

impl fmt::Debug for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Segment")
            .field("delta", &self.delta)
            .field("docs", &self.docs)
            .field("terms", &self.terms)
            .field("units", &self.units)
            .finish()
    }
}

impl Segment {
    /// Opens `bytes` as a segment built with `config`, checking its magic,
    /// version, tokenizer, and the checksum of its prefix.
    pub fn open(owner: Bytes, config: TokenizerConfig) -> Result<Segment, Damaged> {
        let bytes: &[u8] = (*owner).as_ref();
        let fixed = format::HEADER_LEN + format::SECTIONS * format::SECTION_ENTRY;
        if bytes.len() < fixed + 16 {
            return damaged("truncated header");
        }
        if &bytes[..8] != format::MAGIC {
            return damaged("not a Scriptorium BM25 index (magic)");
        }
        let version = get_u32(bytes, 8).unwrap_or(0);
        if version != format::VERSION {
            return damaged(format!("format version {version}, expected {}", format::VERSION));
        }
        let chunks = get_u64(bytes, fixed).unwrap_or(u64::MAX);
        if chunks > (bytes.len() / 8) as u64 {
            return damaged("chunk table longer than the file");
        }
        let chunks = chunks as usize;
        let prefix = format::prefix_len(chunks);
        if bytes.len() < prefix || format::chunks_for(bytes.len() - prefix) != chunks {
            return damaged("file length does not match the chunk table");
        }
        let sum_at = prefix - 8;
        let id = checksum(&bytes[..sum_at]);
        if get_u64(bytes, sum_at) != Some(id) {
            return damaged("header checksum mismatch");
        }
        if get_u32(bytes, 12) != Some(config.fingerprint()) {
            return damaged("built with another tokenizer configuration");
        }
        if get_u64(bytes, 64) != Some(format::CHUNK as u64) {
            return damaged("unexpected chunk size");
        }
        let u = |at| get_u32(bytes, at).unwrap_or(0);
        let w = |at| get_u64(bytes, at).unwrap_or(0);
        let mut sections = [(0usize, 0usize); format::SECTIONS];
        let mut expect = prefix as u64;
        for (k, slot) in sections.iter_mut().enumerate() {
            let at = format::HEADER_LEN + k * format::SECTION_ENTRY;
            let (off, len) = (w(at), w(at + 8));
            let end = off.checked_add(len).filter(|&e| e <= bytes.len() as u64);
            if off != expect || end.is_none() {
                return damaged(format!("section {k} is out of place"));
            }
            expect = off + len;
            *slot = (off as usize, (off + len) as usize);
        }
        if expect != bytes.len() as u64 {
            return damaged("trailing bytes after the last section");
        }
        let seg = Segment {
            bytes: owner.clone(),
            config,
            id,
            delta: u(16) == 1,
            docs: u(20),
            terms: u(24),
            units: u(28),
            total: w(32),
            base_id: w(40),
            live_docs: u(48),
            live_total: w(56),
            data_start: prefix,
            sums: (fixed + 8, sum_at),
            sections,
            verified: (0..chunks.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
            whole: std::array::from_fn(|_| AtomicU8::new(0)),
        };
        let len = |k: usize| seg.sections[k].1 - seg.sections[k].0;
        let (n, t, un) = (seg.docs as usize, seg.terms as usize, seg.units as usize);
        let sizes_ok = len(sec::TERM_OFFS) == (t + 1) * 4
            && len(sec::TERM_INFO) == t * 24
            && len(sec::SKIPS) % postings::SKIP == 0
            && (n == 0 || [1, 2, 4].iter().any(|w| len(sec::LENGTHS) == n * w))
            && (n > 0 || len(sec::LENGTHS) == 0)
            && len(sec::DAYS) == n * 4
            && len(sec::FLAGS) == n
            && len(sec::SPK_OFFS) >= 4
            && len(sec::SPK_OFFS) % 4 == 0
            && len(sec::SPK_POST) == len(sec::SPK_OFFS)
            && len(sec::SPK_DOCS) % 4 == 0
            && len(sec::STORED_OFFS) == (n + 1) * 8
            && len(sec::UNITS_OFFS) == (un + 1) * 8
            && len(sec::ADJ_OFFS) >= 4
            && len(sec::ADJ_OFFS) % 4 == 0
            && len(sec::ADJ_VALS) == len(sec::ADJ_OFFS) - 4
            && len(sec::DAY_KEYS) % 4 == 0
            && len(sec::DAY_POST) == len(sec::DAY_KEYS) + 4
            && len(sec::DAY_DOCS) % 4 == 0
            && len(sec::STACK) % 16 == 0
            && (seg.delta == (len(sec::STACK) > 0))
            && (seg.delta || (len(sec::TOMBS) == 0 && len(sec::ADJ_VALS) == 0));
        if !sizes_ok || seg.live_docs > seg.docs.max(seg.live_docs) {
            return damaged("section sizes do not match the header");
        }
        if !seg.delta && (seg.live_docs != seg.docs || seg.live_total != seg.total) {
            return damaged("base statistics do not match");
        }
        Ok(seg)
    }

    /// Opens an owned buffer (tests, freshly built segments).
    pub fn open_vec(bytes: Vec<u8>, config: TokenizerConfig) -> Result<Segment, Damaged> {
        Segment::open(std::sync::Arc::new(bytes), config)
    }

    fn raw(&self) -> &[u8] {
        (*self.bytes).as_ref()
    }

    /// The segment's id: the checksum of its prefix.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// True for a delta.
    pub fn is_delta(&self) -> bool {
        self.delta
    }

    /// The base a delta amends.
    pub fn base_id(&self) -> u64 {
        self.base_id
    }

    /// The number of documents in this segment.
    pub fn len(&self) -> u32 {
        self.docs
    }

    /// True when the segment holds no document.
    pub fn is_empty(&self) -> bool {
        self.docs == 0
    }

    /// The number of units.
    pub fn unit_count(&self) -> u32 {
        self.units
    }

    /// Its tokenizer configuration.
    pub fn config(&self) -> TokenizerConfig {
        self.config
    }

    /// Live documents and their total length (base: its own; delta: over
    /// base and delta together).
    pub fn live(&self) -> (u32, u64) {
        (self.live_docs, self.live_total)
    }

    /// Total length of this segment's own documents.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The segment's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.raw()
    }

    /// True when `s` lies within this segment's bytes (it was read from it).
    pub fn holds(&self, s: &str) -> bool {
        self.raw().as_ptr_range().contains(&s.as_ptr())
    }

    /// The same segment opened again over the same bytes (its checks
    /// start afresh).
    pub fn reopen(&self) -> Result<Segment, Damaged> {
        Segment::open(self.bytes.clone(), self.config)
    }

    /// The size of the segment in bytes (its stored texts included).
    pub fn byte_len(&self) -> usize {
        let bytes: &[u8] = (*self.bytes).as_ref();
        bytes.len()
    }

    /// Bytes `lo..hi` of section `k`, verified.
    #[inline]
    pub(crate) fn slice(&self, k: usize, lo: usize, hi: usize) -> Result<&[u8], Damaged> {
        let (s, e) = self.sections[k];
        if lo > hi || s + hi > e {
            return damaged(format!("section {k}: range {lo}..{hi} out of bounds"));
        }
        self.verify_chunks(s + lo, s + hi)?;
        Ok(&self.raw()[s + lo..s + hi])
    }

    /// The whole of section `k`, verified (once per open segment).
    pub(crate) fn section(&self, k: usize) -> Result<&[u8], Damaged> {
        let (s, e) = self.sections[k];
        match self.whole[k].load(Ordering::Relaxed) {
            1 => return Ok(&self.raw()[s..e]),
            2 => return damaged(format!("section {k} checksum mismatch")),
            _ => {}
        }
        match self.verify_chunks(s, e) {
            Ok(()) => {
                self.whole[k].store(1, Ordering::Relaxed);
                Ok(&self.raw()[s..e])
            }
            Err(e) => {
                self.whole[k].store(2, Ordering::Relaxed);
                Err(e)
            }
        }
    }

    fn u32_at(&self, k: usize, index: usize) -> Result<u32, Damaged> {
        let b = self.slice(k, index * 4, index * 4 + 4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64_at(&self, k: usize, index: usize) -> Result<u64, Damaged> {
        let b = self.slice(k, index * 8, index * 8 + 8)?;
        Ok(u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    }

    /// Binary search of `key` in a sorted string table.
    fn find(&self, offs: usize, bytes: usize, count: usize, key: &[u8]) -> Result<Option<usize>, Damaged> {
        let (mut lo, mut hi) = (0usize, count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (s, e) = (self.u32_at(offs, mid)? as usize, self.u32_at(offs, mid + 1)? as usize);
            match self.slice(bytes, s, e)?.cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(Some(mid)),
            }
        }
        Ok(None)
    }
}
