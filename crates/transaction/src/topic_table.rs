//! The id and link index on disk (`.scriptorium/topics.cache`), read in
//! place: sorted lines in six sections, looked up by binary search over the
//! bytes of a memory map, never decoded whole.
//!
//! ```text
//! scriptorium topics table 4<TAB>len×6 (20 digits each)\n
//! files    path<TAB>sha256<TAB>block ids\n                  one per topic file
//! facts    path<TAB>sha256<TAB>#ids<TAB>#links<TAB>#cites<TAB>#sources(<TAB>item)*\n
//! ids      block id<TAB>path\n                              one per (id, file)
//! links    linked topic file<TAB>path\n
//! cites    cited archive file<TAB>path\n
//! sources  cited source id<TAB>path\n
//! end<TAB>total length\n
//! ```
//!
//! Every field escapes `\`, tab and newline (`\\`, `\t`, `\n`), and every
//! section is sorted by its lines' bytes, each line once: a key's lines
//! are contiguous, found by a binary search that lands anywhere and backs up
//! to the line's start. An update ([`Table::merged`]) removes the lines of
//! the changed files and inserts their new lines, copying the bytes in
//! between as they are: its cost is one copy of the file plus the changed
//! files' lines, never a parse of the others.
//!
//! A table that does not say what it must (its header, its length, its
//! trailer, a line it cannot mean) is [`Damaged`]: the caller rebuilds it
//! from the topic files.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::ops::Range;
use std::path::Path;

use scriptorium_source_archive::fsio::FileBytes;

use crate::topic_facts::FileFacts;

const MAGIC: &[u8] = b"scriptorium topics table 4";
const TRAILER: &[u8] = b"end\t";
const SECTIONS: usize = 6;
const WIDTH: usize = 20;
const HEADER_LEN: usize = MAGIC.len() + SECTIONS * (1 + WIDTH) + 1;

/// The table does not say what it must: rebuild it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Damaged;

/// The sections, in file order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sec {
    /// `path, sha256, number of block ids`.
    Files = 0,
    /// `path, sha256, counts, items`: the whole [`FileFacts`].
    Facts = 1,
    /// `block id, path`.
    Ids = 2,
    /// `linked topic file, path`.
    Links = 3,
    /// `cited archive file, path`.
    Cites = 4,
    /// `cited source id, path`.
    Sources = 5,
}

/// What the files section says of one topic file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileRow {
    /// SHA-256 (hex) of the bytes its facts were read from.
    pub(crate) sha256: String,
    /// How many block ids it holds (with repeats).
    pub(crate) blocks: usize,
}

/// The table, mapped from disk or built in memory.
pub(crate) struct Table {
    bytes: FileBytes,
    secs: [Range<usize>; SECTIONS],
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table").field("bytes", &self.bytes.len()).field("secs", &self.secs).finish()
    }
}

/// Appends `s` with `\`, tab and newline escaped.
pub(crate) fn enc(s: &str, out: &mut Vec<u8>) {
    for &b in s.as_bytes() {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            _ => out.push(b),
        }
    }
}

pub(crate) fn dec(b: &[u8]) -> Result<String, Damaged> {
    if !b.contains(&b'\\') {
        return String::from_utf8(b.to_vec()).map_err(|_| Damaged);
    }
    let mut out = Vec::with_capacity(b.len());
    let mut it = b.iter();
    while let Some(&c) = it.next() {
        if c == b'\\' {
            out.push(match it.next() {
                Some(b'\\') => b'\\',
                Some(b't') => b'\t',
                Some(b'n') => b'\n',
                _ => return Err(Damaged),
            });
        } else {
            out.push(c);
        }
    }
    String::from_utf8(out).map_err(|_| Damaged)
}

fn num(b: &[u8]) -> Result<usize, Damaged> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return Err(Damaged);
    }
    std::str::from_utf8(b).map_err(|_| Damaged)?.parse().map_err(|_| Damaged)
}

