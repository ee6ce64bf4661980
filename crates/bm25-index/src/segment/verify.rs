//! Chunk checksums, verified the first time any byte of a chunk is read.

use std::sync::atomic::Ordering;

use super::{damaged, Damaged, Segment};
use crate::format::{self, checksum, get_u64};

impl Segment {
    /// Verifies the chunks that bytes `lo..hi` of the data area lie in.
    #[inline]
    pub(super) fn verify_chunks(&self, lo: usize, hi: usize) -> Result<(), Damaged> {
        if hi <= lo {
            return Ok(());
        }
        let first = (lo - self.data_start) / format::CHUNK;
        let last = (hi - 1 - self.data_start) / format::CHUNK;
        if (first..=last).any(|c| !self.chunk_verified(c)) {
            self.verify_new_chunks(first, last)
        } else {
            Ok(())
        }
    }

    /// Verifies chunks `first..=last` that were not yet, asking for them
    /// first in one request.
    #[cold]
    fn verify_new_chunks(&self, first: usize, last: usize) -> Result<(), Damaged> {
        let unverified = |c: usize| !self.chunk_verified(c);
        if let (Some(a), Some(b)) =
            ((first..=last).find(|&c| unverified(c)), (first..=last).rfind(|&c| unverified(c)))
        {
            // One request for every chunk about to be read for the first time.
            let start = self.data_start + a * format::CHUNK;
            self.bytes.will_need(start..self.data_start + (b + 1) * format::CHUNK);
        }
        for c in first..=last {
            if self.chunk_verified(c) {
                continue;
            }
            let start = self.data_start + c * format::CHUNK;
            let raw = self.raw();
            let end = (start + format::CHUNK).min(raw.len());
            if get_u64(&raw[self.sums.0..self.sums.1], c * 8) != Some(checksum(&raw[start..end])) {
                return damaged(format!("chunk {c} checksum mismatch"));
            }
            self.verified[c / 64].fetch_or(1u64 << (c % 64), Ordering::Relaxed);
        }
        Ok(())
    }

    /// Whether chunk `c` has been verified.
    #[inline]
    fn chunk_verified(&self, c: usize) -> bool {
        self.verified[c / 64].load(Ordering::Relaxed) & (1u64 << (c % 64)) != 0
    }
}
