//! The on-disk index, version 1 (all integers little-endian).
//!
//! ```text
//! header   (40 bytes)
//!   0  magic            8 bytes  "SCRBM25\x01"
//!   8  format version   u32      1
//!  12  tokenizer        u32      TokenizerConfig::fingerprint
//!  16  documents        u32
//!  20  terms            u32
//!  24  total length     u64      sum of document lengths in terms
//!  32  sections         u32      4
//!  36  reserved         u32      0
//! section table (4 × 24 bytes): offset u64, length u64, FNV-1a 64 checksum u64
//! header checksum  u64  FNV-1a 64 of the header and the section table
//!   0 terms     u32 count+1 end offsets, then the sorted term bytes (UTF-8)
//!   1 postings  u32 count+1 entry offsets, then (document u32, frequency u32) entries
//!   2 lengths   u32 per document: its length in terms
//!   3 documents u32 count+1 end offsets, then per document:
//!               kind u8 (0 topic, 1 source), pending u8, day i32 (i32::MIN: none),
//!               then u32-length-prefixed strings: path, anchor, and the
//!               speaker keys (u32 count first)
//! ```
//!
//! The header and every section are checked against their checksums before
//! their bytes are used;
//! any mismatch, truncation, foreign magic or other version is an error the
//! caller answers by rebuilding — never a wrong result.

/// The first eight bytes of every index file.
pub const MAGIC: &[u8; 8] = b"SCRBM25\x01";
/// The format version this crate writes and reads.
pub const VERSION: u32 = 1;
/// Header bytes before the section table.
pub const HEADER_LEN: usize = 40;
/// Number of sections.
pub const SECTIONS: usize = 4;
/// Bytes of one section-table entry.
pub const SECTION_ENTRY: usize = 24;
/// Bytes before the first section: header, section table, header checksum.
pub const PREFIX_LEN: usize = HEADER_LEN + SECTIONS * SECTION_ENTRY + 8;

/// FNV-1a, 64 bits: the section checksum.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

pub(crate) fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

pub(crate) fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

pub(crate) fn get_u32(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4).map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

pub(crate) fn get_u64(b: &[u8], at: usize) -> Option<u64> {
    b.get(at..at + 8).map(|s| {
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        u64::from_le_bytes(a)
    })
}