fn is_sha(b: &[u8]) -> bool {
    b.len() == 64 && b.iter().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
}

/// The line of `key` alone: the prefix of every line under that key.
fn key_prefix(key: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(key.len() + 1);
    enc(key, &mut k);
    k.push(b'\t');
    k
}

/// The lines a topic file contributes to each section.
fn lines_of(path: &str, f: &FileFacts) -> [Vec<Vec<u8>>; SECTIONS] {
    let mut p = Vec::with_capacity(path.len() + 1);
    enc(path, &mut p);
    let pair = |key: &str| {
        let mut l = key_prefix(key);
        l.extend_from_slice(&p);
        l
    };
    let mut file = p.clone();
    file.extend_from_slice(format!("\t{}\t{}", f.sha256, f.ids.len()).as_bytes());
    let mut facts = p.clone();
    let counts = [f.ids.len(), f.links.len(), f.cites.len(), f.sources.len()];
    facts.extend_from_slice(format!("\t{}", f.sha256).as_bytes());
    for c in counts {
        facts.extend_from_slice(format!("\t{c}").as_bytes());
    }
    for item in f.ids.iter().chain(&f.links).chain(&f.cites).chain(&f.sources) {
        facts.push(b'\t');
        enc(item, &mut facts);
    }
    let set = |items: &[String]| {
        let mut v: Vec<Vec<u8>> = items.iter().map(|k| pair(k)).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    [vec![file], vec![facts], set(&f.ids), set(&f.links), set(&f.cites), set(&f.sources)]
}

fn decode_facts(line: &[u8]) -> Result<(String, FileFacts), Damaged> {
    let mut fields = line.split(|&b| b == b'\t');
    let mut next = || fields.next().ok_or(Damaged);
    let path = dec(next()?)?;
    let sha = next()?;
    if !is_sha(sha) {
        return Err(Damaged);
    }
    let sha256 = String::from_utf8(sha.to_vec()).map_err(|_| Damaged)?;
    let counts = [num(next()?)?, num(next()?)?, num(next()?)?, num(next()?)?];
    let mut lists: [Vec<String>; 4] = Default::default();
    for (list, n) in lists.iter_mut().zip(counts) {
        // At most one item a field left in the line: a count cannot ask
        // for more than the line holds.
        list.reserve(n.min(line.len()));
        for _ in 0..n {
            list.push(dec(next()?)?);
        }
    }
    if fields.next().is_some() {
        return Err(Damaged);
    }
    let [ids, links, cites, sources] = lists;
    Ok((path, FileFacts { sha256, ids, links, cites, sources }))
}

/// The first line start in `sec` whose line (without its newline) is not
/// less than `key`; `sec.len()` when none.
fn lower_bound(sec: &[u8], key: &[u8]) -> Result<usize, Damaged> {
    let (mut lo, mut hi) = (0, sec.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let start = memchr::memrchr(b'\n', &sec[lo..mid]).map_or(lo, |i| lo + i + 1);
        let end = memchr::memchr(b'\n', &sec[start..]).map(|i| start + i).ok_or(Damaged)?;
        let line = &sec[start..end];
        // Every line has a tab and no NUL (zeros are what a torn write
        // leaves).
        if memchr::memchr(b'\t', line).is_none() || memchr::memchr(0, line).is_some() {
            return Err(Damaged);
        }
        if line < key {
            lo = end + 1;
        } else {
            hi = start;
        }
    }
    Ok(lo)
}

/// The line starting at `at` (without its newline).
fn line_at(sec: &[u8], at: usize) -> Option<&[u8]> {
    let rest = sec.get(at..).filter(|r| !r.is_empty())?;
    memchr::memchr(b'\n', rest).map(|i| &rest[..i])
}

/// One section's edits: `dels` removed and `ins` inserted (both sorted,
/// each line once, none in both), as `(position, delete, line)` in order
/// (at one position, the insert before the delete).
type Edits<'a> = Vec<(usize, bool, &'a [u8])>;

