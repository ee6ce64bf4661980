//! Rearranging a file in place gives the document the plan describes,
//! whatever moves towards the start or the end, through a small buffer.

use proptest::prelude::*;

use super::*;

/// A document made of some of `old`'s runs, in order, with new bytes
/// around them: `(keep, new bytes before)` per run, then new bytes at the
/// end.
fn plan_of<'a>(runs: &[(u64, u64)], choices: &'a [(bool, Vec<u8>)], tail: &'a [u8]) -> (Vec<Place<'a>>, u64) {
    let mut plan = Vec::new();
    let mut at = 0;
    for ((from, len), (keep, before)) in runs.iter().zip(choices) {
        plan.push(Place { at, what: Source::Bytes(before) });
        at += before.len() as u64;
        if *keep {
            plan.push(Place { at, what: Source::Old(*from, *len) });
            at += len;
        }
    }
    plan.push(Place { at, what: Source::Bytes(tail) });
    (plan, at + tail.len() as u64)
}

fn expected(old: &[u8], plan: &[Place<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in plan {
        match p.what {
            Source::Bytes(b) => out.extend_from_slice(b),
            Source::Old(at, len) => out.extend_from_slice(&old[at as usize..(at + len) as usize]),
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn rearranging_in_place_gives_the_document_planned(
        chunks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..300), 1..12),
        choices in prop::collection::vec((any::<bool>(), prop::collection::vec(any::<u8>(), 0..200)), 12),
        tail in prop::collection::vec(any::<u8>(), 0..100),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("doc");
        let old: Vec<u8> = chunks.concat();
        std::fs::write(&path, &old).unwrap();
        let mut runs = Vec::new();
        let mut at = 0;
        for c in &chunks {
            runs.push((at, c.len() as u64));
            at += c.len() as u64;
        }
        let (plan, len) = plan_of(&runs, &choices, &tail);
        let faults = Faults::default();
        Disk::new(&faults).rearrange(&path, &plan, len, false).unwrap();
        prop_assert_eq!(std::fs::read(&path).unwrap(), expected(&old, &plan));
    }
}

#[test]
fn runs_out_of_order_are_assembled_and_runs_past_the_end_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("doc");
    std::fs::write(&path, b"0123456789").unwrap();
    let faults = Faults::default();
    let disk = Disk::new(&faults);
    let swapped = [
        Place { at: 0, what: Source::Old(5, 5) },
        Place { at: 5, what: Source::Bytes(b"-") },
        Place { at: 6, what: Source::Old(0, 5) },
    ];
    disk.rearrange(&path, &swapped, 11, false).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"56789-01234");
    let past = [Place { at: 0, what: Source::Old(8, 9) }];
    let err = disk.rearrange(&path, &past, 9, false).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    assert_eq!(std::fs::read(&path).unwrap(), b"56789-01234", "nothing written");
}
