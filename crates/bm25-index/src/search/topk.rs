//! The k best documents of a segment so far ([`TopK`]) and the test every
//! pruning decision makes against the k-th of them ([`Threshold`]).

/// The k best `(score, doc)` so far, best first; ties by document number.
pub(super) struct TopK {
    pub(super) k: usize,
    pub(super) items: Vec<(f64, u32)>,
}

impl TopK {
    /// An empty top `k`.
    pub(super) fn new(k: usize) -> TopK {
        TopK { k, items: Vec::new() }
    }

    fn better(a: (f64, u32), b: (f64, u32)) -> bool {
        a.0 > b.0 || (a.0 == b.0 && a.1 < b.1)
    }

    /// Offers a document with its score; one already held is not taken
    /// twice (a seeded document comes round again).
    pub(super) fn offer(&mut self, item: (f64, u32)) {
        if self.items.iter().any(|x| x.1 == item.1) {
            return;
        }
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

    /// The k-th so far.
    pub(super) fn threshold(&self) -> Threshold {
        match self.items.last() {
            Some(&(score, doc)) if self.items.len() == self.k => Threshold { score, doc },
            _ => Threshold { score: f64::NEG_INFINITY, doc: 0 },
        }
    }
}

/// The k-th best so far: its score (−∞ until there are k) and document.
#[derive(Debug, Clone, Copy)]
pub(super) struct Threshold {
    score: f64,
    doc: u32,
}

impl Threshold {
    /// True when no document numbered `from` or above whose score is at
    /// most `bound` can enter. A tie goes to the lower number, so a score
    /// equal to the k-th's enters only below its number. Bounds are
    /// compared with a margin, so rounding in a partial sum can never prune
    /// a document that would enter.
    #[inline]
    pub(super) fn excludes(self, bound: f64, from: u32) -> bool {
        let bound = bound + bound.abs() * 1e-9 + 1e-12;
        bound < self.score || (bound <= self.score && from > self.doc)
    }
}
