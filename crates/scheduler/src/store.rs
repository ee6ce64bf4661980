//! The session store: sessions as trees of nodes (each node names at most
//! one parent), the written marks, and the idle watcher's per-session state.
//!
//! [`SessionStore`] is what the scheduler needs from any conversation store;
//! [`SqliteStore`] is the embedded one (`.scriptorium/sessions.db`, WAL mode,
//! safe for several processes). A store that reads a transcript it does not
//! own keeps the marks in its own tables, keyed by session and node id.

use std::path::Path;
use std::time::Duration;

use rusqlite::{params, Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior};

use crate::error::{Code, Error, Result};
use crate::node::{Node, NodeKind, NodeRole};

mod since_mark;

/// The default place of the embedded store, relative to the workspace.
pub const SESSIONS_DB: &str = ".scriptorium/sessions.db";

/// The schema version this build reads and writes (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = 2;

/// A session as the store describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// The session id.
    pub id: String,
    /// The node of the transcript's last line, as last imported or added.
    pub head: Option<String>,
    /// How many nodes the session holds; grows with every added node, so a
    /// session is "new since" a watcher pass when this grew.
    pub seq: i64,
    /// When the session was last active (Unix seconds): the newest node's
    /// timestamp, never later than the moment it was added.
    pub active_at: i64,
}

/// Nodes to add to one session.
#[derive(Debug, Clone, Copy)]
pub struct NewNodes<'a> {
    /// The session.
    pub session: &'a str,
    /// Its nodes, every parent before its children.
    pub nodes: &'a [Node],
    /// The node of the transcript's last line (default: the last node).
    pub head: Option<&'a str>,
}

/// What a walk needs of one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// Its parent.
    pub parent: Option<String>,
    /// Its kind.
    pub kind: NodeKind,
    /// Whether it is marked written for the workspace asked about.
    pub marked: bool,
}

/// The idle watcher's state of one session for one workspace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WatchState {
    /// The session's `seq` when the watcher last finished with it (written,
    /// or given up on a failure no retry can fix).
    pub handled_seq: i64,
    /// Retryable failures in a row.
    pub failures: u32,
    /// Not before this Unix time (backoff after a retryable failure).
    pub retry_at: i64,
}

