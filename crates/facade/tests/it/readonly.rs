//! Readers on a workspace they cannot write (a mounted backup, a read-only
//! checkout): they answer from what is on disk and say so; writers are
//! refused with `IO` naming the lock file. The workspace is made read-only
//! with permissions; a process that ignores them (root) runs the verbs as
//! the unprivileged user `nobody` instead. The fallbacks themselves are
//! tested in the lock and index crates whoever runs the tests.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use super::{json_lines, snapshot};

/// `chmod -R` to `dirs` for folders and `files` for files.
fn chmod_tree(root: &Path, dirs: u32, files: u32) {
    for entry in std::fs::read_dir(root).unwrap() {
        let p = entry.unwrap().path();
        let meta = std::fs::symlink_metadata(&p).unwrap();
        if meta.is_dir() {
            chmod_tree(&p, dirs, files);
        } else if meta.is_file() {
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(files)).unwrap();
        }
    }
    std::fs::set_permissions(root, std::fs::Permissions::from_mode(dirs)).unwrap();
}

/// Whether this process may write into a folder whose mode forbids it.
fn ignores_permissions(dir: &Path) -> bool {
    let probe = dir.join(".probe");
    let wrote = std::fs::write(&probe, b"").is_ok();
    let _ = std::fs::remove_file(&probe);
    wrote
}

struct Reader {
    as_nobody: bool,
    /// The binary to run: for `nobody`, a copy in a folder anyone may enter
    /// (the checkout may lie under a private folder, as `mktemp -d` makes).
    exe: PathBuf,
    _copy: Option<tempfile::TempDir>,
}

impl Reader {
    fn new(as_nobody: bool) -> Reader {
        let built = PathBuf::from(env!("CARGO_BIN_EXE_scriptorium"));
        if !as_nobody {
            return Reader { as_nobody, exe: built, _copy: None };
        }
        let copy = tempfile::tempdir().unwrap();
        std::fs::set_permissions(copy.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let exe = copy.path().join("scriptorium");
        std::fs::copy(&built, &exe).unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        Reader { as_nobody, exe, _copy: Some(copy) }
    }

    fn run(&self, args: &[&str], stdin: &[u8]) -> Output {
        let mut cmd = Command::new(&self.exe);
        cmd.args(args)
            .env("XDG_CONFIG_HOME", "/nonexistent")
            .env("HOME", "/nonexistent")
            .env_remove("SCRIPTORIUM_MODEL_URL")
            .env_remove("SCRIPTORIUM_MODEL_NAME")
            .env_remove("SCRIPTORIUM_EMBEDDING_URL")
            .env_remove("SCRIPTORIUM_EMBEDDING_MODEL")
            .env_remove("SCRIPTORIUM_BACKEND")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if self.as_nobody {
            cmd.uid(65534).gid(65534);
        }
        let mut child = cmd.spawn().unwrap();
        child.stdin.take().unwrap().write_all(stdin).unwrap();
        child.wait_with_output().unwrap()
    }
}

/// Succeeded, with the warning (and the one about an interrupted install).
fn ok(out: &Output) {
    warned(out, true);
}

fn warned(out: &Output, interrupted: bool) {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("warning: the workspace cannot be written"), "{stderr}");
    assert_eq!(stderr.contains("an interrupted install could not be completed"), interrupted, "{stderr}");
}

/// Makes `ws` read-only and a reader of it; `None` when it cannot be run.
fn read_only(ws: &Path) -> Option<Reader> {
    chmod_tree(ws, 0o555, 0o444);
    let reader = Reader::new(ignores_permissions(ws));
    if reader.as_nobody && reader.run(&["--version"], b"").status.code() != Some(0) {
        chmod_tree(ws, 0o755, 0o644);
        let message = "skipped: running with privileges and the binary cannot be run as nobody";
        let _ = writeln!(std::io::stderr(), "{message}");
        return None;
    }
    Some(reader)
}

