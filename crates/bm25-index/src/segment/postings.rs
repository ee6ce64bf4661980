//! Postings compressed in blocks of [`BLOCK`] (format §POSTINGS): writing
//! a term's list ([`encode`]), and reading it lazily from the segment's
//! bytes, a block at a time, with the skip entries that let a cursor pass
//! blocks without decoding them and bound the score of each
//! ([`PostingCursor`]).

use bitpacking::{BitPacker, BitPacker4x};

use super::{Damaged, Segment, BLOCK};
use crate::format::{get_u32, put_u32, sec};

/// Bytes of one skip entry: last document, offset, largest frequency,
/// shortest length (u32 each).
pub(crate) const SKIP: usize = 16;

/// Appends `v` as LEB128.
pub(super) fn put_vint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a LEB128 `u32` at `*at`, moving past it; `None` when damaged.
#[inline]
pub(super) fn get_vint(b: &[u8], at: &mut usize) -> Option<u32> {
    let mut v = 0u32;
    for shift in (0..35).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= u32::from(byte & 0x7f).checked_shl(shift)?;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// What [`encode`] found of a term: its largest frequency and the shortest
/// length of a document holding it.
pub(super) struct Maxima {
    pub(super) max_tf: u32,
    pub(super) min_dl: u32,
}

/// Appends the postings `list` (`(document, frequency)`, documents strictly
/// ascending, frequencies ≥ 1) to `data`, and one skip entry per block to
/// `skips` when there is more than one block; `length` gives a document's
/// length.
pub(super) fn encode(
    list: &[(u32, u32)],
    length: impl Fn(u32) -> u32,
    data: &mut Vec<u8>,
    skips: &mut Vec<u8>,
) -> Maxima {
    let packer = BitPacker4x::new();
    let start = data.len();
    let many = list.len() > BLOCK;
    let (mut max_tf, mut min_dl) = (0u32, u32::MAX);
    let mut prev: Option<u32> = None;
    let (mut docs, mut tfs) = ([0u32; BLOCK], [0u32; BLOCK]);
    for block in list.chunks(BLOCK) {
        let offset = (data.len() - start) as u32;
        let (mut b_tf, mut b_dl) = (0u32, u32::MAX);
        for &(d, tf) in block {
            b_tf = b_tf.max(tf);
            b_dl = b_dl.min(length(d));
        }
        if block.len() == BLOCK {
            for (k, &(d, tf)) in block.iter().enumerate() {
                docs[k] = d;
                tfs[k] = tf.saturating_sub(1);
            }
            let doc_bits = packer.num_bits_strictly_sorted(prev, &docs);
            let tf_bits = packer.num_bits(&tfs);
            data.push(doc_bits);
            data.push(tf_bits);
            let at = data.len();
            data.resize(at + BitPacker4x::compressed_block_size(doc_bits), 0);
            packer.compress_strictly_sorted(prev, &docs, &mut data[at..], doc_bits);
            let at = data.len();
            data.resize(at + BitPacker4x::compressed_block_size(tf_bits), 0);
            packer.compress(&tfs, &mut data[at..], tf_bits);
        } else {
            let mut base = prev.map_or(0, |p| p + 1);
            for &(d, tf) in block {
                put_vint(data, d - base);
                put_vint(data, tf.saturating_sub(1));
                base = d + 1;
            }
        }
        prev = block.last().map(|x| x.0);
        if many {
            for v in [prev.unwrap_or(0), offset, b_tf, b_dl] {
                put_u32(skips, v);
            }
        }
        max_tf = max_tf.max(b_tf);
        min_dl = min_dl.min(b_dl);
    }
    Maxima { max_tf, min_dl }
}

/// One term's postings in a segment: where its bytes and skip entries are,
/// and its statistics. Nothing is decoded until a cursor reads a block.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Postings<'a> {
    pub(super) seg: &'a Segment,
    /// Its bytes in [`sec::POSTINGS`]: first and end.
    pub(super) data: (usize, usize),
    /// Its skip entries (empty when it has one block).
    pub(super) skips: &'a [u8],
    /// Document frequency.
    pub(crate) df: u32,
    /// Largest frequency.
    pub(crate) max_tf: u32,
    /// Shortest length of a document holding it.
    pub(crate) min_dl: u32,
}

