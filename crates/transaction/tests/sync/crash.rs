//! A sync that dies at any write of its merge's install: recovery leaves
//! the old workspace or the merged one, never a mix, and one merge commit
//! at most; the next sync converges.

use scriptorium_testkit::tree;
use scriptorium_transaction::disk::{Faults, Mode};
use scriptorium_transaction::sync;
use scriptorium_transaction::Committer;

use crate::common::{add_block, assert_converged, git, options, record, Net, WAIT};

/// The merge commits of `root`'s head whose second parent is `theirs`.
fn merges_of(root: &std::path::Path, theirs: &str) -> Vec<String> {
    git(root, &["rev-list", "--merges", "--parents", "HEAD"])
        .lines()
        .filter(|l| l.split(' ').nth(2) == Some(theirs))
        .map(|l| l.split(' ').next().unwrap().to_owned())
        .collect()
}

#[test]
fn a_crash_anywhere_in_a_merge_leaves_the_old_or_the_merged_workspace() {
    let net = Net::new(2);
    let block = add_block(&net.root(0), "shared", 10, "shared", "m1", "Ten.");
    net.write(0, vec![record("shared", "m1", "zero")], vec![block]);
    net.sync(0);
    let block = add_block(&net.root(1), "shared", 20, "shared", "m2", "Twenty.");
    net.write(1, vec![record("shared", "m2", "one")], vec![block]);
    let root = net.root(1);
    let old_files = tree(&root);
    let old_head = git(&root, &["rev-parse", "HEAD"]).trim().to_owned();
    let theirs = net.remote_main();
    let reference = net.copy();
    let merged = reference.sync(1);
    assert_eq!(merged.outcome, "merged");
    let merged_files = tree(&reference.root(1));
    assert_ne!(merged_files, old_files);

    let mut crashed = 0;
    for i in 0.. {
        assert!(i < 400, "the sync never ran to the end");
        let copy = net.copy();
        let root = copy.root(1);
        let faults = Faults::new(Mode::CrashAfter(i));
        let result = sync::sync(&root, &options(), &faults);
        if !faults.crashed() {
            let done = result.unwrap();
            assert_eq!(tree(&root), merged_files);
            assert!(done.pushed);
            break;
        }
        crashed += 1;
        drop(Committer::open(&root, WAIT).unwrap());
        let files = tree(&root);
        let at = format!("crash after write {i}");
        assert!(files == old_files || files == merged_files, "{at}: a mix of old and merged files");
        let head = git(&root, &["rev-parse", "HEAD"]).trim().to_owned();
        let merges = merges_of(&root, &theirs);
        if head == old_head {
            assert_eq!(files, old_files, "{at}: the old head with new files");
            assert!(merges.is_empty(), "{at}");
        } else {
            assert_eq!(files, merged_files, "{at}");
            assert_eq!(merges, std::slice::from_ref(&head), "{at}: the head is the one merge commit");
            let parents = git(&root, &["rev-list", "--parents", "-n1", "HEAD"]);
            assert_eq!(parents.trim(), format!("{head} {old_head} {theirs}"), "{at}");
        }
        git(&root, &["fsck", "--strict", "--no-progress"]);
        // The next sync merges the same and pushes it (a crash after the
        // install, in the views, leaves a sync that pushed already).
        let next = copy.sync(1);
        assert!(next.pushed || next.outcome == "up_to_date", "{at}: {next:?}");
        assert_eq!(tree(&root), merged_files, "{at}: the next sync merges the same");
        assert_eq!(merges_of(&root, &theirs).len(), 1, "{at}");
        assert_eq!(copy.remote_main(), git(&root, &["rev-parse", "HEAD"]).trim(), "{at}");
        if i % 8 == 0 {
            // The whole round, on a sample of the crash points (each costs
            // about a second in a debug build).
            copy.sync(0);
            assert_converged(&copy, 2);
        }
    }
    assert!(crashed > 3, "only {crashed} crash points");
}
