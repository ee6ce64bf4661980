//! A hook against a missing, locked, corrupted or disabled workspace, and
//! against input that is not an event: never a failed agent, never a
//! silent failure.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{append, event, hook, hook_raw, json_lines, ok_json, s, workspace_with};

const SESSION: &str = "7c1d0000-0000-4000-8000-000000000001";

fn turn(uuid: &str, parent: Option<&str>, text: &str) -> Value {
    json!({"parentUuid": parent, "sessionId": SESSION, "type": "user", "uuid": uuid,
           "message": {"role": "user", "content": text}, "timestamp": "2026-03-04T10:00:00.000Z"})
}

/// The notice of an answer, checking it is the answer's only key.
fn notice(answer: &Option<Value>) -> String {
    let a = answer.as_ref().expect("an answer");
    assert_eq!(a.as_object().unwrap().keys().collect::<Vec<_>>(), ["systemMessage"], "{a}");
    a["systemMessage"].as_str().unwrap().to_owned()
}

#[test]
fn a_missing_workspace_injects_nothing_and_the_first_stop_creates_it() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("not-yet");
    let transcript = dir.path().join("t.jsonl");
    append(&transcript, &[turn("u1", None, "Hello there, I am Ada.")]);
    for (name, extra) in
        [("SessionStart", json!({"source": "startup"})), ("UserPromptSubmit", json!({"prompt": "hello"}))]
    {
        assert_eq!(hook("claude-code", &ws, &event(name, SESSION, &transcript, extra)), None, "{name}");
    }
    assert!(!ws.exists(), "reading never creates the workspace");
    assert_eq!(hook("claude-code", &ws, &event("Stop", SESSION, &transcript, json!({}))), None);
    assert!(ws.join(".scriptorium").is_dir());
    let status = ok_json(&["status", "--workspace", s(&ws), "--json"], b"");
    assert_eq!(status["pending_turns"], 1);
    assert_eq!(status["hooks"]["last_error"], Value::Null);
}

#[test]
fn a_locked_workspace_still_answers_and_a_write_past_its_deadline_is_recorded_as_locked() {
    let dir = workspace_with("[memory.writer]\nthreshold = 1\n\n[memory.hooks]\nwrite_deadline_secs = 1\n");
    let ws = dir.path();
    let transcript = ws.join("t.jsonl");
    append(&transcript, &[turn("u1", None, "The Orchid review is on Friday.")]);
    assert_eq!(hook("claude-code", ws, &event("Stop", SESSION, &transcript, json!({}))), None);
    // Let that first write finish, then hold the writers' lock.
    super::wait_for_status(ws, |st| st["writer"]["latest_success"].is_string() && st["pending_turns"] == 0);
    let held = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(ws.join(".scriptorium/write.lock"))
        .unwrap();
    held.lock().unwrap();
    append(&transcript, &[turn("u2", Some("u1"), "Ada will bring the Orchid slides.")]);
    assert_eq!(hook("claude-code", ws, &event("Stop", SESSION, &transcript, json!({}))), None);
    let asked = hook(
        "claude-code",
        ws,
        &event("UserPromptSubmit", SESSION, &transcript, json!({"prompt": "Orchid review"})),
    );
    assert!(asked.is_some(), "recall answers while a writer holds the lock");
    let recorded = ws.join(".scriptorium/hooks/last_error.json");
    let start = Instant::now();
    while !recorded.exists() {
        assert!(start.elapsed() < Duration::from_secs(60), "the locked write was never recorded");
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(held);
    let status = ok_json(&["status", "--workspace", s(ws), "--json"], b"");
    let e = &status["hooks"]["last_error"];
    assert_eq!((e["code"].as_str(), e["event"].as_str()), (Some("LOCKED"), Some("Stop")), "{status}");
    assert!(e["time"].as_str().unwrap().ends_with('Z'));
    // The turn was recorded and waits for the next write.
    assert_eq!(status["pending_turns"], 1, "{status}");
}

#[test]
fn a_corrupted_session_store_is_told_to_the_person_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    let transcript = ws.join("t.jsonl");
    append(&transcript, &[turn("u1", None, "hello")]);
    assert_eq!(hook("claude-code", ws, &event("Stop", SESSION, &transcript, json!({}))), None);
    std::fs::write(ws.join(".scriptorium/sessions.db"), vec![0x5a; 8192]).unwrap();
    append(&transcript, &[turn("u2", Some("u1"), "again")]);
    let said = notice(&hook("claude-code", ws, &event("Stop", SESSION, &transcript, json!({}))));
    assert!(said.starts_with("scriptorium memory: "), "{said}");
    let recorded: Value =
        serde_json::from_slice(&std::fs::read(ws.join(".scriptorium/hooks/last_error.json")).unwrap())
            .unwrap();
    assert!(said.ends_with(&format!("({})", recorded["code"].as_str().unwrap())), "{said} / {recorded}");
    assert_eq!(recorded["event"], "Stop");
    // The nudge needs the store too: SessionStart says so, and still exits 0.
    let start =
        hook("claude-code", ws, &event("SessionStart", SESSION, &transcript, json!({"source": "startup"})));
    assert!(start.unwrap()["systemMessage"].is_string());
}

