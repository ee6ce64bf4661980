//! The reflection cadence: a session's write is due after `every_steps`
//! agent steps (assistant turns and tool calls) since its newest written
//! turn, under the token threshold too; user turns, tool results and
//! runtime nodes are not steps; 0 turns it off. `write`, `write_all` and
//! the watcher all honour it.

use std::cell::Cell;

use jiff::Timestamp;
use scriptorium_scheduler::clock::Clock;
use scriptorium_scheduler::pending::pending_in;
use scriptorium_scheduler::watch::{Collect, Watcher};
use scriptorium_scheduler::{Node, NodeKind, NodeRole, Scheduler, SessionStore, SqliteStore};
use scriptorium_testkit::*;

struct Fixed(Cell<i64>);

impl Clock for Fixed {
    fn now(&self) -> Timestamp {
        Timestamp::from_second(self.0.get()).unwrap()
    }
}

/// The assistant's node `id` of `kind` under `parent`.
fn assistant(id: &str, parent: &str, kind: NodeKind) -> Node {
    Node { role: NodeRole::Assistant, ..node(id, Some(parent), kind, &format!("step {id}")) }
}

/// Round `n` under `parent`: a user turn `u{n}`, then `calls` tool calls
/// each with its result, then (when `answer`) the assistant's answer
/// `a{n}`.
fn round(n: usize, parent: Option<&str>, calls: usize, answer: bool) -> Vec<Node> {
    let mut out = vec![turn(&format!("u{n}"), parent, &format!("question {n}"))];
    for c in 0..calls {
        let last = out.last().unwrap().id.clone();
        out.push(assistant(&format!("c{n}-{c}"), &last, NodeKind::ToolCall));
        let call = out.last().unwrap().id.clone();
        out.push(node(&format!("r{n}-{c}"), Some(&call), NodeKind::ToolResult, "result"));
    }
    if answer {
        let last = out.last().unwrap().id.clone();
        out.push(assistant(&format!("a{n}"), &last, NodeKind::Turn));
    }
    out
}

fn last_id(s: &SqliteStore, session: &str) -> String {
    scriptorium_scheduler::pending::head_tip(s, session).unwrap().unwrap()
}

#[test]
fn n_minus_one_steps_wait_for_the_threshold_and_the_nth_writes_everything() {
    let dir = tempfile::tempdir().unwrap();
    // Steps: c0-0, c0-1, a0 (3), c1-0 (4). User turns and results are not steps.
    let s = store_with("s", &round(0, None, 2, true));
    s.add("s", &round(1, Some("a0"), 1, false)).unwrap();
    let mut sch = Scheduler::new(&s, dir.path(), WS);
    sch.threshold = 1_000_000;
    sch.every_steps = 5;
    assert_eq!(s.agent_steps_since_mark("s", WS).unwrap(), 4);
    assert!(!sch.steps_due("s").unwrap());
    let mut w = Counting::default();
    let r = sch.write(&mut w, "s", false).unwrap();
    assert_eq!((r.turns, w.calls), (0, 0), "N-1 steps under the threshold: no write");
    // More user turns are not steps.
    let tip = last_id(&s, "s");
    s.add("s", &[turn("u1b", Some(&tip), "and another thing")]).unwrap();
    assert_eq!(sch.write(&mut w, "s", false).unwrap().turns, 0);
    // The fifth step: the answer. The write takes everything pending, as a
    // forced one would.
    s.add("s", &[assistant("a1", "u1b", NodeKind::Turn)]).unwrap();
    assert!(sch.steps_due("s").unwrap());
    let r = sch.write(&mut w, "s", false).unwrap();
    assert_eq!(w.written(), ["u0", "a0", "u1", "u1b", "a1"]);
    assert_eq!((r.turns, r.batches), (5, 1));
    assert_eq!(pending_in(&s, "s", WS).unwrap(), 0);
    // Counted again from the newest written turn.
    assert_eq!(s.agent_steps_since_mark("s", WS).unwrap(), 0);
    assert!(!sch.steps_due("s").unwrap());
}

