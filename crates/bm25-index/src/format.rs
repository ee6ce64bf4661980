//! The on-disk segment, format version 7 (all integers little-endian). The
//! byte layout is specified in the crate's `README.md`; this module holds
//! its constants, the checksum, and the integer helpers.
//!
//! Every byte after the fixed prefix belongs to a 64 KiB *chunk* whose
//! checksum sits in the prefix. The prefix (header, section table, chunk
//! checksums) is verified when a segment is opened; a chunk is verified the
//! first time any byte in it is read. A mismatch anywhere is an error the
//! caller answers by rebuilding, never a wrong answer.

/// The first eight bytes of every segment file.
pub const MAGIC: &[u8; 8] = b"SCRBM25\x07";
/// The format version this crate writes and reads.
pub const VERSION: u32 = 7;
/// Bytes of the fixed header.
pub const HEADER_LEN: usize = 72;
/// Number of sections.
pub const SECTIONS: usize = 24;
/// Bytes of one section-table entry: offset u64, length u64.
pub const SECTION_ENTRY: usize = 16;
/// Bytes per checksummed chunk of the data area.
pub const CHUNK: usize = 64 * 1024;

/// Section numbers, in file order.
pub mod sec {
    /// `(terms + 1)` u32 end offsets into [`TERM_BYTES`].
    pub const TERM_OFFS: usize = 0;
    /// The sorted term bytes (UTF-8).
    pub const TERM_BYTES: usize = 1;
    /// Per term: its first byte in [`POSTINGS`] u64, document frequency
    /// u32, its first entry in [`SKIPS`] u32, largest frequency u32,
    /// shortest document length u32.
    pub const TERM_INFO: usize = 2;
    /// Per term, its postings in blocks of 128 (the last may be shorter),
    /// each decodable alone: a full block is the bit width of its document
    /// gaps u8 and of its frequencies less one u8, then both bit-packed
    /// (`bitpacking`'s `BitPacker4x` layout, documents strictly sorted
    /// from the previous block's last); a shorter last block is a LEB128
    /// document gap (from the previous block's last plus one) and
    /// frequency less one per posting.
    pub const POSTINGS: usize = 3;
    /// Per block of a term that has more than one: its last document u32,
    /// the offset of its bytes from the term's first byte u32, its largest
    /// frequency u32 and shortest document length u32 (the block's score
    /// bound and skip entry).
    pub const SKIPS: usize = 4;
    /// Per document: its length in terms, in 1, 2 or 4 bytes each (the
    /// fewest that hold the longest; the section's length over the
    /// document count gives the width).
    pub const LENGTHS: usize = 5;
    /// Per document: its UTC day since 1970-01-01, i32 (`i32::MIN`: none).
    pub const DAYS: usize = 6;
    /// Per document: flags u8 (bit 0 source, bit 1 pending).
    pub const FLAGS: usize = 7;
    /// `(speakers + 1)` u32 end offsets into [`SPK_BYTES`].
    pub const SPK_OFFS: usize = 8;
    /// The sorted speaker keys.
    pub const SPK_BYTES: usize = 9;
    /// `(speakers + 1)` u32 end offsets into [`SPK_DOCS`], in entries.
    pub const SPK_POST: usize = 10;
    /// Per speaker key: the documents that carry it, ascending u32.
    pub const SPK_DOCS: usize = 11;
    /// `(documents + 1)` u64 end offsets into [`STORED`].
    pub const STORED_OFFS: usize = 12;
    /// Per document: u32-length-prefixed anchor and key; then either tag
    /// u8 0 and the text and payload, or tag u8 1 or 2 and the span of its
    /// unit's file (offset u64, length u32, checksum u64), after tag 2 a
    /// block's time (u8 0, or u8 1 and the string) and aliases line; then
    /// the speaker keys (u32 count first). The path is the unit's.
    pub const STORED: usize = 13;
    /// `(units + 1)` u64 end offsets into [`UNITS`].
    pub const UNITS_OFFS: usize = 14;
    /// Per unit: flags u8 (bit 0 source, bit 1 removed), path, size u64,
    /// modified i64 (ns), changed i64 (ns), inode u64, read i64 (ns), file
    /// hash u64, documents hash u64, first document u32, document count
    /// u32, dependencies.
    pub const UNITS: usize = 15;
    /// Delta only: per segment below it (in [`STACK`] order), one bit per
    /// document (LSB first, whole bytes per segment), set when it is deleted.
    pub const TOMBS: usize = 16;
    /// Delta only: `(adjusted terms + 1)` u32 end offsets into [`ADJ_BYTES`].
    pub const ADJ_OFFS: usize = 17;
    /// Delta only: the sorted terms whose frequency below the delta is
    /// adjusted.
    pub const ADJ_BYTES: usize = 18;
    /// Delta only: per adjusted term, the i32 to add to the sum of its
    /// frequencies in the segments below.
    pub const ADJ_VALS: usize = 19;
    /// The distinct document days, ascending i32.
    pub const DAY_KEYS: usize = 20;
    /// `(days + 1)` u32 end offsets into [`DAY_DOCS`], in entries.
    pub const DAY_POST: usize = 21;
    /// Per day: its documents, ascending u32.
    pub const DAY_DOCS: usize = 22;
    /// Delta only: the segments below it, oldest (the base) first: id u64,
    /// documents u64 each.
    pub const STACK: usize = 23;
}

