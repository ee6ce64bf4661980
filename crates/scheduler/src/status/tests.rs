//! The status file: streaks, fingerprints, files of older versions.

use super::*;
use crate::Code;

fn failure(code: Code, reason: &str) -> WriteFailure {
    WriteFailure::new(code, reason)
}

#[test]
fn the_streak_counts_failures_in_a_row_and_a_success_ends_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    assert_eq!(load(root), WriterStatus::default());
    for n in 1..=3u32 {
        let f = failure(Code::Locked, &format!("pid {n} holds the lock since 2026-01-0{n}T00:00:00Z"));
        assert!(record_failure(root, &format!("2026-01-0{n}T00:00:00Z"), &f));
        let s = load(root);
        assert_eq!(s.failure_streak, n);
        assert_eq!(s.latest_failure.as_ref().unwrap().code, "LOCKED");
    }
    let fp = load(root).latest_failure.unwrap().fingerprint;
    assert!(fp.starts_with("LOCKED:"), "{fp}");
    assert!(record_success(root, "2026-01-04T00:00:00Z"));
    let s = load(root);
    assert_eq!((s.failure_streak, s.latest_success.as_deref()), (0, Some("2026-01-04T00:00:00Z")));
    // The latest failure stays on record, with its fingerprint.
    assert_eq!(s.latest_failure.unwrap().fingerprint, fp);
    assert!(record_failure(root, "2026-01-05T00:00:00Z", &failure(Code::Io, "disk full")));
    assert_eq!(load(root).failure_streak, 1);
    assert!(record_pending(root, 7));
    let s = load(root);
    assert_eq!((s.failure_streak, s.pending_turns), (1, Some(7)));
}

#[test]
fn files_of_older_versions_read_as_they_would_have_been_written() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".scriptorium")).unwrap();
    let cases = [
        // A failure after the latest success: a streak of one.
        (
            r#"{"latest_success":"2026-01-01T00:00:00Z","latest_failure":{"time":"2026-01-02T00:00:00Z","code":"IO","reason":"disk full","retryable":true},"pending_turns":3}"#,
            1,
        ),
        // A success after it: none.
        (
            r#"{"latest_success":"2026-01-03T00:00:00Z","latest_failure":{"time":"2026-01-02T00:00:00Z","code":"IO","reason":"disk full","retryable":true},"pending_turns":3}"#,
            0,
        ),
        // Never a success.
        (
            r#"{"latest_success":null,"latest_failure":{"time":"2026-01-02T00:00:00Z","code":"IO","reason":"disk full","retryable":true},"pending_turns":null}"#,
            1,
        ),
        (r#"{"latest_success":null,"latest_failure":null,"pending_turns":0}"#, 0),
    ];
    for (text, streak) in cases {
        std::fs::write(root.join(STATUS_FILE), text).unwrap();
        let s = load(root);
        assert_eq!(s.failure_streak, streak, "{text}");
        if let Some(f) = s.latest_failure {
            assert_eq!(f.fingerprint, fingerprint("IO", "disk full"), "{text}");
        }
    }
    // An old file's streak goes on from what it implies.
    std::fs::write(root.join(STATUS_FILE), cases[0].0).unwrap();
    record_failure(root, "2026-01-04T00:00:00Z", &failure(Code::Io, "disk full"));
    assert_eq!(load(root).failure_streak, 2);
}

#[test]
fn fingerprints_ignore_times_ids_pids_and_paths_but_not_the_failure() {
    let same = [
        (
            r#"session "a7f3": another process holds .scriptorium/write.lock (waited 1000 ms); nothing was done, try again"#,
            r#"session "0b9f-2222": another process holds .scriptorium/write.lock (waited 60000 ms); nothing was done, try again"#,
        ),
        (
            "the workspace is locked by pid 4242 since 2026-01-02T03:04:05Z",
            "the workspace is locked by pid 17  since 2026-11-30T23:59:59.25Z",
        ),
        (
            "model request failed: HTTP 503 from http://127.0.0.1:11434/v1/chat/completions",
            "model request failed: HTTP 502 from https://models.example/v1/chat/completions",
        ),
        (
            "/home/ada/ws/topics/x.md: cannot write: No space left on device (os error 28)",
            "C:\\ws\\topics\\y.md: cannot write: No space left on device (os error 28)",
        ),
        ("node `u-17` vanished", "node `u-18` vanished"),
    ];
    for (a, b) in same {
        assert_eq!(normalise(a), normalise(b), "{a} / {b}");
        assert_eq!(fingerprint("LOCKED", a), fingerprint("LOCKED", b));
    }
    let differ = [("disk full", "permission denied"), ("HTTP 503 from <x>", "timed out after 120 s")];
    for (a, b) in differ {
        assert_ne!(fingerprint("IO", a), fingerprint("IO", b), "{a} / {b}");
    }
    assert_ne!(fingerprint("IO", "disk full"), fingerprint("LOCKED", "disk full"));
    let fp = fingerprint("MODEL_UNAVAILABLE", "x");
    assert_eq!(fp.len(), "MODEL_UNAVAILABLE:".len() + 12);
    assert!(fp["MODEL_UNAVAILABLE:".len()..].bytes().all(|b| b.is_ascii_hexdigit()));
}

#[test]
fn normalising_is_linear_and_total_over_hostile_reasons() {
    // An unclosed quote, escapes, a very long word, odd white space.
    assert_eq!(normalise(r#"bad "unclosed \" still"#), r#"bad "*""#);
    assert_eq!(normalise("a\u{2028}b\t\tc\r\n"), "a b c");
    assert_eq!(normalise(""), "");
    let long = "x9".repeat(500_000);
    assert_eq!(normalise(&long), "#");
    let long = "é".repeat(500_000);
    assert_eq!(normalise(&long).len(), long.len());
    let many = "1 ".repeat(200_000);
    assert_eq!(normalise(&many), "# ".repeat(200_000).trim_end());
}
