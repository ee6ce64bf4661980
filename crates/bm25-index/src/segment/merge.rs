//! Merging segments from their built postings: documents and postings are
//! copied and renumbered, never re-tokenized, so a merge costs about what
//! copying the bytes of the merged segments costs.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use super::build::{Entry, Sections};
use super::{Damaged, DeltaInfo, Segment, UnitInfo};
use crate::format::{get_u32, sec};
use crate::tokenize::TokenizerConfig;

/// One segment to merge and the units of it to keep.
#[derive(Debug)]
pub struct Source<'a> {
    /// The segment.
    pub seg: &'a Segment,
    /// The units to keep (unit numbers, each a live unit, not a removal
    /// record); every other document of the segment is dropped.
    pub units: Vec<u32>,
    /// The documents of it already counted as deleted (a bitmap, LSB
    /// first): dropping one of them gives its terms back the document
    /// frequency the output delta's adjustments took from them.
    pub dead: Option<&'a [u8]>,
}

fn bit(bits: Option<&[u8]>, d: u32) -> bool {
    bits.and_then(|b| b.get(d as usize / 8)).is_some_and(|x| x & (1 << (d % 8)) != 0)
}

fn word(b: &[u8], d: u32) -> u32 {
    get_u32(b, d as usize * 4).unwrap_or(0)
}

/// Writes the kept units of `sources` (whose paths must be distinct) as
/// one segment: a delta with `delta`'s removal records when it is given,
/// else a base. A delta's adjustments are those of `carried` (the previous
/// head, copied as they are), plus `delta`'s, plus what dropped documents
/// counted as deleted had taken (given back).
pub fn merge(
    sources: &[Source<'_>],
    config: TokenizerConfig,
    delta: Option<DeltaInfo>,
    carried: Option<&Segment>,
) -> Result<Vec<u8>, Damaged> {
    // The kept units in (kind, path) order, and each source's renumbering.
    let mut kept: Vec<(usize, UnitInfo<'_>)> = Vec::new();
    for (s, src) in sources.iter().enumerate() {
        for &u in &src.units {
            let info = src.seg.unit(u)?;
            if info.removed {
                return Err(Damaged(format!("unit {u} is a removal record, not a unit to keep")));
            }
            kept.push((s, info));
        }
    }
    kept.sort_by(|a, b| (a.1.kind, a.1.path).cmp(&(b.1.kind, b.1.path)));
    let mut renumber: Vec<Vec<u32>> = sources.iter().map(|s| vec![u32::MAX; s.seg.len() as usize]).collect();
    let mut lengths = Vec::new();
    let mut next = 0u32;
    for (s, info) in &kept {
        let src_lengths = sources[*s].seg.lengths()?;
        for d in info.first..info.first + info.count {
            renumber[*s][d as usize] = next;
            lengths.push(src_lengths.get(d));
            next += 1;
        }
    }
    let mut out = Sections::new(lengths);
    let restored = merge_postings(sources, &renumber, &mut out)?;
    for (s, info) in &kept {
        let seg = sources[*s].seg;
        let (days, flags) = (seg.section(sec::DAYS)?, seg.section(sec::FLAGS)?);
        for d in info.first..info.first + info.count {
            let flag = *flags.get(d as usize).ok_or_else(|| Damaged(format!("document {d} has no flags")))?;
            out.push_doc(word(days, d) as i32, flag, seg.stored_raw(d)?);
        }
    }
    let mut speakers: BTreeMap<&[u8], Vec<u32>> = BTreeMap::new();
    for (s, src) in sources.iter().enumerate() {
        for k in 0..src.seg.speaker_count() {
            let (key, docs) = src.seg.speaker_at(k)?;
            let mapped = docs.chunks_exact(4).filter_map(|b| {
                let d = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                renumber[s].get(d as usize).copied().filter(|&n| n != u32::MAX)
            });
            let list = speakers.entry(key).or_default();
            list.extend(mapped);
        }
    }
    speakers.retain(|_, list| !list.is_empty());
    for list in speakers.values_mut() {
        list.sort_unstable();
    }
    out.speakers(&speakers);
    let mut entries: Vec<Entry<'_>> = kept
        .iter()
        .map(|(_, info)| Entry {
            kind: info.kind,
            path: info.path,
            stamp: info.stamp,
            deps: info.deps.clone(),
            removed: false,
            count: info.count,
        })
        .collect();
    let delta = delta.map(|mut d| {
        let mut adjust: BTreeMap<String, i32> = std::mem::take(&mut d.adjust).into_iter().collect();
        for (term, n) in restored {
            *adjust.entry(term).or_default() += n;
        }
        d.adjust = adjust.into_iter().filter(|(_, v)| *v != 0).collect();
        d
    });
    if let Some(d) = &delta {
        entries.extend(d.removed.iter().map(|(k, p)| Entry::removal(*k, p)));
    }
    let carried = match (carried, &delta) {
        (Some(head), Some(_)) => head.adjustments()?,
        _ => Vec::new(),
    };
    Ok(out.finish(entries, config, delta.as_ref(), &carried))
}

/// Every term of the sources, in byte order, with the postings of kept
/// documents renumbered; returns, per term, how many dropped documents
/// holding it were already counted as deleted.
fn merge_postings(
    sources: &[Source<'_>],
    renumber: &[Vec<u32>],
    out: &mut Sections,
) -> Result<Vec<(String, i32)>, Damaged> {
    let mut heap: BinaryHeap<Reverse<(&[u8], usize, usize)>> = BinaryHeap::new();
    for (s, src) in sources.iter().enumerate() {
        if src.seg.term_count() > 0 {
            heap.push(Reverse((src.seg.term_at(0)?.0, s, 0)));
        }
    }
    let mut restored = Vec::new();
    let mut list: Vec<(u32, u32)> = Vec::new();
    let mut all: Vec<(u32, u32)> = Vec::new();
    while let Some(Reverse((term, _, _))) = heap.peek().copied() {
        list.clear();
        let (mut dead, mut contributors) = (0i32, 0);
        while let Some(&Reverse((t, s, k))) = heap.peek() {
            if t != term {
                break;
            }
            heap.pop();
            let seg = sources[s].seg;
            let (_, p) = seg.term_at(k)?;
            let before = list.len();
            all.clear();
            p.decode_all(&mut all)?;
            for &(d, tf) in &all {
                match renumber[s].get(d as usize).copied().filter(|&n| n != u32::MAX) {
                    Some(n) => list.push((n, tf)),
                    None if bit(sources[s].dead, d) => dead += 1,
                    None => {}
                }
            }
            contributors += usize::from(list.len() > before);
            if k + 1 < seg.term_count() as usize {
                heap.push(Reverse((seg.term_at(k + 1)?.0, s, k + 1)));
            }
        }
        if contributors > 1 {
            list.sort_unstable();
        }
        if !list.is_empty() {
            out.push_term(term, &list);
        }
        if dead > 0 {
            let term = String::from_utf8(term.to_vec()).map_err(|_| Damaged("a term is not UTF-8".into()))?;
            restored.push((term, dead));
        }
    }
    Ok(restored)
}
