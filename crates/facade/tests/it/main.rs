//! Black-box tests of the `scriptorium` binary's archive verbs: exact bytes,
//! exact JSON shapes, stable error codes on stderr, exit codes, and that a
//! refused batch writes nothing.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

mod config;
mod config_show;
mod core_md;
mod embeddings;
mod health;
mod hooks;
mod mcp;
mod people;
mod quotes;
#[cfg(unix)]
mod readonly;
mod recall;
mod rules;
mod search;
mod session_append;
mod sessions;
mod sync;
mod tamper;
mod the_self;
mod topics;
mod transaction;
mod writer;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../source-archive/tests/data").join(name)
}

fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_scriptorium"))
        .args(args)
        // A model configured in the caller's environment must not change
        // what the tests mean.
        .env_remove("SCRIPTORIUM_MODEL_URL")
        .env_remove("SCRIPTORIUM_MODEL_NAME")
        .env_remove("SCRIPTORIUM_API_KEY")
        .env_remove("SCRIPTORIUM_EMBEDDING_URL")
        .env_remove("SCRIPTORIUM_EMBEDDING_MODEL")
        // Nor a user configuration file.
        .env("XDG_CONFIG_HOME", Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-user-config"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A verb that exits before reading its input (a usage error) closes
    // the pipe: what it did is in its output, not in the failed write.
    match child.stdin.take().unwrap().write_all(stdin) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.unwrap(),
    }
    child.wait_with_output().unwrap()
}