#[test]
fn a_disabled_backend_reads_and_writes_nothing_and_says_so_once_per_session() {
    let dir = workspace_with("[memory]\nbackend = \"none\"\n");
    let ws = dir.path();
    let transcript = ws.join("t.jsonl");
    append(&transcript, &[turn("u1", None, "hello")]);
    let said = notice(&hook(
        "claude-code",
        ws,
        &event("SessionStart", SESSION, &transcript, json!({"source": "startup"})),
    ));
    assert!(said.ends_with("(MEMORY_DISABLED)"), "{said}");
    for (name, extra) in [
        ("UserPromptSubmit", json!({"prompt": "hello"})),
        ("Stop", json!({})),
        ("PreCompact", json!({"trigger": "manual"})),
    ] {
        assert_eq!(hook("claude-code", ws, &event(name, SESSION, &transcript, extra)), None, "{name}");
    }
    assert!(!ws.join(".scriptorium").exists());
}

#[test]
fn input_that_is_not_an_event_gets_a_notice_not_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    for input in [&b"not json"[..], b"[]", b"{\"session_id\":\"x\"}", b"", &[0xff, 0xfe, 0x00]] {
        let out = hook_raw("claude-code", dir.path(), input);
        let said = notice(&json_lines(&out.stdout).pop());
        assert!(said.ends_with("(INVALID_ARGUMENT)"), "{said}");
    }
    // An event memory has nothing to do for: nothing at all.
    let other = json!({"hook_event_name": "PreToolUse", "session_id": "x", "tool_name": "Bash"});
    assert_eq!(hook("claude-code", dir.path(), &other), None);
    // A transcript that is not a file is refused with a notice.
    let not_a_file = event("Stop", SESSION, dir.path(), json!({}));
    assert!(notice(&hook("claude-code", dir.path(), &not_a_file)).ends_with("(INVALID_ARGUMENT)"));
}

#[test]
fn a_session_closed_before_its_first_turn_owes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    let transcript = ws.join("t.jsonl");
    append(&transcript, &[turn("u1", None, "hello")]);
    assert_eq!(hook("claude-code", ws, &event("Stop", SESSION, &transcript, json!({}))), None);
    // What a SessionEnd starts, run in the foreground.
    let write = |session: &str| {
        let args =
            ["hook", "write", "--workspace", s(ws), "--session", session, "--force", "--event", "SessionEnd"];
        let out = super::run(&[&args[..], &["--deadline-secs", "5"]].concat(), b"");
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    };
    // A session with no turns: nothing to write, nothing failed.
    write("never-spoke");
    assert!(!ws.join(".scriptorium/hooks/last_error.json").exists());
    // The session that spoke is written.
    write(SESSION);
    let status = ok_json(&["status", "--workspace", s(ws), "--json"], b"");
    assert_eq!(status["pending_turns"], 0, "{status}");
}

#[test]
fn a_damaged_line_is_skipped_and_told_and_the_rest_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let transcript = dir.path().join("t.jsonl");
    append(&transcript, &[turn("u1", None, "first")]);
    std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .map(|mut f| std::io::Write::write_all(&mut f, b"{\"uuid\": \"broken\", \"type\": \n").unwrap())
        .unwrap();
    append(&transcript, &[turn("u3", Some("u1"), "third, after the damage")]);
    let said = notice(&hook("claude-code", &ws, &event("Stop", SESSION, &transcript, json!({}))));
    assert!(said.ends_with("line 2] (INVALID_ARGUMENT)"), "{said}");
    append(&transcript, &[turn("u4", Some("u3"), "fourth")]);
    assert_eq!(hook("claude-code", &ws, &event("Stop", SESSION, &transcript, json!({}))), None);
    let status = ok_json(&["status", "--workspace", s(&ws), "--json"], b"");
    assert_eq!(status["pending_turns"], 3, "{status}");
    assert_eq!(status["hooks"]["last_error"]["event"], "Stop");
}

#[test]
fn a_bad_command_line_still_exits_0_with_a_notice() {
    for args in [&["hook", "claude-code", "--bogus"][..], &["hook", "codex", "--workspace"], &["hook"]] {
        let out = super::run(args, b"{}");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let said = notice(&json_lines(&out.stdout).pop());
        assert!(said.ends_with("(INVALID_ARGUMENT)"), "{said}");
    }
}

#[cfg(unix)]
#[test]
fn a_linked_state_folder_is_never_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(ws.join(".scriptorium")).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, ws.join(".scriptorium/hooks")).unwrap();
    let transcript = dir.path().join("t.jsonl");
    append(&transcript, &[turn("u1", None, "hello")]);
    let said = notice(&hook("claude-code", &ws, &event("Stop", SESSION, &transcript, json!({}))));
    assert!(said.contains("symbolic link"), "{said}");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0, "nothing written through the link");
    // A bad event is told, and not recorded through the link either.
    assert!(notice(&super::hook("claude-code", &ws, &json!({"nope": 1}))).ends_with("(INVALID_ARGUMENT)"));
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

#[test]
fn a_session_store_made_anew_gets_the_whole_transcript_again() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let transcript = dir.path().join("t.jsonl");
    append(&transcript, &[turn("u1", None, "one"), turn("u2", Some("u1"), "two")]);
    assert_eq!(hook("claude-code", &ws, &event("Stop", SESSION, &transcript, json!({}))), None);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(ws.join(format!(".scriptorium/sessions.db{suffix}")));
    }
    append(&transcript, &[turn("u3", Some("u2"), "three")]);
    assert_eq!(hook("claude-code", &ws, &event("Stop", SESSION, &transcript, json!({}))), None);
    let status = ok_json(&["status", "--workspace", s(&ws), "--json"], b"");
    assert_eq!(status["pending_turns"], 3, "{status}");
}
