//! Conflicts a merge finds, listed on the machine that merged, closed with
//! ours, theirs or both, and synced away.

use scriptorium_source_archive::archive::Archive;
use scriptorium_testkit::tree;
use scriptorium_transaction::history::tamper;
use scriptorium_transaction::sync::conflicts::{self, Kind};
use scriptorium_transaction::sync::resolve::{resolve, Take};
use scriptorium_transaction::Code;

use crate::common::{append, assert_converged, block_text, record, revise, Net, WAIT};

fn shared_text(net: &Net, k: usize) -> String {
    String::from_utf8(std::fs::read(net.root(k).join("topics/shared.md")).unwrap()).unwrap()
}

#[test]
fn a_block_changed_differently_is_a_conflict_closed_by_ours_theirs_or_both() {
    let net = Net::new(2);
    net.write(
        0,
        vec![],
        vec![append("shared", 2, "shared", "m0", "B2."), append("shared", 3, "shared", "m0", "B3.")],
    );
    net.sync(0);
    net.sync(1);
    net.write(
        0,
        vec![],
        vec![
            revise("shared", "Start.", "B1 by zero."),
            revise("shared", "B2.", "B2 by zero."),
            revise("shared", "B3.", "B3 by zero."),
        ],
    );
    net.write(
        1,
        vec![],
        vec![
            revise("shared", "Start.", "B1 by one."),
            revise("shared", "B2.", "B2 by one."),
            revise("shared", "B3.", "B3 by one."),
        ],
    );
    assert_eq!(net.sync(0).outcome, "pushed");
    let merged = net.sync(1);
    assert_eq!(merged.outcome, "merged");
    assert_eq!(merged.conflicts, ["b1", "b2", "b3"]);
    assert!(merged.pushed);
    let open = conflicts::list(&net.root(1)).unwrap();
    assert_eq!(
        open.iter().map(|c| (c.kind, c.id.as_str())).collect::<Vec<_>>(),
        [(Kind::Block, "b1"), (Kind::Block, "b2"), (Kind::Block, "b3")]
    );
    for (c, n) in open.iter().zip(1..) {
        assert!(
            c.ours.contains(&format!("B{n} by one.")) && c.theirs.contains(&format!("B{n} by zero.")),
            "{c:?}"
        );
    }
    assert_eq!(conflicts::list(&net.root(0)).unwrap(), vec![], "the conflicts are the merging machine's");
    // The merge kept this machine's versions.
    let files = tree(&net.root(1));
    assert_eq!(block_text(&files, 2).as_deref(), Some("B2 by one."));

    let root = net.root(1);
    let r = resolve(&root, "b1", Take::Ours, WAIT).unwrap();
    assert!(r.changed.is_empty(), "{r:?}");
    let r = resolve(&root, "topics/shared.md#^b2", Take::Theirs, WAIT).unwrap();
    assert_eq!(r.changed, ["topics/shared.md"]);
    resolve(&root, "b3", Take::Both, WAIT).unwrap();
    assert_eq!(conflicts::list(&root).unwrap(), vec![]);
    let err = resolve(&root, "b1", Take::Ours, WAIT).unwrap_err();
    assert_eq!(err.code, Code::NotFound, "{err}");
    let files = tree(&root);
    assert_eq!(block_text(&files, 1).as_deref(), Some("B1 by one."));
    assert_eq!(block_text(&files, 2).as_deref(), Some("B2 by zero."));
    assert_eq!(block_text(&files, 3).as_deref(), Some("B3 by one."));
    let text = shared_text(&net, 1);
    let ours_at = text.find("B3 by one.").unwrap();
    let theirs_at = text.find("B3 by zero.").expect("both keeps theirs as a new block");
    assert!(ours_at < theirs_at, "{text}");
    assert!(!text.contains("B1 by zero.") && !text.contains("B2 by one."), "{text}");

    net.sync(1);
    net.sync(0);
    let all = assert_converged(&net, 2);
    assert_eq!(all, files);
    assert_eq!(conflicts::list(&net.root(0)).unwrap(), vec![]);
    assert_eq!(conflicts::list(&net.root(1)).unwrap(), vec![]);
}

fn content_of(net: &Net, k: usize, id: &str) -> Vec<String> {
    let archive = Archive::scan(&net.root(k)).unwrap();
    archive.v2_records().filter(|r| r.id().text() == id).map(|r| r.content().to_owned()).collect()
}

#[test]
fn one_source_id_with_two_contents_is_a_record_conflict_closed_by_theirs() {
    let net = Net::new(2);
    net.write(0, vec![record("shared", "m9", "alpha")], vec![]);
    net.write(1, vec![record("shared", "m9", "beta")], vec![]);
    net.sync(0);
    let merged = net.sync(1);
    assert_eq!(merged.conflicts, ["chat/shared/m9"]);
    let open = conflicts::list(&net.root(1)).unwrap();
    assert_eq!(open.len(), 1);
    assert_eq!(open[0].kind, Kind::Record);
    assert_eq!(open[0].kind.code(), "ARCHIVE_CONFLICT");
    assert_eq!(open[0].source_id.as_deref(), Some("chat/shared/m9"));
    assert!(open[0].theirs.contains("alpha") && open[0].ours.contains("beta"), "{open:?}");
    assert_eq!(content_of(&net, 1, "chat/shared/m9"), ["beta"], "the merge kept ours");

    let root = net.root(1);
    let err = resolve(&root, "chat/shared/m9", Take::Both, WAIT).unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument, "{err}");
    resolve(&root, "chat/shared/m9", Take::Theirs, WAIT).unwrap();
    assert_eq!(content_of(&net, 1, "chat/shared/m9"), ["alpha"]);
    assert_eq!(conflicts::list(&root).unwrap(), vec![]);
    assert_eq!(tamper::verify(&root).unwrap(), vec![], "a resolution may change a frame");

    net.sync(1);
    net.sync(0);
    assert_converged(&net, 2);
    assert_eq!(content_of(&net, 0, "chat/shared/m9"), ["alpha"]);
}
