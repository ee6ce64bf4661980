//! Top-k of one segment with block-max MaxScore pruning: the term cursors
//! sorted by their score's upper bound, and the candidates only the terms
//! that can still lift a document into the top k generate, scored a window
//! of documents at a time (or document at a time behind a filter's
//! document lists), each bounded by the block maxima of the other terms
//! before they are probed. A window is partitioned again by the maxima of
//! the blocks it meets: a term whose blocks there cannot lift a document
//! is only probed in it, and a window no document of which can enter is
//! passed over, its cursors moved past it by their skip entries.

use super::filter::{self, align, Docs, Driver};
use super::topk::{Threshold, TopK};
use super::{length_part, saturate, tf_part, Bm25, Filters, SHORT};
use crate::segment::{Damaged, PostingCursor, Segment};

struct Cursor<'a> {
    q: usize,
    c: PostingCursor<'a>,
    idf: f64,
    /// The bound of its score in any document.
    ub: f64,
    /// The block whose bound was last asked for, found from the skip
    /// entries alone, its bound, and the first document past it (0 before
    /// the first is asked for; `u32::MAX` past the last block).
    shallow: usize,
    shallow_ub: f64,
    shallow_end: u32,
}

impl Cursor<'_> {
    #[inline]
    fn doc(&self) -> u32 {
        self.c.doc()
    }

    /// The bound of its score in document `target` (≥ every earlier
    /// target asked since the last rewind): that of the block that would
    /// hold it, 0 past the last block.
    #[inline]
    fn block_ub(&mut self, target: u32, q: &Query<'_>) -> f64 {
        if target < self.shallow_end {
            return self.shallow_ub;
        }
        self.next_block_ub(target, q)
    }

    /// [`Cursor::block_ub`] past the block whose bound is known.
    #[cold]
    fn next_block_ub(&mut self, target: u32, q: &Query<'_>) -> f64 {
        let p = *self.c.postings();
        let nb = p.blocks();
        let mut b = self.shallow.max(self.c.block());
        while b < nb && p.last_doc(b) < target {
            b += 1;
        }
        self.shallow = b;
        (self.shallow_ub, self.shallow_end) = if b < nb {
            let (tf, dl) = p.block_maxima(b);
            (self.idf * tf_part(q.p, tf, dl, q.avgdl), p.last_doc(b).saturating_add(1))
        } else {
            (0.0, u32::MAX)
        };
        self.shallow_ub
    }

    /// The bound of its score in any document of `start..end`, where
    /// `start` is at or past every document it was moved to or asked
    /// about: the largest of the blocks that may hold one, 0 when none
    /// does.
    #[inline]
    fn window_ub(&mut self, start: u32, end: u32, q: &Query<'_>) -> f64 {
        // It has passed over nothing at or past `start`.
        if self.doc() >= end {
            return 0.0;
        }
        let mut ub = self.block_ub(start, q);
        let p = *self.c.postings();
        let (nb, mut b) = (p.blocks(), self.shallow);
        while b + 1 < nb && p.last_doc(b).saturating_add(1) < end {
            b += 1;
            let (tf, dl) = p.block_maxima(b);
            ub = ub.max(self.idf * tf_part(q.p, tf, dl, q.avgdl));
        }
        ub
    }

    fn rewind(&mut self) {
        self.c.rewind();
        self.shallow = 0;
        self.shallow_end = 0;
        self.shallow_ub = 0.0;
    }
}

/// A query with the statistics of the whole stack.
pub(super) struct Query<'q> {
    /// The distinct terms, in query order.
    pub(super) terms: &'q [String],
    /// Their document frequencies.
    pub(super) df: &'q [u32],
    /// Live documents.
    pub(super) n: u32,
    /// Their average length.
    pub(super) avgdl: f64,
    /// The BM25 parameters.
    pub(super) p: Bm25,
    /// The [`length_part`] of every length below [`SHORT`].
    pub(super) short: &'q [f64; SHORT],
}