fn edits_of<'a>(sec: &[u8], dels: &'a [Vec<u8>], ins: &'a [Vec<u8>]) -> Result<Edits<'a>, Damaged> {
    let mut edits: Edits<'a> = Vec::with_capacity(dels.len() + ins.len());
    for d in dels {
        let at = lower_bound(sec, d)?;
        if line_at(sec, at) != Some(d.as_slice()) {
            return Err(Damaged);
        }
        edits.push((at, true, d));
    }
    for i in ins {
        let at = lower_bound(sec, i)?;
        if line_at(sec, at) == Some(i.as_slice()) {
            return Err(Damaged);
        }
        edits.push((at, false, i));
    }
    edits.sort_unstable();
    Ok(edits)
}

/// The length of `sec` after `edits`.
fn edited_len(sec: &[u8], edits: &Edits<'_>) -> usize {
    let (mut len, mut gone) = (sec.len(), 0);
    for (_, delete, line) in edits {
        if *delete {
            gone += line.len() + 1;
        } else {
            len += line.len() + 1;
        }
    }
    len - gone
}

/// Writes `sec` with `edits` made to `out`.
fn write_edited(sec: &[u8], edits: &Edits<'_>, out: &mut dyn Write) -> io::Result<()> {
    let bad = || io::Error::other("the table's edits do not fit it");
    let mut copied = 0;
    for &(at, delete, line) in edits {
        out.write_all(sec.get(copied..at).ok_or_else(bad)?)?;
        if delete {
            copied = at + line.len() + 1;
        } else {
            out.write_all(line)?;
            out.write_all(b"\n")?;
            copied = at;
        }
    }
    out.write_all(sec.get(copied..).ok_or_else(bad)?)
}

/// A merge ready to write ([`Table::merge`]): every section's edits found
/// and checked.
pub(crate) struct Merge<'t> {
    table: &'t Table,
    lines: [[Vec<Vec<u8>>; 2]; SECTIONS],
}

impl Merge<'_> {
    /// Writes the merged table to `out`, section by section (never the
    /// whole table in memory).
    pub(crate) fn write_to(&self, out: &mut dyn Write) -> io::Result<()> {
        let bad = |Damaged| io::Error::other("the table's edits do not fit it");
        let mut edits = Vec::with_capacity(SECTIONS);
        for (k, [dels, ins]) in self.lines.iter().enumerate() {
            edits.push(edits_of(self.table.section(k), dels, ins).map_err(bad)?);
        }
        let lens: Vec<usize> =
            edits.iter().enumerate().map(|(k, e)| edited_len(self.table.section(k), e)).collect();
        out.write_all(&header(&lens))?;
        for (k, e) in edits.iter().enumerate() {
            write_edited(self.table.section(k), e, out)?;
        }
        out.write_all(&trailer(HEADER_LEN + lens.iter().sum::<usize>()))
    }
}

