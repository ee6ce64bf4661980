//! Records appended on every machine, to one shared thread and to each
//! machine's own, synced in random orders: everyone ends with the same
//! archive, every record exactly once.

use std::collections::BTreeSet;

use crate::common::{assert_converged, record, source_ids, Net, Rng};

const MACHINES: usize = 3;

fn run(seed: u64) {
    let net = Net::new(MACHINES);
    let mut rng = Rng::new(seed);
    let mut written = BTreeSet::from(["chat/shared/m0".to_owned()]);
    for step in 0..12 {
        let k = rng.below(MACHINES);
        let thread = if rng.below(2) == 0 { "shared".to_owned() } else { format!("own{k}") };
        let message = format!("m{}", step + 1);
        let mut records = vec![record(&thread, &message, &format!("said on {k} at {step}"))];
        written.insert(format!("chat/{thread}/{message}"));
        if rng.below(3) == 0 {
            // A second record of the same step, to the other thread.
            let other = if thread == "shared" { format!("own{k}") } else { "shared".to_owned() };
            let message = format!("m{}x", step + 1);
            records.push(record(&other, &message, "and more"));
            written.insert(format!("chat/{other}/{message}"));
        }
        net.write(k, records, vec![]);
        if rng.below(2) == 0 {
            net.sync(rng.below(MACHINES));
        }
    }
    for _ in 0..2 {
        for k in rng.order(MACHINES) {
            let done = net.sync(k);
            assert!(done.conflicts.is_empty(), "seed {seed}: appends never conflict: {:?}", done.conflicts);
        }
    }
    assert_converged(&net, MACHINES);
    for k in 0..MACHINES {
        let ids = source_ids(&net.root(k));
        assert_eq!(ids.keys().cloned().collect::<BTreeSet<_>>(), written, "seed {seed}, machine {k}");
        assert!(ids.values().all(|n| *n == 1), "seed {seed}, machine {k}: a record twice: {ids:?}");
    }
}

#[test]
fn records_appended_anywhere_end_on_every_machine_exactly_once() {
    for seed in [1, 2] {
        run(seed);
    }
}