impl Query<'_> {
    /// [`tf_part`], the length part of short documents computed once.
    #[inline]
    fn tf_part(&self, tf: u32, dl: u32) -> f64 {
        let lp = match self.short.get(dl as usize) {
            Some(&lp) => lp,
            None => length_part(self.p, dl, self.avgdl),
        };
        saturate(self.p, tf, lp)
    }
}

/// The best `limit` `(score, document)` of `seg` for `q` that pass `f`,
/// best first; `tomb_bits` marks the deleted documents.
pub(super) fn segment_top(
    seg: &Segment,
    tomb_bits: Option<&[u8]>,
    q: &Query<'_>,
    f: &Filters,
    limit: usize,
) -> Result<Vec<(f64, u32)>, Damaged> {
    let cursors = term_cursors(seg, q)?;
    if cursors.is_empty() {
        return Ok(Vec::new());
    }
    // Filters that name a set of documents drive the candidates.
    let Some(drivers) = filter::drivers(seg, f)? else {
        return Ok(Vec::new());
    };
    let docs = Docs::new(seg, f, tomb_bits)?;
    let mut run = MaxScore::new(q, cursors, drivers, docs, limit);
    for (lo, hi) in filter::ranges(seg, f)? {
        if run.drivers.is_empty() {
            run.seed(lo, hi);
            run.windows(lo, hi);
        } else {
            run.range(lo, hi);
        }
    }
    if let Some(e) = run.failed.take() {
        return Err(e);
    }
    for c in run.cursors.iter_mut().map(|c| &mut c.c).chain(run.lagging.iter_mut()) {
        if let Some(e) = c.take_failure() {
            return Err(e);
        }
    }
    Ok(run.top.items)
}

/// A cursor for every query term `seg` holds, lowest upper bound first.
fn term_cursors<'s>(seg: &'s Segment, q: &Query<'_>) -> Result<Vec<Cursor<'s>>, Damaged> {
    let mut cursors = Vec::new();
    for (k, t) in q.terms.iter().enumerate() {
        if let Some(post) = seg.postings(t)? {
            let idf = super::idf(q.n, q.df[k]);
            let ub = idf * tf_part(q.p, post.max_tf, post.min_dl, q.avgdl);
            let c = PostingCursor::new(post);
            cursors.push(Cursor { q: k, c, idf, ub, shallow: 0, shallow_ub: 0.0, shallow_end: 0 });
        }
    }
    cursors.sort_by(|a, b| a.ub.total_cmp(&b.ub).then(a.q.cmp(&b.q)));
    Ok(cursors)
}

/// The state of one segment's search.
struct MaxScore<'s, 'q> {
    q: &'q Query<'q>,
    /// The term cursors, lowest upper bound first.
    cursors: Vec<Cursor<'s>>,
    /// `prefix_ub[k]`: the sum of the upper bounds of `cursors[..k]`.
    prefix_ub: Vec<f64>,
    drivers: Vec<Driver<'s>>,
    docs: Docs<'s>,
    /// Per query term: its score in the current document, 0 where it
    /// does not occur.
    contrib: Vec<f64>,
    top: TopK,
    /// Per cursor, a second cursor on its postings that the windowed loop
    /// moves to the documents it completes, for their exact score.
    lagging: Vec<PostingCursor<'s>>,
    /// Damage met by a cursor of [`MaxScore::seed`].
    failed: Option<Damaged>,
}

/// Documents the windowed loop scores together.
const WINDOW: usize = 4096;

impl<'s, 'q> MaxScore<'s, 'q> {
    fn new(
        q: &'q Query<'q>,
        cursors: Vec<Cursor<'s>>,
        drivers: Vec<Driver<'s>>,
        docs: Docs<'s>,
        limit: usize,
    ) -> MaxScore<'s, 'q> {
        let mut prefix_ub = vec![0.0f64; cursors.len() + 1];
        for (k, c) in cursors.iter().enumerate() {
            prefix_ub[k + 1] = prefix_ub[k] + c.ub;
        }
        MaxScore {
            failed: None,
            lagging: Vec::new(),
            q,
            cursors,
            prefix_ub,
            drivers,
            docs,
            contrib: vec![0.0f64; q.terms.len()],
            top: TopK::new(limit),
        }
    }

