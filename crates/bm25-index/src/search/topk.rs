//! The k best documents of a segment so far ([`TopK`]) and the test every
//! pruning decision makes against the k-th of them ([`Threshold`]).

/// The k best `(score, doc)` so far, best first; ties by document number.
pub(super) struct TopK {
    pub(super) k: usize,
    pub(super) items: Vec<(f64, u32)>,
    /// The test against the k-th, kept in step with `items`.
    threshold: Threshold,
}

impl TopK {
    /// An empty top `k`.
    pub(super) fn new(k: usize) -> TopK {
        TopK { k, items: Vec::new(), threshold: Threshold::NONE }
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
        if let Some(&(score, doc)) = self.items.last().filter(|_| self.items.len() == self.k) {
            self.threshold = Threshold::of(score, doc);
        }
    }

    /// The k-th so far.
    #[inline]
    pub(super) fn threshold(&self) -> Threshold {
        self.threshold
    }
}

/// The k-th best so far: its score lowered by a margin (−∞ until there
/// are k), and its document.
#[derive(Debug, Clone, Copy)]
pub(super) struct Threshold {
    cut: f64,
    doc: u32,
}

impl Threshold {
    /// Before there are k: nothing is excluded.
    const NONE: Threshold = Threshold { cut: f64::NEG_INFINITY, doc: 0 };

    /// The test against a k-th of `score` in document `doc`. Bounds are
    /// compared with a margin (two billionths of the score, and a little), so
    /// rounding in a partial sum can never prune a document that would
    /// enter.
    fn of(score: f64, doc: u32) -> Threshold {
        Threshold { cut: score - score.abs() * 2e-9 - 1e-12, doc }
    }

    /// True when no document numbered `from` or above whose score is at
    /// most `bound` can enter. A tie goes to the lower number, so a score
    /// equal to the k-th's enters only below its number.
    #[inline]
    pub(super) fn excludes(self, bound: f64, from: u32) -> bool {
        bound < self.cut || (bound <= self.cut && from > self.doc)
    }
}