/// Bytes before the first section: header, section table, chunk count u64,
/// the chunk checksums, and the prefix checksum u64.
pub fn prefix_len(chunks: usize) -> usize {
    HEADER_LEN + SECTIONS * SECTION_ENTRY + 8 + chunks * 8 + 8
}

/// The number of chunks that cover `data` bytes.
pub fn chunks_for(data: usize) -> usize {
    data.div_ceil(CHUNK)
}

/// A 64-bit checksum that reads eight bytes at a time in four independent
/// lanes (several GB/s). It detects corruption, not tampering.
pub fn checksum(bytes: &[u8]) -> u64 {
    const K: [u64; 4] =
        [0x9E37_79B9_7F4A_7C15, 0xC2B2_AE3D_27D4_EB4F, 0x1656_67B1_9E37_79F9, 0x85EB_CA77_C2B2_AE63];
    let mut lanes =
        [0x2545_F491_4F6C_DD1D_u64, 0x27D4_EB2F_1656_67C5, 0x94D0_49BB_1331_11EB, 0xBF58_476D_1CE4_E5B9];
    let mut blocks = bytes.chunks_exact(32);
    for b in &mut blocks {
        for (k, lane) in lanes.iter_mut().enumerate() {
            let w = u64::from_le_bytes(b[k * 8..k * 8 + 8].try_into().unwrap_or([0; 8]));
            *lane = (*lane ^ w).wrapping_mul(K[k]).rotate_left(29);
        }
    }
    let mut h = (bytes.len() as u64).wrapping_mul(K[0]);
    for lane in lanes {
        h = (h ^ lane).wrapping_mul(K[1]).rotate_left(31);
    }
    for &byte in blocks.remainder() {
        h = (h ^ u64::from(byte)).wrapping_mul(K[2]).rotate_left(23);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(K[3]);
    h ^ (h >> 29)
}

pub(crate) fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

pub(crate) fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

pub(crate) fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u32(out, s.len() as u32);
    out.extend_from_slice(s.as_bytes());
}

pub(crate) fn get_u32(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at.checked_add(4)?).map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

pub(crate) fn get_u64(b: &[u8], at: usize) -> Option<u64> {
    b.get(at..at.checked_add(8)?).map(|s| {
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        u64::from_le_bytes(a)
    })
}

/// Reads length-prefixed strings from a byte slice; `None` on any damage.
pub(crate) struct Reader<'a> {
    pub(crate) b: &'a [u8],
    pub(crate) at: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn u8(&mut self) -> Option<u8> {
        let v = *self.b.get(self.at)?;
        self.at += 1;
        Some(v)
    }

    pub(crate) fn u32(&mut self) -> Option<u32> {
        let v = get_u32(self.b, self.at)?;
        self.at += 4;
        Some(v)
    }

    pub(crate) fn u64(&mut self) -> Option<u64> {
        let v = get_u64(self.b, self.at)?;
        self.at += 8;
        Some(v)
    }

    pub(crate) fn str(&mut self) -> Option<&'a str> {
        let len = self.u32()? as usize;
        let s = std::str::from_utf8(self.b.get(self.at..self.at.checked_add(len)?)?).ok()?;
        self.at += len;
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    //! The checksum sees every byte and every length.
    use super::checksum;

    #[test]
    fn checksum_sees_each_byte() {
        let base: Vec<u8> = (0..300u32).map(|i| (i * 7) as u8).collect();
        let h = checksum(&base);
        for k in 0..base.len() {
            let mut b = base.clone();
            b[k] ^= 1;
            assert_ne!(checksum(&b), h, "flip at {k}");
        }
        assert_ne!(checksum(&base[..299]), h);
        assert_ne!(checksum(&[]), checksum(&[0]));
    }
}
