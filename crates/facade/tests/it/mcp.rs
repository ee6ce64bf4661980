//! `scriptorium mcp` spoken to over stdio by a test client, and the tools
//! through it.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use super::json_lines;

fn session(root: &Path, messages: &[Value], tier: &str) -> Vec<Value> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_scriptorium"))
        .args(["mcp", "--workspace", root.to_str().unwrap(), "--tier", tier])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for m in messages {
        writeln!(stdin, "{m}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    json_lines(&out.stdout)
}

fn call(id: u64, name: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}})
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let records = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../source-archive/tests/data/append-input.jsonl"),
    )
    .unwrap();
    let out =
        super::run(&["archive", "append", "--workspace", dir.path().to_str().unwrap(), "--json"], &records);
    assert_eq!(out.status.code(), Some(0));
    dir
}

#[test]
fn initialize_list_search_and_refusals() {
    let dir = workspace();
    let answers = session(
        dir.path(),
        &[
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            call(3, "memory_search", json!({"query": "budget"})),
            call(
                4,
                "memory_update",
                json!({"base_revision": "0".repeat(64), "message": "x", "edits": [{"op": "create", "path": "topics/x.md", "content": "# X\n\nNo citation here. ^x\n"}]}),
            ),
            call(5, "memory_search", json!({"query": "key", "speaker": "7391", "method": "embedding"})),
            call(6, "memory_promote", json!({"source_ids": ["chat/team-1/m1"]})),
            json!({"jsonrpc": "2.0", "id": 7, "method": "no/such"}),
        ],
        "paired",
    );
    assert_eq!(answers.len(), 7, "the notification gets no answer: {answers:?}");
    assert_eq!(answers[0]["result"]["serverInfo"]["name"], "scriptorium");
    assert!(answers[0]["result"]["capabilities"]["tools"].is_object());
    let names: Vec<&str> = answers[1]["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["memory_search", "memory_get", "memory_update", "memory_status", "memory_promote", "memory_grep"]
    );
    for t in answers[1]["result"]["tools"].as_array().unwrap() {
        assert_eq!(t["inputSchema"]["type"], "object");
    }
    let search = &answers[2]["result"];
    assert_eq!(search["isError"], false);
    assert!(!search["structuredContent"]["hits"].as_array().unwrap().is_empty());
    // Refused for validation (stale base first? no: a wrong base is CONFLICT; use the real one below).
    let refused = &answers[3]["result"];
    assert_eq!(refused["isError"], true);
    assert_eq!(refused["structuredContent"]["error"]["code"], "CONFLICT");
    let speaker = &answers[4]["result"];
    assert_eq!(
        (speaker["isError"].as_bool(), speaker["structuredContent"]["error"]["code"].as_str()),
        (Some(true), Some("INVALID_ARGUMENT"))
    );
    let text: Value = serde_json::from_str(speaker["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, speaker["structuredContent"]);
    assert_eq!(
        answers[5]["result"]["structuredContent"]["error"]["code"], "PERMISSION_DENIED",
        "MCP is never interactive"
    );
    assert_eq!(answers[6]["error"]["code"], -32601);
}

#[test]
fn an_update_refused_for_validation_leaves_the_workspace_alone() {
    let dir = workspace();
    let status = session(dir.path(), &[call(1, "memory_status", json!({}))], "paired");
    let rev = status[0]["result"]["structuredContent"]["revision"].as_str().unwrap().to_owned();
    let before = super::snapshot(dir.path());
    let answers = session(
        dir.path(),
        &[call(
            1,
            "memory_update",
            json!({"base_revision": rev, "message": "x", "edits": [{"op": "create", "path": "topics/x.md", "content": "# X\n\nNo citation here. ^x\n"}]}),
        )],
        "paired",
    );
    let e = &answers[0]["result"]["structuredContent"]["error"];
    assert_eq!(e["code"], "VALIDATION_FAILED", "{e}");
    assert!(!e["diagnostics"].as_array().unwrap().is_empty());
    assert_eq!(super::snapshot(dir.path()), before);
    // A paired caller may not replace.
    let answers = session(
        dir.path(),
        &[call(
            1,
            "memory_update",
            json!({"base_revision": rev, "message": "x", "edits": [{"op": "delete", "path": "topics/x.md"}]}),
        )],
        "paired",
    );
    assert_eq!(answers[0]["result"]["structuredContent"]["error"]["code"], "PERMISSION_DENIED");
}

#[test]
fn get_grep_and_hybrid() {
    let dir = workspace();
    let answers = session(
        dir.path(),
        &[
            call(1, "memory_get", json!({"source_id": "chat/team-1/m1"})),
            call(2, "memory_get", json!({"path": "topics/none.md"})),
            call(3, "memory_get", json!({"path": "topics/a.md", "block_id": "b"})),
            call(4, "memory_grep", json!({"regex": "^\\[20", "limit": 2})),
            call(5, "memory_grep", json!({"regex": "("})),
            call(6, "memory_search", json!({"query": "budget", "method": "hybrid"})),
            call(7, "memory_search", json!({"query": "budget", "method": "embedding"})),
            call(8, "memory_search", json!({"query": "budget", "bogus": 1})),
            call(9, "memory_get", json!({"path": "../../etc/passwd"})),
        ],
        "paired",
    );
    let r = |i: usize| &answers[i]["result"]["structuredContent"];
    assert_eq!(r(0)["source_id"], "chat/team-1/m1");
    assert_eq!(r(0)["speaker_trusted"], true);
    assert_eq!(r(1)["error"]["code"], "NOT_FOUND");
    assert_eq!(r(2)["error"]["code"], "INVALID_ARGUMENT");
    let matches = r(3)["matches"].as_array().unwrap();
    assert_eq!(matches.len(), 2);
    assert!(matches[0]["text"].as_str().unwrap().starts_with("[20"));
    assert_eq!(matches[0]["path"], "sources/chat/_v2/team-1.md");
    assert_eq!(r(4)["error"]["code"], "INVALID_ARGUMENT");
    assert_eq!(r(5)["method"], "bm25");
    assert!(r(5)["fallback"].is_string());
    assert_eq!(r(6)["error"]["code"], "MODEL_UNAVAILABLE");
    assert_eq!(r(7)["error"]["code"], "INVALID_ARGUMENT");
    assert_eq!(r(8)["error"]["code"], "INVALID_ARGUMENT");
}

#[test]
fn protocol_faults_are_json_rpc_errors() {
    let dir = workspace();
    let mut child = Command::new(env!("CARGO_BIN_EXE_scriptorium"))
        .args(["mcp", "--workspace", dir.path().to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in [
        "not json",
        "[]",
        r#"{"jsonrpc":"2.0","id":1}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{}}}"#,
        r#"[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]"#,
    ] {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let answers = json_lines(&out.stdout);
    assert_eq!(answers.len(), 5, "{answers:?}");
    assert_eq!(answers[0]["error"]["code"], -32700);
    assert_eq!(answers[1]["error"]["code"], -32600, "an empty batch");
    assert_eq!(answers[2]["error"]["code"], -32600, "no method");
    assert_eq!(answers[3]["error"]["code"], -32602, "tools/call without a name");
    assert_eq!(answers[4].as_array().map(Vec::len), Some(1), "a batch: the notification gets no answer");
    assert_eq!(answers[4][0]["id"], 3);
}
