//! Warm query latency of both engines, interleaved question by question in
//! one thread, and how often their answers agree.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// Latency percentiles, microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Latency {
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
}

impl Latency {
    fn of(times: Vec<Duration>) -> Latency {
        let (p50, p99) = crate::percentiles(times);
        Latency { p50: p50 * 1e3, p99: p99 * 1e3 }
    }
}

/// Ours and the peer's latency over `queries`: one warm-up pass of both,
/// then `rounds` passes, each question asked of ours and then of the peer.
pub fn interleaved<A, B>(
    queries: &[String],
    rounds: usize,
    mut ours: impl FnMut(&str) -> A,
    mut peer: impl FnMut(&str) -> B,
) -> (Latency, Latency) {
    for q in queries {
        black_box(ours(q));
        black_box(peer(q));
    }
    let mut a = Vec::with_capacity(queries.len() * rounds);
    let mut b = Vec::with_capacity(queries.len() * rounds);
    for _ in 0..rounds {
        for q in queries {
            let t = Instant::now();
            black_box(ours(q));
            a.push(t.elapsed());
            let t = Instant::now();
            black_box(peer(q));
            b.push(t.elapsed());
        }
    }
    (Latency::of(a), Latency::of(b))
}

/// Agreement of two engines' ranked answers.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Agreement {
    /// Share of questions whose first answers are the same.
    pub top1: f64,
    /// Mean share of ours' answers also among the peer's (as many times
    /// as they occur).
    pub top5: f64,
    /// Questions compared (those where either engine answered).
    pub questions: usize,
}

/// How far two rankings agree, per question, over answers given as
/// identities (replicas of one turn are one identity).
pub fn agreement(answers: impl Iterator<Item = (Vec<u32>, Vec<u32>)>) -> Agreement {
    let (mut top1, mut top5, mut n) = (0.0, 0.0, 0usize);
    for (ours, peer) in answers {
        if ours.is_empty() && peer.is_empty() {
            continue;
        }
        n += 1;
        if ours.first() == peer.first() {
            top1 += 1.0;
        }
        let mut rest = peer.clone();
        let mut shared = 0;
        for a in &ours {
            if let Some(at) = rest.iter().position(|b| b == a) {
                rest.swap_remove(at);
                shared += 1;
            }
        }
        top5 += f64::from(shared) / ours.len().max(peer.len()) as f64;
    }
    let n_f = n.max(1) as f64;
    Agreement { top1: top1 / n_f, top5: top5 / n_f, questions: n }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_counts_shared_answers_once_each() {
        let a = agreement(
            vec![(vec![1, 2, 3, 3, 4], vec![1, 3, 5, 6, 7]), (vec![9, 3], vec![3, 9]), (vec![], vec![])]
                .into_iter(),
        );
        assert_eq!(a.questions, 2);
        assert!((a.top1 - 0.5).abs() < 1e-12);
        assert!((a.top5 - (0.4 + 1.0) / 2.0).abs() < 1e-12);
    }
}
