//! Backfill: uncited trusted records (v2 and legacy) through the writer,
//! without archiving them again; resumable; idempotent.

use std::time::Duration;

use scriptorium_scheduler::{Code, WriteFailure, Written};
use scriptorium_testkit::*;
use scriptorium_writer::backfill::{backfill, uncited, InputWriter};
use scriptorium_writer::input::Input;
use scriptorium_writer::Offline;

/// The offline writer, failing one call.
struct FailOnce {
    call: usize,
    fail: usize,
}

impl InputWriter for FailOnce {
    fn write_input(&mut self, input: &Input<'_>) -> Result<Written, WriteFailure> {
        self.call += 1;
        if self.call == self.fail {
            return Err(WriteFailure::new(Code::ModelUnavailable, "scripted outage"));
        }
        scriptorium_writer::offline::write(input)
    }
}

/// Archives `n` trusted records of Ada's (`chat/t1/m0` …), cited by no block,
/// each a fact about her that the offline writer keeps.
fn archive_ada(root: &std::path::Path, n: usize) {
    let recs: Vec<_> = (0..n)
        .map(|i| record_by(&format!("m{i}"), Some(("7391", "Ada")), &format!("I moved to city {i}")))
        .collect();
    scriptorium_source_archive::append::append(root, &recs).unwrap();
}

#[test]
fn uncited_records_get_cited_once() {
    let dir = workspace();
    let root = dir.path();
    archive_ada(root, 7);
    // A pending record is not backfilled.
    let pending = scriptorium_source_archive::input::parse_record(
        r#"{"provider":"chat","thread":"t1","message":"p","role":"user","timestamp":"2026-03-01T10:00:00Z","content":"I am new","speaker_id":"9","speaker_display":"Eve","pending":true}"#,
    )
    .unwrap();
    scriptorium_source_archive::append::append(root, &[pending]).unwrap();
    let archived = std::fs::read(root.join("sources/chat/_v2/t1.md")).unwrap();
    assert_eq!(uncited(root).unwrap().len(), 7);

    let mut writer = FailOnce { call: 0, fail: 2 };
    let f = backfill(root, &mut writer, 3, Duration::from_secs(5), &mut |_, _| {}).unwrap_err();
    assert!(f.retryable);
    assert_eq!(uncited(root).unwrap().len(), 4, "the first batch stands");

    let mut seen = Vec::new();
    let done =
        backfill(root, &mut Offline::default(), 3, Duration::from_secs(5), &mut |d, t| seen.push((d, t)))
            .unwrap();
    assert_eq!((done.batches, done.records), (2, 4));
    assert_eq!(seen, [(3, 4), (4, 4)]);
    assert_eq!(done.changed, [ada_file()]);
    assert_eq!(
        std::fs::read(root.join("sources/chat/_v2/t1.md")).unwrap(),
        archived,
        "nothing archived again"
    );
    assert!(uncited(root).unwrap().is_empty());
    let again = backfill(root, &mut Offline::default(), 3, Duration::from_secs(5), &mut |_, _| {}).unwrap();
    assert_eq!((again.batches, again.records, again.changed.len()), (0, 0, 0));
}

#[test]
fn legacy_records_are_cited_where_they_are() {
    let dir = workspace();
    let root = dir.path();
    std::fs::create_dir_all(root.join("sources/old")).unwrap();
    std::fs::write(
        root.join("sources/old/chat.md"),
        "<a id=\"source-dc9fdb8c\"></a>\n<!-- source:old/chat/1 -->\n[2024-03-15T10:00:00Z] user: [Ada (7)] We decided on maps\n\n[2024-03-15T10:01:00Z] tool: ignored\n",
    )
    .unwrap();
    let turns = uncited(root).unwrap();
    assert_eq!(turns.len(), 1, "only the record with a source id and a speaking role");
    assert_eq!(turns[0].speaker, None, "a legacy prefix is never an identity");
    let done = backfill(root, &mut Offline::default(), 50, Duration::from_secs(5), &mut |_, _| {}).unwrap();
    assert_eq!(done.changed, ["topics/threads/old-chat.md"]);
    let text = std::fs::read_to_string(root.join("topics/threads/old-chat.md")).unwrap();
    assert!(text.contains("user said (not verbatim): (Ada (7)) We decided on maps[^"), "{text}");
    assert!(text.contains("(../../sources/old/chat.md#source-"), "{text}");
    assert!(!root.join("sources/old/_v2").exists());
    assert!(uncited(root).unwrap().is_empty(), "{text}");
}

/// Refuses (for good) any input holding source `chat/t1/m3`.
struct RefuseM3;

impl InputWriter for RefuseM3 {
    fn write_input(&mut self, input: &Input<'_>) -> Result<Written, WriteFailure> {
        if input.turns.iter().any(|t| t.source == "chat/t1/m3") {
            return Err(WriteFailure::new(Code::ValidationFailed, "cannot cite m3"));
        }
        scriptorium_writer::offline::write(input)
    }
}

#[test]
fn a_record_refused_alone_does_not_stall_the_rest() {
    let dir = workspace();
    let root = dir.path();
    archive_ada(root, 5);
    let done = backfill(root, &mut RefuseM3, 50, Duration::from_secs(5), &mut |_, _| {}).unwrap();
    assert_eq!((done.batches, done.records, done.refused), (1, 5, 1));
    let left: Vec<String> = uncited(root).unwrap().into_iter().map(|t| t.source).collect();
    assert_eq!(left, ["chat/t1/m3"]);
}

#[test]
fn legacy_records_are_taken_only_where_they_can_be_cited() {
    let dir = workspace();
    let root = dir.path();
    std::fs::create_dir_all(root.join("sources/old")).unwrap();
    // No anchor line (the id's anchor is implied); a wrong anchor; a path with a space.
    std::fs::write(
        root.join("sources/old/a.md"),
        "<!-- source:old/a/1 -->\n[2024-03-15T10:00:00Z] user: We decided on no anchor\n",
    )
    .unwrap();
    std::fs::write(root.join("sources/old/b.md"), "<a id=\"source-00000000\"></a>\n<!-- source:old/b/1 -->\n[2024-03-15T10:00:00Z] user: wrong anchor\n").unwrap();
    let id = scriptorium_source_archive::SourceId::new("old", "team chat", "1").unwrap();
    std::fs::write(
        root.join("sources/old/team chat.md"),
        format!(
            "<a id=\"{}\"></a>\n<!-- source:{} -->\n[2024-03-15T10:00:00Z] user: spaced path\n",
            id.anchor(),
            id.text()
        ),
    )
    .unwrap();
    // The record without an anchor line is read at its id's anchor, and is
    // citable there; the other two are not taken.
    let left: Vec<String> = uncited(root).unwrap().into_iter().map(|t| t.source).collect();
    assert_eq!(left, ["old/a/1"]);
    let done = backfill(root, &mut Offline::default(), 50, Duration::from_secs(5), &mut |_, _| {}).unwrap();
    assert_eq!((done.records, done.refused), (1, 0));
    assert!(uncited(root).unwrap().is_empty());
}