impl<'a> Postings<'a> {
    /// The number of blocks.
    pub(crate) fn blocks(&self) -> usize {
        (self.df as usize).div_ceil(BLOCK)
    }

    /// The number of postings in block `b`.
    fn block_len(&self, b: usize) -> usize {
        (self.df as usize - b * BLOCK).min(BLOCK)
    }

    fn skip(&self, b: usize, field: usize) -> u32 {
        get_u32(self.skips, b * SKIP + field * 4).unwrap_or(0)
    }

    /// The last document of block `b` (`u32::MAX` for the only block).
    #[inline]
    pub(crate) fn last_doc(&self, b: usize) -> u32 {
        if self.skips.is_empty() {
            u32::MAX
        } else {
            self.skip(b, 0)
        }
    }

    /// Block `b`'s largest frequency and shortest document length.
    #[inline]
    pub(crate) fn block_maxima(&self, b: usize) -> (u32, u32) {
        if self.skips.is_empty() {
            (self.max_tf, self.min_dl)
        } else {
            (self.skip(b, 2), self.skip(b, 3))
        }
    }

    /// The bytes of block `b` and the last document before it.
    fn block_bytes(&self, b: usize) -> Result<(&'a [u8], Option<u32>), Damaged> {
        let lo = if b == 0 { 0 } else { self.skip(b, 1) as usize };
        let hi = if b + 1 < self.blocks() { self.skip(b + 1, 1) as usize } else { self.data.1 - self.data.0 };
        if lo > hi {
            return Err(Damaged(format!("postings block {b} is out of order")));
        }
        let bytes = self.seg.slice(sec::POSTINGS, self.data.0 + lo, self.data.0 + hi)?;
        Ok((bytes, if b == 0 { None } else { Some(self.skip(b - 1, 0)) }))
    }

    /// A full block's two bit widths and the lengths of its two packed
    /// parts, checked against its bytes.
    fn widths(bytes: &[u8], b: usize) -> Result<(u8, u8, usize, usize), Damaged> {
        let bad = || Damaged(format!("postings block {b} is malformed"));
        let (&doc_bits, &tf_bits) = (bytes.first().ok_or_else(bad)?, bytes.get(1).ok_or_else(bad)?);
        if doc_bits > 32 || tf_bits > 32 {
            return Err(bad());
        }
        let dl = BitPacker4x::compressed_block_size(doc_bits);
        let tl = BitPacker4x::compressed_block_size(tf_bits);
        if bytes.len() < 2 + dl + tl {
            return Err(bad());
        }
        Ok((doc_bits, tf_bits, dl, tl))
    }

    /// Decodes block `b`'s documents into `docs`, and its frequencies into
    /// `tfs` when it is a short block (they are interleaved) or `want_tfs`;
    /// returns how many postings it holds and whether `tfs` was filled.
    pub(crate) fn decode(
        &self,
        b: usize,
        docs: &mut [u32; BLOCK],
        tfs: &mut [u32; BLOCK],
        want_tfs: bool,
    ) -> Result<(usize, bool), Damaged> {
        let n = self.block_len(b);
        let (bytes, prev) = self.block_bytes(b)?;
        if n == BLOCK {
            let (doc_bits, _, dl, _) = Self::widths(bytes, b)?;
            BitPacker4x::new().decompress_strictly_sorted(prev, &bytes[2..2 + dl], docs, doc_bits);
            if want_tfs {
                self.decode_tfs(b, tfs)?;
            }
            return Ok((n, want_tfs));
        }
        let bad = || Damaged(format!("postings block {b} is malformed"));
        let (mut at, mut base) = (0usize, prev.map_or(0, |p| p.wrapping_add(1)));
        for k in 0..n {
            let d = base.checked_add(get_vint(bytes, &mut at).ok_or_else(bad)?).ok_or_else(bad)?;
            docs[k] = d;
            tfs[k] = get_vint(bytes, &mut at).ok_or_else(bad)?.saturating_add(1);
            base = d.wrapping_add(1);
        }
        Ok((n, true))
    }

