//! Aligning two line sequences: for each line of one, the line of the
//! other it stays as, in a heaviest common subsequence.

use std::collections::HashMap;

use super::model::token_block;
use crate::parse::is_blank;

/// The most cells the table may have; past it the middle is cut at the
/// lines found once on each side (every block token is), and a middle
/// with none of those counts as unmatched (still correct, less precise).
const MAX_CELLS: usize = 1 << 18;

/// How much matching a line is worth: a block token most, then a line
/// with text, then a blank line, so the alignment follows the blocks and
/// never trades one for the blank lines around another.
fn weight(l: &str) -> u32 {
    if token_block(l).is_some() {
        64
    } else if is_blank(l) {
        1
    } else {
        8
    }
}

/// For each line of `a`, the index of the line of `b` it is matched with
/// in a heaviest common subsequence (see [`weight`]), if any.
pub(super) fn matches(a: &[String], b: &[String]) -> Vec<Option<usize>> {
    let mut out = vec![None; a.len()];
    fill(a, b, 0, &mut out);
    out
}

/// Matches `a` (whose lines are `out[..]`) with `b` (whose indexes start at
/// `bo`): common ends first, then a table when the middle is small enough,
/// else around the lines found exactly once in each (patience).
fn fill(a: &[String], b: &[String], bo: usize, out: &mut [Option<usize>]) {
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suf = a[pre..].iter().rev().zip(b[pre..].iter().rev()).take_while(|(x, y)| x == y).count();
    for (k, slot) in out.iter_mut().enumerate().take(pre) {
        *slot = Some(bo + k);
    }
    for k in 0..suf {
        out[a.len() - 1 - k] = Some(bo + b.len() - 1 - k);
    }
    let (ma, mb) = (&a[pre..a.len() - suf], &b[pre..b.len() - suf]);
    let (out, bo) = (&mut out[pre..a.len() - suf], bo + pre);
    if ma.is_empty() || mb.is_empty() {
        return;
    }
    if (ma.len() + 1) * (mb.len() + 1) > MAX_CELLS {
        let anchors = unique_anchors(ma, mb);
        if anchors.is_empty() {
            // Nothing to hold on to: the middle counts as unmatched.
            return;
        }
        let (mut pi, mut pj) = (0, 0);
        for (i, j) in anchors {
            fill(&ma[pi..i], &mb[pj..j], bo + pj, &mut out[pi..i]);
            out[i] = Some(bo + j);
            (pi, pj) = (i + 1, j + 1);
        }
        fill(&ma[pi..], &mb[pj..], bo + pj, &mut out[pi..]);
        return;
    }
    table(ma, mb, bo, out);
}

/// The heaviest common subsequence of `ma` and `mb` by a full table.
fn table(ma: &[String], mb: &[String], bo: usize, out: &mut [Option<usize>]) {
    // table[i][j]: the weight of the heaviest common subsequence of ma[i..]
    // and mb[j..].
    let w = mb.len() + 1;
    let mut table = vec![0u32; (ma.len() + 1) * w];
    for i in (0..ma.len()).rev() {
        for j in (0..mb.len()).rev() {
            table[i * w + j] = if ma[i] == mb[j] {
                table[(i + 1) * w + j + 1] + weight(&ma[i])
            } else {
                table[(i + 1) * w + j].max(table[i * w + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < ma.len() && j < mb.len() {
        if ma[i] == mb[j] && table[i * w + j] == table[(i + 1) * w + j + 1] + weight(&ma[i]) {
            out[i] = Some(bo + j);
            (i, j) = (i + 1, j + 1);
        } else if table[(i + 1) * w + j] >= table[i * w + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
}

/// The lines found exactly once in `a` and once in `b`, as `(i, j)` pairs,
/// the longest run of them in the same order in both.
fn unique_anchors(a: &[String], b: &[String]) -> Vec<(usize, usize)> {
    let mut seen: HashMap<&str, (u32, u32, usize, usize)> = HashMap::new();
    for (i, l) in a.iter().enumerate() {
        let e = seen.entry(l).or_default();
        (e.0, e.2) = (e.0 + 1, i);
    }
    for (j, l) in b.iter().enumerate() {
        let e = seen.entry(l).or_default();
        (e.1, e.3) = (e.1 + 1, j);
    }
    let mut pairs: Vec<(usize, usize)> =
        seen.into_values().filter(|e| e.0 == 1 && e.1 == 1).map(|e| (e.2, e.3)).collect();
    pairs.sort_unstable();
    // Longest increasing subsequence of the j's (patience sorting).
    let (mut tails, mut prev): (Vec<usize>, Vec<Option<usize>>) = (Vec::new(), vec![None; pairs.len()]);
    for k in 0..pairs.len() {
        let at = tails.partition_point(|&t| pairs[t].1 < pairs[k].1);
        prev[k] = at.checked_sub(1).map(|p| tails[p]);
        if at == tails.len() {
            tails.push(k);
        } else {
            tails[at] = k;
        }
    }
    let mut run = Vec::with_capacity(tails.len());
    let mut k = tails.last().copied();
    while let Some(x) = k {
        run.push(pairs[x]);
        k = prev[x];
    }
    run.reverse();
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<String> {
        s.split(',').map(str::to_owned).collect()
    }

    #[test]
    fn blocks_outweigh_blank_lines() {
        let (a, b) = (lines("H,,\na,,\nb"), lines("H,,\nx,,\na"));
        assert_eq!(matches(&a, &b), [Some(0), Some(1), Some(4), None, None]);
    }

    #[test]
    fn a_large_middle_is_cut_at_unique_lines() {
        let a: Vec<String> =
            (0..3000).map(|k| if k % 2 == 0 { String::new() } else { format!("\nb{k}") }).collect();
        let mut b = a.clone();
        b.insert(1500, "new".into());
        b.remove(10);
        b[2999 - 1] = "changed".into();
        let m = matches(&a, &b);
        assert_eq!(m[1], Some(1));
        assert_eq!(m[11], Some(10));
        assert_eq!(m[1501], Some(1501));
        assert_eq!(m[2997], Some(2997));
        let kept = m.iter().flatten().count();
        assert_eq!(kept, 2998, "all but the removed and the changed line");
    }
}
