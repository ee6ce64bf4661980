//! Health through the binary: `status --json` carries
//! `"health":{"failure_streak","fingerprint","last_success","last_failure","remediation"}`,
//! failed writes make a streak with a stable fingerprint and a remediation
//! per code, a successful write ends it, and a hook's background write that
//! fails before it could write counts too.

use std::path::Path;

use scriptorium_testkit::replay::{Replay, Scripted};
use serde_json::{json, Value};

use super::{error_of, json_lines, run};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn status(w: &str) -> Value {
    let out = run(&["status", "--workspace", w, "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    json_lines(&out.stdout).pop().unwrap()
}

fn status_text(w: &str) -> String {
    let out = run(&["status", "--workspace", w], b"");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Five pending turns of session `tg-group-1`.
fn ours(w: &str) {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scheduler/tests/fixtures/ours.jsonl");
    let out = run(&["session", "import", "--workspace", w, "--format", "jsonl", s(&f), "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A forced write of `tg-group-1` through a scripted endpoint answering
/// `status`.
fn write_answered(w: &str, status: u16) -> Value {
    let server = Replay::start(vec![Scripted::status(status, "{\"error\":\"no\"}")]).unwrap();
    let url = &server.base_url;
    let args = [
        "write",
        "--workspace",
        w,
        "--session",
        "tg-group-1",
        "--force",
        "--model-url",
        url,
        "--model-name",
        "m",
    ];
    error_of(&run(&args, b""))
}

#[test]
fn failed_writes_make_a_streak_with_a_stable_fingerprint_and_a_success_ends_it() {
    let dir = tempfile::tempdir().unwrap();
    let w = s(dir.path());
    ours(w);
    let healthy = json!({"failure_streak": 0, "fingerprint": null, "last_success": null,
        "last_failure": null, "remediation": null});
    assert_eq!(status(w)["health"], healthy);
    assert!(status_text(w).contains("\nhealth: ok; no successful write yet"));

    // The key refused twice: one failure repeating, one fingerprint.
    assert_eq!(write_answered(w, 401)["code"], "PERMISSION_DENIED");
    let first = status(w)["health"].clone();
    assert_eq!(write_answered(w, 403)["code"], "PERMISSION_DENIED");
    let h = status(w)["health"].clone();
    let mut keys: Vec<&str> = h.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["failure_streak", "fingerprint", "last_failure", "last_success", "remediation"]);
    assert_eq!((first["failure_streak"].as_u64(), h["failure_streak"].as_u64()), (Some(1), Some(2)));
    let fp = h["fingerprint"].as_str().unwrap();
    assert!(fp.starts_with("PERMISSION_DENIED:"), "{h}");
    assert_eq!(first["fingerprint"], h["fingerprint"], "HTTP 401 and 403: the same failure");
    assert_eq!(h["last_failure"]["fingerprint"], fp);
    assert_eq!(h["last_failure"]["code"], "PERMISSION_DENIED");
    assert!(h["remediation"].as_str().unwrap().contains("set SCRIPTORIUM_API_KEY"), "{h}");
    // The writer object stays as it was, its failure with its fingerprint.
    assert_eq!(status(w)["writer"]["latest_failure"], h["last_failure"]);
    let text = status_text(w);
    assert!(text.contains("\nhealth: 2 failed write(s) in a row; no successful write yet\n"), "{text}");
    assert!(text.contains(&format!("\n  fingerprint {fp}\n")), "{text}");
    assert!(text.contains("\n  what to do: the model endpoint refused the key"), "{text}");

    // Another failure: the streak goes on, under a new fingerprint.
    assert_eq!(write_answered(w, 503)["code"], "MODEL_UNAVAILABLE");
    let h = status(w)["health"].clone();
    assert_eq!(h["failure_streak"], 3);
    assert!(h["fingerprint"].as_str().unwrap().starts_with("MODEL_UNAVAILABLE:"), "{h}");
    assert!(h["remediation"].as_str().unwrap().contains("memory.writer.model_url"), "{h}");
    assert_eq!(status(w)["pending_turns"], 5, "nothing was written");

    // A successful write ends it; the last failure stays as history.
    let out = run(&["write", "--workspace", w, "--force", "--model", "offline", "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let h = status(w)["health"].clone();
    assert_eq!(
        (h["failure_streak"].as_u64(), &h["fingerprint"], &h["remediation"]),
        (Some(0), &Value::Null, &Value::Null)
    );
    assert!(h["last_success"].is_string());
    assert_eq!(h["last_failure"]["code"], "MODEL_UNAVAILABLE");
    assert!(status_text(w).contains("\nhealth: ok; last success "));
}

#[test]
fn a_background_write_that_cannot_start_counts_in_the_streak() {
    use sha2::{Digest, Sha256};
    let dir = tempfile::tempdir().unwrap();
    let w = s(dir.path());
    ours(w);
    // Another write of the session runs (its lock held here) and this one
    // may not wait: LOCKED before the scheduler is reached.
    let name: String = Sha256::digest(b"tg-group-1")[..16].iter().map(|b| format!("{b:02x}")).collect();
    let lock = dir.path().join(format!(".scriptorium/hooks/writing/{name}.lock"));
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    let held = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&lock).unwrap();
    held.lock().unwrap();
    let args = ["hook", "write", "--workspace", w, "--event", "PreCompact", "--session", "tg-group-1"];
    let mut now = args.to_vec();
    now.extend(["--force", "--deadline-secs", "0"]);
    let e = error_of(&run(&now, b""));
    assert_eq!(e["code"], "LOCKED");
    let st = status(w);
    assert_eq!(st["health"]["failure_streak"], 1, "{st}");
    assert_eq!(st["health"]["last_failure"]["code"], "LOCKED");
    assert!(st["health"]["last_failure"]["reason"].as_str().unwrap().contains("still ran"), "{st}");
    assert!(st["health"]["fingerprint"].as_str().unwrap().starts_with("LOCKED:"));
    assert_eq!(st["hooks"]["last_error"]["event"], "PreCompact");
    assert_eq!(st["pending_turns"], 5);
    // The other write is done: the next one runs, forced (the request it
    // could not run was kept), and ends the streak.
    drop(held);
    let mut later = args.to_vec();
    later.extend(["--deadline-secs", "30"]);
    let out = run(&later, b"");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let st = status(w);
    // The session's four turns are written; the other session's one waits.
    assert_eq!(
        (st["pending_turns"].as_u64(), st["health"]["failure_streak"].as_u64()),
        (Some(1), Some(0)),
        "{st}"
    );
}