/// What the scheduler needs of a conversation store.
pub trait SessionStore {
    /// Every session, by id.
    fn sessions(&self) -> Result<Vec<SessionInfo>>;
    /// One session.
    fn session(&self, id: &str) -> Result<Option<SessionInfo>>;
    /// Every leaf of the session (its live tips), oldest first.
    fn tips(&self, session: &str) -> Result<Vec<String>>;
    /// The newest child of `node`, if it has children.
    fn newest_child(&self, session: &str, node: &str) -> Result<Option<String>>;
    /// What a walk needs of one node, with its mark for `workspace`.
    fn link(&self, session: &str, node: &str, workspace: &str) -> Result<Option<Link>>;
    /// One whole node.
    fn node(&self, session: &str, id: &str) -> Result<Option<Node>>;
    /// Marks these real turns written for `workspace` (idempotent; other
    /// kinds are never marked) and drops their claims.
    fn mark(&self, session: &str, ids: &[String], workspace: &str) -> Result<()>;
    /// Adds several sessions' nodes, all or nothing. For each, the nodes
    /// whose ids are new are added in order (a parent must already exist or
    /// come earlier: `NOT_FOUND` otherwise, and nothing of the call lands),
    /// existing nodes and marks are left alone, and the head becomes `head`
    /// (default: the last node given). Returns, per session, the positions
    /// in its `nodes` of those that were new.
    fn add_sessions(&self, sessions: &[NewNodes<'_>]) -> Result<Vec<Vec<usize>>>;
    /// [`SessionStore::add_sessions`] for one session, head = last node;
    /// how many nodes were new.
    fn add(&self, session: &str, nodes: &[Node]) -> Result<usize> {
        Ok(self.add_sessions(&[NewNodes { session, nodes, head: None }])?.iter().map(Vec::len).sum())
    }
    /// Records that these turns were handed to a writer (before the call), so
    /// that a run interrupted between the writer's transaction and the mark
    /// can tell them apart from turns archived some other way.
    fn claim(&self, session: &str, ids: &[String], workspace: &str) -> Result<()>;
    /// The claimed turns of a session.
    fn claimed(&self, session: &str, workspace: &str) -> Result<Vec<String>>;
    /// Drops claims (the writer failed, so nothing of them was written).
    fn release(&self, session: &str, ids: &[String], workspace: &str) -> Result<()>;
    /// The watcher's state of a session for `workspace`.
    fn watch_state(&self, session: &str, workspace: &str) -> Result<WatchState>;
    /// Saves the watcher's state of a session for `workspace`.
    fn set_watch_state(&self, session: &str, workspace: &str, state: &WatchState) -> Result<()>;
    /// The user turns of a session recorded after its newest node marked
    /// for `workspace` (all of them when none is): what no write has
    /// covered since the last one touching the session.
    fn user_turns_since_mark(&self, session: &str, workspace: &str) -> Result<usize>;
    /// The agent steps of a session recorded after its newest node marked
    /// for `workspace` (all of them when none is): its assistant turns
    /// (role `assistant`, kind `turn`) and its tool calls (kind
    /// `tool_call`). What the reflection cadence counts.
    fn agent_steps_since_mark(&self, session: &str, workspace: &str) -> Result<usize>;
}

/// The embedded store: SQLite in WAL mode.
#[derive(Debug)]
pub struct SqliteStore {
    conn: Connection,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sessions(
    id TEXT PRIMARY KEY,
    head TEXT,
    seq INTEGER NOT NULL DEFAULT 0,
    active_at INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS nodes(
    row INTEGER PRIMARY KEY,
    session TEXT NOT NULL,
    id TEXT NOT NULL,
    parent TEXT,
    parent_row INTEGER,
    role TEXT NOT NULL,
    kind TEXT NOT NULL,
    timestamp TEXT NOT NULL,
    content TEXT NOT NULL,
    speaker_id TEXT,
    speaker_display TEXT,
    provider TEXT NOT NULL,
    thread TEXT NOT NULL,
    leaf INTEGER NOT NULL DEFAULT 1,
    pending INTEGER NOT NULL DEFAULT 0,
    UNIQUE(session, id)
);
CREATE INDEX IF NOT EXISTS nodes_tips ON nodes(session, row) WHERE leaf = 1;
CREATE INDEX IF NOT EXISTS nodes_children ON nodes(parent_row);
CREATE INDEX IF NOT EXISTS nodes_recent ON nodes(session, row);
CREATE TABLE IF NOT EXISTS marks(
    session TEXT NOT NULL,
    node TEXT NOT NULL,
    workspace TEXT NOT NULL,
    PRIMARY KEY(session, node, workspace)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS claims(
    session TEXT NOT NULL,
    node TEXT NOT NULL,
    workspace TEXT NOT NULL,
    PRIMARY KEY(session, node, workspace)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS watch(
    session TEXT NOT NULL,
    workspace TEXT NOT NULL,
    handled_seq INTEGER NOT NULL,
    failures INTEGER NOT NULL,
    retry_at INTEGER NOT NULL,
    PRIMARY KEY(session, workspace)
) WITHOUT ROWID;
";

/// `INVALID_ARGUMENT` when `path` is a symbolic link.
fn refuse_link(path: &Path) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(Error::invalid(format!(
            "{} is a symbolic link; the session store is never read or written through one",
            path.display()
        ))
        .at(path.display().to_string())),
        _ => Ok(()),
    }
}

/// [`refuse_link`] for the store and the journal files SQLite keeps beside it.
fn refuse_links(path: &Path) -> Result<()> {
    refuse_link(path)?;
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        refuse_link(Path::new(&name))?;
    }
    Ok(())
}

impl SqliteStore {
    /// Opens (creating if needed) the store at `path`. A store, its folder
    /// or its journal files that are symbolic links are refused
    /// (`INVALID_ARGUMENT`): nothing is written through a link.
    pub fn open(path: &Path) -> Result<SqliteStore> {
        if let Some(dir) = path.parent() {
            refuse_link(dir)?;
            std::fs::create_dir_all(dir).map_err(|e| Error::io(&e, "cannot create the store's folder"))?;
        }
        refuse_links(path)?;
        let conn = Connection::open(path).map_err(|e| at(e.into(), path))?;
        SqliteStore::setup(conn, true).map_err(|e| at(e, path))
    }

    /// Opens an existing store without creating or changing anything;
    /// `None` when there is none.
    pub fn open_existing(path: &Path) -> Result<Option<SqliteStore>> {
        // No file, or an empty one (another process is creating it): no
        // store yet.
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Ok(m) if m.len() == 0 => return Ok(None),
            _ => {}
        }
        if let Some(dir) = path.parent() {
            refuse_link(dir)?;
        }
        refuse_links(path)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| at(e.into(), path))?;
        SqliteStore::setup(conn, false).map(Some).map_err(|e| at(e, path))
    }

    /// A store in memory, for tests and tools.
    pub fn in_memory() -> Result<SqliteStore> {
        SqliteStore::setup(Connection::open_in_memory()?, true)
    }

    fn setup(conn: Connection, create: bool) -> Result<SqliteStore> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // Opening races another process creating the file or switching it to
        // WAL; SQLite reports some of those as busy without waiting, so the
        // whole setup is retried until the busy timeout.
        let started = std::time::Instant::now();
        loop {
            match SqliteStore::prepare(&conn, create) {
                Err(Setup::Busy(_)) if started.elapsed() < BUSY_TIMEOUT => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(Setup::Busy(e)) => return Err(e.into()),
                Err(Setup::Other(e)) => return Err(e),
                Ok(()) => return Ok(SqliteStore { conn }),
            }
        }
    }

