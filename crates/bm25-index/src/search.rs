//! Top-k BM25 over a base segment and an optional delta (FORMAT.md §7),
//! document-at-a-time with MaxScore pruning: terms whose combined upper
//! bound cannot reach the current k-th score stop generating candidates
//! and are only probed (by skipping) for documents that still can.
//!
//! Scores are exactly those of a brute-force BM25 over the live documents:
//! each is summed in query-term order from the same per-term expression,
//! with `N`, `df` and `avgdl` taken over base and delta together.

use crate::segment::{Damaged, Kind, Postings, Segment, BLOCK};
use crate::tokenize::Tokenizer;

/// Filters that compose with each other and with ranking.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filters {
    /// Only this kind.
    pub kind: Option<Kind>,
    /// Only paths starting with these bytes.
    pub path_prefix: Option<String>,
    /// Only documents on or after this UTC day.
    pub day_from: Option<i32>,
    /// Only documents on or before this UTC day.
    pub day_to: Option<i32>,
    /// Only sources carrying this speaker key (`crate::speaker`; a name a
    /// person typed becomes one through `speaker::resolve`).
    pub speaker: Option<String>,
    /// Include pending documents.
    pub include_pending: bool,
}

/// BM25 parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bm25 {
    /// Term-frequency saturation.
    pub k1: f64,
    /// Length normalisation.
    pub b: f64,
}

impl Default for Bm25 {
    /// The defaults chosen by measurement on LoCoMo (`docs/benchmarks.md`).
    fn default() -> Bm25 {
        Bm25 { k1: 0.9, b: 0.3 }
    }
}

/// Lucene's IDF: `ln(1 + (N − df + 0.5)/(df + 0.5))`.
pub fn idf(n: u32, df: u32) -> f64 {
    let (n, df) = (f64::from(n), f64::from(df));
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// The saturated, length-normalised frequency part of a term's score.
pub fn tf_part(p: Bm25, tf: u32, dl: u32, avgdl: f64) -> f64 {
    let (tf, dl) = (f64::from(tf), f64::from(dl));
    let norm = if avgdl > 0.0 { dl / avgdl } else { 0.0 };
    (tf * (p.k1 + 1.0)) / (tf + p.k1 * (1.0 - p.b + p.b * norm))
}

/// One term's contribution to a document's score.
pub fn term_score(p: Bm25, n: u32, df: u32, tf: u32, dl: u32, avgdl: f64) -> f64 {
    idf(n, df) * tf_part(p, tf, dl, avgdl)
}

/// Where a hit lives: the number of its segment in the view's stack
/// (0 is the base, the last is the newest delta).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Seg(pub usize);

impl Seg {
    /// The base segment.
    pub const BASE: Seg = Seg(0);
}

/// One hit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// Which segment holds it.
    pub seg: Seg,
    /// Its number in that segment.
    pub doc: u32,
    /// BM25 score.
    pub score: f64,
}

/// A searchable index: a stack of segments, a base and, after refreshes,
/// deltas over it. The newest delta (the *head*) carries the deletions in
/// every segment below it and the statistics of the whole stack.
#[derive(Debug)]
pub struct View {
    segs: Vec<Segment>,
    /// Per segment below the head: its range of the head's tombstones.
    tombs: Vec<(usize, usize)>,
}

struct Cursor<'a> {
    q: usize,
    p: Postings<'a>,
    pos: usize,
    idf: f64,
    ub: f64,
}

