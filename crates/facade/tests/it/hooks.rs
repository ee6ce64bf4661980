//! The coding-agent hooks through the binary: real-shaped Claude Code and
//! Codex events and transcripts, the answers' exact shapes, incremental
//! transcript reading, the save nudge, the context cap, and every way a
//! hook can meet a broken workspace without failing its agent.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{json_lines, run};

mod claude;
mod codex;

mod trouble;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs `hook <harness>` with `event` on stdin; asserts the exit code is 0
/// and stderr is empty; the JSON printed, if any.
fn hook(harness: &str, ws: &Path, event: &Value) -> Option<Value> {
    let out = hook_raw(harness, ws, event.to_string().as_bytes());
    let mut lines = json_lines(&out.stdout);
    assert!(lines.len() <= 1, "at most one line: {lines:?}");
    lines.pop()
}

fn hook_raw(harness: &str, ws: &Path, input: &[u8]) -> Output {
    let out = run(&["hook", harness, "--workspace", s(ws)], input);
    assert_eq!(out.status.code(), Some(0), "a hook always exits 0: {}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "nothing on stderr: {}", String::from_utf8_lossy(&out.stderr));
    out
}

/// The context a SessionStart or UserPromptSubmit answer injects, checking
/// its shape: exactly the keys the harnesses accept.
fn context(answer: &Option<Value>, event: &str) -> String {
    let Some(a) = answer else { return String::new() };
    let keys: Vec<&str> = a.as_object().unwrap().keys().map(String::as_str).collect();
    assert!(keys.iter().all(|k| ["hookSpecificOutput", "systemMessage"].contains(k)), "{a}");
    let specific = &a["hookSpecificOutput"];
    if specific.is_null() {
        return String::new();
    }
    assert_eq!(specific.as_object().unwrap().len(), 2, "{a}");
    assert_eq!(specific["hookEventName"], event);
    specific["additionalContext"].as_str().unwrap().to_owned()
}

fn ok_json(args: &[&str], stdin: &[u8]) -> Value {
    let out = run(args, stdin);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    json_lines(&out.stdout).pop().unwrap()
}

/// Waits (up to 60 s) until `done` holds of the workspace's status.
fn wait_for_status(ws: &Path, done: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let status = ok_json(&["status", "--workspace", s(ws), "--json"], b"");
        if done(&status) {
            return status;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "status never got there: {status}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The messages of every record archived from `provider`, file by file,
/// in file order.
fn archived(ws: &Path, provider: &str) -> Vec<String> {
    let dir = ws.join("sources").join(provider).join("_v2");
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(rd) => rd.map(|e| e.unwrap().path()).collect(),
        Err(_) => return Vec::new(),
    };
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let dump = run(&["archive", "dump", s(&f), "--json"], b"");
        assert_eq!(dump.status.code(), Some(0));
        out.extend(json_lines(&dump.stdout).iter().map(|r| r["message"].as_str().unwrap().to_owned()));
    }
    out
}

/// A workspace configured by `toml` (its `scriptorium.toml`).
fn workspace_with(toml: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("scriptorium.toml"), toml).unwrap();
    dir
}

/// Appends `lines` to `file`.
fn append(file: &Path, lines: &[Value]) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(file).unwrap();
    for l in lines {
        writeln!(f, "{l}").unwrap();
    }
}

/// An event of `name` for `session` with its transcript.
fn event(name: &str, session: &str, transcript: &Path, extra: Value) -> Value {
    let mut e = json!({
        "session_id": session,
        "transcript_path": s(transcript),
        "cwd": "/home/ada/proj",
        "permission_mode": "default",
        "hook_event_name": name,
    });
    for (k, v) in extra.as_object().unwrap() {
        e[k] = v.clone();
    }
    e
}
