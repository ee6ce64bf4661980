//! Health from the writer status: the streak, the current fingerprint, and
//! a remediation for every code.

use std::time::Duration;

use scriptorium_scheduler::status::{record_failure, record_success};
use scriptorium_scheduler::WriteFailure;

use super::*;

fn failure(code: Code, reason: &str, retryable: bool) -> Failure {
    Failure {
        time: "2026-03-04T10:00:00Z".to_owned(),
        code: code.as_str().to_owned(),
        reason: reason.to_owned(),
        retryable,
        fingerprint: status::fingerprint(code.as_str(), reason),
    }
}

#[test]
fn nothing_recorded_is_healthy() {
    let dir = tempfile::tempdir().unwrap();
    let h = Health::of(dir.path());
    assert_eq!(
        h,
        Health {
            failure_streak: 0,
            fingerprint: None,
            last_success: None,
            last_failure: None,
            remediation: None
        }
    );
}

#[test]
fn a_streak_has_a_fingerprint_and_a_remediation_until_a_success() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let denied =
        |n: u32| WriteFailure::new(Code::PermissionDenied, format!("HTTP 401 from the model (request {n})"));
    record_failure(root, "2026-03-04T10:00:00Z", &denied(1));
    record_failure(root, "2026-03-04T10:05:00Z", &denied(2));
    let h = Health::of(root);
    assert_eq!(h.failure_streak, 2);
    let fp = h.fingerprint.clone().unwrap();
    assert!(fp.starts_with("PERMISSION_DENIED:"), "{fp}");
    assert_eq!(h.last_failure.as_ref().unwrap().time, "2026-03-04T10:05:00Z");
    assert!(h.remediation.as_deref().unwrap().contains("SCRIPTORIUM_API_KEY"), "{h:?}");
    record_success(root, "2026-03-04T10:10:00Z");
    let h = Health::of(root);
    assert_eq!((h.failure_streak, h.fingerprint, h.remediation), (0, None, None));
    assert_eq!(h.last_success.as_deref(), Some("2026-03-04T10:10:00Z"));
    assert_eq!(h.last_failure.unwrap().fingerprint, fp, "the last failure stays as history");
}

#[test]
fn every_code_has_its_own_remediation() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let expect = [
        (
            Code::PermissionDenied,
            false,
            "set SCRIPTORIUM_API_KEY (or the variable memory.writer.api_key_env names)",
        ),
        (Code::ModelUnavailable, true, "memory.writer.model_url"),
        (Code::ValidationFailed, false, "scriptorium check"),
        (Code::Conflict, true, "stale base revision"),
        (Code::Conflict, false, "left out"),
        (Code::Io, true, "free space and permissions"),
        (Code::InvalidArgument, false, "scriptorium config show"),
        (Code::NotFound, false, "session id"),
        (Code::MemoryDisabled, false, "memory.backend"),
        (Code::Tampered, false, "restore the committed file"),
        (Code::Locked, true, "no process holds"),
    ];
    let mut seen = std::collections::HashSet::new();
    for (code, retryable, needle) in expect {
        let r = remediation(root, &failure(code, "why", retryable));
        assert!(r.contains(needle), "{code}: {r}");
        assert!(seen.insert(r), "{code}: the same text as another code");
    }
    assert_eq!(seen.len(), Code::ALL.len() + 1, "every code, and both kinds of conflict");
    let unknown = Failure { code: "SOMETHING_NEW".to_owned(), ..failure(Code::Io, "why", true) };
    assert!(remediation(root, &unknown).contains("see the reason"));
}

#[test]
fn a_locked_failure_names_the_holder_of_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let f = failure(Code::Locked, "another process holds .scriptorium/write.lock (waited 1000 ms)", true);
    assert!(remediation(root, &f).starts_with("no process holds"));
    let held = scriptorium_transaction::lock::acquire(root, Duration::ZERO).unwrap();
    let r = remediation(root, &f);
    let me = format!("the workspace is locked by pid {} since ", std::process::id());
    assert!(r.starts_with(&me) && r.contains("(.scriptorium/write.lock)"), "{r}");
    drop(held);
    // The scheduler's lock, held for a whole write, is looked at first.
    let sched = scriptorium_transaction::lock::acquire_file(root, SCHEDULER_LOCK, Duration::ZERO).unwrap();
    assert!(remediation(root, &f).contains("(.scriptorium/scheduler.lock)"));
    // A holder that recorded nothing is still said to hold it.
    std::fs::write(root.join(SCHEDULER_LOCK), b"").unwrap();
    let r = remediation(root, &f);
    assert!(r.starts_with("another process holds the scheduler lock (.scriptorium/scheduler.lock; it did not record its pid)"), "{r}");
    drop(sched);
    assert!(remediation(root, &f).starts_with("no process holds"));
}

/// Holds `rel` of `root` exclusively as a process that records nothing
/// would (`flock(1)`, an older version): through its own open file.
fn held_unrecorded(root: &std::path::Path, rel: &str) -> std::fs::File {
    std::fs::create_dir_all(root.join(".scriptorium")).unwrap();
    let f =
        std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(root.join(rel)).unwrap();
    f.try_lock().unwrap();
    f
}

#[test]
fn a_record_its_holder_left_behind_names_nobody() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let f = failure(Code::Locked, "another process holds .scriptorium/scheduler.lock (waited 1000 ms)", true);
    // A writer that has finished: nothing of it is left to name.
    drop(scriptorium_transaction::lock::acquire_file(root, SCHEDULER_LOCK, Duration::ZERO).unwrap());
    assert_eq!(std::fs::read(root.join(SCHEDULER_LOCK)).unwrap(), b"");
    // One that was killed left its record; a process that records nothing
    // holds the lock now.
    let other = held_unrecorded(root, SCHEDULER_LOCK);
    std::fs::write(root.join(SCHEDULER_LOCK), br#"{"pid":4294967295,"since":"2026-01-02T03:04:05Z"}"#)
        .unwrap();
    let r = remediation(root, &f);
    if cfg!(target_os = "linux") {
        assert!(r.starts_with("another process holds the scheduler lock"), "{r}");
        assert!(!r.contains("4294967295"), "{r}");
    } else {
        // Where it cannot be told whether it runs, the record is taken.
        assert!(r.contains("pid 4294967295"), "{r}");
    }
    drop(other);
    assert!(remediation(root, &f).starts_with("no process holds"));
}

#[test]
fn readers_holding_the_write_lock_are_told_as_readers() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let f = failure(Code::Locked, "another process holds .scriptorium/write.lock (waited 1000 ms)", true);
    let reader = scriptorium_transaction::lock::acquire_shared(root, Duration::ZERO).unwrap();
    let r = remediation(root, &f);
    assert!(r.starts_with("readers hold the write lock shared (.scriptorium/write.lock"), "{r}");
    // Looking did not disturb the reader: writers are still shut out.
    let e = scriptorium_transaction::lock::acquire(root, Duration::ZERO).unwrap_err();
    assert_eq!(e.code.as_str(), "LOCKED");
    drop(reader);
    assert!(remediation(root, &f).starts_with("no process holds"));
}
