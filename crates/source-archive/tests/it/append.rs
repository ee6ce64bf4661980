//! Batch append against a real workspace: refusal writes nothing, a replay
//! changes no byte.

use std::path::Path;

use scriptorium_source_archive::{append, input, Code, SourceRecord};

use crate::{data, snapshot};

fn rec(provider: &str, thread: &str, message: &str) -> SourceRecord {
    let j = serde_json::json!({"provider": provider, "thread": thread, "message": message, "role": "user",
        "timestamp": "2026-08-09T10:11:12Z", "content": "hello", "speaker_id": "1", "speaker_display": "Ada"});
    input::parse_record(&j.to_string()).unwrap()
}

fn seeded() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let input = std::fs::read(data("append-input.jsonl")).unwrap();
    append::append(ws.path(), &input::read_records(&input[..]).unwrap()).unwrap();
    append::append(ws.path(), &[rec("Straße", "Thread", "m")]).unwrap();
    ws
}

fn refused(root: &Path, batch: &[SourceRecord], kind: Code) {
    let before = snapshot(root);
    let err = append::append(root, batch).unwrap_err();
    assert_eq!(err.code(), kind, "{err}");
    assert_eq!(snapshot(root), before, "a refused batch changed bytes: {err}");
}

#[test]
fn collisions_refuse_the_whole_batch() {
    let ws = seeded();
    let root = ws.path();
    // Within the batch: the valid first record is not written either.
    refused(root, &[rec("chat", "new", "1"), rec("x", "a", "1"), rec("X", "b", "1")], Code::Conflict);
    refused(
        root,
        &[rec("chat", "new", "1"), rec("p", "Thread", "1"), rec("p", "thread", "1")],
        Code::Conflict,
    );
    // NFC: a decomposed é against a composed one.
    refused(root, &[rec("caf\u{e9}", "t", "1"), rec("cafe\u{301}", "t", "1")], Code::Conflict);
    // Against disk: provider directories and _v2 thread files.
    refused(root, &[rec("chat", "new", "1"), rec("CHAT", "t", "1")], Code::Conflict);
    refused(root, &[rec("STRASSE", "t", "1")], Code::Conflict);
    refused(root, &[rec("chat", "new", "1"), rec("chat", "TEAM-1", "1")], Code::Conflict);
    refused(root, &[rec("Straße", "thread", "1")], Code::Conflict);
    // The same names in the same case are fine.
    let r = append::append(root, &[rec("Straße", "Thread", "m2"), rec("chat", "team-1", "m7")]).unwrap();
    assert_eq!(r.appended, 2);
    assert_eq!(r.files, ["sources/Stra%C3%9Fe/_v2/Thread.md", "sources/chat/_v2/team-1.md"]);
}

#[test]
fn a_damaged_archive_is_never_appended_to() {
    let ws = seeded();
    let root = ws.path();
    let path = root.join("sources/chat/_v2/team-1.md");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.truncate(bytes.len() - 1);
    std::fs::write(&path, &bytes).unwrap();
    let before = snapshot(root);
    let err = append::append(root, &[rec("other", "t", "1"), rec("chat", "team-1", "new")]).unwrap_err();
    assert_eq!(err.code(), Code::ValidationFailed);
    assert_eq!(err.path().unwrap(), Path::new("sources/chat/_v2/team-1.md"));
    assert!(err.offset().is_some() && err.line().is_some());
    assert_eq!(snapshot(root), before);
}

#[test]
fn a_replayed_batch_changes_no_byte() {
    let ws = seeded();
    let root = ws.path();
    let input = std::fs::read(data("append-input.jsonl")).unwrap();
    let records = input::read_records(&input[..]).unwrap();
    let before = snapshot(root);
    let r = append::append(root, &records).unwrap();
    assert_eq!((r.appended, r.duplicates, r.files.len()), (0, 6, 0));
    assert_eq!(snapshot(root), before);
    // Within one batch the first occurrence wins.
    let mut twice = rec("chat", "team-1", "m9");
    let r = append::append(root, &[twice.clone(), rec("chat", "team-1", "m9")]).unwrap();
    assert_eq!((r.appended, r.duplicates), (1, 1));
    twice = rec("chat", "team-1", "m9");
    assert_eq!(append::append(root, &[twice]).unwrap().duplicates, 1);
}

#[cfg(unix)]
#[test]
fn never_writes_through_a_symbolic_link() {
    let ws = seeded();
    let outside = tempfile::tempdir().unwrap();
    let root = ws.path();
    std::os::unix::fs::symlink(outside.path(), root.join("sources/evil")).unwrap();
    refused(root, &[rec("evil", "t", "1")], Code::InvalidArgument);
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    std::fs::create_dir_all(root.join("sources/p/_v2")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("t.md"), root.join("sources/p/_v2/t.md")).unwrap();
    refused(root, &[rec("p", "t", "1")], Code::InvalidArgument);
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}