    /// Decodes the frequencies of full block `b` into `tfs`.
    pub(crate) fn decode_tfs(&self, b: usize, tfs: &mut [u32; BLOCK]) -> Result<(), Damaged> {
        let (bytes, _) = self.block_bytes(b)?;
        let (_, tf_bits, dl, tl) = Self::widths(bytes, b)?;
        BitPacker4x::new().decompress(&bytes[2 + dl..2 + dl + tl], tfs, tf_bits);
        tfs.iter_mut().for_each(|t| *t = t.saturating_add(1));
        Ok(())
    }

    /// Every `(document, frequency)`, appended to `out`.
    pub(crate) fn decode_all(&self, out: &mut Vec<(u32, u32)>) -> Result<(), Damaged> {
        let (mut docs, mut tfs) = ([0u32; BLOCK], [0u32; BLOCK]);
        for b in 0..self.blocks() {
            let (n, _) = self.decode(b, &mut docs, &mut tfs, true)?;
            out.extend(docs[..n].iter().copied().zip(tfs[..n].iter().copied()));
        }
        Ok(())
    }
}

/// A cursor over one term's postings that decodes a block when it enters
/// it: its documents then, its frequencies only when one is asked for.
pub(crate) struct PostingCursor<'a> {
    p: Postings<'a>,
    /// The block being read.
    block: usize,
    /// Its postings and position.
    n: usize,
    pos: usize,
    docs: [u32; BLOCK],
    tfs: [u32; BLOCK],
    tfs_ready: bool,
    /// The current document (`u32::MAX` past the end).
    doc: u32,
    /// The first damage met; the cursor is then exhausted.
    failed: Option<Damaged>,
}

impl<'a> PostingCursor<'a> {
    /// A cursor on the first posting.
    pub(crate) fn new(p: Postings<'a>) -> PostingCursor<'a> {
        let mut c = PostingCursor {
            p,
            block: 0,
            n: 0,
            pos: 0,
            docs: [0; BLOCK],
            tfs: [0; BLOCK],
            tfs_ready: false,
            doc: u32::MAX,
            failed: None,
        };
        c.enter(0);
        c
    }

    /// The postings read.
    pub(crate) fn postings(&self) -> &Postings<'a> {
        &self.p
    }

    /// The block being read (the block count past the end).
    pub(crate) fn block(&self) -> usize {
        self.block
    }

    /// Damage met while decoding, if any.
    pub(crate) fn take_failure(&mut self) -> Option<Damaged> {
        self.failed.take()
    }

    fn enter(&mut self, b: usize) {
        self.block = b;
        self.pos = 0;
        self.tfs_ready = false;
        if b >= self.p.blocks() {
            self.n = 0;
            self.doc = u32::MAX;
            return;
        }
        match self.p.decode(b, &mut self.docs, &mut self.tfs, false) {
            Ok((n, tfs_ready)) => {
                self.n = n;
                self.tfs_ready = tfs_ready;
                self.doc = self.docs[0];
            }
            Err(e) => {
                self.failed.get_or_insert(e);
                self.block = self.p.blocks();
                self.n = 0;
                self.doc = u32::MAX;
            }
        }
    }

    /// The current document, `u32::MAX` past the end.
    #[inline]
    pub(crate) fn doc(&self) -> u32 {
        self.doc
    }

    /// The current document's frequency.
    #[inline]
    pub(crate) fn tf(&mut self) -> u32 {
        if !self.tfs_ready {
            match self.p.decode_tfs(self.block, &mut self.tfs) {
                Ok(_) => self.tfs_ready = true,
                Err(e) => {
                    self.failed.get_or_insert(e);
                    return 1;
                }
            }
        }
        self.tfs.get(self.pos).copied().unwrap_or(1)
    }

    /// Moves to the next posting.
    #[inline]
    pub(crate) fn advance(&mut self) {
        self.pos += 1;
        if self.pos < self.n {
            self.doc = self.docs[self.pos];
        } else {
            self.enter(self.block + 1);
        }
    }

