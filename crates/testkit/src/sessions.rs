//! Scheduler helpers: nodes, in-memory stores and batch writers written
//! for the tests.

use std::cell::Cell;
use std::collections::HashMap;

use scriptorium_scheduler::store::{Link, NewNodes, SessionInfo, WatchState};
use scriptorium_scheduler::{
    Batch, BatchWriter, Code, Node, NodeKind, NodeRole, Result, SessionStore, SqliteStore, WriteFailure,
    Written,
};

/// The workspace name the scheduler tests mark turns for.
pub const WS: &str = "ws-test";

/// A real user turn `id` under `parent`.
pub fn turn(id: &str, parent: Option<&str>, content: &str) -> Node {
    node(id, parent, NodeKind::Turn, content)
}

/// A node `id` of `kind` under `parent`, said by Ada (`7391`) in thread
/// `t1` (a tool result has the tool role, the rest the user's).
pub fn node(id: &str, parent: Option<&str>, kind: NodeKind, content: &str) -> Node {
    Node {
        id: id.to_owned(),
        parent: parent.map(str::to_owned),
        role: if kind == NodeKind::ToolResult { NodeRole::Tool } else { NodeRole::User },
        kind,
        timestamp: "2026-01-02T03:04:05Z".to_owned(),
        content: content.to_owned(),
        speaker_id: Some("7391".to_owned()),
        speaker_display: Some("Ada".to_owned()),
        provider: "test".to_owned(),
        thread: "t1".to_owned(),
        pending: false,
    }
}

/// A chain `prefix0 .. prefix{n-1}` under `parent`.
pub fn chain(prefix: &str, n: usize, parent: Option<&str>) -> Vec<Node> {
    let mut out: Vec<Node> = Vec::new();
    for i in 0..n {
        let p = out.last().map(|x| x.id.clone()).or(parent.map(str::to_owned));
        out.push(turn(&format!("{prefix}{i}"), p.as_deref(), &format!("turn {prefix}{i}")));
    }
    out
}

/// An in-memory store holding `nodes` in `session`.
pub fn store_with(session: &str, nodes: &[Node]) -> SqliteStore {
    let s = SqliteStore::in_memory().unwrap();
    s.add(session, nodes).unwrap();
    s
}

/// Records every batch it is handed; fails as told.
#[derive(Debug, Default)]
pub struct Counting {
    /// The node ids of every batch written, in order.
    pub batches: Vec<Vec<String>>,
    /// Fail the n-th call (1-based) with this code.
    pub fail_on: HashMap<usize, Code>,
    /// Calls so far.
    pub calls: usize,
}

impl Counting {
    /// Every node id written, in order.
    pub fn written(&self) -> Vec<String> {
        self.batches.iter().flatten().cloned().collect()
    }
}

impl BatchWriter for Counting {
    fn name(&self) -> &str {
        "counting"
    }

    fn write_batch(&mut self, batch: &Batch<'_>) -> Result<Written, WriteFailure> {
        self.calls += 1;
        if let Some(code) = self.fail_on.get(&self.calls) {
            return Err(WriteFailure::new(*code, format!("told to fail call {}", self.calls)));
        }
        let ids = batch.records.iter().map(|r| r.id().message().to_owned()).collect();
        self.batches.push(ids);
        Ok(Written {
            revision: format!("rev{}", self.calls),
            changed: vec![format!("topics/b{}.md", self.calls)],
            limits: Vec::new(),
        })
    }
}

/// A store whose `mark` fails while `fail_marks` is set: the process dying
/// between a successful transaction and the mark.
#[derive(Debug)]
pub struct FlakyMarks {
    /// The store everything but a failing mark goes to.
    pub inner: SqliteStore,
    /// While set, `mark` fails.
    pub fail_marks: Cell<bool>,
}

impl SessionStore for FlakyMarks {
    fn sessions(&self) -> Result<Vec<SessionInfo>> {
        self.inner.sessions()
    }
    fn session(&self, id: &str) -> Result<Option<SessionInfo>> {
        self.inner.session(id)
    }
    fn tips(&self, session: &str) -> Result<Vec<String>> {
        self.inner.tips(session)
    }
    fn newest_child(&self, session: &str, node: &str) -> Result<Option<String>> {
        self.inner.newest_child(session, node)
    }
    fn link(&self, session: &str, node: &str, workspace: &str) -> Result<Option<Link>> {
        self.inner.link(session, node, workspace)
    }
    fn node(&self, session: &str, id: &str) -> Result<Option<Node>> {
        self.inner.node(session, id)
    }
    fn mark(&self, session: &str, ids: &[String], workspace: &str) -> Result<()> {
        if self.fail_marks.get() {
            return Err(scriptorium_scheduler::Error::new(Code::Io, "killed before the mark"));
        }
        self.inner.mark(session, ids, workspace)
    }
    fn add_sessions(&self, sessions: &[NewNodes<'_>]) -> Result<Vec<Vec<usize>>> {
        self.inner.add_sessions(sessions)
    }
    fn claim(&self, session: &str, ids: &[String], workspace: &str) -> Result<()> {
        self.inner.claim(session, ids, workspace)
    }
    fn claimed(&self, session: &str, workspace: &str) -> Result<Vec<String>> {
        self.inner.claimed(session, workspace)
    }
    fn release(&self, session: &str, ids: &[String], workspace: &str) -> Result<()> {
        self.inner.release(session, ids, workspace)
    }
    fn watch_state(&self, session: &str, workspace: &str) -> Result<WatchState> {
        self.inner.watch_state(session, workspace)
    }
    fn set_watch_state(&self, session: &str, workspace: &str, state: &WatchState) -> Result<()> {
        self.inner.set_watch_state(session, workspace, state)
    }
    fn user_turns_since_mark(&self, session: &str, workspace: &str) -> Result<usize> {
        self.inner.user_turns_since_mark(session, workspace)
    }
    fn agent_steps_since_mark(&self, session: &str, workspace: &str) -> Result<usize> {
        self.inner.agent_steps_since_mark(session, workspace)
    }
}
