//! Reading a workspace's whole archive: v2 wins over legacy for the same id.

use scriptorium_source_archive::archive::{Archive, Found};
use scriptorium_source_archive::{append, input, SourceId};

use crate::data;

#[test]
fn v2_wins_over_legacy_and_damage_is_reported() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    let input = std::fs::read(data("append-input.jsonl")).unwrap();
    append::append(root, &input::read_records(&input[..]).unwrap()).unwrap();
    // A legacy file holding one id that v2 also has, and one it does not.
    let legacy =
        "# old\n\n<!-- source:chat/team-1/m1 -->\n[2026-08-09T10:11:12Z] user: [Mallory (1)] legacy copy\n\n\
<!-- source:chat/team-1/old -->\n[2026-08-01T00:00:00Z] user: [Ada (7391)] an old message\n";
    std::fs::write(root.join("sources/chat/team-1.md"), legacy).unwrap();
    // A damaged v2 file of another conversation.
    std::fs::create_dir_all(root.join("sources/chat/_v2")).unwrap();
    let mut bad = std::fs::read(data("team-1.md")).unwrap();
    bad.truncate(bad.len() - 3);
    std::fs::write(root.join("sources/chat/_v2/other.md"), &bad).unwrap();

    let archive = Archive::scan(root).unwrap();
    assert_eq!(archive.v2_records().count(), 6);
    let m1 = SourceId::new("chat", "team-1", "m1").unwrap();
    match archive.get(&m1) {
        Some(Found::V2(r)) => assert_eq!(r.content(), "the budget is 50k"),
        other => panic!("v2 must win: {other:?}"),
    }
    let legacy: Vec<_> = archive.legacy_records().collect();
    assert_eq!(legacy.len(), 1);
    assert_eq!(legacy[0].0, "sources/chat/team-1.md");
    let hint = legacy[0].1.hint.as_ref().unwrap();
    assert_eq!(hint.label(), "Ada (7391)");
    let old = SourceId::new("chat", "team-1", "old").unwrap();
    assert!(matches!(archive.get(&old), Some(Found::Legacy(..))));
    // The damaged file names team-1 ids inside other.md: its first frame is
    // already invalid for that file, and the problem is reported.
    assert_eq!(archive.problems().len(), 1);
    assert_eq!(archive.problems()[0].path, "sources/chat/_v2/other.md");
    assert_eq!(archive.problems()[0].diagnostic.offset, 39);
}