impl Table {
    /// The table at `path`; `Err` when missing, unreadable or damaged.
    pub(crate) fn open(path: &Path) -> Result<Table, Damaged> {
        let file = std::fs::File::open(path).map_err(|_| Damaged)?;
        // SAFETY: the map is read-only, and the table is only ever replaced
        // by rename under the write lock, never written in place, so the
        // mapped bytes do not change while mapped (a person truncating the
        // file in place is the usual obligation of memory-mapped I/O, as for
        // the index files).
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|_| Damaged)?;
        Table::of(FileBytes::Mapped(map))
    }

    /// The table in `bytes` (as [`Table::merged`] makes them).
    pub(crate) fn from_vec(bytes: Vec<u8>) -> Result<Table, Damaged> {
        Table::of(FileBytes::Owned(bytes))
    }

    fn of(bytes: FileBytes) -> Result<Table, Damaged> {
        let head = bytes.get(..HEADER_LEN).ok_or(Damaged)?;
        if !head.starts_with(MAGIC) || head[HEADER_LEN - 1] != b'\n' {
            return Err(Damaged);
        }
        let mut secs: [Range<usize>; SECTIONS] = Default::default();
        let mut at = HEADER_LEN;
        for (k, sec) in secs.iter_mut().enumerate() {
            let field = MAGIC.len() + k * (1 + WIDTH);
            if head[field] != b'\t' {
                return Err(Damaged);
            }
            let len = num(&head[field + 1..field + 1 + WIDTH])?;
            let end = at.checked_add(len).filter(|&e| e <= bytes.len()).ok_or(Damaged)?;
            if len > 0 && bytes[end - 1] != b'\n' {
                return Err(Damaged);
            }
            *sec = at..end;
            at = end;
        }
        let tail = &bytes[at..];
        let total = tail.strip_prefix(TRAILER).and_then(|t| t.strip_suffix(b"\n")).ok_or(Damaged)?;
        if num(total)? != bytes.len() {
            return Err(Damaged);
        }
        Ok(Table { bytes, secs })
    }

    /// The table of `files`, built from nothing.
    pub(crate) fn build<'a>(files: impl IntoIterator<Item = (&'a str, &'a FileFacts)>) -> Table {
        let mut lines: [Vec<Vec<u8>>; SECTIONS] = Default::default();
        for (path, facts) in files {
            for (all, mine) in lines.iter_mut().zip(lines_of(path, facts)) {
                all.extend(mine);
            }
        }
        for l in &mut lines {
            l.sort_unstable();
            l.dedup();
        }
        let sections: Vec<Vec<u8>> = lines
            .iter()
            .map(|ls| {
                let mut sec = Vec::with_capacity(ls.iter().map(|l| l.len() + 1).sum());
                for l in ls {
                    sec.extend_from_slice(l);
                    sec.push(b'\n');
                }
                sec
            })
            .collect();
        Table::from_vec(assemble(&sections)).expect("a built table is whole")
    }

    /// The table's length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }

    fn section(&self, k: usize) -> &[u8] {
        &self.bytes[self.secs[k].clone()]
    }

    /// The table after each `(path, old, new)` change: the old lines
    /// removed, the new ones inserted, everything else copied as it is.
    /// `Err` when the table does not hold the old lines (or holds a new
    /// one already).
    pub(crate) fn merge(
        &self,
        changes: &[(&str, Option<&FileFacts>, Option<&FileFacts>)],
    ) -> Result<Merge<'_>, Damaged> {
        let mut lines: [[Vec<Vec<u8>>; 2]; SECTIONS] = Default::default();
        for &(path, old, new) in changes {
            for (side, facts) in [(0, old), (1, new)] {
                if let Some(f) = facts {
                    for (k, mine) in lines_of(path, f).into_iter().enumerate() {
                        lines[k][side].extend(mine);
                    }
                }
            }
        }
        for (k, [d, i]) in lines.iter_mut().enumerate() {
            d.sort_unstable();
            i.sort_unstable();
            if d.windows(2).any(|w| w[0] == w[1]) || i.windows(2).any(|w| w[0] == w[1]) {
                return Err(Damaged);
            }
            // A line both removed and inserted (an id a changed file keeps)
            // stays where it is.
            let both: std::collections::HashSet<Vec<u8>> =
                d.iter().filter(|l| i.binary_search(l).is_ok()).cloned().collect();
            d.retain(|l| !both.contains(l));
            i.retain(|l| !both.contains(l));
            // Checked now, so that a write does not fail half way.
            edits_of(self.section(k), d, i)?;
        }
        Ok(Merge { table: self, lines })
    }

    /// The bytes of [`Table::merge`].
    #[cfg(test)]
    pub(crate) fn merged(
        &self,
        changes: &[(&str, Option<&FileFacts>, Option<&FileFacts>)],
    ) -> Result<Vec<u8>, Damaged> {
        let merge = self.merge(changes)?;
        let mut out = Vec::with_capacity(self.bytes.len());
        merge.write_to(&mut out).map_err(|_| Damaged)?;
        Ok(out)
    }

    /// The files section, decoded and checked (sorted, each path once).
    pub(crate) fn files(&self) -> Result<BTreeMap<String, FileRow>, Damaged> {
        let mut out = BTreeMap::new();
        let sec = self.section(Sec::Files as usize);
        let Some(sec) = sec.strip_suffix(b"\n") else { return Ok(out) };
        let mut last: Option<&[u8]> = None;
        for line in sec.split(|&b| b == b'\n') {
            if last.is_some_and(|l| l >= line) {
                return Err(Damaged);
            }
            last = Some(line);
            let mut f = line.split(|&b| b == b'\t');
            let (Some(p), Some(sha), Some(n), None) = (f.next(), f.next(), f.next(), f.next()) else {
                return Err(Damaged);
            };
            if !is_sha(sha) {
                return Err(Damaged);
            }
            let sha256 = String::from_utf8(sha.to_vec()).map_err(|_| Damaged)?;
            out.insert(dec(p)?, FileRow { sha256, blocks: num(n)? });
        }
        Ok(out)
    }

    /// The facts of `path`, when the table has it.
    pub(crate) fn facts(&self, path: &str) -> Result<Option<FileFacts>, Damaged> {
        let sec = self.section(Sec::Facts as usize);
        let key = key_prefix(path);
        let at = lower_bound(sec, &key)?;
        match line_at(sec, at).filter(|l| l.starts_with(&key)) {
            None => Ok(None),
            Some(l) => {
                let (p, f) = decode_facts(l)?;
                if p != path {
                    return Err(Damaged);
                }
                Ok(Some(f))
            }
        }
    }

    /// Every topic file with its facts, in path order.
    pub(crate) fn all_facts(&self) -> Result<Vec<(String, FileFacts)>, Damaged> {
        let sec = self.section(Sec::Facts as usize);
        let sec = sec.strip_suffix(b"\n").unwrap_or(sec);
        if sec.is_empty() {
            return Ok(Vec::new());
        }
        sec.split(|&b| b == b'\n').map(decode_facts).collect()
    }

    /// The files under `key` in `s` (a section of pairs): those holding a
    /// block id, linking to a file, citing an archive file or a source id.
    pub(crate) fn paths(&self, s: Sec, key: &str) -> Result<Vec<String>, Damaged> {
        debug_assert!(!matches!(s, Sec::Files | Sec::Facts), "a section of pairs");
        let sec = self.section(s as usize);
        let prefix = key_prefix(key);
        let mut at = lower_bound(sec, &prefix)?;
        let mut out = Vec::new();
        while let Some(line) = line_at(sec, at).filter(|l| l.starts_with(&prefix)) {
            let path = &line[prefix.len()..];
            if path.contains(&b'\t') {
                return Err(Damaged);
            }
            out.push(dec(path)?);
            at += line.len() + 1;
        }
        Ok(out)
    }
}

/// The bytes of a table of `sections`.
fn assemble(sections: &[Vec<u8>]) -> Vec<u8> {
    let lens: Vec<usize> = sections.iter().map(Vec::len).collect();
    let mut out = header(&lens);
    for sec in sections {
        out.extend_from_slice(sec);
    }
    out.extend_from_slice(&trailer(out.len()));
    out
}

/// The header of a table whose sections have lengths `lens`.
fn header(lens: &[usize]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN);
    out.extend_from_slice(MAGIC);
    for len in lens {
        out.extend_from_slice(format!("\t{len:0WIDTH$}").as_bytes());
    }
    out.push(b'\n');
    out
}

/// The trailer of a table whose header and sections take `len` bytes: the
/// total counts its own digits.
fn trailer(len: usize) -> Vec<u8> {
    let before = len + TRAILER.len() + 1;
    let mut total = before + 1;
    while total.to_string().len() + before != total {
        total = before + total.to_string().len();
    }
    let mut out = TRAILER.to_vec();
    out.extend_from_slice(total.to_string().as_bytes());
    out.push(b'\n');
    out
}

#[cfg(test)]
mod tests;