    fn prepare(conn: &Connection, create: bool) -> Result<(), Setup> {
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version > SCHEMA_VERSION {
            return Err(Setup::Other(Error::invalid(format!(
                "the session database has schema version {version}; this program reads version {SCHEMA_VERSION}"
            ))));
        }
        if version == 0 && !create {
            let tables: i64 =
                conn.query_row("SELECT count(*) FROM sqlite_master WHERE name = 'nodes'", [], |r| r.get(0))?;
            if tables == 0 {
                return Err(Setup::Other(Error::invalid("not a session database (no nodes table)")));
            }
        }
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") && !mode.eq_ignore_ascii_case("memory") {
            conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))?;
        }
        conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = OFF;")?;
        if version == 0 {
            conn.execute_batch(&format!(
                "BEGIN IMMEDIATE; {SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
            ))?;
        } else if version == 1 {
            // Version 2 adds the pending flag of a node; every older node
            // was archived trusted. The version is read again inside the
            // transaction: another process may have upgraded it meanwhile.
            conn.execute_batch("BEGIN IMMEDIATE;")?;
            let now: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
            if now == 1 {
                conn.execute_batch(&format!(
                    "ALTER TABLE nodes ADD COLUMN pending INTEGER NOT NULL DEFAULT 0; PRAGMA user_version = {SCHEMA_VERSION};"
                ))?;
            }
            conn.execute_batch("COMMIT;")?;
        }
        if create {
            // An index later builds added (no new schema version: older
            // builds read the database as before). Readers never write.
            conn.execute_batch("CREATE INDEX IF NOT EXISTS nodes_recent ON nodes(session, row);")?;
        }
        Ok(())
    }
}

/// How long a call waits for another process's lock on the database.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

enum Setup {
    Busy(rusqlite::Error),
    Other(Error),
}

impl From<rusqlite::Error> for Setup {
    fn from(e: rusqlite::Error) -> Setup {
        match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => Setup::Busy(e),
            _ => Setup::Other(e.into()),
        }
    }
}

fn at(e: Error, path: &Path) -> Error {
    e.at(path.display().to_string())
}

/// A node's time in Unix seconds; one too far out for the clock library
/// (the last days of year 9999) counts as the moment it was added.
fn unix_of(ts: &str, now: i64) -> i64 {
    ts.parse::<jiff::Timestamp>().map(|t| t.as_second()).unwrap_or(now)
}

fn now_unix() -> i64 {
    jiff::Timestamp::now().as_second()
}

fn node_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<(Node, Option<&'static str>)> {
    let role: String = r.get(2)?;
    let kind: String = r.get(3)?;
    let (role, bad_role) = match NodeRole::parse(&role) {
        Some(x) => (x, None),
        None => (NodeRole::User, Some("role")),
    };
    let (kind, bad_kind) = match NodeKind::parse(&kind) {
        Some(x) => (x, None),
        None => (NodeKind::Runtime, Some("kind")),
    };
    Ok((
        Node {
            id: r.get(0)?,
            parent: r.get(1)?,
            role,
            kind,
            timestamp: r.get(4)?,
            content: r.get(5)?,
            speaker_id: r.get(6)?,
            speaker_display: r.get(7)?,
            provider: r.get(8)?,
            thread: r.get(9)?,
            pending: r.get(10)?,
        },
        bad_role.or(bad_kind),
    ))
}

