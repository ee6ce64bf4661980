//! What the filters allow: the document ranges of a kind and path prefix,
//! the document lists that drive the candidates (a speaker, a few days),
//! and the check of each candidate (pending, deleted, its day).

use super::Filters;
use crate::format::sec;
use crate::segment::{Damaged, Kind, Lengths, Segment};

/// Document ranges of `seg` that the kind and path filters allow.
pub(super) fn ranges(seg: &Segment, f: &Filters) -> Result<Vec<(u32, u32)>, Damaged> {
    let units = seg.unit_count();
    let mut out = Vec::new();
    let prefix = f.path_prefix.as_deref().unwrap_or("").as_bytes();
    let kind = if f.speaker.is_some() { Some(Kind::Source) } else { f.kind };
    if f.speaker.is_some() && f.kind == Some(Kind::Topic) {
        return Ok(out);
    }
    for k in [Kind::Topic, Kind::Source] {
        if kind.is_some_and(|want| want != k) {
            continue;
        }
        // Units are sorted by (kind, path): find this kind's units whose
        // path starts with the prefix.
        let key = |u: u32| -> Result<(Kind, bool, std::cmp::Ordering), Damaged> {
            let info = seg.unit(u)?;
            let path = info.path.as_bytes();
            Ok((info.kind, path.starts_with(prefix), path.cmp(prefix)))
        };
        let (mut lo, mut hi) = (0u32, units);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (uk, _, ord) = key(mid)?;
            if uk < k || (uk == k && ord == std::cmp::Ordering::Less) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let start = lo;
        let mut hi = units;
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (uk, starts, _) = key(mid)?;
            if uk == k && starts {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if start < lo {
            let first = seg.unit(start)?.first;
            let last = seg.unit(lo - 1)?;
            out.push((first, last.first + last.count));
        }
    }
    Ok(out)
}

/// At most this many day lists drive a date filter (their union is walked
/// with the candidates); a wider range is checked document by document,
/// which measured faster beyond about seven lists (`docs/benchmarks.md`).
const MAX_DAY_LISTS: usize = 6;

/// A sorted list of document numbers being walked.
struct ListCursor<'a> {
    b: &'a [u8],
    pos: usize,
}

impl ListCursor<'_> {
    #[inline]
    fn at(&self, k: usize) -> u32 {
        self.b.get(k * 4..k * 4 + 4).map_or(u32::MAX, |s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }

    /// The first document ≥ `target` (galloping), or `u32::MAX`.
    #[inline]
    fn seek(&mut self, target: u32) -> u32 {
        let n = self.b.len() / 4;
        if self.at(self.pos) >= target {
            return self.at(self.pos);
        }
        let mut step = 1;
        while self.pos + step < n && self.at(self.pos + step) < target {
            step *= 2;
        }
        let (mut lo, mut hi) = (self.pos + step / 2 + 1, (self.pos + step).min(n));
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.at(mid) < target {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        self.pos = lo;
        self.at(lo)
    }
}

/// A set of documents: the union of its lists.
pub(super) struct Driver<'a>(Vec<ListCursor<'a>>);

impl Driver<'_> {
    #[inline]
    fn seek(&mut self, target: u32) -> u32 {
        self.0.iter_mut().map(|c| c.seek(target)).min().unwrap_or(u32::MAX)
    }
}

/// The first document ≥ `d` in every driver's set.
#[inline]
pub(super) fn align(drivers: &mut [Driver<'_>], mut d: u32) -> u32 {
    loop {
        let mut moved = false;
        for drv in drivers.iter_mut() {
            let x = drv.seek(d);
            if x > d {
                d = x;
                moved = true;
            }
        }
        if !moved || d == u32::MAX {
            return d;
        }
    }
}

/// The drivers of `f` over `seg`: a speaker's documents, and the day lists
/// of a date range narrow enough. `None` when the date range holds no
/// document at all.
pub(super) fn drivers<'s>(seg: &'s Segment, f: &Filters) -> Result<Option<Vec<Driver<'s>>>, Damaged> {
    let mut drivers: Vec<Driver<'_>> = Vec::new();
    if let Some(s) = &f.speaker {
        drivers.push(Driver(vec![ListCursor { b: seg.speaker_docs(s)?, pos: 0 }]));
    }
    if f.day_from.is_some() || f.day_to.is_some() {
        let (from, to) = (f.day_from.unwrap_or(i32::MIN), f.day_to.unwrap_or(i32::MAX));
        if let Some(lists) = seg.day_lists(from, to, MAX_DAY_LISTS)? {
            if lists.iter().all(|b| b.is_empty()) {
                return Ok(None);
            }
            drivers.push(Driver(lists.into_iter().map(|b| ListCursor { b, pos: 0 }).collect()));
        }
    }
    Ok(Some(drivers))
}

/// The per-document facts a candidate is checked and scored with.
pub(super) struct Docs<'s> {
    /// Document lengths.
    lengths: Lengths<'s>,
    /// Document flags (bit 1: pending).
    flags: &'s [u8],
    /// Document days (`i32` each), when a date filter needs them.
    days: Option<&'s [u8]>,
    /// The deleted documents (one bit each), when any are.
    tomb_bits: Option<&'s [u8]>,
    include_pending: bool,
    day_from: Option<i32>,
    day_to: Option<i32>,
}

/// The `d`-th little-endian `u32` of `b`.
#[inline]
fn word(b: &[u8], d: u32) -> Option<u32> {
    let at = d as usize * 4;
    b.get(at..at + 4).map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

impl<'s> Docs<'s> {
    /// The documents of `seg` as `f` filters them, `tomb_bits` deleted.
    pub(super) fn new(
        seg: &'s Segment,
        f: &Filters,
        tomb_bits: Option<&'s [u8]>,
    ) -> Result<Docs<'s>, Damaged> {
        let lengths = seg.lengths()?;
        let flags = seg.section(sec::FLAGS)?;
        let days =
            if f.day_from.is_some() || f.day_to.is_some() { Some(seg.section(sec::DAYS)?) } else { None };
        Ok(Docs {
            lengths,
            flags,
            days,
            tomb_bits,
            include_pending: f.include_pending,
            day_from: f.day_from,
            day_to: f.day_to,
        })
    }

    /// The length of document `d` (0 when unknown).
    #[inline]
    pub(super) fn length(&self, d: u32) -> u32 {
        self.lengths.get(d)
    }

    /// True when document `d` is live and passes the pending and date
    /// filters.
    #[inline]
    pub(super) fn passes(&self, d: u32) -> bool {
        let Some(&fl) = self.flags.get(d as usize) else { return false };
        if fl & 2 != 0 && !self.include_pending {
            return false;
        }
        if self.tomb_bits.is_some_and(|b| b.get(d as usize / 8).is_some_and(|x| x & (1 << (d % 8)) != 0)) {
            return false;
        }
        if let Some(days) = self.days {
            let day = word(days, d).map_or(i32::MIN, |v| v as i32);
            let has = day != i32::MIN;
            if self.day_from.is_some_and(|x| !has || day < x) || self.day_to.is_some_and(|x| !has || day > x)
            {
                return false;
            }
        }
        true
    }
}