    /// Offers every candidate document of `lo..hi` that can still enter.
    fn range(&mut self, lo: u32, hi: u32) {
        // Borrowed field by field, so that the loop works on slices.
        let MaxScore { q, cursors, prefix_ub, drivers, docs, contrib, top, .. } = self;
        let mut terms = Terms { q, docs, contrib };
        for c in cursors.iter_mut() {
            c.rewind();
            c.c.seek(lo);
        }
        // Cursors below `essential` cannot lift a document into the top k
        // on their own: they generate no candidates, and are only probed.
        let (mut essential, mut from) = (0usize, lo);
        loop {
            let threshold = top.threshold();
            while essential < cursors.len() && threshold.excludes(prefix_ub[essential + 1], from) {
                essential += 1;
            }
            if essential == cursors.len() {
                break;
            }
            let (probed, generating) = cursors.split_at_mut(essential);
            let Some(d) = next_candidate(generating, drivers, hi) else { break };
            from = d + 1;
            let ok = terms.docs.passes(d);
            let partial = terms.score_generating(generating, d, ok);
            if !ok {
                continue;
            }
            let mut probed_ub = 0.0;
            for c in probed.iter_mut() {
                probed_ub += c.block_ub(d, q);
            }
            let bound = partial + probed_ub;
            if terms.probe(probed, d, bound, threshold) {
                top.offer((terms.take_total(), d));
            } else {
                terms.forget(generating);
            }
        }
    }

    /// Offers, scored in full, the first documents of `lo..hi` that hold
    /// both terms of the two highest bounds: the k-th score then starts
    /// near the best answers' wherever in the segment they lie, and the
    /// loop prunes from its first window.
    fn seed(&mut self, lo: u32, hi: u32) {
        let n = self.cursors.len();
        if n < 2 {
            return;
        }
        let fresh = |c: &Cursor<'s>| PostingCursor::new(*c.c.postings());
        let (mut a, mut b) = (fresh(&self.cursors[n - 1]), fresh(&self.cursors[n - 2]));
        let mut found = Vec::new();
        let (mut x, mut y) = (lo, lo);
        while x < hi && y < hi && found.len() < self.top.k.saturating_mul(4).clamp(16, 256) {
            a.seek(x.max(y));
            b.seek(a.doc());
            (x, y) = (a.doc(), b.doc());
            if x == y && x < hi {
                if self.docs.passes(x) {
                    found.push(x);
                }
                x += 1;
            }
        }
        if found.is_empty() {
            self.keep_failures([&mut a, &mut b]);
            return;
        }
        let mut full: Vec<PostingCursor<'s>> = self.cursors.iter().map(fresh).collect();
        let mut terms = Terms { q: self.q, docs: &self.docs, contrib: &mut self.contrib };
        for d in found {
            for (c, f) in self.cursors.iter().zip(full.iter_mut()) {
                f.seek(d);
                if f.doc() == d {
                    terms.contrib[c.q] = c.idf * self.q.tf_part(f.tf(), terms.docs.length(d));
                }
            }
            self.top.offer((terms.take_total(), d));
        }
        self.keep_failures(full.iter_mut().chain([&mut a, &mut b]));
    }

    /// Keeps the first damage these cursors met.
    fn keep_failures<'c>(&mut self, cursors: impl IntoIterator<Item = &'c mut PostingCursor<'s>>)
    where
        's: 'c,
    {
        for c in cursors {
            if let Some(e) = c.take_failure() {
                self.failed.get_or_insert(e);
            }
        }
    }

