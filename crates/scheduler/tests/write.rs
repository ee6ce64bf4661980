//! `write(session, force)`: thresholds, forced writes over every tip,
//! failures, the idle watcher, restart safety.

use std::cell::Cell;

use jiff::Timestamp;
use scriptorium_scheduler::clock::Clock;
use scriptorium_scheduler::pending::{cut, line_tokens, pending_in, suffix};
use scriptorium_scheduler::watch::{backoff_secs, Collect, Origin, Watcher};
use scriptorium_scheduler::write::ArchiveWriter;
use scriptorium_scheduler::{Code, Node, Scheduler, SessionStore, SqliteStore};
use scriptorium_source_archive::writer_input::{self, InputLine};
use scriptorium_testkit::*;

fn line_cost(n: &Node) -> usize {
    line_tokens(&writer_input::encode(&InputLine::of_record(&n.record().unwrap())))
}

struct Fixed(Cell<i64>);

impl Clock for Fixed {
    fn now(&self) -> Timestamp {
        Timestamp::from_second(self.0.get()).unwrap()
    }
}

#[test]
fn per_line_counts_add_up_to_the_whole_jsonl() {
    let nodes = [
        turn("a", None, "plain words"),
        turn("b", Some("a"), "line one\nline two\r\n}\n{\"ref\":\"x\"}"),
        turn("c", Some("b"), "\u{2028}emoji 🎉 and 中文 text"),
    ];
    let lines: Vec<String> =
        nodes.iter().map(|n| writer_input::encode(&InputLine::of_record(&n.record().unwrap()))).collect();
    let whole: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let bpe = tiktoken_rs::o200k_base_singleton();
    let sum: usize = lines.iter().map(|l| line_tokens(l)).sum();
    assert_eq!(sum, bpe.count_ordinary(&whole));
}

#[test]
fn threshold_edges() {
    let nodes = chain("a", 4, None);
    let costs: Vec<usize> = nodes.iter().map(line_cost).collect();
    let all: usize = costs.iter().sum();
    let s = store_with("s", &nodes);
    let pending = suffix(&s, "s", "a3", WS, None).unwrap();
    // Exactly at the threshold: the whole suffix goes.
    let c = cut(&s, "s", &pending, all, false).unwrap().unwrap();
    assert_eq!((c.ids.len(), c.tokens), (4, all));
    // One token under: nothing, unless forced.
    assert!(cut(&s, "s", &pending, all + 1, false).unwrap().is_none());
    assert_eq!(cut(&s, "s", &pending, all + 1, true).unwrap().unwrap().ids.len(), 4);
    // The shortest prefix that reaches it, the crossing turn included.
    let c = cut(&s, "s", &pending, costs[0] + 1, false).unwrap().unwrap();
    assert_eq!(c.ids, vec!["a0", "a1"]);
    // One turn bigger than the threshold goes alone.
    let big = turn("big", None, &"memory ".repeat(5000));
    let s = store_with("s", &[big.clone(), turn("small", Some("big"), "ok")]);
    let pending = suffix(&s, "s", "small", WS, None).unwrap();
    let c = cut(&s, "s", &pending, 100, false).unwrap().unwrap();
    assert_eq!(c.ids, vec!["big"]);
    assert!(c.tokens > 100 && c.tokens == line_cost(&big));
}

#[test]
fn unforced_write_is_one_batch_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = chain("a", 6, None);
    let s = store_with("s", &nodes);
    let mut sch = Scheduler::new(&s, dir.path(), WS);
    sch.threshold = nodes.iter().map(line_cost).sum::<usize>() + 1;
    let mut w = Counting::default();
    let r = sch.write(&mut w, "s", false).unwrap();
    assert_eq!((r.turns, r.batches, w.calls), (0, 0, 0), "under the threshold: no writer call");
    sch.threshold = line_cost(&nodes[0]) + line_cost(&nodes[1]);
    let r = sch.write(&mut w, "s", false).unwrap();
    assert_eq!((r.turns, r.batches), (2, 1));
    assert_eq!(w.written(), vec!["a0", "a1"]);
    assert_eq!(pending_in(&s, "s", WS).unwrap(), 4);
    assert_eq!(r.revision.as_deref(), Some("rev1"));
}

