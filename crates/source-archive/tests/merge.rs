//! The three-way merge of an archive file on files the crate's own writer
//! made: both sides appending, one side only, unrelated histories,
//! duplicates, conflicts and their resolution, refusals, and a property
//! over random interleavings.

use std::collections::{HashMap, HashSet};

use proptest::prelude::*;
use scriptorium_source_archive::merge::{merge, FrameConflict, Merged};
use scriptorium_source_archive::v2::{self, Expect};
use scriptorium_source_archive::{Code, Role, SourceId, SourceRecord, Speaker};

const PATH: &str = "sources/chat/_v2/team-1.md";
const EXPECT: Expect<'static> = Expect { provider: "chat", thread: "team-1" };

fn record(m: &str, ts: &str, body: &str) -> SourceRecord {
    let id = SourceId::new("chat", "team-1", m).unwrap();
    let speaker = Speaker::from_transport(Some("7391"), Some("Ada"));
    SourceRecord::new(id, Role::User, ts, speaker, false, body.to_owned()).unwrap()
}

/// A record whose timestamp is `n` seconds (and `n` milliseconds) in.
fn at(m: &str, n: u32) -> SourceRecord {
    record(
        m,
        &format!("2026-08-09T10:{:02}:{:02}.{:03}Z", n / 60 % 60, n % 60, n % 1000),
        &format!("said {m}"),
    )
}

fn file(records: &[SourceRecord]) -> Vec<u8> {
    v2::write_file(records)
}

fn frame(r: &SourceRecord) -> Vec<u8> {
    let mut out = Vec::new();
    v2::write_frame(r, &mut out);
    out
}

/// The message ids of a file that must parse to its end.
fn ids(bytes: &[u8]) -> Vec<String> {
    let parsed = v2::parse_prefix(bytes, Some(EXPECT));
    assert_eq!(parsed.error, None, "the merge does not parse to its end");
    parsed.frames.iter().map(|f| f.message().into_owned()).collect()
}

fn clean(bytes: Vec<u8>) -> Merged {
    Merged { bytes, conflicts: Vec::new() }
}

#[test]
fn both_sides_appending_give_the_base_then_the_new_frames_in_order() {
    let base = [at("m1", 1), at("m2", 2)];
    let ours = file(&[base[0].clone(), base[1].clone(), at("o1", 5), at("o2", 9)]);
    let theirs = file(&[base[0].clone(), base[1].clone(), at("t1", 3), at("t2", 7)]);
    let m = merge(PATH, Some(&file(&base)), &ours, &theirs).unwrap();
    assert_eq!(ids(&m.bytes), ["m1", "m2", "t1", "o1", "t2", "o2"]);
    assert!(m.conflicts.is_empty());
    // The same instant written with other fraction digits orders by id.
    let a = record("b", "2026-08-09T10:00:00.5Z", "x");
    let b = record("a", "2026-08-09T10:00:00.500Z", "y");
    let m = merge(PATH, None, &file(&[a]), &file(&[b])).unwrap();
    assert_eq!(ids(&m.bytes), ["a", "b"]);
}

#[test]
fn one_side_appending_gives_that_side_exactly() {
    let base = file(&[at("m1", 1), at("m2", 2)]);
    let longer = file(&[at("m1", 1), at("m2", 2), at("m3", 0)]);
    assert_eq!(merge(PATH, Some(&base), &base, &longer).unwrap(), clean(longer.clone()));
    assert_eq!(merge(PATH, Some(&base), &longer, &base).unwrap(), clean(longer.clone()));
    // Equal sides give ours exactly, whatever the base.
    assert_eq!(merge(PATH, None, &longer, &longer).unwrap(), clean(longer.clone()));
    // A file that is only the marker extends nothing but merges all the same.
    let empty = file(&[]);
    assert_eq!(merge(PATH, None, &empty, &longer).unwrap(), clean(longer));
}

#[test]
fn unrelated_histories_merge_by_key_and_keep_shared_frames_once() {
    let ours = file(&[at("a", 1), at("s", 4), at("c", 6)]);
    let theirs = file(&[at("b", 2), at("d", 3), at("s", 4), at("e", 5)]);
    let m = merge(PATH, None, &ours, &theirs).unwrap();
    assert_eq!(ids(&m.bytes), ["a", "b", "d", "s", "e", "c"]);
    assert!(m.conflicts.is_empty());
}

