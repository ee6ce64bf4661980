//! The stack of segments a view searches: opening it (the head must name
//! the segments below it), and finding live units and documents in it.

use super::{Ranked, View};
use crate::segment::{Damaged, Kind, Segment, Stored, UnitInfo};

impl View {
    /// A view over `base` and an optional `delta`, which must amend it
    /// (and nothing else: see [`View::stack`]).
    pub fn new(base: Segment, delta: Option<Segment>) -> Result<View, Damaged> {
        let mut segs = vec![base];
        segs.extend(delta);
        View::stack(segs)
    }

    /// A view over a stack of segments: a base, then deltas, oldest first.
    /// The last must name the others, in order, as the segments it amends.
    pub fn stack(segs: Vec<Segment>) -> Result<View, Damaged> {
        let Some(base) = segs.first() else { return Err(Damaged("no base segment".into())) };
        if base.is_delta() {
            return Err(Damaged("the base file holds a delta".into()));
        }
        let mut tombs = Vec::new();
        if let [below @ .., head] = &segs[..] {
            if !below.is_empty() {
                let named = head.stack()?;
                let actual: Vec<(u64, u32)> = below.iter().map(|s| (s.id(), s.len())).collect();
                if !head.is_delta()
                    || named != actual
                    || segs.iter().any(|s| s.config() != base.config())
                    || segs[1..].iter().any(|s| !s.is_delta())
                {
                    return Err(Damaged("the delta does not amend these segments".into()));
                }
                let mut at = 0;
                for s in below {
                    let len = (s.len() as usize).div_ceil(8);
                    tombs.push((at, at + len));
                    at += len;
                }
                if head.section(crate::format::sec::TOMBS)?.len() != at {
                    return Err(Damaged("the tombstones do not match the segments".into()));
                }
            }
        }
        Ok(View { segs, tombs })
    }

    /// The base segment.
    pub fn base(&self) -> &Segment {
        &self.segs[0]
    }

    /// The newest delta (the head), if any.
    pub fn delta(&self) -> Option<&Segment> {
        self.segs.get(1..).and_then(<[Segment]>::last)
    }

    /// Every segment, the base first, the head last.
    pub fn segments(&self) -> &[Segment] {
        &self.segs
    }

    /// The newest segment: the one whose statistics describe the view.
    pub fn head(&self) -> &Segment {
        self.segs.last().unwrap_or(&self.segs[0])
    }

    /// The head's deletion bits for segment `k` (none for the head).
    pub(crate) fn tombstones(&self, k: usize) -> Result<Option<&[u8]>, Damaged> {
        match (self.tombs.get(k), self.delta()) {
            (Some(&(lo, hi)), Some(head)) => Ok(head.section(crate::format::sec::TOMBS)?.get(lo..hi)),
            _ => Ok(None),
        }
    }

    /// Live documents over the whole stack.
    pub fn len(&self) -> u32 {
        self.head().live().0
    }

    /// True when no document is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The stored fields of a hit.
    pub fn stored(&self, hit: &Ranked) -> Result<Stored<'_>, Damaged> {
        match self.segs.get(hit.seg.0) {
            Some(s) => s.stored(hit.doc),
            None => Err(Damaged(format!("no segment {}", hit.seg.0))),
        }
    }

    /// The segment holding the live version of a unit (the newest that
    /// records it, perhaps as removed) and that record.
    pub fn locate(&self, kind: Kind, path: &str) -> Result<Option<(usize, UnitInfo<'_>)>, Damaged> {
        for (k, seg) in self.segs.iter().enumerate().rev() {
            if let Some(unit) = seg.find_unit(kind, path)? {
                return Ok(Some((k, unit)));
            }
        }
        Ok(None)
    }

    /// The live document at this kind, path and anchor.
    pub fn find(&self, kind: Kind, path: &str, anchor: &str) -> Result<Option<Stored<'_>>, Damaged> {
        match self.locate(kind, path)? {
            Some((k, unit)) => match self.segs[k].find_doc(&unit, anchor)? {
                Some(doc) => Ok(Some(self.segs[k].stored_in(unit.path, doc)?)),
                None => Ok(None),
            },
            None => Ok(None),
        }
    }

    /// Every live unit: the newest record of each path, unless it records
    /// a removal (newest segment first).
    pub fn units(&self) -> Result<Vec<UnitInfo<'_>>, Damaged> {
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for seg in self.segs.iter().rev() {
            for u in 0..seg.unit_count() {
                let info = seg.unit(u)?;
                if seen.insert((info.kind, info.path)) && !info.removed {
                    out.push(info);
                }
            }
        }
        Ok(out)
    }

    /// The documents of a live unit (as [`View::units`] gives it), owned,
    /// as stored ([`crate::segment::Document::stored_form`]: a document
    /// with a span has no text; `workspace::unit_documents` reads it back).
    pub fn unit_docs(&self, unit: &UnitInfo<'_>) -> Result<Vec<crate::segment::Document>, Damaged> {
        // A unit read from one of these segments borrows its path from that
        // segment's bytes, which names the segment without a lookup.
        let (k, found) = match self.segs.iter().position(|s| s.holds(unit.path)) {
            Some(k) => (k, unit.clone()),
            None => match self.locate(unit.kind, unit.path)? {
                Some(x) => x,
                None => return Ok(Vec::new()),
            },
        };
        (found.first..found.first + found.count)
            .map(|d| Ok(self.segs[k].stored_in(found.path, d)?.to_document()))
            .collect()
    }
}
