//! Our side: a segment built in parallel with `segment::build`, written to
//! a file and searched through a memory map, and its bytes by section
//! group, read from the section table of the file's header.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use scriptorium_bm25_index::format::{self, sec};
use scriptorium_bm25_index::search::{Filters, Ranked, View};
use scriptorium_bm25_index::segment::{build, Segment, Unit};

use super::{Setup, K};

/// The file a segment is written to in its folder.
pub const FILE: &str = "base.idx";

/// A memory map as the bytes of a segment.
#[derive(Debug)]
pub struct MapBytes(pub memmap2::Mmap);

impl AsRef<[u8]> for MapBytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// The segment of `dir` ([`FILE`]), memory-mapped and opened as a view.
pub fn open(dir: &Path, setup: Setup) -> View {
    let file = std::fs::File::open(dir.join(FILE)).expect("the index file opens");
    // SAFETY: the file is private to the benchmark and never modified
    // while it is mapped.
    let map = unsafe { memmap2::Mmap::map(&file) }.expect("the index file maps");
    let seg = Segment::open(Arc::new(MapBytes(map)), setup.tokenizer()).expect("a built index opens");
    View::new(seg, None).expect("a base segment makes a view")
}

/// A segment built and written to `dir`, then opened from the file.
#[derive(Debug)]
pub struct Built {
    /// The opened view.
    pub view: View,
    /// Wall time of building and writing the file, seconds.
    pub seconds: f64,
    /// The file.
    pub path: PathBuf,
}

/// Builds `units` (on all cores) into `dir`/[`FILE`] with `setup`'s
/// tokenizer, timing the build and the write.
pub fn build_into(dir: &Path, units: &[Unit], setup: Setup) -> Built {
    std::fs::create_dir_all(dir).expect("the index folder is made");
    let units = units.to_vec();
    let path = dir.join(FILE);
    let started = Instant::now();
    let bytes = build(units, setup.tokenizer(), None);
    std::fs::write(&path, &bytes).expect("the index file is written");
    let seconds = started.elapsed().as_secs_f64();
    drop(bytes);
    Built { view: open(dir, setup), seconds, path }
}

/// The top [`K`] for `q`, no filter.
pub fn search(view: &View, q: &str, setup: Setup) -> Vec<Ranked> {
    view.search(q, &Filters::default(), K, setup.bm25()).expect("an intact index")
}

/// The top [`K`] for `q` with their stored fields read: the bytes of the
/// payloads handed back.
pub fn answer(view: &View, q: &str, setup: Setup) -> usize {
    search(view, q, setup)
        .iter()
        .map(|h| view.stored(h).expect("a hit is stored").payload.len())
        .sum()
}

/// The bytes of a segment file by section group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sections {
    /// The term table, term information, postings and their blocks: every
    /// section before the document lengths.
    pub postings_dictionary: u64,
    /// Per-document columns: lengths, days, flags.
    pub columns: u64,
    /// Stored fields: their offsets and the stored bytes.
    pub stored: u64,
    /// Everything else: the prefix (header, section table, checksums),
    /// speaker and day lists, units, delta sections.
    pub other: u64,
}

impl Sections {
    /// The whole file.
    pub fn total(&self) -> u64 {
        self.postings_dictionary + self.columns + self.stored + self.other
    }
}

/// The section groups of the segment `bytes` (a file built by
/// `segment::build`), from the section table after its fixed header.
pub fn sections(bytes: &[u8]) -> Sections {
    let u64_at = |at: usize| {
        let b: [u8; 8] = bytes[at..at + 8].try_into().expect("eight bytes");
        u64::from_le_bytes(b)
    };
    let mut s = Sections::default();
    for k in 0..format::SECTIONS {
        let len = u64_at(format::HEADER_LEN + k * format::SECTION_ENTRY + 8);
        match k {
            k if k < sec::LENGTHS => s.postings_dictionary += len,
            sec::LENGTHS | sec::DAYS | sec::FLAGS => s.columns += len,
            sec::STORED_OFFS | sec::STORED => s.stored += len,
            _ => s.other += len,
        }
    }
    s.other += bytes.len() as u64 - s.total();
    s
}