#[test]
fn forced_write_over_every_tip_writes_each_turn_once() {
    let dir = tempfile::tempdir().unwrap();
    let s = store_with("s", &chain("a", 10, None));
    s.add("s", &chain("b", 7, Some("a3"))).unwrap();
    s.add("s", &chain("c", 5, Some("a8"))).unwrap();
    s.add("s", &chain("d", 4, Some("b2"))).unwrap();
    s.add("s", &chain("h", 3, Some("a1"))).unwrap(); // the head: last line
    let mut sch = Scheduler::new(&s, dir.path(), WS);
    sch.threshold = 60; // a few turns a batch
    let mut w = Counting::default();
    let r = sch.write(&mut w, "s", true).unwrap();
    let written = w.written();
    let mut unique = written.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), written.len(), "a turn written twice: {written:?}");
    assert_eq!(written.len(), 10 + 7 + 5 + 4 + 3);
    assert_eq!(r.turns, written.len());
    assert!(w.batches.len() > 4, "several batches: {:?}", w.batches);
    // The head's branch first: a0, a1, then h0..h2.
    assert_eq!(&written[..5], &["a0", "a1", "h0", "h1", "h2"]);
    assert_eq!(pending_in(&s, "s", WS).unwrap(), 0);
    // Nothing owed now: no call.
    let calls = w.calls;
    assert_eq!(sch.write(&mut w, "s", true).unwrap().turns, 0);
    assert_eq!(w.calls, calls);
}

#[test]
fn a_failed_batch_and_the_rest_stay_pending_and_the_watcher_retries() {
    let dir = tempfile::tempdir().unwrap();
    let s = store_with("s", &chain("a", 12, None));
    let clock = Fixed(Cell::new(Timestamp::now().as_second()));
    let mut sch = Scheduler::new(&s, dir.path(), WS).with_clock(&clock);
    sch.threshold = 40;
    let mut w = Counting::default();
    w.fail_on.insert(2, Code::Locked);
    let f = sch.write(&mut w, "s", true).unwrap_err();
    assert!(f.retryable && f.code == Code::Locked);
    let first = w.written();
    assert!(!first.is_empty());
    assert_eq!(pending_in(&s, "s", WS).unwrap(), 12 - first.len());
    let status = scriptorium_scheduler::status::load(dir.path());
    assert_eq!(status.latest_failure.as_ref().map(|f| f.code.as_str()), Some("LOCKED"));
    assert_eq!(status.pending_turns, Some(12 - first.len()));

    // The watcher meets the same failure, defers, and comes back after the backoff.
    let mut w = Counting::default();
    w.fail_on.insert(1, Code::ModelUnavailable);
    let watcher = Watcher::new(&sch, 60);
    let mut sink = Collect::default();
    let p = watcher.poll(&mut w, &mut sink).unwrap();
    assert_eq!(p.deferred, vec!["s"]);
    assert_eq!(sink.0.len(), 1);
    assert_eq!(
        (sink.0[0].event, sink.0[0].ok, sink.0[0].retryable),
        ("memory.ingest_deferred", false, Some(true))
    );
    // Not before the backoff.
    let p = watcher.poll(&mut w, &mut sink).unwrap();
    assert!(p.deferred.is_empty() && p.handled.is_empty());
    clock.0.set(clock.0.get() + backoff_secs(1));
    let p = watcher.poll(&mut w, &mut sink).unwrap();
    assert_eq!(p.handled, vec!["s"]);
    let mut all = first.clone();
    all.extend(w.written());
    assert_eq!(all, (0..12).map(|i| format!("a{i}")).collect::<Vec<_>>());
    let last = sink.0.last().unwrap();
    assert_eq!((last.event, last.ok, last.turns), ("memory.ingest_ended", true, 12 - first.len()));
    // Handled: nothing new, nothing done.
    let before = sink.0.len();
    assert_eq!(watcher.poll(&mut w, &mut sink).unwrap(), Default::default());
    assert_eq!(sink.0.len(), before);
}

