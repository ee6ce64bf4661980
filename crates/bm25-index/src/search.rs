//! Top-k BM25 over a base segment and its deltas (FORMAT.md §7), with
//! block-max MaxScore pruning: terms whose combined upper bound cannot
//! reach the current k-th score stop generating candidates and are only
//! probed (by skipping, bounded by their block maxima) for documents that
//! still can.
//!
//! Scores are exactly those of a brute-force BM25 over the live documents:
//! each is summed in query-term order from the same per-term expression,
//! with `N`, `df` and `avgdl` taken over base and delta together.

use crate::segment::{Damaged, Kind, Segment};
use crate::tokenize::Tokenizer;
use maxscore::Query;

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
#[inline]
pub fn tf_part(p: Bm25, tf: u32, dl: u32, avgdl: f64) -> f64 {
    saturate(p, tf, length_part(p, dl, avgdl))
}

/// The part of [`tf_part`] that depends on the document's length alone.
#[inline]
fn length_part(p: Bm25, dl: u32, avgdl: f64) -> f64 {
    let norm = if avgdl > 0.0 { f64::from(dl) / avgdl } else { 0.0 };
    p.k1 * (1.0 - p.b + p.b * norm)
}

/// [`tf_part`] from the frequency and the [`length_part`].
#[inline]
fn saturate(p: Bm25, tf: u32, length_part: f64) -> f64 {
    let tf = f64::from(tf);
    (tf * (p.k1 + 1.0)) / (tf + length_part)
}

/// Lengths below this have their [`length_part`] computed once per query.
const SHORT: usize = 256;

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

/// One ranked document: where it is and its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
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
    pub fn search(
        &self,
        query: &str,
        filters: &Filters,
        limit: usize,
        p: Bm25,
    ) -> Result<Vec<Ranked>, Damaged> {
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
                f += i64::from(seg.postings(t)?.map_or(0, |p| p.df));
            }
            if let Some(d) = self.delta() {
                f += i64::from(d.adjustment(t)?);
            }
            df.push(u32::try_from(f).map_err(|_| Damaged("negative document frequency".into()))?);
        }
        let short = std::array::from_fn(|dl| length_part(p, dl as u32, avgdl));
        let q = Query { terms: &terms, df: &df, n, avgdl, p, short: &short };
        let mut hits = Vec::new();
        for (k, seg) in self.segs.iter().enumerate() {
            let top = maxscore::segment_top(seg, self.tombstones(k)?, &q, filters, limit)?;
            hits.extend(top.into_iter().map(|(score, doc)| Ranked { seg: Seg(k), doc, score }));
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
}

mod filter;
mod maxscore;
#[cfg(test)]
pub(crate) mod tests;
mod topk;
mod view;