#[test]
fn swapping_the_sides_gives_the_same_bytes() {
    let base = [at("m1", 10)];
    let ours = file(&[base[0].clone(), at("x", 30), at("s", 40), at("y", 5)]);
    let theirs = file(&[base[0].clone(), at("z", 20), at("s", 40), at("w", 50)]);
    let one = merge(PATH, Some(&file(&base)), &ours, &theirs).unwrap();
    let two = merge(PATH, Some(&file(&base)), &theirs, &ours).unwrap();
    assert_eq!(one, two);
    assert_eq!(ids(&one.bytes), ["m1", "z", "x", "s", "y", "w"]);
}

#[test]
fn a_duplicate_with_the_same_bytes_is_written_once() {
    let ours = file(&[at("m1", 1), at("m2", 2)]);
    let theirs = file(&[at("m2", 2), at("m3", 3)]);
    let m = merge(PATH, None, &ours, &theirs).unwrap();
    assert_eq!(ids(&m.bytes), ["m1", "m2", "m3"]);
    assert_eq!(m.bytes, file(&[at("m1", 1), at("m2", 2), at("m3", 3)]));
}

#[test]
fn two_versions_of_a_record_are_a_conflict_that_keeps_ours() {
    let (o, t) =
        (record("m2", "2026-08-09T10:00:02Z", "ours"), record("m2", "2026-08-09T10:00:02Z", "theirs"));
    let ours = file(&[at("m1", 1), o.clone(), at("m3", 3)]);
    let theirs = file(&[at("m1", 1), t.clone()]);
    let m = merge(PATH, Some(&file(&[at("m1", 1)])), &ours, &theirs).unwrap();
    assert_eq!(m.bytes, ours);
    assert_eq!(
        m.conflicts,
        [FrameConflict { source_id: "chat/team-1/m2".into(), ours: frame(&o), theirs: frame(&t) }]
    );
    let m = merge(PATH, None, &theirs, &ours).unwrap();
    assert_eq!(m.bytes, file(&[at("m1", 1), t.clone(), at("m3", 3)]));
    assert_eq!(m.conflicts[0].ours, frame(&t));
}

#[test]
fn the_base_settles_which_version_was_a_deliberate_resolution() {
    let (old, new) =
        (record("m2", "2026-08-09T10:00:02Z", "old"), record("m2", "2026-08-09T10:00:02Z", "new"));
    let base = file(&[at("m1", 1), old.clone()]);
    let resolved = file(&[at("m1", 1), new.clone()]);
    let appended = file(&[at("m1", 1), old.clone(), at("m3", 3)]);
    let want = file(&[at("m1", 1), new, at("m3", 3)]);
    assert_eq!(merge(PATH, Some(&base), &resolved, &appended).unwrap(), clean(want.clone()));
    assert_eq!(merge(PATH, Some(&base), &appended, &resolved).unwrap(), clean(want));
}

#[test]
fn a_damaged_side_is_refused_naming_it() {
    let good = file(&[at("m1", 1), at("m2", 2)]);
    let mut damaged = good.clone();
    damaged.truncate(good.len() - 3);
    let first = v2::parse_prefix(&good, None).frames[1].offset as u64;
    for (ours, theirs, which) in [(&damaged, &good, "ours"), (&good, &damaged, "theirs")] {
        let err = merge(PATH, Some(&good), ours, theirs).unwrap_err();
        assert_eq!(err.code(), Code::ValidationFailed, "{err}");
        assert_eq!(err.path().unwrap().to_str(), Some(PATH));
        assert_eq!(err.offset(), Some(first));
        assert!(err.message().contains(which) && err.message().contains(PATH), "{err}");
    }
    // A frame of another conversation is damage too.
    let other = v2::write_file(&[SourceRecord::new(
        SourceId::new("chat", "elsewhere", "m9").unwrap(),
        Role::User,
        "2026-08-09T10:00:00Z",
        None,
        false,
        "x".into(),
    )
    .unwrap()]);
    assert_eq!(merge(PATH, None, &good, &other).unwrap_err().code(), Code::ValidationFailed);
}

