//! The watcher tells of changes of the self: `memory.self_changed` after
//! a write (or a reorganize pass) whose transaction changed
//! `topics/self/persona.md` or `topics/self/identity.md`, and not
//! otherwise.

use std::cell::Cell;

use jiff::Timestamp;
use scriptorium_scheduler::clock::Clock;
use scriptorium_scheduler::watch::{Collect, Event, Origin, Reorganize, Watcher};
use scriptorium_scheduler::write::{Batch, BatchWriter, Written};
use scriptorium_scheduler::{Scheduler, SessionStore, WriteFailure};
use scriptorium_testkit::*;
use scriptorium_transaction::{Base, Committer, Edit, Patch, Tier};

struct Fixed(Cell<i64>);

impl Clock for Fixed {
    fn now(&self) -> Timestamp {
        Timestamp::from_second(self.0.get()).unwrap()
    }
}

/// Archives each batch and appends a block citing its first record to
/// `path`, in one real transaction.
struct Appender {
    path: String,
}

impl BatchWriter for Appender {
    fn name(&self) -> &str {
        "appender"
    }

    fn write_batch(&mut self, batch: &Batch<'_>) -> Result<Written, WriteFailure> {
        let first = batch.records[0].id();
        let n = first.message().bytes().map(u32::from).sum::<u32>();
        let depth = self.path.matches('/').count() - 1;
        let up = "../".repeat(depth + 1);
        let text = format!(
            "\nRemembered.[^e-{n:010x}] ^w{n}\n\n[^e-{n:010x}]: Time: `2026-08-09T10:11:12Z`; Sources: [{}]({up}{}#{})\n",
            first.text(),
            first.v2_path(),
            first.anchor()
        );
        let exists = batch.root.join(&self.path).exists();
        let edit = if exists {
            Edit::Append { path: self.path.clone(), content: text }
        } else {
            Edit::Create { path: self.path.clone(), content: format!("# Self\n{text}") }
        };
        let patch = Patch {
            base_revision: String::new(),
            message: "test".into(),
            sources: batch.records.to_vec(),
            edits: vec![edit],
        };
        let mut w = Committer::open(batch.root, batch.lock_timeout)?;
        let done = w.commit_as(&patch, Tier::Owner, Base::Any, &batch.provenance("appender"))?;
        Ok(Written { revision: done.revision, changed: done.changed, limits: Vec::new() })
    }
}

fn events(sink: &Collect) -> Vec<&'static str> {
    sink.0.iter().map(|e: &Event| e.event).collect()
}

#[test]
fn a_write_that_changes_the_self_is_told_and_no_other() {
    let dir = workspace();
    let root = dir.path();
    let s = store_with("s1", &chain("a", 2, None));
    let ws = scriptorium_transaction::layout::identity(root).unwrap().unwrap().id;
    let clock = Fixed(Cell::new(Timestamp::now().as_second() + 3600));
    let sch = Scheduler::new(&s, root, &ws).with_clock(&clock);
    let watcher = Watcher::new(&sch, 60);
    let mut sink = Collect::default();
    // A write elsewhere: no self event.
    let mut w = Appender { path: "topics/notes.md".into() };
    assert_eq!(watcher.poll(&mut w, &mut sink).unwrap().handled, ["s1"]);
    assert_eq!(events(&sink), ["memory.ingest_ended"]);
    // A write to the persona: the event follows the ingest's, naming it.
    s.add("s1", &chain("b", 1, Some("a1"))).unwrap();
    let mut w = Appender { path: "topics/self/persona.md".into() };
    watcher.poll(&mut w, &mut sink).unwrap();
    assert_eq!(events(&sink), ["memory.ingest_ended", "memory.ingest_ended", "memory.self_changed"]);
    let told = &sink.0[2];
    assert_eq!(told.session.as_deref(), Some("s1"));
    assert_eq!(told.changed.as_deref(), Some(&["topics/self/persona.md".to_owned()][..]));
    assert_eq!(told.revision, sink.0[1].revision);
    assert_eq!(told.revision.as_deref(), Some(revision(root).as_str()));
    let line = serde_json::to_value(told).unwrap();
    assert_eq!(line["event"], "memory.self_changed");
    assert_eq!(line["ok"], true);
    // With the notice off, the same change is not told.
    s.add("s1", &chain("c", 1, Some("b0"))).unwrap();
    let watcher = Watcher::new(&sch, 60).with_self_notice(false);
    let mut quiet = Collect::default();
    watcher.poll(&mut w, &mut quiet).unwrap();
    assert_eq!(events(&quiet), ["memory.ingest_ended"]);
}