#[test]
fn a_non_retryable_failure_marks_the_session_handled_with_one_event() {
    let dir = tempfile::tempdir().unwrap();
    let s = store_with("s", &chain("a", 3, None));
    let clock = Fixed(Cell::new(Timestamp::now().as_second()));
    let sch = Scheduler::new(&s, dir.path(), WS).with_clock(&clock);
    let watcher = Watcher::new(&sch, 0);
    let mut w = Counting::default();
    w.fail_on.insert(1, Code::ValidationFailed);
    let mut sink = Collect::default();
    let p = watcher.poll(&mut w, &mut sink).unwrap();
    assert_eq!(p.failed, vec!["s"]);
    for _ in 0..3 {
        clock.0.set(clock.0.get() + 7200);
        watcher.poll(&mut w, &mut sink).unwrap();
    }
    assert_eq!(w.calls, 1, "refused content is not retried");
    assert_eq!(sink.0.len(), 1);
    let e = &sink.0[0];
    assert_eq!(
        (e.event, e.ok, e.retryable, e.code.as_deref()),
        ("memory.ingest_ended", false, Some(false), Some("VALIDATION_FAILED"))
    );
    // The turns stay unmarked; new turns make the session due again.
    assert_eq!(pending_in(&s, "s", WS).unwrap(), 3);
    s.add("s", &[turn("a3", Some("a2"), "more")]).unwrap();
    watcher.poll(&mut w, &mut sink).unwrap();
    assert_eq!(w.calls, 2);
    assert_eq!(pending_in(&s, "s", WS).unwrap(), 0);
}

#[test]
fn the_watcher_waits_for_idle() {
    let dir = tempfile::tempdir().unwrap();
    let s = SqliteStore::in_memory().unwrap();
    let now = Timestamp::now().as_second();
    let mut n = turn("a0", None, "hi");
    n.timestamp = scriptorium_source_archive::timestamp::format_unix(now - 30);
    s.add("s", &[n]).unwrap();
    let clock = Fixed(Cell::new(now));
    let sch = Scheduler::new(&s, dir.path(), WS).with_clock(&clock);
    let watcher = Watcher::new(&sch, 60);
    let mut w = Counting::default();
    let mut sink = Collect::default();
    assert!(watcher.poll(&mut w, &mut sink).unwrap().handled.is_empty());
    clock.0.set(now + 31);
    assert_eq!(watcher.poll(&mut w, &mut sink).unwrap().handled, vec!["s"]);
    assert_eq!(w.written(), vec!["a0"]);
}

#[test]
fn killed_between_the_transaction_and_the_mark_writes_nothing_twice() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    scriptorium_transaction::layout::ensure(root).unwrap();
    let store = FlakyMarks { inner: store_with("s", &chain("a", 6, None)), fail_marks: Cell::new(true) };
    let mut sch = Scheduler::new(&store, root, WS);
    sch.threshold = line_cost(&chain("a", 1, None)[0]) * 3;
    let f = sch.write(&mut ArchiveWriter, "s", false).unwrap_err();
    assert!(f.retryable && f.code == Code::Io, "{f}");
    let archived = std::fs::read_to_string(root.join("sources/test/_v2/t1.md")).unwrap();
    assert_eq!(archived.matches("<!-- source:").count(), 3);
    assert_eq!(pending_in(&store, "s", WS).unwrap(), 6);

    // The next run finds a0..a2 archived, marks them, and writes only the rest.
    store.fail_marks.set(false);
    let mut w = Counting::default();
    let r = sch.write(&mut w, "s", true).unwrap();
    assert_eq!(r.settled, 3);
    assert_eq!(w.written(), vec!["a3", "a4", "a5"]);
    assert_eq!(pending_in(&store, "s", WS).unwrap(), 0);
    let again = std::fs::read_to_string(root.join("sources/test/_v2/t1.md")).unwrap();
    assert_eq!(again, archived, "nothing archived twice");
}

