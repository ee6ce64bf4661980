//! Our side: a segment built in parallel with `segment::build`, written to
//! a file and searched through a memory map, and its bytes by section
//! group, read from the section table of the file's header.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use scriptorium_bm25_index::format::{self, sec};
use scriptorium_bm25_index::search::{Filters, Ranked, View};
use scriptorium_bm25_index::segment::{build, MappedFile, Origin, Segment};
use scriptorium_bm25_index::workspace;

use super::collection::Collection;
use super::{Setup, K};

/// The file a segment is written to in its folder.
pub const FILE: &str = "base.idx";

/// The segment of `dir` ([`FILE`]), memory-mapped and opened as a view.
pub fn open(dir: &Path, setup: Setup) -> View {
    let file = std::fs::File::open(dir.join(FILE)).expect("the index file opens");
    let map = MappedFile::map(&file).expect("the index file maps");
    let seg = Segment::open(Arc::new(map), setup.tokenizer()).expect("a built index opens");
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

/// Writes `c`'s archive files under `dir`, then builds its units (on all
/// cores) into `dir`/[`FILE`] with `setup`'s tokenizer, timing the build
/// and the write of the index.
pub fn build_into(dir: &Path, c: &Collection, setup: Setup) -> Built {
    for (path, bytes) in &c.archives {
        let file = dir.join(path);
        std::fs::create_dir_all(file.parent().unwrap_or(dir)).expect("the archive folder is made");
        std::fs::write(&file, bytes).expect("the archive file is written");
    }
    std::fs::create_dir_all(dir).expect("the index folder is made");
    let units = c.units.clone();
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

/// The top [`K`] hits for `q` as a search shows them: a record with a span
/// read back from its archive file under `dir`, with its snippet (the
/// bytes counted), a document without one (the generated corpus) from its
/// stored text.
pub fn answer(view: &View, dir: &Path, q: &str, setup: Setup) -> usize {
    let terms = view.query_terms(q);
    search(view, q, setup)
        .iter()
        .map(|h| match view.stored(h).expect("a hit is stored").origin {
            Origin::Inline { text, .. } => text.len(),
            Origin::Span { .. } => {
                workspace::hit(dir, view, h, &terms).expect("a hit reads back").snippet.len()
            }
        })
        .sum()
}

/// A group of sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// The term table, term information, postings and their blocks: every
    /// section before the document lengths.
    PostingsDictionary,
    /// Per-document columns: lengths, days, flags.
    Columns,
    /// Stored fields: their offsets and the stored bytes.
    Stored,
    /// Everything else: the prefix (header, section table, checksums),
    /// speaker and day lists, units, delta sections.
    Other,
}

/// Bytes by section group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sections {
    /// [`Group::PostingsDictionary`].
    pub postings_dictionary: u64,
    /// [`Group::Columns`].
    pub columns: u64,
    /// [`Group::Stored`].
    pub stored: u64,
    /// [`Group::Other`].
    pub other: u64,
}

impl Sections {
    /// The whole file.
    pub fn total(&self) -> u64 {
        self.postings_dictionary + self.columns + self.stored + self.other
    }

    fn add(&mut self, g: Group, n: u64) {
        match g {
            Group::PostingsDictionary => self.postings_dictionary += n,
            Group::Columns => self.columns += n,
            Group::Stored => self.stored += n,
            Group::Other => self.other += n,
        }
    }
}

/// The byte ranges of a segment (a file built by `segment::build`) by
/// group, from the section table after the fixed header in `prefix` (its
/// first bytes), for a file of `len` bytes: the prefix, then each section.
pub fn ranges(prefix: &[u8], len: u64) -> Vec<(Group, u64, u64)> {
    let u64_at = |at: usize| {
        let b: [u8; 8] = prefix[at..at + 8].try_into().expect("eight bytes");
        u64::from_le_bytes(b)
    };
    let at = |k: usize| format::HEADER_LEN + k * format::SECTION_ENTRY;
    let mut out = vec![(Group::Other, 0, u64_at(at(0)))];
    for k in 0..format::SECTIONS {
        let group = match k {
            k if k < sec::LENGTHS => Group::PostingsDictionary,
            sec::LENGTHS | sec::DAYS | sec::FLAGS => Group::Columns,
            sec::STORED_OFFS | sec::STORED => Group::Stored,
            _ => Group::Other,
        };
        let start = u64_at(at(k));
        out.push((group, start, (start + u64_at(at(k) + 8)).min(len)));
    }
    out
}

/// Bytes of the prefix that hold the section table.
pub const TABLE_END: usize = format::HEADER_LEN + format::SECTIONS * format::SECTION_ENTRY;

/// The bytes of a segment by section group.
pub fn sections(bytes: &[u8]) -> Sections {
    let mut s = Sections::default();
    for (g, start, end) in ranges(&bytes[..TABLE_END], bytes.len() as u64) {
        s.add(g, end - start);
    }
    s
}

/// The bytes of the segment file at `path` in the page cache, by group
/// (a page counts for the group its first byte belongs to).
pub fn resident(path: &Path) -> Sections {
    use std::io::Read;
    let mut file = std::fs::File::open(path).expect("the index file opens");
    let mut prefix = vec![0u8; TABLE_END];
    file.read_exact(&mut prefix).expect("the section table reads");
    let len = file.metadata().expect("the index file has a size").len();
    let pages = crate::page_cache::resident_pages(&file).expect("residency is measured");
    let page = crate::page_cache::page_size();
    let ranges = ranges(&prefix, len);
    let mut s = Sections::default();
    for (k, _) in pages.iter().enumerate().filter(|p| *p.1) {
        let at = k as u64 * page;
        let g = ranges.iter().find(|r| r.1 <= at && at < r.2).map_or(Group::Other, |r| r.0);
        s.add(g, page);
    }
    s
}

#[cfg(test)]
mod tests {
    use scriptorium_bm25_index::segment::build;
    use scriptorium_bm25_index::tokenize::TokenizerConfig;

    use super::*;
    use crate::peer_index::collection::Collection;

    #[test]
    fn the_groups_cover_the_file_once() {
        let c = Collection::synthetic(3_000);
        let bytes = build(c.units.clone(), TokenizerConfig::default(), None);
        let s = sections(&bytes);
        assert_eq!(s.total(), bytes.len() as u64);
        assert_eq!(s.columns, 3_000 * 6, "lengths u8 (all under 256 terms), days u32, flags u8");
        assert!(
            s.postings_dictionary > 3_000 * 4
                && s.stored > c.docs().iter().map(|d| d.text.len() as u64).sum()
        );
        let r = ranges(&bytes[..TABLE_END], bytes.len() as u64);
        assert!(r.windows(2).all(|w| w[0].2 == w[1].1), "contiguous: {r:?}");
        assert_eq!(r.last().map(|x| x.2), Some(bytes.len() as u64));
    }
}