#[test]
fn tool_calls_alone_make_it_due() {
    let dir = tempfile::tempdir().unwrap();
    let s = store_with("s", &round(0, None, 3, false));
    let mut sch = Scheduler::new(&s, dir.path(), WS);
    sch.threshold = 1_000_000;
    sch.every_steps = 3;
    let mut w = Counting::default();
    assert_eq!(sch.write(&mut w, "s", false).unwrap().turns, 1);
    assert_eq!(w.written(), ["u0"]);
    // Tool traffic after the newest written turn keeps counting; with
    // nothing pending, a due write has nothing to write and calls nobody.
    let tip = last_id(&s, "s");
    s.add("s", &[assistant("x0", &tip, NodeKind::ToolCall)]).unwrap();
    s.add("s", &[assistant("x1", "x0", NodeKind::ToolCall), assistant("x2", "x1", NodeKind::ToolCall)])
        .unwrap();
    assert!(sch.steps_due("s").unwrap());
    let calls = w.calls;
    assert_eq!(sch.write(&mut w, "s", false).unwrap().turns, 0);
    assert_eq!(w.calls, calls);
}

#[test]
fn zero_turns_the_cadence_off_and_the_threshold_still_rules() {
    let dir = tempfile::tempdir().unwrap();
    let mut nodes = round(0, None, 40, true);
    let tip = nodes.last().unwrap().id.clone();
    nodes.extend(round(1, Some(&tip), 40, true));
    let s = store_with("s", &nodes);
    assert_eq!(s.agent_steps_since_mark("s", WS).unwrap(), 82);
    let mut sch = Scheduler::new(&s, dir.path(), WS);
    sch.threshold = 1_000_000;
    sch.every_steps = 0;
    let mut w = Counting::default();
    assert!(!sch.steps_due("s").unwrap());
    assert_eq!(sch.write(&mut w, "s", false).unwrap().turns, 0);
    assert_eq!(sch.write_all(&mut w, false).unwrap().turns, 0);
    assert_eq!(w.calls, 0);
    // The default is 25.
    assert_eq!(Scheduler::new(&s, dir.path(), WS).every_steps, 25);
    assert!(Scheduler::new(&s, dir.path(), WS).steps_due("s").unwrap());
}

#[test]
fn write_all_and_the_watcher_honour_it() {
    let dir = tempfile::tempdir().unwrap();
    // Session "busy" is due by its steps; "calm" is not.
    let s = store_with("busy", &round(0, None, 3, true));
    s.add("calm", &round(0, None, 1, true)).unwrap();
    let mut sch = Scheduler::new(&s, dir.path(), WS);
    sch.threshold = 1_000_000;
    sch.every_steps = 4;
    let mut w = Counting::default();
    assert_eq!(sch.write_all(&mut w, false).unwrap().turns, 2);
    assert_eq!(w.written(), ["u0", "a0"]);
    assert_eq!(pending_in(&s, "busy", WS).unwrap(), 0);
    assert_eq!(pending_in(&s, "calm", WS).unwrap(), 2);

    // The watcher: a session still active (not quiet) is written once its
    // steps make it due, not before.
    let now = Timestamp::now().as_second();
    let clock = Fixed(Cell::new(now));
    let sch = {
        let mut x = Scheduler::new(&s, dir.path(), WS).with_clock(&clock);
        x.threshold = 1_000_000;
        x.every_steps = 4;
        x
    };
    let fresh = |id: &str, parent: &str, kind: NodeKind| {
        let mut n = assistant(id, parent, kind);
        n.timestamp = scriptorium_source_archive::timestamp::format_unix(now);
        n
    };
    s.add("calm", &[fresh("c9", "a0", NodeKind::ToolCall)]).unwrap();
    let watcher = Watcher::new(&sch, 3600);
    let mut sink = Collect::default();
    let mut w = Counting::default();
    // "busy" is quiet and owes nothing: handled without a write.
    assert_eq!(watcher.poll(&mut w, &mut sink).unwrap().handled, ["busy"], "calm: 3 steps, active: not yet");
    assert_eq!(w.calls, 0);
    s.add("calm", &[fresh("c10", "c9", NodeKind::ToolCall)]).unwrap();
    let p = watcher.poll(&mut w, &mut sink).unwrap();
    assert_eq!(p.handled, ["calm"]);
    assert_eq!(w.written(), ["u0", "a0"]);
    assert_eq!(sink.0.len(), 1);
}
