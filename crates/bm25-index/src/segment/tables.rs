//! The tables of a segment read by search and merging: terms and their
//! postings, a delta's stack and frequency adjustments, speaker keys,
//! days, units and the stored fields of documents.

use super::postings::SKIP;
use super::{
    damaged, Damaged, KeyDocs, Kind, Lengths, Origin, Postings, Segment, Span, Stamp, Stored, Unit, UnitInfo,
    BLOCK,
};
use crate::format::{get_u32, get_u64, sec, Reader};

impl Segment {
    /// The number of distinct terms.
    pub fn term_count(&self) -> u32 {
        self.terms
    }

    /// Term `t` (in byte order) and its postings.
    pub(crate) fn term_at(&self, t: usize) -> Result<(&[u8], Postings<'_>), Damaged> {
        let (s, e) = (self.u32_at(sec::TERM_OFFS, t)? as usize, self.u32_at(sec::TERM_OFFS, t + 1)? as usize);
        let term = self.slice(sec::TERM_BYTES, s, e.max(s))?;
        Ok((term, self.postings_of(t)?))
    }

    fn postings_of(&self, t: usize) -> Result<Postings<'_>, Damaged> {
        let info = self.slice(sec::TERM_INFO, t * 24, t * 24 + 24)?;
        let start = get_u64(info, 0).unwrap_or(0) as usize;
        let f = |k: usize| get_u32(info, 8 + k * 4).unwrap_or(0);
        let (df, first_skip, max_tf, min_dl) = (f(0), f(1) as usize, f(2), f(3));
        let end = if t + 1 < self.terms as usize {
            get_u64(self.slice(sec::TERM_INFO, t * 24 + 24, t * 24 + 32)?, 0).unwrap_or(0) as usize
        } else {
            self.sections[sec::POSTINGS].1 - self.sections[sec::POSTINGS].0
        };
        if end < start || df == 0 {
            return damaged(format!("term {t} has malformed postings"));
        }
        let nb = (df as usize).div_ceil(BLOCK);
        let skips =
            if nb > 1 { self.slice(sec::SKIPS, first_skip * SKIP, (first_skip + nb) * SKIP)? } else { &[] };
        Ok(Postings { seg: self, data: (start, end), skips, df, max_tf, min_dl })
    }

    /// The documents' lengths.
    pub(crate) fn lengths(&self) -> Result<Lengths<'_>, Damaged> {
        Lengths::new(self.section(sec::LENGTHS)?, self.docs)
            .ok_or_else(|| Damaged("malformed lengths".into()))
    }

    /// The segments a delta stands on, oldest (the base) first: id and
    /// documents. Empty for a base.
    pub fn stack(&self) -> Result<Vec<(u64, u32)>, Damaged> {
        let b = self.section(sec::STACK)?;
        b.chunks_exact(16)
            .map(|e| {
                let id = get_u64(e, 0).unwrap_or(0);
                let docs = u32::try_from(get_u64(e, 8).unwrap_or(u64::MAX))
                    .map_err(|_| Damaged("a stack entry is malformed".into()))?;
                Ok((id, docs))
            })
            .collect()
    }

    /// Every base-frequency adjustment a delta records, in term order.
    pub(crate) fn adjustments(&self) -> Result<Vec<(&[u8], i32)>, Damaged> {
        let count = (self.sections[sec::ADJ_OFFS].1 - self.sections[sec::ADJ_OFFS].0) / 4 - 1;
        let (offs, vals) = (self.section(sec::ADJ_OFFS)?, self.section(sec::ADJ_VALS)?);
        let bytes = self.section(sec::ADJ_BYTES)?;
        (0..count)
            .map(|k| {
                let (s, e) = (
                    get_u32(offs, k * 4).unwrap_or(0) as usize,
                    get_u32(offs, k * 4 + 4).unwrap_or(0) as usize,
                );
                let term =
                    bytes.get(s..e).ok_or_else(|| Damaged("an adjusted term is out of range".into()))?;
                Ok((term, get_u32(vals, k * 4).unwrap_or(0) as i32))
            })
            .collect()
    }

    /// The number of speaker keys.
    pub(crate) fn speaker_count(&self) -> usize {
        (self.sections[sec::SPK_OFFS].1 - self.sections[sec::SPK_OFFS].0) / 4 - 1
    }

    /// Speaker key `k` (in byte order) and its documents.
    pub(crate) fn speaker_at(&self, k: usize) -> Result<KeyDocs<'_>, Damaged> {
        let (s, e) = (self.u32_at(sec::SPK_OFFS, k)? as usize, self.u32_at(sec::SPK_OFFS, k + 1)? as usize);
        let key = self.slice(sec::SPK_BYTES, s, e.max(s))?;
        let (s, e) = (self.u32_at(sec::SPK_POST, k)? as usize, self.u32_at(sec::SPK_POST, k + 1)? as usize);
        Ok((key, self.slice(sec::SPK_DOCS, s * 4, e.max(s) * 4)?))
    }

    /// The stored bytes of document `d`, as written.
    pub(crate) fn stored_raw(&self, d: u32) -> Result<&[u8], Damaged> {
        let (s, e) =
            (self.u64_at(sec::STORED_OFFS, d as usize)?, self.u64_at(sec::STORED_OFFS, d as usize + 1)?);
        if e < s {
            return damaged(format!("document {d} is malformed"));
        }
        self.slice(sec::STORED, s as usize, e as usize)
    }

    /// The postings of `term`, if the segment has it.
    pub(crate) fn postings(&self, term: &str) -> Result<Option<Postings<'_>>, Damaged> {
        let Some(t) = self.find(sec::TERM_OFFS, sec::TERM_BYTES, self.terms as usize, term.as_bytes())?
        else {
            return Ok(None);
        };
        Ok(Some(self.postings_of(t)?))
    }

    /// The base-frequency adjustment a delta records for `term`.
    pub(crate) fn adjustment(&self, term: &str) -> Result<i32, Damaged> {
        let count = (self.sections[sec::ADJ_OFFS].1 - self.sections[sec::ADJ_OFFS].0) / 4 - 1;
        match self.find(sec::ADJ_OFFS, sec::ADJ_BYTES, count, term.as_bytes())? {
            Some(k) => Ok(self.u32_at(sec::ADJ_VALS, k)? as i32),
            None => Ok(0),
        }
    }

    /// The documents carrying speaker key `key`, ascending.
    pub(crate) fn speaker_docs(&self, key: &str) -> Result<&[u8], Damaged> {
        let count = (self.sections[sec::SPK_OFFS].1 - self.sections[sec::SPK_OFFS].0) / 4 - 1;
        match self.find(sec::SPK_OFFS, sec::SPK_BYTES, count, key.as_bytes())? {
            Some(k) => {
                let (s, e) =
                    (self.u32_at(sec::SPK_POST, k)? as usize, self.u32_at(sec::SPK_POST, k + 1)? as usize);
                self.slice(sec::SPK_DOCS, s * 4, e.max(s) * 4)
            }
            None => Ok(&[]),
        }
    }

    /// Every speaker key starting with `prefix`, with its documents
    /// (ascending), in key order.
    pub(crate) fn speaker_keys_with_prefix(&self, prefix: &[u8]) -> Result<Vec<KeyDocs<'_>>, Damaged> {
        let count = (self.sections[sec::SPK_OFFS].1 - self.sections[sec::SPK_OFFS].0) / 4 - 1;
        let key = |k: usize| -> Result<&[u8], Damaged> {
            let (s, e) =
                (self.u32_at(sec::SPK_OFFS, k)? as usize, self.u32_at(sec::SPK_OFFS, k + 1)? as usize);
            self.slice(sec::SPK_BYTES, s, e)
        };
        let (mut lo, mut hi) = (0usize, count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if key(mid)? < prefix {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let mut out = Vec::new();
        while lo < count {
            let k = key(lo)?;
            if !k.starts_with(prefix) {
                break;
            }
            let (s, e) =
                (self.u32_at(sec::SPK_POST, lo)? as usize, self.u32_at(sec::SPK_POST, lo + 1)? as usize);
            out.push((k, self.slice(sec::SPK_DOCS, s * 4, e.max(s) * 4)?));
            lo += 1;
        }
        Ok(out)
    }

    /// The document lists of the days in `from..=to`, when there are at
    /// most `max` such days.
    pub(crate) fn day_lists(&self, from: i32, to: i32, max: usize) -> Result<Option<Vec<&[u8]>>, Damaged> {
        let keys = self.section(sec::DAY_KEYS)?;
        let day = |k: usize| get_u32(keys, k * 4).map_or(i32::MAX, |v| v as i32);
        let n = keys.len() / 4;
        let (mut lo, mut hi) = (0usize, n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if day(mid) < from {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let first = lo;
        let mut last = first;
        while last < n && day(last) <= to {
            last += 1;
            if last - first > max {
                return Ok(None);
            }
        }
        let mut out = Vec::with_capacity(last - first);
        for k in first..last {
            let (s, e) =
                (self.u32_at(sec::DAY_POST, k)? as usize, self.u32_at(sec::DAY_POST, k + 1)? as usize);
            out.push(self.slice(sec::DAY_DOCS, s * 4, e.max(s) * 4)?);
        }
        Ok(Some(out))
    }

    /// Unit `u` as recorded.
    pub fn unit(&self, u: u32) -> Result<UnitInfo<'_>, Damaged> {
        let (s, e) =
            (self.u64_at(sec::UNITS_OFFS, u as usize)?, self.u64_at(sec::UNITS_OFFS, u as usize + 1)?);
        let bad = || Damaged(format!("unit {u} is malformed"));
        if e < s {
            return Err(bad());
        }
        let b = self.slice(sec::UNITS, s as usize, e as usize)?;
        let mut r = Reader { b, at: 0 };
        fn parse<'b>(r: &mut Reader<'b>) -> Option<UnitInfo<'b>> {
            let flags = r.u8()?;
            let kind = if flags & 1 == 1 { Kind::Source } else { Kind::Topic };
            let removed = flags & 2 != 0;
            let path = r.str()?;
            let stamp = Stamp {
                size: r.u64()?,
                modified: r.u64()? as i64,
                changed: r.u64()? as i64,
                inode: r.u64()?,
                read: r.u64()? as i64,
                hash: r.u64()?,
            };
            let docs_hash = r.u64()?;
            let (first, count) = (r.u32()?, r.u32()?);
            let n = r.u32()?;
            let mut deps = Vec::new();
            for _ in 0..n {
                deps.push(r.str()?);
            }
            Some(UnitInfo { kind, removed, path, stamp, docs_hash, first, count, deps })
        }
        let info = parse(&mut r).ok_or_else(bad)?;
        if u64::from(info.first) + u64::from(info.count) > u64::from(self.docs) {
            return Err(bad());
        }
        Ok(info)
    }

    /// The unit recorded for this kind and path.
    pub fn find_unit(&self, kind: Kind, path: &str) -> Result<Option<UnitInfo<'_>>, Damaged> {
        let (mut lo, mut hi) = (0u32, self.units);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let info = self.unit(mid)?;
            match (info.kind, info.path).cmp(&(kind, path)) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(Some(info)),
            }
        }
        Ok(None)
    }

    /// The first document of `unit` with this anchor.
    pub fn find_doc(&self, unit: &UnitInfo<'_>, anchor: &str) -> Result<Option<u32>, Damaged> {
        let (mut lo, mut hi) = (unit.first, unit.first + unit.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.anchor(mid)? < anchor {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo < unit.first + unit.count && self.anchor(lo)? == anchor {
            Ok(Some(lo))
        } else {
            Ok(None)
        }
    }

    /// The anchor of document `d` (the first of its stored fields).
    fn anchor(&self, d: u32) -> Result<&str, Damaged> {
        Reader { b: self.stored_raw(d)?, at: 0 }
            .str()
            .ok_or_else(|| Damaged(format!("document {d} is malformed")))
    }

    /// The unit holding document `d`: the last unit whose first document
    /// is at most `d` (units cover the documents in order; an empty unit
    /// before it shares its first document).
    pub fn unit_of(&self, d: u32) -> Result<UnitInfo<'_>, Damaged> {
        let (mut lo, mut hi) = (0u32, self.units);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.unit(mid)?.first <= d {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let info = match lo.checked_sub(1) {
            Some(u) => self.unit(u)?,
            None => return damaged(format!("document {d} is in no unit")),
        };
        if d >= info.first + info.count {
            return damaged(format!("document {d} is in no unit"));
        }
        Ok(info)
    }

    /// The length of document `d` in terms.
    pub fn doc_length(&self, d: u32) -> Result<u32, Damaged> {
        get_u32(self.section(sec::LENGTHS)?, d as usize * 4)
            .ok_or_else(|| Damaged("length out of range".into()))
    }

    /// The stored fields of document `d`.
    pub fn stored(&self, d: u32) -> Result<Stored<'_>, Damaged> {
        let path = self.unit_of(d)?.path;
        self.stored_in(path, d)
    }

    /// The stored fields of document `d` of the unit at `path`.
    pub(crate) fn stored_in<'s>(&'s self, path: &'s str, d: u32) -> Result<Stored<'s>, Damaged> {
        let bad = || Damaged(format!("document {d} is malformed"));
        if d >= self.docs {
            return Err(bad());
        }
        let b = self.stored_raw(d)?;
        let flags = *self.section(sec::FLAGS)?.get(d as usize).ok_or_else(bad)?;
        let day = self.day(d)?;
        let mut r = Reader { b, at: 0 };
        fn parse<'b>(r: &mut Reader<'b>) -> Option<(&'b str, &'b str, Origin<'b>, Vec<&'b str>)> {
            let (anchor, key) = (r.str()?, r.str()?);
            let origin = match r.u8()? {
                0 => Origin::Inline { text: r.str()?, payload: r.str()? },
                tag @ (1 | 2) => {
                    let span = Span { offset: r.u64()?, len: r.u32()?, hash: r.u64()? };
                    let (time, aliases) = match tag {
                        1 => (None, ""),
                        _ => {
                            let time = match r.u8()? {
                                0 => None,
                                1 => Some(r.str()?),
                                _ => return None,
                            };
                            (time, r.str()?)
                        }
                    };
                    Origin::Span { span, time, aliases }
                }
                _ => return None,
            };
            let n = r.u32()?;
            let mut speakers = Vec::new();
            for _ in 0..n {
                speakers.push(r.str()?);
            }
            (r.at == r.b.len()).then_some((anchor, key, origin, speakers))
        }
        let (anchor, key, origin, speakers) = parse(&mut r).ok_or_else(bad)?;
        let kind = if flags & 1 == 1 { Kind::Source } else { Kind::Topic };
        Ok(Stored { kind, pending: flags & 2 != 0, day, path, anchor, key, origin, speakers })
    }

    pub(crate) fn day(&self, d: u32) -> Result<Option<i32>, Damaged> {
        // One document's day: only its chunk is read and verified.
        if d >= self.docs {
            return damaged("day out of range");
        }
        let v = self.u32_at(sec::DAYS, d as usize)? as i32;
        Ok((v != i32::MIN).then_some(v))
    }

    /// Every unit with its documents, owned (for rebuilding a delta).
    pub fn unit_with_docs(&self, u: u32) -> Result<Unit, Damaged> {
        let info = self.unit(u)?;
        let mut docs = Vec::with_capacity(info.count as usize);
        for d in info.first..info.first + info.count {
            docs.push(self.stored_in(info.path, d)?.to_document());
        }
        Ok(Unit {
            kind: info.kind,
            path: info.path.to_owned(),
            stamp: info.stamp,
            deps: info.deps.iter().map(|s| (*s).to_owned()).collect(),
            docs,
        })
    }
}