#[test]
fn damage_after_the_shared_start_is_found_where_a_whole_parse_finds_it() {
    let ours = file(&[at("m1", 1), at("m2", 2), at("m3", 3)]);
    let start = file(&[at("m1", 1), at("m2", 2), at("t1", 4)]);
    // A frame repeating an id of the part both sides share, and a cut frame.
    let twin = [&start[..], &frame(&at("m1", 1))[..]].concat();
    let cut = [&start[..], &frame(&at("t2", 5))[..10]].concat();
    for theirs in [twin, cut] {
        let whole = v2::parse_prefix(&theirs, Some(EXPECT)).error.unwrap();
        for (o, t, which) in [(&ours, &theirs, "theirs"), (&theirs, &ours, "ours")] {
            let err = merge(PATH, None, o, t).unwrap_err();
            assert_eq!(err.code(), Code::ValidationFailed);
            assert_eq!((err.offset(), err.line()), (Some(whole.offset as u64), Some(whole.line)), "{err}");
            assert!(err.message().contains(which) && err.message().contains(&whole.reason), "{err}");
        }
    }
}

#[test]
fn large_sides_parsed_together_merge_and_refuse_alike() {
    // Over a megabyte each, so the sides are parsed on two threads.
    let long = "x".repeat(400);
    let rec = |p: &str, k: u32| record(&format!("{p}{k}"), &format!("2026-08-09T10:00:00.{k:06}Z"), &long);
    let shared: Vec<SourceRecord> = (0..10).map(|k| rec("m", k)).collect();
    let ours: Vec<SourceRecord> =
        shared.iter().cloned().chain((0..6000).step_by(2).map(|k| rec("e", k + 10))).collect();
    let theirs: Vec<SourceRecord> =
        shared.iter().cloned().chain((1..6000).step_by(2).map(|k| rec("d", k + 10))).collect();
    let (o, t) = (file(&ours), file(&theirs));
    assert!(o.len() > 1 << 20 && t.len() > 1 << 20);
    let m = merge(PATH, Some(&file(&shared)), &o, &t).unwrap();
    let want: Vec<SourceRecord> = shared
        .iter()
        .cloned()
        .chain((0..6000).map(|k| rec(if k % 2 == 0 { "e" } else { "d" }, k + 10)))
        .collect();
    assert_eq!(m, clean(file(&want)));
    assert_eq!(merge(PATH, None, &t, &o).unwrap(), m);
    let cut = &t[..t.len() - 1];
    let whole = v2::parse_prefix(cut, Some(EXPECT)).error.unwrap();
    let err = merge(PATH, None, &o, cut).unwrap_err();
    assert_eq!((err.code(), err.offset()), (Code::ValidationFailed, Some(whole.offset as u64)));
    assert!(err.message().contains("theirs"), "{err}");
}

#[test]
fn a_legacy_file_is_merged_whole() {
    let path = "sources/chat/team-1.md";
    let base = b"[2026-08-09T10:00:00Z] Ada: one\n".to_vec();
    let more = [&base[..], b"[2026-08-09T10:00:01Z] Ada: two\n"].concat();
    let other = b"[2026-08-09T10:00:00Z] Bo: else\n".to_vec();
    assert_eq!(merge(path, Some(&base), &base, &more).unwrap(), clean(more.clone()));
    assert_eq!(merge(path, Some(&base), &more, &base).unwrap(), clean(more.clone()));
    let m = merge(path, Some(&base), &more, &other).unwrap();
    assert_eq!(m.bytes, more);
    assert_eq!(m.conflicts, [FrameConflict { source_id: String::new(), ours: more, theirs: other }]);
}

/// One side of the property: the base's records, then its own and some of
/// the shared new records, interleaved as `picks` says.
fn side(
    base: &[SourceRecord],
    own: &[SourceRecord],
    shared: &[SourceRecord],
    picks: &[bool],
) -> Vec<SourceRecord> {
    let mut out = base.to_vec();
    let (mut o, mut s) = (own.iter(), shared.iter());
    for &p in picks {
        if let Some(r) = if p { o.next() } else { s.next() } {
            out.push(r.clone());
        }
    }
    out.extend(o.cloned());
    out
}

/// Whether `sub` is a subsequence of `all`.
fn in_order(sub: &[String], all: &[String]) -> bool {
    let mut it = all.iter();
    sub.iter().all(|x| it.any(|y| y == x))
}

