//! Pending suffixes over session trees: linear, forks after and before a
//! written prefix, marks from several branches, excluded kinds, written tips.

use std::collections::HashSet;

use scriptorium_scheduler::pending::{head_tip, pending_in, suffix, tips_head_first};
use scriptorium_scheduler::store::{Link, NewNodes, SessionInfo, WatchState};
use scriptorium_scheduler::{Node, NodeKind, Result, SessionStore, SqliteStore};
use scriptorium_testkit::*;

fn ids(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn linear_suffix_after_the_nearest_mark() {
    let s = store_with("s", &chain("a", 5, None));
    assert_eq!(suffix(&s, "s", "a4", WS, None).unwrap(), ids(&["a0", "a1", "a2", "a3", "a4"]));
    s.mark("s", &ids(&["a0", "a1"]), WS).unwrap();
    assert_eq!(suffix(&s, "s", "a4", WS, None).unwrap(), ids(&["a2", "a3", "a4"]));
    // Only the nearest mark matters: an unmarked node above it is not pending.
    let s = store_with("s", &chain("a", 5, None));
    s.mark("s", &ids(&["a2"]), WS).unwrap();
    assert_eq!(suffix(&s, "s", "a4", WS, None).unwrap(), ids(&["a3", "a4"]));
}

#[test]
fn fork_after_a_written_prefix_inherits_its_marks() {
    let mut nodes = chain("a", 4, None);
    let s = SqliteStore::in_memory().unwrap();
    s.add("s", &nodes).unwrap();
    s.mark("s", &ids(&["a0", "a1", "a2", "a3"]), WS).unwrap();
    nodes = chain("b", 2, Some("a3"));
    s.add("s", &nodes).unwrap();
    s.add("s", &chain("c", 3, Some("a3"))).unwrap();
    assert_eq!(suffix(&s, "s", "b1", WS, None).unwrap(), ids(&["b0", "b1"]));
    assert_eq!(suffix(&s, "s", "c2", WS, None).unwrap(), ids(&["c0", "c1", "c2"]));
    assert_eq!(pending_in(&s, "s", WS).unwrap(), 5);
}

#[test]
fn fork_before_the_mark_keeps_its_own_suffix_pending() {
    let s = store_with("s", &chain("a", 4, None));
    s.add("s", &chain("b", 2, Some("a1"))).unwrap();
    s.mark("s", &ids(&["a0", "a1", "a2", "a3"]), WS).unwrap();
    // The fork point a1 is written; b's own suffix is not.
    assert_eq!(suffix(&s, "s", "b1", WS, None).unwrap(), ids(&["b0", "b1"]));
    assert_eq!(suffix(&s, "s", "a3", WS, None).unwrap(), Vec::<String>::new());
    // Nothing written: the shared prefix counts once across both tips.
    let s = store_with("s", &chain("a", 4, None));
    s.add("s", &chain("b", 2, Some("a1"))).unwrap();
    assert_eq!(pending_in(&s, "s", WS).unwrap(), 6);
    let mut seen = HashSet::new();
    let first = suffix(&s, "s", "a3", WS, Some(&mut seen)).unwrap();
    let second = suffix(&s, "s", "b1", WS, Some(&mut seen)).unwrap();
    assert_eq!((first.len(), second,), (4, ids(&["b0", "b1"])));
}

#[test]
fn marks_from_two_branches_and_other_workspaces() {
    let s = store_with("s", &chain("a", 3, None));
    s.add("s", &chain("b", 3, Some("a2"))).unwrap();
    s.add("s", &chain("c", 3, Some("a2"))).unwrap();
    // Written through b (prefix a, b0, b1), then through c (c0).
    s.mark("s", &ids(&["a0", "a1", "a2", "b0", "b1"]), WS).unwrap();
    s.mark("s", &ids(&["c0"]), WS).unwrap();
    // Another workspace's marks are not ours.
    s.mark("s", &ids(&["b2", "c1", "c2"]), "another-workspace").unwrap();
    assert_eq!(suffix(&s, "s", "b2", WS, None).unwrap(), ids(&["b2"]));
    assert_eq!(suffix(&s, "s", "c2", WS, None).unwrap(), ids(&["c1", "c2"]));
    assert_eq!(pending_in(&s, "s", WS).unwrap(), 3);
    // For the other workspace, both tips are its nearest marks: nothing owed.
    assert_eq!(pending_in(&s, "s", "another-workspace").unwrap(), 0);
    // Marking twice is harmless.
    s.mark("s", &ids(&["c0"]), WS).unwrap();
    assert_eq!(pending_in(&s, "s", WS).unwrap(), 3);
}

/// Two turns with a tool call, its result and a runtime notice between.
fn with_tools() -> Vec<Node> {
    vec![
        turn("t0", None, "hello"),
        node("call", Some("t0"), NodeKind::ToolCall, "{}"),
        node("result", Some("call"), NodeKind::ToolResult, "42"),
        node("notice", Some("result"), NodeKind::Runtime, "sub-agent finished"),
        turn("t1", Some("notice"), "thanks"),
    ]
}

#[test]
fn excluded_kinds_are_skipped_not_stops() {
    let s = store_with("s", &with_tools());
    assert_eq!(suffix(&s, "s", "t1", WS, None).unwrap(), ids(&["t0", "t1"]));
    s.mark("s", &ids(&["t0"]), WS).unwrap();
    assert_eq!(suffix(&s, "s", "t1", WS, None).unwrap(), ids(&["t1"]));
}

#[test]
fn marks_on_excluded_kinds_neither_count_nor_stop() {
    let s = store_with("s", &with_tools());
    // The store refuses to mark anything but a real turn...
    s.mark("s", &ids(&["call", "result", "notice"]), WS).unwrap();
    assert_eq!(suffix(&s, "s", "t1", WS, None).unwrap(), ids(&["t0", "t1"]));
    // ...and a mark another program put on one does not stop the walk.
    let foreign = ForeignMarks(s);
    assert_eq!(suffix(&foreign, "s", "t1", WS, None).unwrap(), ids(&["t0", "t1"]));
}

/// A store that reports every tool and runtime node as marked.
struct ForeignMarks(SqliteStore);

impl SessionStore for ForeignMarks {
    fn sessions(&self) -> Result<Vec<SessionInfo>> {
        self.0.sessions()
    }
    fn session(&self, id: &str) -> Result<Option<SessionInfo>> {
        self.0.session(id)
    }
    fn tips(&self, session: &str) -> Result<Vec<String>> {
        self.0.tips(session)
    }
    fn newest_child(&self, session: &str, node: &str) -> Result<Option<String>> {
        self.0.newest_child(session, node)
    }
    fn link(&self, session: &str, node: &str, workspace: &str) -> Result<Option<Link>> {
        Ok(self
            .0
            .link(session, node, workspace)?
            .map(|l| Link { marked: l.marked || l.kind != NodeKind::Turn, ..l }))
    }
    fn node(&self, session: &str, id: &str) -> Result<Option<Node>> {
        self.0.node(session, id)
    }
    fn mark(&self, session: &str, ids: &[String], workspace: &str) -> Result<()> {
        self.0.mark(session, ids, workspace)
    }
    fn add_sessions(&self, sessions: &[NewNodes<'_>]) -> Result<Vec<Vec<usize>>> {
        self.0.add_sessions(sessions)
    }
    fn claim(&self, session: &str, ids: &[String], workspace: &str) -> Result<()> {
        self.0.claim(session, ids, workspace)
    }
    fn claimed(&self, session: &str, workspace: &str) -> Result<Vec<String>> {
        self.0.claimed(session, workspace)
    }
    fn release(&self, session: &str, ids: &[String], workspace: &str) -> Result<()> {
        self.0.release(session, ids, workspace)
    }
    fn watch_state(&self, session: &str, workspace: &str) -> Result<WatchState> {
        self.0.watch_state(session, workspace)
    }
    fn set_watch_state(&self, session: &str, workspace: &str, state: &WatchState) -> Result<()> {
        self.0.set_watch_state(session, workspace, state)
    }
    fn user_turns_since_mark(&self, session: &str, workspace: &str) -> Result<usize> {
        self.0.user_turns_since_mark(session, workspace)
    }
    fn agent_steps_since_mark(&self, session: &str, workspace: &str) -> Result<usize> {
        self.0.agent_steps_since_mark(session, workspace)
    }
}

#[test]
fn a_tip_whose_branch_is_written_owes_nothing() {
    let s = store_with("s", &chain("a", 3, None));
    s.mark("s", &ids(&["a0", "a1", "a2"]), WS).unwrap();
    assert!(suffix(&s, "s", "a2", WS, None).unwrap().is_empty());
    assert_eq!(pending_in(&s, "s", WS).unwrap(), 0);
}

#[test]
fn head_is_the_tip_of_the_last_line() {
    let s = store_with("s", &chain("a", 3, None));
    s.add("s", &chain("b", 2, Some("a0"))).unwrap();
    assert_eq!(head_tip(&s, "s").unwrap().as_deref(), Some("b1"));
    assert_eq!(tips_head_first(&s, "s").unwrap(), ids(&["b1", "a2"]));
    // Re-adding an inner node makes its branch's newest tip the head.
    s.add("s", &[turn("a1", Some("a0"), "turn a1")]).unwrap();
    assert_eq!(head_tip(&s, "s").unwrap().as_deref(), Some("a2"));
    assert!(head_tip(&s, "nope").is_err());
}

#[test]
fn adding_again_leaves_nodes_and_marks_alone() {
    let s = store_with("s", &chain("a", 3, None));
    s.mark("s", &ids(&["a0"]), WS).unwrap();
    let mut again = chain("a", 4, None);
    again[0].content = "edited elsewhere".into();
    assert_eq!(s.add("s", &again).unwrap(), 1);
    assert_eq!(s.node("s", "a0").unwrap().unwrap().content, "turn a0");
    assert_eq!(suffix(&s, "s", "a3", WS, None).unwrap(), ids(&["a1", "a2", "a3"]));
    // A parent that is not there is refused, and nothing of the call lands.
    let err = s.add("s", &[turn("z1", None, "x"), turn("z2", Some("ghost"), "y")]).unwrap_err();
    assert_eq!(err.code.as_str(), "NOT_FOUND");
    assert!(s.node("s", "z1").unwrap().is_none());
}
