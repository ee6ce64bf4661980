//! What a segment reads its bytes from ([`Storage`]): a buffer, or an
//! index file mapped for random access ([`MappedFile`]), where a cold
//! first answer reads the chunks it verifies and nothing around them.

use std::fs::File;
use std::ops::Range;

/// Bytes a segment reads, with a hint before a range is first read.
pub trait Storage: AsRef<[u8]> + Send + Sync {
    /// Bytes `range` are about to be read for the first time.
    fn will_need(&self, range: Range<usize>) {
        let _ = range;
    }
}

impl Storage for Vec<u8> {}

/// An index file, memory-mapped. The kernel is told the reads are random,
/// so a touched page brings in no neighbours (read-ahead can be megabytes),
/// and each chunk is asked for whole, in one request, just before the
/// segment verifies it: a fresh process reads the chunks its answer
/// touches.
#[derive(Debug)]
pub struct MappedFile(memmap2::Mmap);

impl MappedFile {
    /// Maps `file` read-only.
    pub fn map(file: &File) -> std::io::Result<MappedFile> {
        // SAFETY: the map is read-only, and index files are only ever
        // replaced by rename, never written in place, so the mapped bytes
        // do not change while mapped (a person truncating the file in
        // place is the usual obligation of memory-mapped I/O, as for
        // archive files).
        let map = unsafe { memmap2::Mmap::map(file) }?;
        #[cfg(unix)]
        {
            // Advice only: a kernel that ignores it reads as before.
            let _ = map.advise(memmap2::Advice::Random);
        }
        Ok(MappedFile(map))
    }
}

impl AsRef<[u8]> for MappedFile {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Storage for MappedFile {
    fn will_need(&self, range: Range<usize>) {
        #[cfg(unix)]
        {
            let len = range.end.min(self.0.len()).saturating_sub(range.start);
            if len > 0 {
                let _ = self.0.advise_range(memmap2::Advice::WillNeed, range.start, len);
            }
        }
        #[cfg(not(unix))]
        let _ = range;
    }
}