impl SessionStore for SqliteStore {
    fn user_turns_since_mark(&self, session: &str, workspace: &str) -> Result<usize> {
        self.count_since_mark(session, workspace, since_mark::USER_TURNS)
    }

    fn agent_steps_since_mark(&self, session: &str, workspace: &str) -> Result<usize> {
        self.count_since_mark(session, workspace, since_mark::AGENT_STEPS)
    }

    fn sessions(&self) -> Result<Vec<SessionInfo>> {
        let mut st = self.conn.prepare_cached("SELECT id, head, seq, active_at FROM sessions ORDER BY id")?;
        let rows = st.query_map([], |r| {
            Ok(SessionInfo { id: r.get(0)?, head: r.get(1)?, seq: r.get(2)?, active_at: r.get(3)? })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn session(&self, id: &str) -> Result<Option<SessionInfo>> {
        let mut st =
            self.conn.prepare_cached("SELECT id, head, seq, active_at FROM sessions WHERE id = ?1")?;
        Ok(st
            .query_row([id], |r| {
                Ok(SessionInfo { id: r.get(0)?, head: r.get(1)?, seq: r.get(2)?, active_at: r.get(3)? })
            })
            .optional()?)
    }

    fn tips(&self, session: &str) -> Result<Vec<String>> {
        let mut st =
            self.conn.prepare_cached("SELECT id FROM nodes WHERE session = ?1 AND leaf = 1 ORDER BY row")?;
        let rows = st.query_map([session], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn newest_child(&self, session: &str, node: &str) -> Result<Option<String>> {
        let mut st = self.conn.prepare_cached(
            "SELECT c.id FROM nodes p JOIN nodes c ON c.parent_row = p.row
             WHERE p.session = ?1 AND p.id = ?2 ORDER BY c.row DESC LIMIT 1",
        )?;
        Ok(st.query_row([session, node], |r| r.get(0)).optional()?)
    }

    fn link(&self, session: &str, node: &str, workspace: &str) -> Result<Option<Link>> {
        let mut st = self.conn.prepare_cached(
            "SELECT n.parent, n.kind,
                    EXISTS(SELECT 1 FROM marks m WHERE m.session = n.session AND m.node = n.id AND m.workspace = ?3)
             FROM nodes n WHERE n.session = ?1 AND n.id = ?2",
        )?;
        let got = st
            .query_row(params![session, node, workspace], |r| {
                Ok((r.get::<_, Option<String>>(0)?, r.get::<_, String>(1)?, r.get::<_, bool>(2)?))
            })
            .optional()?;
        match got {
            None => Ok(None),
            Some((parent, kind, marked)) => {
                let kind = NodeKind::parse(&kind).ok_or_else(|| {
                    Error::new(Code::Io, format!("session database: node {node:?} has unknown kind {kind:?}"))
                })?;
                Ok(Some(Link { parent, kind, marked }))
            }
        }
    }

    fn node(&self, session: &str, id: &str) -> Result<Option<Node>> {
        let mut st = self.conn.prepare_cached(
            "SELECT id, parent, role, kind, timestamp, content, speaker_id, speaker_display, provider, thread, pending
             FROM nodes WHERE session = ?1 AND id = ?2",
        )?;
        match st.query_row([session, id], node_of).optional()? {
            None => Ok(None),
            Some((_, Some(what))) => {
                Err(Error::new(Code::Io, format!("session database: node {id:?} has an unknown {what}")))
            }
            Some((n, None)) => Ok(Some(n)),
        }
    }

    fn mark(&self, session: &str, ids: &[String], workspace: &str) -> Result<()> {
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        {
            let mut st = tx.prepare_cached(
                "INSERT OR IGNORE INTO marks(session, node, workspace)
                 SELECT session, id, ?3 FROM nodes WHERE session = ?1 AND id = ?2 AND kind = 'turn'",
            )?;
            let mut unclaim =
                tx.prepare_cached("DELETE FROM claims WHERE session = ?1 AND node = ?2 AND workspace = ?3")?;
            for id in ids {
                st.execute(params![session, id, workspace])?;
                unclaim.execute(params![session, id, workspace])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    fn add_sessions(&self, sessions: &[NewNodes<'_>]) -> Result<Vec<Vec<usize>>> {
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        let now = now_unix();
        let mut out = Vec::with_capacity(sessions.len());
        {
            let mut find = tx.prepare_cached("SELECT row FROM nodes WHERE session = ?1 AND id = ?2")?;
            let mut insert = tx.prepare_cached(
                "INSERT INTO nodes(session, id, parent, parent_row, role, kind, timestamp, content,
                                   speaker_id, speaker_display, provider, thread, pending, leaf)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, 1)",
            )?;
            let mut unleaf = tx.prepare_cached("UPDATE nodes SET leaf = 0 WHERE row = ?1 AND leaf = 1")?;
            let mut upsert = tx.prepare_cached(
                "INSERT INTO sessions(id, head, seq, active_at) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(id) DO UPDATE SET head = coalesce(?2, head), seq = seq + ?3,
                                              active_at = max(active_at, ?4)",
            )?;
            for s in sessions {
                let session = s.session;
                let mut new = Vec::new();
                let mut active = 0i64;
                for (at, n) in s.nodes.iter().enumerate() {
                    n.check()?;
                    let exists: Option<i64> = find.query_row([session, &n.id], |r| r.get(0)).optional()?;
                    if exists.is_some() {
                        continue;
                    }
                    let parent_row: Option<i64> = match &n.parent {
                        None => None,
                        Some(p) => {
                            Some(find.query_row([session, p], |r| r.get(0)).optional()?.ok_or_else(|| {
                                Error::new(
                                    Code::NotFound,
                                    format!(
                                        "node {:?} names parent {p:?}, which is not in session {session:?}",
                                        n.id
                                    ),
                                )
                            })?)
                        }
                    };
                    insert.execute(params![
                        session,
                        n.id,
                        n.parent,
                        parent_row,
                        n.role.as_str(),
                        n.kind.as_str(),
                        n.timestamp,
                        n.content,
                        n.speaker_id,
                        n.speaker_display,
                        n.provider,
                        n.thread,
                        n.pending
                    ])?;
                    if let Some(p) = parent_row {
                        unleaf.execute([p])?;
                    }
                    active = active.max(unix_of(&n.timestamp, now).min(now));
                    new.push(at);
                }
                let head = s.head.or(s.nodes.last().map(|n| n.id.as_str()));
                upsert.execute(params![session, head, new.len() as i64, active])?;
                out.push(new);
            }
        }
        tx.commit()?;
        Ok(out)
    }

    fn claim(&self, session: &str, ids: &[String], workspace: &str) -> Result<()> {
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        {
            let mut st = tx.prepare_cached(
                "INSERT OR IGNORE INTO claims(session, node, workspace) VALUES (?1, ?2, ?3)",
            )?;
            for id in ids {
                st.execute(params![session, id, workspace])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    fn claimed(&self, session: &str, workspace: &str) -> Result<Vec<String>> {
        let mut st = self
            .conn
            .prepare_cached("SELECT node FROM claims WHERE session = ?1 AND workspace = ?2 ORDER BY node")?;
        let rows = st.query_map([session, workspace], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn release(&self, session: &str, ids: &[String], workspace: &str) -> Result<()> {
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        {
            let mut st =
                tx.prepare_cached("DELETE FROM claims WHERE session = ?1 AND node = ?2 AND workspace = ?3")?;
            for id in ids {
                st.execute(params![session, id, workspace])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    fn watch_state(&self, session: &str, workspace: &str) -> Result<WatchState> {
        let mut st = self.conn.prepare_cached(
            "SELECT handled_seq, failures, retry_at FROM watch WHERE session = ?1 AND workspace = ?2",
        )?;
        Ok(st
            .query_row([session, workspace], |r| {
                Ok(WatchState { handled_seq: r.get(0)?, failures: r.get(1)?, retry_at: r.get(2)? })
            })
            .optional()?
            .unwrap_or_default())
    }

    fn set_watch_state(&self, session: &str, workspace: &str, s: &WatchState) -> Result<()> {
        self.conn.execute(
            "INSERT INTO watch(session, workspace, handled_seq, failures, retry_at) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT(session, workspace) DO UPDATE SET handled_seq = ?3, failures = ?4, retry_at = ?5",
            params![session, workspace, s.handled_seq, s.failures, s.retry_at],
        )?;
        Ok(())
    }
}