#[test]
fn readers_work_on_a_read_only_workspace_and_writers_are_refused() {
    let home = tempfile::tempdir().unwrap();
    let ws = home.path().join("ws");
    let w = ws.to_str().unwrap();
    let demo = super::run(&["demo", "--workspace", w], b"");
    assert_eq!(demo.status.code(), Some(0), "{}", String::from_utf8_lossy(&demo.stderr));
    // A stale index (none at all) and an install left half-done.
    std::fs::remove_dir_all(ws.join(".scriptorium/index")).unwrap();
    let intent = ws.join(scriptorium::transaction::install::INTENT);
    std::fs::create_dir_all(intent.parent().unwrap()).unwrap();
    std::fs::write(&intent, b"left by a crash").unwrap();
    let out_dir = home.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    std::fs::set_permissions(&out_dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let before = snapshot(&ws);
    let runtime = std::fs::read_dir(ws.join(".scriptorium")).unwrap().count();
    let Some(reader) = read_only(&ws) else { return };

    let status = reader.run(&["status", "--workspace", w, "--json"], b"");
    ok(&status);
    let v = &json_lines(&status.stdout)[0];
    assert!(v["index"]["documents"].as_u64().unwrap() > 0, "{v}");
    assert!(v["index"]["unsaved"].as_str().unwrap().contains("kept in memory"), "{v}");

    let search = reader.run(&["search", "budget", "--workspace", w, "--json"], b"");
    ok(&search);
    assert!(!json_lines(&search.stdout).is_empty());
    let recall = reader.run(&["recall", "budget", "--workspace", w], b"");
    ok(&recall);
    assert!(String::from_utf8_lossy(&recall.stdout).contains("<memory-context>"));
    let prompt = reader.run(&["prompt", "--workspace", w], b"");
    ok(&prompt);
    let check = reader.run(&["check", "--workspace", w, "--json"], b"");
    ok(&check);
    let summary = json_lines(&check.stdout).pop().unwrap();
    assert_eq!(summary["recovered"], "not_completed", "{summary}");
    assert_eq!(summary["ok"], true, "{summary}");
    let page = out_dir.join("palace.html");
    let palace = reader.run(&["palace", "--workspace", w, "--out", page.to_str().unwrap()], b"");
    ok(&palace);
    assert!(page.is_file());

    // The tools read it too; memory_status says how.
    let messages = [
        serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_status", "arguments": {}}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "memory_search", "arguments": {"query": "budget"}}}),
    ];
    let input: String = messages.iter().map(|m| format!("{m}\n")).collect();
    let mcp = reader.run(&["mcp", "--workspace", w], input.as_bytes());
    assert_eq!(mcp.status.code(), Some(0), "{}", String::from_utf8_lossy(&mcp.stderr));
    let mut answers = json_lines(&mcp.stdout);
    answers.sort_by_key(|a| a["id"].as_u64());
    let status = &answers[1]["result"]["structuredContent"];
    assert_eq!(status["read_only"]["interrupted_install"], true, "{}", answers[1]);
    assert!(status["read_only"]["reason"].as_str().unwrap().contains("write.lock"), "{status}");
    assert!(
        !answers[2]["result"]["structuredContent"]["hits"].as_array().unwrap().is_empty(),
        "{}",
        answers[2]
    );

    // Writers are refused, naming the lock file.
    let record = "{\"provider\":\"chat\",\"thread\":\"t\",\"message\":\"ro\",\"role\":\"user\",\"timestamp\":\"2026-08-09T10:11:12Z\",\"content\":\"x\"}\n";
    let append = reader.run(&["archive", "append", "--workspace", w], record.as_bytes());
    assert_eq!(append.status.code(), Some(1));
    let e = &json_lines(&append.stderr)[0]["error"];
    assert_eq!(e["code"], "IO", "{e}");
    assert_eq!(e["path"], ".scriptorium/write.lock", "{e}");

    chmod_tree(&ws, 0o755, 0o644);
    assert_eq!(snapshot(&ws), before, "nothing changed");
    assert_eq!(std::fs::read_dir(ws.join(".scriptorium")).unwrap().count(), runtime);
    assert!(!ws.join(".scriptorium/index").exists(), "no index was written");
}

#[test]
fn a_read_only_checkout_without_runtime_state_is_read_unlocked() {
    let home = tempfile::tempdir().unwrap();
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let ws = home.path().join("ws");
    let w = ws.to_str().unwrap();
    let input = std::fs::read(super::data("append-input.jsonl")).unwrap();
    let out = super::run(&["archive", "append", "--workspace", w], &input);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::remove_dir_all(ws.join(".scriptorium")).unwrap();
    let Some(reader) = read_only(&ws) else { return };
    let search = reader.run(&["search", "budget", "--workspace", w, "--json"], b"");
    warned(&search, false);
    assert!(!json_lines(&search.stdout).is_empty());
    let check = reader.run(&["check", "--workspace", w, "--json"], b"");
    warned(&check, false);
    assert_eq!(json_lines(&check.stdout).pop().unwrap()["recovered"], "nothing");
    chmod_tree(&ws, 0o755, 0o644);
    assert!(!ws.join(".scriptorium").exists(), "nothing was created");
}
