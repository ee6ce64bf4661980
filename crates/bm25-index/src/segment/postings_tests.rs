//! Postings survive the round trip through blocks (full, short, one,
//! many), a cursor's seeks agree with a linear walk, block maxima bound
//! every posting of their block, and lengths keep their exact values in
//! every width.

use proptest::prelude::*;

use super::postings::{get_vint, put_vint};
use super::{Lengths, PostingCursor, Segment, BLOCK};
use crate::segment::{build, Document, Kind, Stamp, Unit};
use crate::tokenize::TokenizerConfig;

/// A segment where document `d` holds `tf` times the word `zeta` for each
/// `(d, tf)` of `list` (documents below `n`), and a filler word otherwise.
fn segment_with(list: &[(u32, u32)], n: u32, filler: usize) -> Segment {
    let mut tfs = vec![0u32; n as usize];
    for &(d, tf) in list {
        tfs[d as usize] = tf;
    }
    let docs = (0..n)
        .map(|d| {
            let mut words = vec!["zeta"; tfs[d as usize] as usize];
            words.extend(std::iter::repeat_n("filler", 1 + (d as usize * 7 + filler) % 5));
            Document {
                anchor: format!("b{d:06}"),
                key: String::new(),
                day: None,
                pending: false,
                speakers: Vec::new(),
                text: words.join(" "),
                payload: String::new(),
                span: None,
                time: None,
                aliases: String::new(),
            }
        })
        .collect();
    let unit = Unit {
        kind: Kind::Topic,
        path: "topics/t.md".into(),
        stamp: Stamp::default(),
        deps: Vec::new(),
        docs,
    };
    let config = TokenizerConfig { stem: false, stop_words: false };
    Segment::open_vec(build(vec![unit], config, None), config).unwrap()
}

fn list_strategy() -> impl Strategy<Value = (Vec<(u32, u32)>, u32)> {
    (1u32..700, 0.0f64..1.0).prop_flat_map(|(n, density)| {
        let picks = prop::collection::vec((0.0f64..1.0, 1u32..40), n as usize);
        picks.prop_map(move |p| {
            let list: Vec<(u32, u32)> = p
                .iter()
                .enumerate()
                .filter(|(_, (x, _))| *x < density.max(0.002))
                .map(|(d, &(_, tf))| (d as u32, if tf > 35 { tf * 9 } else { tf }))
                .collect();
            (list, n)
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn postings_round_trip_and_seek((list, n) in list_strategy(), targets in prop::collection::vec(0u32..720, 1..40)) {
        prop_assume!(!list.is_empty());
        let seg = segment_with(&list, n, targets.len());
        let p = seg.postings("zeta").unwrap().unwrap();
        prop_assert_eq!(p.df as usize, list.len());
        let mut all = Vec::new();
        p.decode_all(&mut all).unwrap();
        prop_assert_eq!(&all, &list);
        let lengths = seg.lengths().unwrap();
        // Every block's maxima bound its postings, and the term's bound all.
        for (k, block) in list.chunks(BLOCK).enumerate() {
            let (tf, dl) = p.block_maxima(k);
            prop_assert_eq!(tf, block.iter().map(|x| x.1).max().unwrap());
            prop_assert_eq!(dl, block.iter().map(|x| lengths.get(x.0)).min().unwrap());
            prop_assert!(p.max_tf >= tf && p.min_dl <= dl);
        }
        // Seeks in ascending order land where a linear walk does.
        let mut sorted = targets.clone();
        sorted.sort_unstable();
        let mut c = PostingCursor::new(p);
        for t in sorted {
            c.seek(t);
            let want = list.iter().find(|x| x.0 >= t);
            prop_assert_eq!(c.doc(), want.map_or(u32::MAX, |x| x.0));
            if let Some(&(_, tf)) = want {
                prop_assert_eq!(c.tf(), tf);
            }
        }
        let mut c = PostingCursor::new(p);
        let mut walked = Vec::new();
        while c.doc() != u32::MAX {
            walked.push((c.doc(), c.tf()));
            c.advance();
        }
        prop_assert_eq!(walked, list);
        prop_assert!(c.take_failure().is_none());
    }
}

#[test]
fn lengths_keep_every_width() {
    for max in [0u32, 255, 256, 65_535, 65_536, u32::MAX] {
        let lengths = [0, 1, max / 2, max];
        let mut b = Vec::new();
        Lengths::write(&lengths, &mut b);
        let expect = if max <= 255 {
            1
        } else if max <= 65_535 {
            2
        } else {
            4
        };
        assert_eq!(b.len(), lengths.len() * expect, "{max}");
        let read = Lengths::new(&b, lengths.len() as u32).unwrap();
        for (d, &l) in lengths.iter().enumerate() {
            assert_eq!(read.get(d as u32), l);
        }
        assert_eq!(read.get(lengths.len() as u32), 0);
    }
    assert!(Lengths::new(&[1, 2, 3], 2).is_none());
}

#[test]
fn vints_reject_what_is_not_one() {
    let mut b = Vec::new();
    for v in [0, 127, 128, 300, u32::MAX] {
        put_vint(&mut b, v);
    }
    let mut at = 0;
    for v in [0, 127, 128, 300, u32::MAX] {
        assert_eq!(get_vint(&b, &mut at), Some(v));
    }
    assert_eq!(get_vint(&b, &mut at), None);
    assert_eq!(get_vint(&[0xff; 6], &mut 0), None);
    assert_eq!(get_vint(&[0x80], &mut 0), None);
}
