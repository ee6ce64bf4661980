//! A merge whose result does not validate is refused, and nothing moves.

use scriptorium_testkit::tree;
use scriptorium_transaction::sync::conflicts;
use scriptorium_transaction::{Code, Edit};

use crate::common::{cited, git, Net};

#[test]
fn a_merge_that_breaks_a_link_is_refused_and_changes_nothing() {
    let net = Net::new(2);
    // Machine 0 drops block ^b1; machine 1 links to it from a new file.
    let without = format!("# shared\n{}", cited(2, "shared", "m0", "Other."));
    net.write(0, vec![], vec![Edit::Replace { path: "topics/shared.md".into(), content: without }]);
    net.sync(0);
    let link = format!("# link\n{}", cited(5, "shared", "m0", "See [the start](shared.md#^b1)."));
    net.write(1, vec![], vec![Edit::Create { path: "topics/link.md".into(), content: link }]);
    let root = net.root(1);
    let files = tree(&root);
    let head = git(&root, &["rev-parse", "HEAD"]);
    let remote = net.remote_main();
    let err = net.try_sync(1).unwrap_err();
    assert_eq!(err.code, Code::ValidationFailed, "{err}");
    assert_eq!(tree(&root), files, "the workspace's files");
    assert_eq!(git(&root, &["rev-parse", "HEAD"]), head, "the head");
    assert_eq!(net.remote_main(), remote, "the remote's branch");
    assert_eq!(conflicts::list(&root).unwrap(), vec![]);
    assert_eq!(git(&root, &["status", "--porcelain", "--", "topics", "sources"]), "");
    git(&root, &["fsck", "--strict", "--no-progress"]);
}