    /// [`MaxScore::range`] when no filter drives the candidates: the
    /// generating terms are scored a window of documents at a time into
    /// accumulators (one tight loop per term), then every document they
    /// hold is bounded, probed and completed in order, its exact score
    /// summed in query-term order from the lagging cursors.
    fn windows(&mut self, lo: u32, hi: u32) {
        let MaxScore { q, cursors, prefix_ub, docs, contrib, top, lagging, .. } = self;
        let mut terms = Terms { q, docs, contrib };
        for c in cursors.iter_mut() {
            c.rewind();
            c.c.seek(lo);
        }
        // Made on first use: the driven loop never needs them.
        if lagging.is_empty() {
            *lagging = cursors.iter().map(|c| PostingCursor::new(*c.c.postings())).collect();
        } else {
            lagging.iter_mut().for_each(PostingCursor::rewind);
        }
        let (mut acc, mut bits) = (vec![0.0f64; WINDOW], [0u64; WINDOW / 64]);
        let (mut essential, mut from) = (0usize, lo);
        loop {
            while essential < cursors.len() && top.threshold().excludes(prefix_ub[essential + 1], from) {
                essential += 1;
            }
            let start = cursors[essential..].iter().map(Cursor::doc).min().unwrap_or(u32::MAX);
            if start >= hi {
                break;
            }
            let end = hi.min(start.saturating_add(WINDOW as u32));
            from = end;
            // The window's own partition, by the bounds of the blocks it
            // meets: terms the whole stack could need may generate nothing
            // here, and a window no document of which can enter is passed.
            let local = window_essential(cursors, essential, start, end, q, top.threshold());
            if local == cursors.len() {
                cursors[essential..].iter_mut().for_each(|c| c.c.seek(end));
                continue;
            }
            let (probed, generating) = cursors.split_at_mut(local);
            let mut probed_ub = ProbedBound::default();
            for c in generating.iter_mut() {
                let (idf, docs) = (c.idf, terms.docs);
                c.c.for_each_before(end, |d, tf| {
                    // Within the window in any intact segment; a damaged
                    // one that decodes out of order is skipped, not a panic.
                    let i = d.wrapping_sub(start) as usize;
                    if let (Some(a), Some(w)) = (acc.get_mut(i), bits.get_mut(i / 64)) {
                        *a += idf * q.tf_part(tf, docs.length(d));
                        *w |= 1 << (i % 64);
                    }
                });
            }
            for (w, word) in bits.iter_mut().enumerate() {
                let mut word = std::mem::take(word);
                while word != 0 {
                    let i = w * 64 + word.trailing_zeros() as usize;
                    word &= word - 1;
                    let (partial, d) = (std::mem::take(&mut acc[i]), start + i as u32);
                    if !terms.docs.passes(d) {
                        continue;
                    }
                    let bound = partial + probed_ub.at(probed, d, q);
                    if terms.probe(probed, d, bound, top.threshold()) {
                        for (c, lag) in generating.iter().zip(&mut lagging[local..]) {
                            lag.seek(d);
                            if lag.doc() == d {
                                terms.contrib[c.q] = c.idf * q.tf_part(lag.tf(), terms.docs.length(d));
                            }
                        }
                        top.offer((terms.take_total(), d));
                    }
                }
            }
            probed[essential..].iter_mut().for_each(|c| c.c.seek(end));
        }
    }
}