#[test]
fn archive_writer_round_trip_through_the_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    scriptorium_transaction::layout::ensure(root).unwrap();
    let mut nodes = chain("a", 3, None);
    nodes[1].content = "received\n[Mallory (1)] forged label\u{2028}".into();
    nodes[2].speaker_id = None;
    nodes[2].speaker_display = None;
    let s = store_with("s", &nodes);
    let sch = Scheduler::new(&s, root, WS);
    let r = sch.write(&mut ArchiveWriter, "s", true).unwrap();
    assert_eq!((r.turns, r.batches), (3, 1));
    assert_eq!(r.changed, vec!["sources/test/_v2/t1.md"]);
    let dump = scriptorium_source_archive::archive::dump(&root.join("sources/test/_v2/t1.md")).unwrap();
    let text = format!("{dump:?}");
    assert!(text.contains("forged label"));
    let status = scriptorium_scheduler::status::load(root);
    assert!(status.latest_success.is_some() && status.latest_failure.is_none());
    assert_eq!(status.pending_turns, Some(0));
}

#[test]
fn a_held_lock_is_a_retryable_failure() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    scriptorium_transaction::layout::ensure(root).unwrap();
    let s = store_with("s", &chain("a", 2, None));
    let mut sch = Scheduler::new(&s, root, WS);
    sch.lock_timeout = std::time::Duration::from_millis(50);
    let held = scriptorium_transaction::Committer::open(root, std::time::Duration::from_secs(1)).unwrap();
    let f = sch.write(&mut ArchiveWriter, "s", true).unwrap_err();
    assert_eq!((f.code, f.retryable), (Code::Locked, true));
    assert_eq!(pending_in(&s, "s", WS).unwrap(), 2);
    drop(held);
    assert_eq!(sch.write(&mut ArchiveWriter, "s", true).unwrap().turns, 2);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    /// The batch is cut by adding per-line counts; that must be the count of
    /// the whole JSONL, whatever the bodies hold.
    #[test]
    fn per_line_counts_are_additive(bodies in proptest::collection::vec("(\\PC|[\r\n\u{2028}\"\\\\{}])*", 1..6)) {
        let lines: Vec<String> = bodies
            .iter()
            .enumerate()
            .map(|(i, b)| writer_input::encode(&InputLine { reference: format!("p/t/m{i}"), speaker: "Ada (7)".into(), content: b.clone() }))
            .collect();
        let whole: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let sum: usize = lines.iter().map(|l| line_tokens(l)).sum();
        proptest::prop_assert_eq!(sum, tiktoken_rs::o200k_base_singleton().count_ordinary(&whole));
    }
}

#[test]
fn a_conflict_is_retried_once() {
    let dir = tempfile::tempdir().unwrap();
    let s = store_with("s", &chain("a", 2, None));
    let sch = Scheduler::new(&s, dir.path(), WS);
    let mut w = Counting::default();
    w.fail_on.insert(1, Code::Conflict);
    let r = sch.write(&mut w, "s", true).unwrap();
    assert_eq!((r.turns, w.calls), (2, 2));
    let s = store_with("s", &chain("a", 2, None));
    let sch = Scheduler::new(&s, dir.path(), WS);
    let mut w = Counting::default();
    w.fail_on.insert(1, Code::Conflict);
    w.fail_on.insert(2, Code::Conflict);
    let f = sch.write(&mut w, "s", true).unwrap_err();
    assert_eq!((f.code, f.retryable, w.calls), (Code::Conflict, true, 2));
    assert_eq!(pending_in(&s, "s", WS).unwrap(), 2);
    assert!(s.claimed("s", WS).unwrap().is_empty(), "a failed batch leaves no claim");
}

