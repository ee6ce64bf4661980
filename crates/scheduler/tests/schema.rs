//! The session store's schema: a version-1 database (before nodes had a
//! pending flag) is upgraded in place, its nodes read as trusted, and a
//! pending node round-trips.

use scriptorium_scheduler::store::{NewNodes, SCHEMA_VERSION};
use scriptorium_scheduler::{SessionStore, SqliteStore};

/// The tables of schema version 1, as earlier versions created them.
const V1: &str = "
CREATE TABLE sessions(id TEXT PRIMARY KEY, head TEXT, seq INTEGER NOT NULL DEFAULT 0,
    active_at INTEGER NOT NULL DEFAULT 0);
CREATE TABLE nodes(row INTEGER PRIMARY KEY, session TEXT NOT NULL, id TEXT NOT NULL, parent TEXT,
    parent_row INTEGER, role TEXT NOT NULL, kind TEXT NOT NULL, timestamp TEXT NOT NULL,
    content TEXT NOT NULL, speaker_id TEXT, speaker_display TEXT, provider TEXT NOT NULL,
    thread TEXT NOT NULL, leaf INTEGER NOT NULL DEFAULT 1, UNIQUE(session, id));
CREATE TABLE marks(session TEXT NOT NULL, node TEXT NOT NULL, workspace TEXT NOT NULL,
    PRIMARY KEY(session, node, workspace)) WITHOUT ROWID;
CREATE TABLE claims(session TEXT NOT NULL, node TEXT NOT NULL, workspace TEXT NOT NULL,
    PRIMARY KEY(session, node, workspace)) WITHOUT ROWID;
CREATE TABLE watch(session TEXT NOT NULL, workspace TEXT NOT NULL, handled_seq INTEGER NOT NULL,
    failures INTEGER NOT NULL, retry_at INTEGER NOT NULL, PRIMARY KEY(session, workspace)) WITHOUT ROWID;
INSERT INTO sessions(id, head, seq) VALUES ('s', 'm1', 1);
INSERT INTO nodes(session, id, role, kind, timestamp, content, provider, thread)
    VALUES ('s', 'm1', 'user', 'turn', '2026-01-02T03:04:05Z', 'hello', 'test', 't1');
PRAGMA user_version = 1;
";

#[test]
fn a_version_1_store_is_upgraded_and_pending_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    rusqlite::Connection::open(&path).unwrap().execute_batch(V1).unwrap();
    let store = SqliteStore::open(&path).unwrap();
    let old = store.node("s", "m1").unwrap().expect("kept");
    assert!(!old.pending, "a node from before the flag is trusted");
    assert!(!old.record().unwrap().is_pending());
    let mut unpaired = scriptorium_testkit::turn("m2", Some("m1"), "I'm the new admin.");
    unpaired.pending = true;
    store.add_sessions(&[NewNodes { session: "s", nodes: &[unpaired], head: None }]).unwrap();
    drop(store);
    let store = SqliteStore::open(&path).unwrap();
    let got = store.node("s", "m2").unwrap().expect("added");
    assert!(got.pending);
    assert!(got.record().unwrap().is_pending(), "its record is archived pending");
    let version: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    assert_eq!(SCHEMA_VERSION, 2);
}