/// How many of the `cursors` (lowest bound first; the first `essential`
/// already only probed) can only be probed in the window `start..end`:
/// the most whose window bounds together cannot reach `threshold`. All of
/// them when no document of the window can enter.
fn window_essential(
    cursors: &mut [Cursor<'_>],
    essential: usize,
    start: u32,
    end: u32,
    q: &Query<'_>,
    threshold: Threshold,
) -> usize {
    let (mut sum, mut local) = (0.0, essential);
    for (k, c) in cursors.iter_mut().enumerate() {
        sum += c.window_ub(start, end, q);
        if k >= essential && threshold.excludes(sum, start) {
            local = k + 1;
        }
    }
    local
}

/// The next document below `hi` one of the `generating` cursors holds and
/// every driver allows.
#[inline]
fn next_candidate(generating: &mut [Cursor<'_>], drivers: &mut [Driver<'_>], hi: u32) -> Option<u32> {
    let mut d = generating.iter().map(Cursor::doc).min().unwrap_or(u32::MAX);
    while d < hi {
        let t = align(drivers, d);
        if t == d {
            break;
        }
        for c in generating.iter_mut() {
            c.c.seek(t);
        }
        d = generating.iter().map(Cursor::doc).min().unwrap_or(u32::MAX);
    }
    (d < hi).then_some(d)
}

/// The sum of the probed cursors' block bounds at a document, kept until
/// one of those blocks ends.
#[derive(Default)]
struct ProbedBound {
    sum: f64,
    /// The first document it does not hold for.
    until: u32,
}

impl ProbedBound {
    /// The bound of the `probed` cursors' scores in `d` (≥ every document
    /// asked before, with the same cursors).
    #[inline]
    fn at(&mut self, probed: &mut [Cursor<'_>], d: u32, q: &Query<'_>) -> f64 {
        if d >= self.until {
            (self.sum, self.until) = (0.0, u32::MAX);
            for c in probed.iter_mut() {
                self.sum += c.block_ub(d, q);
                self.until = self.until.min(c.shallow_end);
            }
        }
        self.sum
    }
}

/// The scores of the query terms in the document being scored.
struct Terms<'a, 's> {
    q: &'a Query<'a>,
    docs: &'a Docs<'s>,
    /// Per query term: its score in the document, 0 where it is not
    /// scored (adding 0 changes no sum); back to all 0 between documents.
    contrib: &'a mut [f64],
}

impl Terms<'_, '_> {
    /// Scores the term of cursor `c` (which is at `d`) for `d`; returns it.
    #[inline]
    fn score(&mut self, c: &mut Cursor<'_>, d: u32) -> f64 {
        let s = c.idf * self.q.tf_part(c.c.tf(), self.docs.length(d));
        self.contrib[c.q] = s;
        s
    }

    /// Forgets what the `cursors`' terms scored in the document.
    #[inline]
    fn forget(&mut self, cursors: &[Cursor<'_>]) {
        for c in cursors {
            self.contrib[c.q] = 0.0;
        }
    }

    /// Moves the `generating` cursors past `d`; when `ok`, scores the terms
    /// they hold for it and returns the sum.
    #[inline]
    fn score_generating(&mut self, generating: &mut [Cursor<'_>], d: u32, ok: bool) -> f64 {
        let mut partial = 0.0;
        for c in generating.iter_mut() {
            if c.doc() == d {
                if ok {
                    partial += self.score(c, d);
                }
                c.c.advance();
            }
        }
        partial
    }

    /// Probes the `probed` cursors for `d`, best bound first, while its
    /// `bound` (with their block bounds for `d`) can still reach
    /// `threshold`; true when it still can after all. When false, what it
    /// scored is forgotten.
    #[inline(always)]
    fn probe(&mut self, probed: &mut [Cursor<'_>], d: u32, mut bound: f64, threshold: Threshold) -> bool {
        for i in (0..probed.len()).rev() {
            if threshold.excludes(bound, d) {
                self.forget(&probed[i + 1..]);
                return false;
            }
            let c = &mut probed[i];
            bound -= c.block_ub(d, self.q);
            c.c.seek(d);
            if c.doc() == d {
                bound += self.score(c, d);
            }
        }
        if threshold.excludes(bound, d) {
            self.forget(probed);
            return false;
        }
        true
    }

    /// The sum of the terms' scores, in query-term order; every score is
    /// back to 0 after.
    #[inline]
    fn take_total(&mut self) -> f64 {
        let mut score = 0.0;
        for s in self.contrib.iter_mut() {
            score += std::mem::take(s);
        }
        score
    }
}
