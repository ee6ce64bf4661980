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
    // A holder that recorded nothing is still named as a holder.
    std::fs::write(root.join(SCHEDULER_LOCK), b"").unwrap();
    assert!(remediation(root, &f).starts_with("the workspace is locked by another process"));
    drop(sched);
    assert!(remediation(root, &f).starts_with("no process holds"));
}
