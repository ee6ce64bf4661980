//! Strongly connected components of a small directed graph (Tarjan's
//! algorithm), for the circle rule.

use std::collections::BTreeSet;

/// The strongly connected components of the graph whose node `v` has the
/// edges `succ[v]`, each a list of nodes; every node is in exactly one.
pub(crate) fn strongly_connected(succ: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut t = Tarjan::new(succ);
    for v in 0..succ.len() {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    t.components
}

struct Tarjan<'a> {
    succ: &'a [Vec<usize>],
    index: Vec<Option<usize>>,
    low: Vec<usize>,
    next: usize,
    stack: Vec<usize>,
    on_stack: BTreeSet<usize>,
    components: Vec<Vec<usize>>,
}

impl<'a> Tarjan<'a> {
    fn new(succ: &'a [Vec<usize>]) -> Tarjan<'a> {
        Tarjan {
            succ,
            index: vec![None; succ.len()],
            low: vec![0; succ.len()],
            next: 0,
            stack: Vec::new(),
            on_stack: BTreeSet::new(),
            components: Vec::new(),
        }
    }

    fn visit(&mut self, v: usize) {
        self.index[v] = Some(self.next);
        self.low[v] = self.next;
        self.next += 1;
        self.stack.push(v);
        self.on_stack.insert(v);
        let succ = self.succ;
        for &w in &succ[v] {
            match self.index[w] {
                None => {
                    self.visit(w);
                    self.low[v] = self.low[v].min(self.low[w]);
                }
                Some(i) if self.on_stack.contains(&w) => self.low[v] = self.low[v].min(i),
                Some(_) => {}
            }
        }
        if Some(self.low[v]) == self.index[v] {
            let mut component = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on_stack.remove(&w);
                component.push(w);
                if w == v {
                    break;
                }
            }
            self.components.push(component);
        }
    }
}

#[cfg(test)]
mod tests {
    //! Components on a graph with two circles, a self-loop and a tail.
    use super::*;

    #[test]
    fn components() {
        // 0 → 1 → 2 → 0, 2 → 3, 3 → 3, 4 → 5 → 4, 5 → 0.
        let succ = vec![vec![1], vec![2], vec![0, 3], vec![3], vec![5], vec![4, 0]];
        let mut got: Vec<Vec<usize>> = strongly_connected(&succ)
            .into_iter()
            .map(|mut c| {
                c.sort();
                c
            })
            .collect();
        got.sort();
        assert_eq!(got, [vec![0, 1, 2], vec![3], vec![4, 5]]);
    }
}
