//! A machine with a memory of its own joins: the union of both, nothing
//! lost.

use std::collections::BTreeSet;

use scriptorium_testkit::tree;

use crate::common::{assert_converged, block_text, create, record, source_ids, Net};

#[test]
fn a_memory_with_its_own_history_joins_and_nothing_is_lost() {
    let net = Net::new(2);
    net.write(1, vec![record("shared", "m1", "one")], vec![create("one", 2, "shared", "m1", "From one.")]);
    net.sync(1);
    // Machine 2 starts alone.
    std::fs::create_dir_all(net.root(2)).unwrap();
    net.write(
        2,
        vec![record("c", "m1", "cee"), record("shared", "c1", "cee too")],
        vec![create("cee", 40, "c", "m1", "From cee.")],
    );
    let mine = tree(&net.root(2));
    net.join(2);
    let joined = net.sync(2);
    assert_eq!(joined.outcome, "merged");
    assert!(joined.conflicts.is_empty(), "{:?}", joined.conflicts);
    for k in 0..3 {
        net.sync(k);
    }
    let files = assert_converged(&net, 3);
    for (path, bytes) in &mine {
        if path.starts_with("topics/") {
            assert_eq!(files.get(path), Some(bytes), "{path}");
        }
    }
    for (n, text) in [(1, "Start."), (2, "From one."), (40, "From cee.")] {
        assert_eq!(block_text(&files, n).as_deref(), Some(text));
    }
    let ids: BTreeSet<String> = source_ids(&net.root(0)).into_keys().collect();
    let want = ["chat/c/m1", "chat/shared/c1", "chat/shared/m0", "chat/shared/m1"];
    assert_eq!(ids, want.iter().map(|s| s.to_string()).collect());
    // Both roots are in the history.
    let roots = crate::common::git(&net.root(0), &["rev-list", "--max-parents=0", "HEAD"]);
    assert_eq!(roots.lines().count(), 2, "{roots}");
}
