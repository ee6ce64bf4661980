//! Random interleavings of writes and syncs on three machines: once
//! everyone has synced twice, they converge and nothing written is lost.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use scriptorium_transaction::sync::conflicts;

use crate::common::{add_block, append, assert_converged, block_text, record, source_ids, Net};

const MACHINES: usize = 3;

#[derive(Debug, Clone)]
enum Op {
    /// Machine k archives a record (in the shared thread or its own).
    Record(usize, bool),
    /// Machine k writes a block (to the shared file or its own).
    Block(usize, bool),
    /// Machine k syncs.
    Sync(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..MACHINES, any::<bool>()).prop_map(|(k, s)| Op::Record(k, s)),
        (0..MACHINES, any::<bool>()).prop_map(|(k, s)| Op::Block(k, s)),
        (0..MACHINES).prop_map(Op::Sync),
    ]
}

fn run(ops: &[Op]) {
    let net = Net::new(MACHINES);
    let mut ids = BTreeSet::from(["chat/shared/m0".to_owned()]);
    let mut blocks: BTreeMap<u32, String> = BTreeMap::from([(1, "Start.".to_owned())]);
    for (step, op) in ops.iter().enumerate() {
        let n = 100 + step as u32;
        match *op {
            Op::Record(k, shared) => {
                let thread = if shared { "shared".to_owned() } else { format!("own{k}") };
                net.write(k, vec![record(&thread, &format!("r{n}"), &format!("record {n}"))], vec![]);
                ids.insert(format!("chat/{thread}/r{n}"));
            }
            Op::Block(k, shared) => {
                let thread = format!("own{k}");
                let message = format!("b{n}");
                let text = format!("Block {n} by {k}.");
                let name = if shared { "shared".to_owned() } else { format!("own{k}") };
                // Both layouts: definitions at the end of the file, or
                // right after an appended block.
                let exists = net.root(k).join(format!("topics/{name}.md")).exists();
                let edit = if exists && n.is_multiple_of(2) {
                    append(&name, n, &thread, &message, &text)
                } else {
                    add_block(&net.root(k), &name, n, &thread, &message, &text)
                };
                net.write(k, vec![record(&thread, &message, "cited")], vec![edit]);
                ids.insert(format!("chat/{thread}/{message}"));
                blocks.insert(n, text);
            }
            Op::Sync(k) => {
                net.sync(k);
            }
        }
    }
    for _ in 0..2 {
        for k in 0..MACHINES {
            net.sync(k);
        }
    }
    let files = assert_converged(&net, MACHINES);
    let open: Vec<_> = (0..MACHINES).flat_map(|k| conflicts::list(&net.root(k)).unwrap()).collect();
    for (n, text) in &blocks {
        let present = block_text(&files, *n).as_deref() == Some(text.as_str());
        let listed = open.iter().any(|c| c.theirs.contains(text.as_str()) || c.ours.contains(text.as_str()));
        assert!(present || listed, "block ^b{n} ({text}) is lost: {ops:?}");
    }
    for k in 0..MACHINES {
        let have = source_ids(&net.root(k));
        assert_eq!(have.keys().cloned().collect::<BTreeSet<_>>(), ids, "machine {k}: {ops:?}");
        assert!(have.values().all(|c| *c == 1), "machine {k}: a record twice: {ops:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_interleaving_converges_without_loss(ops in proptest::collection::vec(op(), 1..=10)) {
        run(&ops);
    }
}
