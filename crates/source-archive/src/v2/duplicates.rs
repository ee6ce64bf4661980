//! Duplicate source ids within a file, found by sorting anchor hashes.

use super::frame::Frame;

/// Sorts `keys` by their high 32 bits (stable, LSD radix, four passes).
fn radix_sort_high32(keys: &mut Vec<u64>) {
    let mut buf = vec![0u64; keys.len()];
    for pass in 0..4 {
        let shift = 32 + 8 * pass;
        let mut counts = [0usize; 257];
        for &k in keys.iter() {
            counts[((k >> shift) & 0xFF) as usize + 1] += 1;
        }
        for d in 0..256 {
            counts[d + 1] += counts[d];
        }
        for &k in keys.iter() {
            let d = ((k >> shift) & 0xFF) as usize;
            buf[counts[d]] = k;
            counts[d] += 1;
        }
        std::mem::swap(keys, &mut buf);
    }
}

/// The index of the first frame whose source id already appeared earlier
/// in `frames`. `keys` holds `anchor << 32 | index` for every frame.
///
/// Equivalent to checking each frame against a set of the ids before it,
/// but a sort of the anchor hashes (already computed, uniformly random) is
/// several times cheaper than a hash set's random probes at archive scale.
pub(super) fn first_duplicate(frames: &[Frame<'_>], mut keys: Vec<u64>) -> Option<usize> {
    radix_sort_high32(&mut keys);
    let mut first: Option<usize> = None;
    let mut run = 0;
    while run < keys.len() {
        let anchor = keys[run] >> 32;
        let mut end = run + 1;
        while end < keys.len() && keys[end] >> 32 == anchor {
            end += 1;
        }
        if end - run > 1 {
            // Same anchor: compare the ids themselves (in frame order).
            let idx: Vec<usize> = keys[run..end].iter().map(|k| (k & 0xFFFF_FFFF) as usize).collect();
            for (j, &later) in idx.iter().enumerate().skip(1) {
                if idx[..j].iter().any(|&e| frames[e].source_text == frames[later].source_text) {
                    first = Some(first.map_or(later, |f| f.min(later)));
                    break;
                }
            }
        }
        run = end;
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radix_sort_is_a_stable_sort_by_anchor() {
        let mut keys: Vec<u64> = (0..1000u64).map(|i| ((i * 7919 % 13) << 32) | i).collect();
        let mut expected = keys.clone();
        expected.sort_by_key(|k| k >> 32);
        radix_sort_high32(&mut keys);
        assert_eq!(keys, expected);
    }
}
