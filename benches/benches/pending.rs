//! Pending computation on a large session store: `status`'s pending count
//! and cutting one batch, on one session of N nodes with 50 branches, most
//! of it written (marked), against the peer that reads the whole session
//! (every node's id, parent, kind and mark, then the same walk in memory) —
//! what any approach that keeps no per-node marks must do.
//!
//! The store: a trunk of N / 2 nodes (every 7th a tool call, every 11th a
//! tool result), 50 branches of N / 100 nodes each forking from evenly
//! spaced trunk nodes; everything marked written except the last 40 nodes of the
//! trunk and of every branch. Sizes: `SCRIPTORIUM_BENCH_NODES` (default
//! `10000,100000`); under `cargo bench -- --test` (CI), 12,000 nodes.
#![allow(clippy::print_stdout)]

use std::collections::{HashMap, HashSet};
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion};
use rusqlite::Connection;
use scriptorium_scheduler::pending::{cut, head_tip, pending_turns, suffix, DEFAULT_THRESHOLD};
use scriptorium_scheduler::{Node, NodeKind, NodeRole, SessionStore, SqliteStore};

const WS: &str = "bench-workspace";
const SESSION: &str = "bench/session";
const BRANCHES: usize = 50;
const UNWRITTEN: usize = 40;

fn node(id: String, parent: Option<String>, i: usize) -> Node {
    let kind = if i % 7 == 3 {
        NodeKind::ToolCall
    } else if i % 11 == 5 {
        NodeKind::ToolResult
    } else {
        NodeKind::Turn
    };
    Node {
        id,
        parent,
        role: if kind == NodeKind::ToolResult { NodeRole::Tool } else { NodeRole::User },
        kind,
        timestamp: "2026-01-02T03:04:05Z".to_owned(),
        content: format!("turn {i}: we talked about the budget, the offsite, and who books the venue"),
        speaker_id: Some(format!("{}", i % 5)),
        speaker_display: Some(format!("Person {}", i % 5)),
        provider: "bench".to_owned(),
        thread: "session".to_owned(),
        pending: false,
    }
}

fn build(path: &Path, nodes: usize) -> SqliteStore {
    let store = SqliteStore::open(path).unwrap();
    let branch_len = nodes / (2 * BRANCHES);
    let trunk_len = nodes - BRANCHES * branch_len;
    let mut trunk = Vec::with_capacity(trunk_len);
    for i in 0..trunk_len {
        let parent = (i > 0).then(|| format!("t{}", i - 1));
        trunk.push(node(format!("t{i}"), parent, i));
    }
    let mut branches = Vec::new();
    for b in 0..BRANCHES {
        let fork = (b + 1) * (trunk_len - UNWRITTEN - 1) / (BRANCHES + 1);
        for j in 0..branch_len {
            let parent = if j == 0 { format!("t{fork}") } else { format!("b{b}.{}", j - 1) };
            branches.push(node(format!("b{b}.{j}"), Some(parent), j));
        }
    }
    // The trunk's last line last: the head.
    let tail = trunk.split_off(trunk_len - UNWRITTEN);
    store.add(SESSION, &trunk).unwrap();
    store.add(SESSION, &branches).unwrap();
    store.add(SESSION, &tail).unwrap();
    let mut written: Vec<String> = trunk.iter().map(|n| n.id.clone()).collect();
    for b in 0..BRANCHES {
        written.extend((0..branch_len - UNWRITTEN).map(|j| format!("b{b}.{j}")));
    }
    store.mark(SESSION, &written, WS).unwrap();
    store
}

/// The peer: read the whole session, then walk in memory.
fn whole_store_pending(path: &Path) -> usize {
    let conn = Connection::open(path).unwrap();
    let mut st = conn
        .prepare(
            "SELECT n.id, n.parent, n.kind, n.leaf,
                    EXISTS(SELECT 1 FROM marks m WHERE m.session = n.session AND m.node = n.id AND m.workspace = ?2)
             FROM nodes n WHERE n.session = ?1",
        )
        .unwrap();
    let mut map: HashMap<String, (Option<String>, bool, bool)> = HashMap::new();
    let mut tips = Vec::new();
    let rows = st
        .query_map([SESSION, WS], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, bool>(3)?,
                r.get::<_, bool>(4)?,
            ))
        })
        .unwrap();
    for row in rows {
        let (id, parent, kind, leaf, marked) = row.unwrap();
        if leaf {
            tips.push(id.clone());
        }
        map.insert(id, (parent, kind == "turn", marked));
    }
    let mut seen = HashSet::new();
    let mut count = 0;
    for tip in tips {
        let mut at = Some(tip);
        while let Some(id) = at {
            if !seen.insert(id.clone()) {
                break;
            }
            let (parent, turn, marked) = &map[&id];
            if *marked {
                break;
            }
            count += usize::from(*turn);
            at = parent.clone();
        }
    }
    count
}

fn sizes() -> Vec<usize> {
    if std::env::args().any(|a| a == "--test") {
        return vec![12_000];
    }
    std::env::var("SCRIPTORIUM_BENCH_NODES")
        .unwrap_or_else(|_| "10000,100000".into())
        .split(',')
        .map(|s| s.trim().parse().expect("SCRIPTORIUM_BENCH_NODES: comma-separated counts"))
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("pending");
    g.sample_size(20);
    for n in sizes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.db");
        let store = build(&path, n);
        let expected = pending_turns(&store, WS).unwrap();
        assert_eq!(whole_store_pending(&path), expected, "the peer and the store agree");
        assert!(expected > 0 && expected < 51 * UNWRITTEN);
        g.bench_function(format!("status/{n}"), |b| b.iter(|| pending_turns(&store, WS).unwrap()));
        g.bench_function(format!("cut_batch/{n}"), |b| {
            b.iter(|| {
                let tip = head_tip(&store, SESSION).unwrap().unwrap();
                let ids = suffix(&store, SESSION, &tip, WS, None).unwrap();
                cut(&store, SESSION, &ids, DEFAULT_THRESHOLD, true).unwrap().unwrap().ids.len()
            })
        });
        g.bench_function(format!("peer_whole_session/{n}"), |b| b.iter(|| whole_store_pending(&path)));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