impl Cursor<'_> {
    #[inline]
    fn doc(&self) -> u32 {
        let at = self.pos * 4;
        match self.p.docs.get(at..at + 4) {
            Some(b) => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            None => u32::MAX,
        }
    }

    #[inline]
    fn tf(&self) -> u32 {
        let at = self.pos * 4;
        self.p.tfs.get(at..at + 4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Moves to the first posting with document ≥ `target`.
    fn seek(&mut self, target: u32) {
        if self.doc() >= target {
            return;
        }
        let n = self.p.len();
        let mut blk = self.pos / BLOCK;
        let nb = self.p.blocks.len() / 12;
        while blk < nb {
            let last = u32::from_le_bytes(self.p.blocks[blk * 12..blk * 12 + 4].try_into().unwrap_or([0; 4]));
            if last >= target {
                break;
            }
            blk += 1;
        }
        if blk >= nb {
            self.pos = n;
            return;
        }
        self.pos = self.pos.max(blk * BLOCK);
        let end = ((blk + 1) * BLOCK).min(n);
        while self.pos < end && self.doc() < target {
            self.pos += 1;
        }
    }
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
    fn at(&self, k: usize) -> u32 {
        self.b.get(k * 4..k * 4 + 4).map_or(u32::MAX, |s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }

    /// The first document ≥ `target` (galloping), or `u32::MAX`.
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
struct Driver<'a>(Vec<ListCursor<'a>>);

impl Driver<'_> {
    fn seek(&mut self, target: u32) -> u32 {
        self.0.iter_mut().map(|c| c.seek(target)).min().unwrap_or(u32::MAX)
    }
}

/// The first document ≥ `d` in every driver's set.
fn align(drivers: &mut [Driver<'_>], mut d: u32) -> u32 {
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

/// The k best `(score, doc)` so far, best first; ties by document number.
struct TopK {
    k: usize,
    items: Vec<(f64, u32)>,
}

impl TopK {
    fn better(a: (f64, u32), b: (f64, u32)) -> bool {
        a.0 > b.0 || (a.0 == b.0 && a.1 < b.1)
    }

    fn offer(&mut self, item: (f64, u32)) {
        if self.items.len() == self.k {
            match self.items.last() {
                Some(&worst) if TopK::better(item, worst) => {
                    self.items.pop();
                }
                _ => return,
            }
        }
        let at = self.items.partition_point(|&x| TopK::better(x, item));
        self.items.insert(at, item);
    }

    /// Scores strictly below this can never enter.
    fn threshold(&self) -> f64 {
        if self.items.len() == self.k {
            self.items.last().map_or(f64::NEG_INFINITY, |x| x.0)
        } else {
            f64::NEG_INFINITY
        }
    }
}

/// Upper bounds are compared with a margin, so rounding in a partial sum
/// can never prune a document that would enter.
fn below(bound: f64, threshold: f64) -> bool {
    bound + bound.abs() * 1e-9 + 1e-12 < threshold
}

struct Query<'q> {
    terms: &'q [String],
    df: &'q [u32],
    n: u32,
    avgdl: f64,
    p: Bm25,
}

impl View {
    /// The query's distinct terms, in query order.
    pub fn query_terms(&self, query: &str) -> Vec<String> {
        let mut terms = Vec::new();
        Tokenizer::new(self.base().config()).terms(query, &mut terms);
        let mut seen = std::collections::HashSet::new();
        terms.retain(|t| seen.insert(t.clone()));
        terms
    }

    /// The best `limit` live documents for `query` that pass `filters`,
    /// best first; ties broken by kind (topic first), path, then anchor.
    pub fn search(&self, query: &str, filters: &Filters, limit: usize, p: Bm25) -> Result<Vec<Hit>, Damaged> {
        let terms = self.query_terms(query);
        if limit == 0 || terms.is_empty() {
            return Ok(Vec::new());
        }
        let (n, total) = self.head().live();
        let avgdl = if n > 0 { total as f64 / f64::from(n) } else { 0.0 };
        let mut df = Vec::with_capacity(terms.len());
        for t in &terms {
            let mut f = 0i64;
            for seg in &self.segs {
                f += i64::from(seg.postings(t)?.map_or(0, |p| p.len() as u32));
            }
            if let Some(d) = self.delta() {
                f += i64::from(d.adjustment(t)?);
            }
            df.push(u32::try_from(f).map_err(|_| Damaged("negative document frequency".into()))?);
        }
        let q = Query { terms: &terms, df: &df, n, avgdl, p };
        let mut hits = Vec::new();
        for (k, seg) in self.segs.iter().enumerate() {
            let top = self.segment_top(seg, self.tombstones(k)?, &q, filters, limit)?;
            hits.extend(top.into_iter().map(|(score, doc)| Hit { seg: Seg(k), doc, score }));
        }
        if self.segs.len() > 1 {
            let mut keyed = Vec::with_capacity(hits.len());
            for h in hits {
                let s = self.stored(&h)?;
                keyed.push((h, s.kind, s.path, s.anchor));
            }
            keyed.sort_by(|a, b| {
                b.0.score
                    .total_cmp(&a.0.score)
                    .then_with(|| a.1.cmp(&b.1))
                    .then_with(|| a.2.cmp(b.2))
                    .then_with(|| a.3.cmp(b.3))
            });
            hits = keyed.into_iter().map(|k| k.0).collect();
            hits.truncate(limit);
        }
        Ok(hits)
    }

    /// Document ranges of `seg` that the kind and path filters allow.
    fn ranges(seg: &Segment, f: &Filters) -> Result<Vec<(u32, u32)>, Damaged> {
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

    fn segment_top(
        &self,
        seg: &Segment,
        tomb_bits: Option<&[u8]>,
        q: &Query<'_>,
        f: &Filters,
        limit: usize,
    ) -> Result<Vec<(f64, u32)>, Damaged> {
        let mut cursors = Vec::new();
        for (k, t) in q.terms.iter().enumerate() {
            if let Some(post) = seg.postings(t)? {
                let idf = idf(q.n, q.df[k]);
                let ub = idf * tf_part(q.p, post.max_tf, post.min_dl, q.avgdl);
                cursors.push(Cursor { q: k, p: post, pos: 0, idf, ub });
            }
        }
        let mut top = TopK { k: limit, items: Vec::new() };
        if cursors.is_empty() {
            return Ok(top.items);
        }
        cursors.sort_by(|a, b| a.ub.total_cmp(&b.ub).then(a.q.cmp(&b.q)));
        let mut prefix_ub = vec![0.0f64; cursors.len() + 1];
        for (k, c) in cursors.iter().enumerate() {
            prefix_ub[k + 1] = prefix_ub[k] + c.ub;
        }
        // Filters that name a set of documents drive the candidates.
        let mut drivers: Vec<Driver<'_>> = Vec::new();
        if let Some(s) = &f.speaker {
            drivers.push(Driver(vec![ListCursor { b: seg.speaker_docs(s)?, pos: 0 }]));
        }
        if f.day_from.is_some() || f.day_to.is_some() {
            let (from, to) = (f.day_from.unwrap_or(i32::MIN), f.day_to.unwrap_or(i32::MAX));
            if let Some(lists) = seg.day_lists(from, to, MAX_DAY_LISTS)? {
                if lists.iter().all(|b| b.is_empty()) {
                    return Ok(Vec::new());
                }
                drivers.push(Driver(lists.into_iter().map(|b| ListCursor { b, pos: 0 }).collect()));
            }
        }
        let lengths = seg.section(crate::format::sec::LENGTHS)?;
        let flags = seg.section(crate::format::sec::FLAGS)?;
        let days = if f.day_from.is_some() || f.day_to.is_some() {
            Some(seg.section(crate::format::sec::DAYS)?)
        } else {
            None
        };
        let word = |b: &[u8], d: u32| -> Option<u32> {
            let at = d as usize * 4;
            b.get(at..at + 4).map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        };
        let passes = |d: u32| -> bool {
            let Some(&fl) = flags.get(d as usize) else { return false };
            if fl & 2 != 0 && !f.include_pending {
                return false;
            }
            if tomb_bits.is_some_and(|b| b.get(d as usize / 8).is_some_and(|x| x & (1 << (d % 8)) != 0)) {
                return false;
            }
            if let Some(days) = days {
                let day = word(days, d).map_or(i32::MIN, |v| v as i32);
                let has = day != i32::MIN;
                if f.day_from.is_some_and(|x| !has || day < x) || f.day_to.is_some_and(|x| !has || day > x) {
                    return false;
                }
            }
            true
        };
        let mut contrib = vec![0.0f64; q.terms.len()];
        let mut matched = vec![false; q.terms.len()];
        for (lo, hi) in View::ranges(seg, f)? {
            for c in &mut cursors {
                c.pos = 0;
                c.seek(lo);
            }
            let mut essential = 0usize;
            loop {
                let threshold = top.threshold();
                while essential < cursors.len() && below(prefix_ub[essential + 1], threshold) {
                    essential += 1;
                }
                if essential == cursors.len() {
                    break;
                }
                let mut d = cursors[essential..].iter().map(Cursor::doc).min().unwrap_or(u32::MAX);
                while d < hi {
                    let t = align(&mut drivers, d);
                    if t == d {
                        break;
                    }
                    for c in &mut cursors[essential..] {
                        c.seek(t);
                    }
                    d = cursors[essential..].iter().map(Cursor::doc).min().unwrap_or(u32::MAX);
                }
                if d >= hi {
                    break;
                }
                let ok = passes(d);
                let mut partial = 0.0;
                for c in &mut cursors[essential..] {
                    if c.doc() == d {
                        if ok {
                            let dl = word(lengths, d).unwrap_or(0);
                            let s = c.idf * tf_part(q.p, c.tf(), dl, q.avgdl);
                            contrib[c.q] = s;
                            matched[c.q] = true;
                            partial += s;
                        }
                        c.pos += 1;
                    }
                }
                if !ok {
                    continue;
                }
                let mut bound = partial + prefix_ub[essential];
                let mut pruned = false;
                for k in (0..essential).rev() {
                    if below(bound, threshold) {
                        pruned = true;
                        break;
                    }
                    let c = &mut cursors[k];
                    c.seek(d);
                    bound -= c.ub;
                    if c.doc() == d {
                        let dl = word(lengths, d).unwrap_or(0);
                        let s = c.idf * tf_part(q.p, c.tf(), dl, q.avgdl);
                        contrib[c.q] = s;
                        matched[c.q] = true;
                        bound += s;
                    }
                }
                if !pruned && !below(bound, threshold) {
                    let mut score = 0.0;
                    for k in 0..contrib.len() {
                        if matched[k] {
                            score += contrib[k];
                        }
                    }
                    top.offer((score, d));
                }
                matched.iter_mut().for_each(|m| *m = false);
            }
        }
        Ok(top.items)
    }
}

#[cfg(test)]
mod tests;
mod view;
