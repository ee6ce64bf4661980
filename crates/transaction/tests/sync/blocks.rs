//! Blocks created, appended and revised on three machines, in the same and
//! in different topic files: every one ends in the files everyone holds, or
//! in a conflict the merging machine lists.

use scriptorium_testkit::tree;
use scriptorium_transaction::sync::conflicts::{self, Kind};

use crate::common::{add_block, append, assert_converged, block_text, record, revise, Net};

#[test]
fn blocks_written_anywhere_end_in_the_files_or_in_a_conflict() {
    let net = Net::new(3);
    let (r0, r1, r2) = (net.root(0), net.root(1), net.root(2));
    net.write(0, vec![record("own0", "a", "zero")], vec![add_block(&r0, "shared", 10, "own0", "a", "Ten.")]);
    net.write(0, vec![], vec![add_block(&r0, "zero", 11, "own0", "a", "Eleven.")]);
    net.write(
        1,
        vec![record("own1", "a", "one")],
        vec![add_block(&r1, "shared", 20, "own1", "a", "Twenty.")],
    );
    net.write(1, vec![], vec![revise("shared", "Start.", "Start by one.")]);
    net.write(2, vec![record("own2", "a", "two")], vec![add_block(&r2, "two", 30, "own2", "a", "Thirty.")]);
    net.write(2, vec![], vec![revise("shared", "Start.", "Start by two.")]);
    net.write(2, vec![], vec![add_block(&r2, "two", 31, "own2", "a", "Thirty-one.")]);
    net.write(2, vec![], vec![add_block(&r2, "shared", 32, "own2", "a", "Shared by two.")]);
    for _ in 0..2 {
        for k in 0..3 {
            net.sync(k);
        }
    }
    let files = assert_converged(&net, 3);
    for (n, text) in [
        (10, "Ten."),
        (11, "Eleven."),
        (20, "Twenty."),
        (30, "Thirty."),
        (31, "Thirty-one."),
        (32, "Shared by two."),
    ] {
        assert_eq!(block_text(&files, n).as_deref(), Some(text), "block ^b{n}");
    }
    // Machines 1 and 2 revised ^b1 differently: the one that merged second
    // (2) kept its own and lists the other.
    assert_eq!(block_text(&files, 1).as_deref(), Some("Start by two."));
    assert_eq!(conflicts::list(&net.root(0)).unwrap(), vec![]);
    assert_eq!(conflicts::list(&net.root(1)).unwrap(), vec![]);
    let open = conflicts::list(&net.root(2)).unwrap();
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(
        (open[0].kind, open[0].id.as_str(), open[0].path.as_str()),
        (Kind::Block, "b1", "topics/shared.md")
    );
    assert!(open[0].ours.contains("Start by two."), "{open:?}");
    assert!(open[0].theirs.contains("Start by one."), "{open:?}");
    assert_eq!(open[0].theirs_commit.len(), 40);
    assert_eq!(tree(&net.root(2)), files);
}

/// Blocks appended on two machines to one file, each with its footnote
/// definition right after it (how an `append` edit lays them out), merge
/// like blocks with their definitions at the end of the file: each side
/// carries the definition that ended the file into its new block's gap,
/// and the end of the file is replaced differently on both sides.
#[test]
fn blocks_appended_with_their_footnotes_after_them_merge() {
    let net = Net::new(2);
    net.write(0, vec![record("own0", "a", "zero")], vec![append("shared", 10, "own0", "a", "Ten.")]);
    net.write(1, vec![record("own1", "a", "one")], vec![append("shared", 20, "own1", "a", "Twenty.")]);
    net.sync(0);
    let merged = net.sync(1);
    assert!(merged.conflicts.is_empty(), "{:?}", merged.conflicts);
    net.sync(0);
    let files = assert_converged(&net, 2);
    assert_eq!(block_text(&files, 10).as_deref(), Some("Ten."));
    assert_eq!(block_text(&files, 20).as_deref(), Some("Twenty."));
}
