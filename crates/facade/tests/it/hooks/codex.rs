//! Codex CLI: its events, its rollout files read a few lines per `Stop`.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::{archived, context, hook, ok_json, s};

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scheduler/tests/data/codex/rollout-2025-10-01T12-00-00-0199a213-81c0-7800-8aa1-bbab2a035a53.jsonl")
}

const SESSION: &str = "0199a213-81c0-7800-8aa1-bbab2a035a53";

/// A Codex hook event (its fields as Codex writes them).
fn codex_event(name: &str, transcript: &Path, extra: serde_json::Value) -> serde_json::Value {
    let mut e = json!({
        "session_id": SESSION, "transcript_path": s(transcript), "cwd": "/home/ada/proj",
        "hook_event_name": name, "model": "gpt-5-codex", "permission_mode": "default",
    });
    for (k, v) in extra.as_object().unwrap() {
        e[k] = v.clone();
    }
    e
}

#[test]
fn a_rollout_read_a_few_lines_per_stop_is_archived_as_if_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(sample()).unwrap();
    let rollout = dir.path().join(sample().file_name().unwrap());
    let ws = dir.path().join("ws");
    let mut written = String::new();
    for (n, line) in text.split_inclusive('\n').enumerate() {
        written.push_str(line);
        if n % 3 == 2 {
            std::fs::write(&rollout, &written).unwrap();
            let stop = codex_event(
                "Stop",
                &rollout,
                json!({"turn_id": "t1", "stop_hook_active": false, "last_assistant_message": null}),
            );
            assert_eq!(hook("codex", &ws, &stop), None);
        }
    }
    std::fs::write(&rollout, &written).unwrap();
    assert_eq!(
        hook("codex", &ws, &codex_event("PreCompact", &rollout, json!({"turn_id": "t2", "trigger": "auto"}))),
        None
    );
    ok_json(&["write", "--workspace", s(&ws), "--force", "--json", "--timeout-ms", "30000"], b"");

    let whole = dir.path().join("whole");
    ok_json(
        &["session", "import", "--workspace", s(&whole), "--format", "codex", s(&sample()), "--json"],
        b"",
    );
    ok_json(&["write", "--workspace", s(&whole), "--force", "--json"], b"");
    let expected = archived(&whole, "codex");
    assert!(expected.len() >= 2, "{expected:?}");
    assert_eq!(archived(&ws, "codex"), expected);
}

#[test]
fn session_start_and_prompt_answers_have_the_shape_codex_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    ok_json(&["session", "import", "--workspace", s(ws), "--format", "codex", s(&sample()), "--json"], b"");
    ok_json(&["write", "--workspace", s(ws), "--force", "--json"], b"");
    let asked = hook(
        "codex",
        ws,
        &codex_event(
            "UserPromptSubmit",
            &sample(),
            json!({"turn_id": "t3", "prompt": "why does the upload test fail?"}),
        ),
    );
    let got = context(&asked, "UserPromptSubmit");
    assert!(got.contains("upload"), "{got}");
    // Stop and PreCompact take no hookSpecificOutput: nothing is printed.
    let copy = dir.path().join("copy.jsonl");
    std::fs::copy(sample(), &copy).unwrap();
    assert_eq!(
        hook("codex", ws, &codex_event("Stop", &copy, json!({"turn_id": "t3", "stop_hook_active": false}))),
        None
    );
    // A null transcript path (Codex sends one for an ephemeral session) records nothing.
    let mut ephemeral = codex_event("Stop", &copy, json!({"turn_id": "t4"}));
    ephemeral["transcript_path"] = serde_json::Value::Null;
    assert_eq!(hook("codex", ws, &ephemeral), None);
}

#[test]
fn a_rollout_with_any_file_name_stays_one_session_across_stops() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let rollout = dir.path().join("session.jsonl");
    let text = std::fs::read_to_string(sample()).unwrap();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let half = lines.len() / 2;
    std::fs::write(&rollout, lines[..half].concat()).unwrap();
    assert_eq!(hook("codex", &ws, &codex_event("Stop", &rollout, json!({"turn_id": "t1"}))), None);
    std::fs::write(&rollout, lines.concat()).unwrap();
    assert_eq!(hook("codex", &ws, &codex_event("Stop", &rollout, json!({"turn_id": "t2"}))), None);
    ok_json(&["write", "--workspace", s(&ws), "--force", "--json", "--timeout-ms", "30000"], b"");
    let threads: Vec<_> = std::fs::read_dir(ws.join("sources/codex/_v2")).unwrap().collect();
    assert_eq!(threads.len(), 1, "one thread file: {threads:?}");
}