fn json_lines(bytes: &[u8]) -> Vec<Value> {
    String::from_utf8(bytes.to_vec()).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn error_of(out: &Output) -> Value {
    assert_eq!(out.status.code(), Some(1), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let lines = json_lines(&out.stderr);
    assert_eq!(lines.len(), 1, "one error object on stderr");
    lines[0]["error"].clone()
}

fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else { continue };
        for e in rd {
            let p = e.unwrap().path();
            // Runtime state (caches, the index, the history) is not the
            // user's data; the refusal tests compare everything else.
            if p.file_name().is_some_and(|n| n == ".scriptorium") {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn append_then_dump_the_test_vector() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path().join("memory");
    let w = root.to_str().unwrap();
    let input = std::fs::read(data("append-input.jsonl")).unwrap();
    let out = run(&["archive", "append", "--workspace", w, "--json"], &input);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        json_lines(&out.stdout),
        [serde_json::json!({"appended": 6, "duplicates": 0, "files": ["sources/chat/_v2/team-1.md"]})]
    );
    let file = root.join("sources/chat/_v2/team-1.md");
    assert_eq!(std::fs::read(&file).unwrap(), std::fs::read(data("team-1.md")).unwrap());

    // Replaying the batch changes nothing.
    let before = snapshot(&root);
    let out = run(&["archive", "append", "--workspace", w], &input);
    assert_eq!(json_lines(&out.stdout)[0], serde_json::json!({"appended": 0, "duplicates": 6, "files": []}));
    assert_eq!(snapshot(&root), before);

    let out = run(&["archive", "dump", file.to_str().unwrap(), "--json"], b"");
    assert!(out.status.success());
    assert!(out.stderr.is_empty());
    assert_eq!(json_lines(&out.stdout), json_lines(&std::fs::read(data("dump-output.jsonl")).unwrap()));
    // Every line is one physical line, U+2028/U+2029 escaped.
    let appended = run(
        &["archive", "append", "--workspace", w],
        "{\"provider\":\"chat\",\"thread\":\"sep\",\"message\":\"1\",\"role\":\"user\",\"timestamp\":\"2026-08-09T10:11:12Z\",\"content\":\"a\u{2028}b\u{2029}c\"}\n".as_bytes(),
    );
    assert!(appended.status.success());
    let out = run(&["archive", "dump", root.join("sources/chat/_v2/sep.md").to_str().unwrap()], b"");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("a\\u2028b\\u2029c"), "{text}");
    assert_eq!(text.lines().count(), 1);
}

#[test]
fn bad_input_names_its_line_and_writes_nothing() {
    let ws = tempfile::tempdir().unwrap();
    let w = ws.path().to_str().unwrap();
    let good = r#"{"provider":"chat","thread":"t","message":"m1","role":"user","timestamp":"2026-08-09T10:11:12Z","content":"hi"}"#;
    let cases = [
        (format!("{good}\n{{\"provider\":"), 2, "EOF"),
        (format!("{good}\n\n{}", good.replace(r#""thread":"t","#, "")), 3, "missing field `thread`"),
        (format!("{good}\n{}", good.replace("2026-08-09T10:11:12Z", "yesterday")), 2, "timestamp"),
        (format!("{good}\n{}", good.replace(r#""message":"m1""#, r#""message":"""#)), 2, "message is empty"),
        (
            format!("{}\n{good}", good.replace(r#""provider":"chat""#, r#""provider":"""#)),
            1,
            "provider is empty",
        ),
        (format!("{}\n", good.replace(r#""role":"user""#, r#""role":"tool""#)), 1, "role"),
    ];
    for (input, line, needle) in cases {
        let out = run(&["archive", "append", "--workspace", w, "--json"], input.as_bytes());
        let err = error_of(&out);
        assert_eq!(err["code"], "INVALID_ARGUMENT", "{input}");
        assert_eq!(err["line"], line, "{input}");
        assert!(err["message"].as_str().unwrap().contains(needle), "{err}");
        assert!(out.stdout.is_empty());
        assert_eq!(std::fs::read_dir(ws.path()).unwrap().count(), 0, "nothing may be written");
    }
}

#[test]
fn collisions_and_damage_refuse_with_stable_codes() {
    let ws = tempfile::tempdir().unwrap();
    let w = ws.path().to_str().unwrap();
    let input = std::fs::read(data("append-input.jsonl")).unwrap();
    assert!(run(&["archive", "append", "--workspace", w], &input).status.success());
    let before = snapshot(ws.path());
    let twin = r#"{"provider":"CHAT","thread":"t","message":"m1","role":"user","timestamp":"2026-08-09T10:11:12Z","content":"hi"}"#;
    let err = error_of(&run(&["archive", "append", "--workspace", w], twin.as_bytes()));
    assert_eq!(err["code"], "CONFLICT");
    assert_eq!(snapshot(ws.path()), before);

    // A damaged archive: append refuses, dump prints the valid prefix then the error.
    let file = ws.path().join("sources/chat/_v2/team-1.md");
    let mut bytes = std::fs::read(&file).unwrap();
    let k = bytes.windows(10).position(|w| w == b"source:cha").unwrap();
    let third = bytes.windows(5).enumerate().filter(|(_, w)| w == b"\n<a i").nth(2).unwrap().0;
    bytes[third + 3] = b'A'; // corrupt the third frame's anchor line
    assert!(k < third);
    std::fs::write(&file, &bytes).unwrap();
    let before = snapshot(ws.path());
    let more = r#"{"provider":"chat","thread":"team-1","message":"m9","role":"user","timestamp":"2026-08-09T10:11:12Z","content":"hi"}"#;
    let err = error_of(&run(&["archive", "append", "--workspace", w], more.as_bytes()));
    assert_eq!(err["code"], "VALIDATION_FAILED");
    assert_eq!(err["offset"], third);
    assert_eq!(snapshot(ws.path()), before);

    let out = run(&["archive", "dump", file.to_str().unwrap(), "--json"], b"");
    let err = error_of(&out);
    assert_eq!(err["code"], "VALIDATION_FAILED");
    assert_eq!(err["offset"], third);
    let prefix = json_lines(&out.stdout);
    assert_eq!(prefix.len(), 2);
    assert_eq!(prefix[1]["message"], "m2");
}

#[test]
fn dump_refuses_what_is_not_there_and_usage_exits_2() {
    let ws = tempfile::tempdir().unwrap();
    let missing = ws.path().join("nope.md");
    let err = error_of(&run(&["archive", "dump", missing.to_str().unwrap()], b""));
    assert_eq!(err["code"], "NOT_FOUND");
    let out = run(&["archive", "frobnicate"], b"");
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["archive", "append", "--timeout-ms", "soon"], b"");
    assert_eq!(out.status.code(), Some(2));
    // A file under _v2 without the marker is an invalid v2 file.
    let v2 = ws.path().join("sources/p/_v2");
    std::fs::create_dir_all(&v2).unwrap();
    std::fs::write(v2.join("t.md"), "[2026-08-09T10:11:12Z] user: hi\n").unwrap();
    let out = run(&["archive", "dump", v2.join("t.md").to_str().unwrap()], b"");
    assert_eq!(error_of(&out)["offset"], 0);
    assert!(out.stdout.is_empty());
}

#[test]
fn dump_reads_legacy_files_without_trusting_them() {
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path().join("sources/openprogram");
    std::fs::create_dir_all(&dir).unwrap();
    let legacy = "# sess\n\n<a id=\"source-9047c191\"></a>\n<!-- source:openprogram/sess-7f2a/msg_2f9b -->\n<!-- speaker-id:1 -->\n[2024-03-15T10:00:00Z] user: [Dave (42)] I prefer short answers\n";
    std::fs::write(dir.join("sess-7f2a.md"), legacy).unwrap();
    let out = run(&["archive", "dump", dir.join("sess-7f2a.md").to_str().unwrap(), "--json"], b"");
    assert!(out.status.success());
    let recs = json_lines(&out.stdout);
    assert_eq!(recs.len(), 1);
    let r = &recs[0];
    assert_eq!(r["source_id"], "openprogram/sess-7f2a/msg_2f9b");
    assert_eq!(r["speaker_trusted"], false);
    assert_eq!(r["speaker_label"], "Dave (42)");
    assert_eq!(r["path"], "sources/openprogram/sess-7f2a.md");
    assert_eq!(r["anchor"], "source-9047c191");
    assert_eq!(r["content"], "[Dave (42)] I prefer short answers");
}

#[test]
fn concurrent_appends_lose_nothing() {
    let ws = tempfile::tempdir().unwrap();
    let w = ws.path().to_str().unwrap().to_owned();
    let handles: Vec<_> = (0..16)
        .map(|i| {
            let w = w.clone();
            std::thread::spawn(move || {
                let line = format!(
                    r#"{{"provider":"p","thread":"t","message":"m{i}","role":"user","timestamp":"2026-01-01T00:00:00Z","content":"x"}}"#
                );
                run(&["archive", "append", "--workspace", &w], line.as_bytes())
            })
        })
        .collect();
    for h in handles {
        let out = h.join().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let out = run(&["archive", "dump", ws.path().join("sources/p/_v2/t.md").to_str().unwrap()], b"");
    assert_eq!(json_lines(&out.stdout).len(), 16);
    assert!(ws.path().join(".scriptorium/write.lock").exists());
}

#[test]
fn a_held_lock_refuses_with_locked() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join(".scriptorium")).unwrap();
    let held = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(ws.path().join(".scriptorium/write.lock"))
        .unwrap();
    held.lock().unwrap();
    let line = r#"{"provider":"p","thread":"t","message":"m","role":"user","timestamp":"2026-01-01T00:00:00Z","content":"x"}"#;
    let out = run(
        &["archive", "append", "--workspace", ws.path().to_str().unwrap(), "--timeout-ms", "50"],
        line.as_bytes(),
    );
    assert_eq!(error_of(&out)["code"], "LOCKED");
    assert!(!ws.path().join("sources").exists());
    drop(held);
}

#[test]
fn a_v2_looking_file_in_the_legacy_location_is_not_trusted() {
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path().join("sources/chat");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(data("team-1.md"), dir.join("team-1.md")).unwrap();
    let out = run(&["archive", "dump", dir.join("team-1.md").to_str().unwrap()], b"");
    assert!(out.status.success());
    for r in json_lines(&out.stdout) {
        assert_eq!(r["speaker_trusted"], false, "{r}");
        assert_eq!(r["path"], "sources/chat/team-1.md");
    }
}