    /// Calls `f(document, frequency)` for every posting before document
    /// `end`, a decoded block at a time, and moves past them.
    #[inline]
    pub(crate) fn for_each_before(&mut self, end: u32, mut f: impl FnMut(u32, u32)) {
        while self.doc < end {
            if !self.tfs_ready {
                match self.p.decode_tfs(self.block, &mut self.tfs) {
                    Ok(()) => self.tfs_ready = true,
                    Err(e) => {
                        self.failed.get_or_insert(e);
                        self.enter(self.p.blocks());
                        return;
                    }
                }
            }
            let (docs, tfs) = (&self.docs[self.pos..self.n], &self.tfs[self.pos..self.n]);
            let take = if docs.last().is_some_and(|&d| d < end) {
                docs.len()
            } else {
                // At least the current posting (it is before `end`), so a
                // block decoded out of order still moves on.
                docs.partition_point(|&d| d < end).max(1)
            };
            for (&d, &tf) in docs[..take].iter().zip(&tfs[..take]) {
                f(d, tf);
            }
            self.pos += take;
            if self.pos < self.n {
                self.doc = self.docs[self.pos];
            } else {
                self.enter(self.block + 1);
            }
        }
    }

    /// The block that would hold `target` (from the current one on),
    /// found from the skip entries alone; the block count when none does.
    #[inline]
    pub(crate) fn block_of(&self, target: u32) -> usize {
        let mut b = self.block;
        let nb = self.p.blocks();
        while b < nb && self.p.last_doc(b) < target {
            b += 1;
        }
        b
    }

    /// Moves to the first posting with document ≥ `target`.
    #[inline]
    pub(crate) fn seek(&mut self, target: u32) {
        if self.doc >= target {
            return;
        }
        let b = self.block_of(target);
        if b != self.block {
            self.enter(b);
        }
        while self.doc < target {
            self.pos += 1;
            if self.pos >= self.n {
                self.enter(self.block + 1);
                return;
            }
            self.doc = self.docs[self.pos];
        }
    }

    /// Starts again from the first posting.
    pub(crate) fn rewind(&mut self) {
        if self.block != 0 || self.n == 0 {
            self.enter(0);
        } else {
            self.pos = 0;
            self.doc = self.docs[0];
        }
    }
}

/// Per-document lengths, each in the section's width.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lengths<'a> {
    b: &'a [u8],
    width: usize,
}

impl<'a> Lengths<'a> {
    /// The lengths of `docs` documents stored in `b`; `None` unless the
    /// width is 1, 2 or 4 bytes.
    pub(crate) fn new(b: &'a [u8], docs: u32) -> Option<Lengths<'a>> {
        if docs == 0 {
            return b.is_empty().then_some(Lengths { b, width: 4 });
        }
        let width = b.len() / docs as usize;
        (matches!(width, 1 | 2 | 4) && b.len() == width * docs as usize).then_some(Lengths { b, width })
    }

    /// The length of document `d` (0 when out of range).
    #[inline]
    pub(crate) fn get(&self, d: u32) -> u32 {
        let at = d as usize * self.width;
        match self.width {
            1 => self.b.get(at).map_or(0, |&v| u32::from(v)),
            2 => self.b.get(at..at + 2).map_or(0, |s| u32::from(u16::from_le_bytes([s[0], s[1]]))),
            _ => self.b.get(at..at + 4).map_or(0, |s| u32::from_le_bytes([s[0], s[1], s[2], s[3]])),
        }
    }

    /// `lengths` written in the fewest bytes each that hold the longest.
    pub(crate) fn write(lengths: &[u32], out: &mut Vec<u8>) {
        let max = lengths.iter().copied().max().unwrap_or(0);
        for &l in lengths {
            if max <= u32::from(u8::MAX) {
                out.push(l as u8);
            } else if max <= u32::from(u16::MAX) {
                out.extend_from_slice(&(l as u16).to_le_bytes());
            } else {
                put_u32(out, l);
            }
        }
    }
}