struct Pass(Vec<String>);

impl Reorganize for Pass {
    fn reorganize(&mut self) -> Result<scriptorium_scheduler::dream::Report, WriteFailure> {
        Ok(scriptorium_scheduler::dream::Report { changed: self.0.clone(), ..Default::default() })
    }
}

#[test]
fn a_reorganize_pass_that_changes_the_self_is_told() {
    let dir = workspace();
    let s = store_with("s1", &[]);
    let sch = Scheduler::new(&s, dir.path(), WS);
    let watcher = Watcher::new(&sch, 60);
    let mut sink = Collect::default();
    watcher.reorganize_now(Origin::Manual, &mut Pass(vec!["topics/a.md".into()]), &mut sink);
    assert_eq!(events(&sink), ["memory.reorganize_ended"]);
    let changed = vec!["topics/a.md".to_owned(), "topics/self/identity.md".to_owned()];
    watcher.reorganize_now(Origin::Manual, &mut Pass(changed), &mut sink);
    assert_eq!(events(&sink), ["memory.reorganize_ended", "memory.reorganize_ended", "memory.self_changed"]);
    assert_eq!(sink.0[2].changed.as_deref(), Some(&["topics/self/identity.md".to_owned()][..]));
    assert_eq!(sink.0[2].revision, None);
}

#[test]
fn the_dream_pass_runs_once_on_idle_after_writes_brought_something_new() {
    let dir = workspace();
    let root = dir.path();
    let s = store_with("s1", &chain("a", 2, None));
    let ws = scriptorium_transaction::layout::identity(root).unwrap().unwrap().id;
    let clock = Fixed(Cell::new(Timestamp::now().as_second() + 3600));
    let sch = Scheduler::new(&s, root, &ws).with_clock(&clock);
    let watcher = Watcher::new(&sch, 60);
    let mut sink = Collect::default();
    let mut pass = Pass(Vec::new());
    assert!(!watcher.idle_if_due(&mut pass, &mut sink).unwrap(), "nothing written yet");
    let mut w = Appender { path: "topics/notes.md".into() };
    watcher.poll(&mut w, &mut sink).unwrap();
    // A session the watcher has not handled yet holds the pass back.
    s.add("s2", &chain("c", 1, None)).unwrap();
    assert!(!watcher.idle_if_due(&mut pass, &mut sink).unwrap());
    assert_eq!(events(&sink), ["memory.ingest_ended"]);
    watcher.poll(&mut w, &mut sink).unwrap();
    assert!(watcher.idle_if_due(&mut pass, &mut sink).unwrap());
    assert_eq!(events(&sink), ["memory.ingest_ended", "memory.ingest_ended", "memory.reorganize_ended"]);
    assert_eq!(sink.0[2].origin, Some(Origin::Idle));
    assert_eq!(serde_json::to_value(&sink.0[2]).unwrap()["origin"], "idle");
    // Once: nothing new since, no second pass; a poll that writes nothing
    // owes none either.
    watcher.poll(&mut w, &mut sink).unwrap();
    assert!(!watcher.idle_if_due(&mut pass, &mut sink).unwrap());
    assert_eq!(sink.0.len(), 3);
}
