//! Blocks created, appended and revised on three machines, in the same and
//! in different topic files: every one ends in the files everyone holds, or
//! in a conflict the merging machine lists.

use scriptorium_testkit::tree;
use scriptorium_transaction::sync::conflicts::{self, Kind};

use crate::common::{append, assert_converged, block_text, create, record, revise, Net};

#[test]
fn blocks_written_anywhere_end_in_the_files_or_in_a_conflict() {
    let net = Net::new(3);
    net.write(
        0,
        vec![record("own0", "a", "zero")],
        vec![append("shared", 10, "own0", "a", "Ten."), create("zero", 11, "own0", "a", "Eleven.")],
    );
    net.write(
        1,
        vec![record("own1", "a", "one")],
        vec![append("shared", 20, "own1", "a", "Twenty."), revise("shared", "Start.", "Start by one.")],
    );
    net.write(
        2,
        vec![record("own2", "a", "two")],
        vec![create("two", 30, "own2", "a", "Thirty."), revise("shared", "Start.", "Start by two.")],
    );
    net.write(2, vec![], vec![append("two", 31, "own2", "a", "Thirty-one."), append("shared", 32, "own2", "a", "Shared by two.")]);
    for _ in 0..2 {
        for k in 0..3 {
            net.sync(k);
        }
    }
    let files = assert_converged(&net, 3);
    for (n, text) in [(10, "Ten."), (11, "Eleven."), (20, "Twenty."), (30, "Thirty."), (31, "Thirty-one."), (32, "Shared by two.")]
    {
        assert_eq!(block_text(&files, n).as_deref(), Some(text), "block ^b{n}");
    }
    // Machines 1 and 2 revised ^b1 differently: the one that merged second
    // (2) kept its own and lists the other.
    assert_eq!(block_text(&files, 1).as_deref(), Some("Start by two."));
    assert_eq!(conflicts::list(&net.root(0)).unwrap(), vec![]);
    assert_eq!(conflicts::list(&net.root(1)).unwrap(), vec![]);
    let open = conflicts::list(&net.root(2)).unwrap();
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!((open[0].kind, open[0].id.as_str(), open[0].path.as_str()), (Kind::Block, "b1", "topics/shared.md"));
    assert!(open[0].ours.contains("Start by two."), "{open:?}");
    assert!(open[0].theirs.contains("Start by one."), "{open:?}");
    assert_eq!(open[0].theirs_commit.len(), 40);
    assert_eq!(tree(&net.root(2)), files);
}