fn records(prefix: &str, times: &[u32]) -> Vec<SourceRecord> {
    times.iter().enumerate().map(|(k, &n)| at(&format!("{prefix}{k}"), n)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_interleavings_merge_every_frame_once_in_each_sides_order(
        base in prop::collection::vec(0u32..50, 0..6),
        ours in prop::collection::vec(0u32..50, 0..8),
        theirs in prop::collection::vec(0u32..50, 0..8),
        shared in prop::collection::vec((0u32..50, any::<bool>(), any::<bool>()), 0..6),
        o_picks in prop::collection::vec(any::<bool>(), 0..16),
        t_picks in prop::collection::vec(any::<bool>(), 0..16),
    ) {
        let base = records("b", &base);
        let shared_all = records("s", &shared.iter().map(|s| s.0).collect::<Vec<_>>());
        let pick = |k: usize| -> Vec<SourceRecord> {
            shared_all.iter().zip(&shared).filter(|(_, s)| if k == 0 { s.1 } else { s.2 }).map(|(r, _)| r.clone()).collect()
        };
        let o = file(&side(&base, &records("o", &ours), &pick(0), &o_picks));
        let t = file(&side(&base, &records("t", &theirs), &pick(1), &t_picks));
        let m = merge(PATH, Some(&file(&base)), &o, &t).unwrap();
        prop_assert!(m.conflicts.is_empty());
        let got = ids(&m.bytes);
        let unique: HashSet<&String> = got.iter().collect();
        prop_assert_eq!(unique.len(), got.len());
        let (o_ids, t_ids) = (ids(&o), ids(&t));
        let want: HashSet<&String> = o_ids.iter().chain(&t_ids).collect();
        prop_assert_eq!(unique, want);
        prop_assert!(in_order(&o_ids, &got) && in_order(&t_ids, &got));
        // Every frame is one side's bytes exactly.
        let parsed = v2::parse_prefix(&m.bytes, Some(EXPECT));
        let frames: HashMap<String, &[u8]> =
            parsed.frames.iter().map(|f| (f.message().into_owned(), &m.bytes[f.offset..f.offset + f.len])).collect();
        for f in v2::parse_prefix(&o, Some(EXPECT)).frames {
            prop_assert_eq!(frames[&f.message().into_owned()], &o[f.offset..f.offset + f.len]);
        }
        prop_assert_eq!(&merge(PATH, Some(&file(&base)), &t, &o).unwrap(), &m);
        prop_assert_eq!(merge(PATH, None, &t, &o).unwrap().bytes, merge(PATH, None, &o, &t).unwrap().bytes);
    }
}

/// Times the merge of a 1,000,000-frame file (run with `--release --
/// --ignored`): a common base with both sides appending, and two unrelated
/// halves interleaved through the hash-map path. Quadratic work would take
/// hours; the bound only catches that.
#[test]
#[ignore = "a timing run on large files"]
#[allow(clippy::print_stderr)] // the timing is what this run is for
fn a_million_frames_merge_in_linear_time() {
    let n = 1_000_000u32;
    let ts = |k: u32| {
        format!(
            "2026-08-09T{:02}:{:02}:{:02}.{:03}Z",
            k / 3_600_000 % 24,
            k / 60_000 % 60,
            k / 1000 % 60,
            k % 1000
        )
    };
    let rec = |p: &str, k: u32| record(&format!("{p}{k}"), &ts(k), "a line of the conversation");
    let base: Vec<SourceRecord> = (0..n - 4).map(|k| rec("m", k)).collect();
    let ours = file(&[base.clone(), vec![rec("o", n - 4), rec("o", n - 2)]].concat());
    let theirs = file(&[base.clone(), vec![rec("t", n - 3), rec("t", n - 1)]].concat());
    let base = file(&base);
    let start = std::time::Instant::now();
    let m = merge(PATH, Some(&base), &ours, &theirs).unwrap();
    let appended = start.elapsed();
    assert_eq!(m.bytes.len(), ours.len() + theirs.len() - base.len());
    let ours = file(&(0..n).step_by(2).map(|k| rec("e", k)).collect::<Vec<_>>());
    let theirs = file(&(1..n).step_by(2).map(|k| rec("d", k)).collect::<Vec<_>>());
    let start = std::time::Instant::now();
    let u = merge(PATH, None, &ours, &theirs).unwrap();
    let unrelated = start.elapsed();
    assert_eq!(u.bytes.len(), ours.len() + theirs.len() - v2::MARKER.len() - 1);
    eprintln!(
        "1M frames ({} MB): both appending {appended:?}, unrelated halves {unrelated:?}",
        m.bytes.len() >> 20
    );
    assert!(appended.as_secs() < 5 && unrelated.as_secs() < 5);
}