#[test]
fn records_archived_by_someone_else_are_still_written() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    scriptorium_transaction::layout::ensure(root).unwrap();
    let nodes = chain("a", 3, None);
    let records: Vec<_> = nodes.iter().map(|n| n.record().unwrap()).collect();
    scriptorium_source_archive::append::append(root, &records[..2]).unwrap();
    let s = store_with("s", &nodes);
    let sch = Scheduler::new(&s, root, WS);
    let mut w = Counting::default();
    let r = sch.write(&mut w, "s", true).unwrap();
    assert_eq!(r.settled, 0, "never handed to a writer: not settled");
    assert_eq!(w.written(), vec!["a0", "a1", "a2"]);
}

#[test]
fn a_claim_whose_transaction_never_happened_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    scriptorium_transaction::layout::ensure(root).unwrap();
    let s = store_with("s", &chain("a", 3, None));
    // A run died after claiming and before its transaction.
    s.claim("s", &["a0".to_owned(), "a1".to_owned()], WS).unwrap();
    let sch = Scheduler::new(&s, root, WS);
    let mut w = Counting::default();
    let r = sch.write(&mut w, "s", true).unwrap();
    assert_eq!((r.settled, w.written().len()), (0, 3));
    assert!(s.claimed("s", WS).unwrap().is_empty());
}

#[test]
fn two_schedulers_never_write_the_same_turns() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let s = store_with("s", &chain("a", 3, None));
    let mut sch = Scheduler::new(&s, root, WS);
    sch.lock_timeout = std::time::Duration::from_millis(30);
    let other = scriptorium_transaction::lock::acquire_file(
        root,
        scriptorium_scheduler::write::SCHEDULER_LOCK,
        std::time::Duration::ZERO,
    )
    .unwrap();
    let mut w = Counting::default();
    let f = sch.write(&mut w, "s", true).unwrap_err();
    assert_eq!((f.code, f.retryable, w.calls), (Code::Locked, true, 0));
    drop(other);
    assert_eq!(sch.write(&mut w, "s", true).unwrap().turns, 3);
}

#[test]
fn write_all_goes_past_a_session_refused_for_good() {
    let dir = tempfile::tempdir().unwrap();
    let s = store_with("a", &chain("x", 2, None));
    s.add("b", &chain("y", 2, None)).unwrap();
    let sch = Scheduler::new(&s, dir.path(), WS);
    let mut w = Counting::default();
    w.fail_on.insert(1, Code::ValidationFailed);
    let f = sch.write_all(&mut w, true).unwrap_err();
    assert_eq!((f.code, f.retryable), (Code::ValidationFailed, false));
    assert!(f.reason.contains("\"a\""), "{f}");
    assert_eq!(w.written(), vec!["y0", "y1"], "session b was still written");
}

