//! Three-way merge of line runs (diff3 over the longest common
//! subsequences of base and each side).

/// The most cells the longest-common-subsequence table may have; past it
/// the differing middle counts as unmatched (still correct, less precise).
const MAX_CELLS: usize = 1 << 22;

/// For each line of `a`, the index of the line of `b` it is matched with
/// in a longest common subsequence, if any.
pub(super) fn matches(a: &[String], b: &[String]) -> Vec<Option<usize>> {
    let mut out = vec![None; a.len()];
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suf = a[pre..].iter().rev().zip(b[pre..].iter().rev()).take_while(|(x, y)| x == y).count();
    for (k, slot) in out.iter_mut().enumerate().take(pre) {
        *slot = Some(k);
    }
    for k in 0..suf {
        out[a.len() - 1 - k] = Some(b.len() - 1 - k);
    }
    let (ma, mb) = (&a[pre..a.len() - suf], &b[pre..b.len() - suf]);
    if ma.is_empty() || mb.is_empty() || (ma.len() + 1) * (mb.len() + 1) > MAX_CELLS {
        return out;
    }
    // table[i][j]: the LCS length of ma[i..] and mb[j..].
    let w = mb.len() + 1;
    let mut table = vec![0u32; (ma.len() + 1) * w];
    for i in (0..ma.len()).rev() {
        for j in (0..mb.len()).rev() {
            table[i * w + j] = if ma[i] == mb[j] {
                table[(i + 1) * w + j + 1] + 1
            } else {
                table[(i + 1) * w + j].max(table[i * w + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < ma.len() && j < mb.len() {
        if ma[i] == mb[j] {
            out[pre + i] = Some(pre + j);
            (i, j) = (i + 1, j + 1);
        } else if table[(i + 1) * w + j] >= table[i * w + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// A clash: ours' and theirs' lines where both changed the same base lines
/// differently.
pub(super) type Clash = (Vec<String>, Vec<String>);

/// Merges `ours` and `theirs`, two versions of `base`; where they clash the
/// result holds ours, and the clash is returned.
pub(super) fn merge3(base: &[String], ours: &[String], theirs: &[String]) -> (Vec<String>, Vec<Clash>) {
    let (mo, mt) = (matches(base, ours), matches(base, theirs));
    let (mut out, mut clashes) = (Vec::new(), Vec::new());
    let (mut i, mut jo, mut jt) = (0, 0, 0);
    let stable = (0..base.len()).filter_map(|k| Some((k, mo[k]?, mt[k]?)));
    for (k, ko, kt) in stable.chain(std::iter::once((base.len(), ours.len(), theirs.len()))) {
        let (b, o, t) = (&base[i..k], &ours[jo..ko], &theirs[jt..kt]);
        match resolve(b, o, t) {
            Some(lines) => out.extend(lines),
            None => {
                out.extend_from_slice(o);
                clashes.push((o.to_vec(), t.to_vec()));
            }
        }
        if k < base.len() {
            out.push(base[k].clone());
        }
        (i, jo, jt) = (k + 1, ko + 1, kt + 1);
    }
    (out, clashes)
}

/// One unstable stretch: base lines `b`, replaced by `o` in ours and `t` in
/// theirs. `None` is a clash.
fn resolve(b: &[String], o: &[String], t: &[String]) -> Option<Vec<String>> {
    if o == t || t == b {
        return Some(o.to_vec());
    }
    if o == b {
        return Some(t.to_vec());
    }
    if b.is_empty() {
        return Some(union(o, t));
    }
    let (ko, kt) = (kept(b, o), kept(b, t));
    match (ko, kt) {
        // Both only deleted: what both kept.
        (Some(ko), Some(kt)) => Some(
            b.iter()
                .zip(ko.iter().zip(&kt))
                .filter(|(_, (x, y))| **x && **y)
                .map(|(l, _)| l.clone())
                .collect(),
        ),
        // One only deleted, the other kept all of base and inserted.
        (Some(ko), None) => drop_from(b, &ko, t),
        (None, Some(kt)) => drop_from(b, &kt, o),
        (None, None) => None,
    }
}

/// When `side` is `b` with some lines deleted: per line of `b`, whether
/// `side` kept it.
fn kept(b: &[String], side: &[String]) -> Option<Vec<bool>> {
    let mut flags = vec![false; b.len()];
    let mut k = 0;
    for l in side {
        while k < b.len() && &b[k] != l {
            k += 1;
        }
        if k == b.len() {
            return None;
        }
        flags[k] = true;
        k += 1;
    }
    Some(flags)
}

/// When `ins` is `b` with lines inserted: `ins` without the lines of `b`
/// that `keep` says were deleted.
fn drop_from(b: &[String], keep: &[bool], ins: &[String]) -> Option<Vec<String>> {
    let mut out = Vec::with_capacity(ins.len());
    let mut k = 0;
    for l in ins {
        if k < b.len() && &b[k] == l {
            if keep[k] {
                out.push(l.clone());
            }
            k += 1;
        } else {
            out.push(l.clone());
        }
    }
    (k == b.len()).then_some(out)
}

/// Both sides' insertions at one place: the side whose lines sort lower
/// first, then the other's lines that the first lacks (in a longest common
/// subsequence), so the result does not depend on which side is ours.
pub(super) fn union(a: &[String], b: &[String]) -> Vec<String> {
    let (x, y) = if a <= b { (a, b) } else { (b, a) };
    let m = matches(y, x);
    let mut out = x.to_vec();
    out.extend(y.iter().zip(&m).filter(|(_, m)| m.is_none()).map(|(l, _)| l.clone()));
    out
}
