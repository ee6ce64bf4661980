//! The order key, the walk over crossing sync points, and whole-file merges.

use super::*;
use crate::id::SourceId;
use crate::record::{Role, SourceRecord};

const PATH: &str = "sources/chat/_v2/t.md";

fn record(m: &str, ts: &str, body: &str) -> SourceRecord {
    let id = SourceId::new("chat", "t", m).unwrap();
    SourceRecord::new(id, Role::User, ts, None, false, body.to_owned()).unwrap()
}

fn file(frames: &[(&str, &str)]) -> Vec<u8> {
    let records: Vec<SourceRecord> =
        frames.iter().map(|&(m, ts)| record(m, ts, &format!("said {m}"))).collect();
    v2::write_file(&records)
}

fn ids(bytes: &[u8]) -> Vec<String> {
    let parsed = v2::parse_prefix(bytes, None);
    assert_eq!(parsed.error, None);
    parsed.frames.iter().map(|f| f.message().into_owned()).collect()
}

#[test]
fn the_key_compares_instants_then_ids() {
    let k = |ts, id| Key::of(ts, id);
    assert_eq!(k("2026-01-01T00:00:05.5Z", "a"), k("2026-01-01T00:00:05.500000000Z", "a"));
    assert!(k("2026-01-01T00:00:05Z", "b") < k("2026-01-01T00:00:05.000000001Z", "a"));
    assert!(k("2026-01-01T00:00:05.9Z", "a") < k("2026-01-01T00:00:06Z", "a"));
    assert!(k("2026-01-01T00:00:05.25Z", "z") < k("2026-01-01T00:00:05.3Z", "a"));
    assert!(k("2026-01-01T00:00:05Z", "a") < k("2026-01-01T00:00:05Z", "b"));
    assert!(k("2025-12-31T23:59:59.999Z", "z") < k("2026-01-01T00:00:00Z", "a"));
}

#[test]
fn runs_between_sync_points_merge_by_key() {
    let t0 = "2026-01-01T00:00:00Z";
    let (t1, t2, t3) = ("2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z", "2026-01-01T00:00:03Z");
    // x is a sync point after unrelated starts; each run is merged by key.
    let ours = file(&[("b", t1), ("x", t0), ("d", t3)]);
    let theirs = file(&[("a", t0), ("c", t2), ("x", t0), ("e", t2)]);
    let m = merge(PATH, None, &ours, &theirs).unwrap();
    assert_eq!(ids(&m.bytes), ["a", "b", "c", "x", "e", "d"]);
    assert!(m.conflicts.is_empty());
    assert_eq!(merge(PATH, None, &theirs, &ours).unwrap().bytes, m.bytes);
}

#[test]
fn sync_points_in_opposite_orders_are_each_written_once() {
    let (t1, t2) = ("2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z");
    let ours = file(&[("p", t2), ("q", t1)]);
    let theirs = file(&[("q", t1), ("p", t2)]);
    let m = merge(PATH, None, &ours, &theirs).unwrap();
    assert_eq!(ids(&m.bytes), ["q", "p"]);
    assert_eq!(merge(PATH, None, &theirs, &ours).unwrap().bytes, m.bytes);
}

#[test]
fn a_file_that_is_not_v2_is_merged_whole() {
    let path = "sources/chat/old.md";
    let (b, o, t) = (&b"base\n"[..], &b"ours\n"[..], &b"theirs\n"[..]);
    assert_eq!(merge(path, Some(b), o, b).unwrap(), Merged { bytes: o.to_vec(), conflicts: vec![] });
    assert_eq!(merge(path, Some(b), b, t).unwrap(), Merged { bytes: t.to_vec(), conflicts: vec![] });
    assert_eq!(merge(path, None, o, o).unwrap(), Merged { bytes: o.to_vec(), conflicts: vec![] });
    let m = merge(path, Some(b), o, t).unwrap();
    assert_eq!(m.bytes, o);
    assert_eq!(
        m.conflicts,
        [FrameConflict { source_id: String::new(), ours: o.to_vec(), theirs: t.to_vec() }]
    );
    assert_eq!(merge(path, None, o, t).unwrap().conflicts.len(), 1);
}

#[test]
fn the_base_is_only_indexed_when_versions_differ() {
    let ts = "2026-01-01T00:00:00Z";
    let ours = file(&[("a", ts), ("b", ts)]);
    let theirs = file(&[("a", ts), ("c", ts)]);
    // A damaged base is never looked at when no frame differs.
    let m = merge(PATH, Some(b"not an archive"), &ours, &theirs).unwrap();
    assert_eq!(ids(&m.bytes), ["a", "b", "c"]);
}