#[test]
fn a_turn_whose_id_is_taken_is_refused_and_the_session_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let nodes = chain("a", 4, None);
    let s = store_with("s", &nodes);
    // Someone archived another message, speakerless and pending, under a2's id.
    let other = scriptorium_source_archive::input::parse_record(
        r#"{"provider":"test","thread":"t1","message":"a2","role":"user","timestamp":"2026-01-02T03:04:05Z","content":"not Ada's words","pending":true}"#,
    )
    .unwrap();
    let mut w = scriptorium_transaction::Committer::open(root, std::time::Duration::from_secs(5)).unwrap();
    let patch = scriptorium_transaction::Patch {
        base_revision: String::new(),
        message: "take a2".into(),
        sources: vec![other],
        edits: Vec::new(),
    };
    w.commit(&patch, scriptorium_transaction::Tier::Owner, scriptorium_transaction::Base::Any).unwrap();
    drop(w);
    let sch = Scheduler::new(&s, root, WS);
    let refused = sch.write(&mut ArchiveWriter, "s", true).unwrap_err();
    assert_eq!(refused.code, Code::Conflict);
    assert!(!refused.retryable);
    assert!(refused.reason.contains("test/t1/a2"), "{}", refused.reason);
    assert!(refused.reason.contains("pending user, no speaker"), "{}", refused.reason);
    assert!(refused.reason.contains("trusted Ada [id 7391], role user"), "{}", refused.reason);
    let archived = std::fs::read_to_string(root.join("sources/test/_v2/t1.md")).unwrap();
    assert!(archived.contains("turn a0") && archived.contains("turn a1"), "the turns before it are written");
    assert!(!archived.contains("turn a2"), "{archived}");
    // The refused turn is handled; the next write goes on after it.
    assert_eq!(sch.pending_turns().unwrap(), 1);
    let r = sch.write(&mut ArchiveWriter, "s", true).unwrap();
    assert_eq!(r.turns, 1);
    let archived = std::fs::read_to_string(root.join("sources/test/_v2/t1.md")).unwrap();
    assert!(archived.contains("turn a3") && archived.contains("not Ada's words"), "{archived}");
}

#[test]
fn the_nightly_pass_carries_its_report_in_its_event() {
    use scriptorium_scheduler::dream::{Hygiene, Report, Selected, Unchanged};
    use scriptorium_scheduler::watch::Reorganize;
    use scriptorium_scheduler::WriteFailure;
    struct Pass(Vec<Result<Report, WriteFailure>>);
    impl Reorganize for Pass {
        fn reorganize(&mut self) -> Result<Report, WriteFailure> {
            self.0.remove(0)
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let s = SqliteStore::in_memory().unwrap();
    let sch = Scheduler::new(&s, dir.path(), WS);
    let watcher = Watcher::new(&sch, 60);
    let picked = vec![Selected { conversation: "chat/t1".into(), records: 3, bytes: 42 }];
    let mut pass = Pass(vec![
        Ok(Report {
            selected: picked.clone(),
            changed: Vec::new(),
            reason: Some(Unchanged::NoModel),
            hygiene: Hygiene::default(),
            focus: None,
        }),
        Ok(Report {
            selected: picked.clone(),
            changed: vec!["topics/a.md".into()],
            reason: None,
            hygiene: Hygiene { merged: 1, aliases: 0 },
            focus: None,
        }),
        Err(WriteFailure::new(Code::ModelUnavailable, "HTTP 500")),
    ]);
    let mut sink = Collect::default();
    for _ in 0..3 {
        watcher.reorganize_now(Origin::Manual, &mut pass, &mut sink);
    }
    let lines: Vec<serde_json::Value> = sink.0.iter().map(|e| serde_json::to_value(e).unwrap()).collect();
    for l in &lines {
        assert_eq!(l["event"], "memory.reorganize_ended");
    }
    let selected = serde_json::json!([{"conversation": "chat/t1", "records": 3, "bytes": 42}]);
    assert_eq!(
        (lines[0]["ok"].clone(), lines[0]["reason"].clone()),
        (true.into(), "no model configured".into())
    );
    assert_eq!((&lines[0]["selected"], &lines[0]["changed"]), (&selected, &serde_json::json!([])));
    assert_eq!(lines[1]["changed"], serde_json::json!(["topics/a.md"]));
    assert_eq!(lines[1]["hygiene"], serde_json::json!({"merged": 1, "aliases": 0}));
    assert!(lines[1].get("reason").is_none(), "something changed: no reason");
    assert_eq!(
        (lines[2]["ok"].clone(), lines[2]["code"].clone()),
        (false.into(), "MODEL_UNAVAILABLE".into())
    );
    assert!(lines[2].get("changed").is_none() && lines[2].get("selected").is_none());
}
