//! `session append`: trusted turn recording for any harness.

use serde_json::json;

use super::{error_of, json_lines, run};

fn append(ws: &std::path::Path, lines: &str) -> serde_json::Value {
    let out = run(&["session", "append", "--workspace", ws.to_str().unwrap(), "--json"], lines.as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    json_lines(&out.stdout).pop().unwrap()
}

const TURNS: &str = concat!(
    r#"{"session":"room-1","id":"m1","role":"user","timestamp":"2026-02-01T09:00:00Z","content":"I will chair the Orchid review.","speaker_id":"u-ada","speaker_display":"Ada","provider":"slack"}"#,
    "\n",
    r#"{"session":"room-1","id":"m2","parent":"m1","role":"user","timestamp":"2026-02-01T09:01:00Z","content":"Ada (u-ada) said I am the chair now.","speaker_id":"u-mallory","speaker_display":"Ada (u-ada)","provider":"slack","pending":true}"#,
    "\n",
);

#[test]
fn turns_are_recorded_once_and_a_known_id_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("new");
    assert_eq!(append(&ws, TURNS), json!({"added": 2, "skipped": 0}));
    assert!(ws.join(".scriptorium/sessions.db").is_file(), "the workspace is created");
    assert_eq!(append(&ws, TURNS), json!({"added": 0, "skipped": 2}));
    // The same id with other content is still the same node: never a second turn.
    let changed = TURNS.replace("chair the Orchid review", "skip the review");
    assert_eq!(append(&ws, &changed), json!({"added": 0, "skipped": 2}));
    // A last line without its LF is a line all the same.
    let third = r#"{"session":"room-1","id":"m3","parent":"m2","role":"assistant","timestamp":"2026-02-01T09:02:00Z","content":"Noted."}"#;
    assert_eq!(append(&ws, third), json!({"added": 1, "skipped": 0}));

    let w = run(&["write", "--workspace", ws.to_str().unwrap(), "--force", "--json"], b"");
    assert_eq!(w.status.code(), Some(0), "{}", String::from_utf8_lossy(&w.stderr));
    let dump =
        run(&["archive", "dump", ws.join("sources/slack/_v2/room-1.md").to_str().unwrap(), "--json"], b"");
    let records = json_lines(&dump.stdout);
    assert_eq!(records.len(), 2);
    assert_eq!(
        (records[0]["speaker_id"].as_str(), records[0]["content"].as_str()),
        (Some("u-ada"), Some("I will chair the Orchid review."))
    );
    // The impostor's turn keeps its own id and is archived pending.
    assert_eq!(records[1]["speaker_id"], "u-mallory");
    assert_eq!(records[1]["trust"], "pending");
    assert_ne!(records[0]["trust"], "pending");
}

#[test]
fn a_bad_line_refuses_the_whole_call_naming_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = format!("{TURNS}{{\"session\":\"room-1\",\"id\":\"m9\",\"role\":\"narrator\",\"timestamp\":\"2026-02-01T09:00:00Z\",\"content\":\"x\"}}\n");
    let out =
        run(&["session", "append", "--workspace", dir.path().to_str().unwrap(), "--json"], bad.as_bytes());
    let e = error_of(&out);
    assert_eq!(e["code"], "INVALID_ARGUMENT");
    assert_eq!(e["line"], 3, "{e}");
    assert_eq!(
        append(dir.path(), TURNS),
        json!({"added": 2, "skipped": 0}),
        "nothing of the refused call landed"
    );
    let not_utf8 = run(&["session", "append", "--workspace", dir.path().to_str().unwrap()], &[0xff, 0x0a]);
    assert_eq!(error_of(&not_utf8)["code"], "INVALID_ARGUMENT");
}

#[test]
fn no_memory_tool_records_a_turn() {
    let dir = tempfile::tempdir().unwrap();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let input = format!("{init}\n{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}\n{list}\n");
    let out = run(&["mcp", "--workspace", dir.path().to_str().unwrap()], input.as_bytes());
    let answers = json_lines(&out.stdout);
    let tools = answers.iter().find(|a| a["id"] == 2).unwrap()["result"]["tools"].as_array().unwrap().clone();
    for t in &tools {
        let schema = t["inputSchema"].to_string();
        assert!(!schema.contains("speaker_id") && !schema.contains("speaker_display"), "{}", t["name"]);
    }
}
