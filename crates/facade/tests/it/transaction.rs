//! The transaction through the binary (FORMAT.md §6): `update`, `status`,
//! `check` and `promote` as a caller sees them — the round trip, every
//! refusal class writing nothing, the tiers, promotion, real `SIGKILL`s in
//! the middle of commits, concurrent read-modify-write writers, and random
//! invalid patches.
//!
//! The revision is checked against an independent implementation of its
//! definition (SHA-256 over path, NUL, SHA-256 of the bytes).
//!
//! This module holds the fixture and the helpers; the tests are in its
//! submodules, one per concern.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::topics::ADA;
use crate::{data, error_of, json_lines, run, snapshot};

/// The stable error codes of FORMAT.md §5.
const CODES: [&str; 10] = [
    "INVALID_ARGUMENT",
    "NOT_FOUND",
    "CONFLICT",
    "PERMISSION_DENIED",
    "VALIDATION_FAILED",
    "LOCKED",
    "MEMORY_DISABLED",
    "MODEL_UNAVAILABLE",
    "IO",
    "TAMPERED",
];

const ADA_PATH: &str = "topics/people/ada.md";

// The fixture of topics.rs (private there), with its core file renamed: two
// topic files citing the archived test vector; team.md links to ada.md#^a1
// and holds one pending block (it cites the pending record chat/team-1/m6).
// Not `topics/core.md`: rendering core.md loads the o200k_base tokenizer
// (about 0.7 s of CPU in a debug build), and a commit renders it whenever
// the change can touch it — too slow for the kill and concurrency tests,
// and beside their point.
/// `topics/team.md`: the `topics/core.md` of the topic tests, as a project.
fn team() -> String {
    crate::topics::CORE.replacen("kind: core", "kind: project", 1).replacen("# Core", "# Team", 1)
}

fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let input = std::fs::read(data("append-input.jsonl")).unwrap();
    assert!(run(&["archive", "append", "--workspace", w(ws.path())], &input).status.success());
    std::fs::create_dir_all(ws.path().join("topics/people")).unwrap();
    std::fs::write(ws.path().join("topics/team.md"), team()).unwrap();
    std::fs::write(ws.path().join(ADA_PATH), ADA).unwrap();
    fresh_derived(ws.path());
    ws
}

/// Brings the derived views up to date with the files (any writer rebuilds
/// them when they are stale, a refused one included, so a test comparing
/// the workspace around a refusal starts from fresh views).
fn fresh_derived(root: &Path) {
    let out = run(&["render", "--workspace", w(root)], b"");
    assert!(out.status.success(), "render failed: {}", stderr(&out));
}

fn w(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

// ---------------------------------------------------------------------------
// Helpers: the binary's verbs, the independent revision, patch pieces.

fn status(root: &Path) -> Value {
    let out = run(&["status", "--workspace", w(root), "--json"], b"");
    assert!(out.status.success(), "status failed: {}", stderr(&out));
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 1, "status prints one object");
    lines[0].clone()
}

fn revision(root: &Path) -> String {
    let r = status(root)["revision"].as_str().unwrap().to_owned();
    assert!(is_hex64(&r), "{r}");
    r
}

fn is_hex64(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `update --json` with the patch on stdin.
fn update(root: &Path, patch: &str, extra: &[&str]) -> Output {
    let mut args = vec!["update", "--workspace", w(root), "--patch", "-", "--json"];
    args.extend_from_slice(extra);
    run(&args, patch.as_bytes())
}

/// A successful update's `{"revision","changed"}`.
fn updated(root: &Path, patch: &str, extra: &[&str]) -> Value {
    let out = update(root, patch, extra);
    assert!(out.status.success(), "update refused: {}\npatch: {patch}", stderr(&out));
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 1, "update prints one object");
    lines[0].clone()
}

fn history(root: &Path) -> Vec<Value> {
    match std::fs::read(root.join(".scriptorium/history.jsonl")) {
        Ok(b) => json_lines(&b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => panic!("{e}"),
    }
}

fn check(root: &Path) -> (Option<i32>, Vec<Value>) {
    let out = run(&["check", "--workspace", w(root), "--json"], b"");
    (out.status.code(), json_lines(&out.stdout))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every regular file under `dir` (links not followed), with its
/// `/`-separated workspace-relative path.
fn regular_files(root: &Path, rel: &str, out: &mut BTreeMap<Vec<u8>, Vec<u8>>) {
    let Ok(rd) = std::fs::read_dir(root.join(rel)) else { return };
    for e in rd {
        let e = e.unwrap();
        let name = e.file_name().into_string().unwrap();
        let child = format!("{rel}/{name}");
        let ft = e.file_type().unwrap();
        if ft.is_dir() {
            regular_files(root, &child, out);
        } else if ft.is_file() {
            out.insert(child.into_bytes(), std::fs::read(e.path()).unwrap());
        }
    }
}

/// The revision FORMAT.md §6 defines, computed here from the files, with
/// `overrides` (path → new bytes, `None` removed) applied first.
fn expected_revision(root: &Path, overrides: &[(&str, Option<&[u8]>)]) -> String {
    let mut files = BTreeMap::new();
    regular_files(root, "topics", &mut files);
    regular_files(root, "sources", &mut files);
    for (p, b) in overrides {
        match b {
            Some(b) => files.insert(p.as_bytes().to_vec(), b.to_vec()),
            None => files.remove(p.as_bytes()),
        };
    }
    let mut h = Sha256::new();
    for (p, bytes) in &files {
        h.update(p);
        h.update([0u8]);
        h.update(Sha256::digest(bytes));
    }
    hex(&h.finalize())
}

/// A record as `archive append` takes it, in provider `chat`.
fn record(thread: &str, message: &str, content: &str, pending: bool) -> Value {
    let mut r = json!({"provider": "chat", "thread": thread, "message": message, "role": "user",
        "timestamp": "2026-08-10T09:00:00Z", "speaker_id": "7391", "speaker_display": "Ada",
        "content": content});
    if pending {
        r["pending"] = true.into();
    }
    r
}

/// An evidence definition citing `chat/<thread>/<message>`; `up` leads
/// from the topic file's folder to the workspace root (`../` per level).
fn footnote(label: &str, thread: &str, message: &str, up: &str) -> String {
    let id = format!("chat/{thread}/{message}");
    let anchor = scriptorium::archive::id::anchor_hash(id.as_bytes());
    format!(
        "[^{label}]: Time: `2026-08-10T09:00:00Z`; Sources: [{id}]({up}sources/chat/_v2/{thread}.md#source-{anchor})"
    )
}

/// A block citing `label`, and its definition citing chat/team-1/m1
/// (archived, trusted), as appended to a file in `topics/people/`.
fn appended_block(text: &str, label: &str, id: &str) -> String {
    format!("\n{text}[^{label}] ^{id}\n\n{}\n", footnote(label, "team-1", "m1", "../../"))
}

fn patch(base: &str, sources: Vec<Value>, edits: Vec<Value>) -> String {
    json!({"base_revision": base, "message": "test", "sources": sources, "edits": edits}).to_string()
}

fn create(path: &str, content: &str) -> Value {
    json!({"op": "create", "path": path, "content": content})
}

fn append(path: &str, content: &str) -> Value {
    json!({"op": "append", "path": path, "content": content})
}

fn replace(path: &str, content: &str) -> Value {
    json!({"op": "replace", "path": path, "content": content})
}

fn str_replace(path: &str, old: &str, new: &str) -> Value {
    json!({"op": "str_replace", "path": path, "old": old, "new": new})
}

fn delete(path: &str) -> Value {
    json!({"op": "delete", "path": path})
}

type Snapshot = BTreeMap<PathBuf, Vec<u8>>;

/// Names the paths that differ, rather than printing whole files.
fn assert_same(before: &Snapshot, after: &Snapshot, what: &str) {
    if before == after {
        return;
    }
    let mut diff = Vec::new();
    for (p, b) in before {
        match after.get(p) {
            None => diff.push(format!("removed {}", p.display())),
            Some(a) if a != b => diff.push(format!("changed {}", p.display())),
            _ => {}
        }
    }
    for p in after.keys().filter(|p| !before.contains_key(*p)) {
        diff.push(format!("added {}", p.display()));
    }
    panic!("{what}: the workspace changed: {diff:?}");
}

/// Runs an update that must be refused with `code`: one error object on
/// stderr, nothing on stdout, no byte changed outside `.scriptorium/`, no
/// history line.
fn refused(root: &Path, patch: &str, extra: &[&str], code: &str) -> Value {
    let before = snapshot(root);
    let lines = history(root).len();
    let out = update(root, patch, extra);
    let err = error_of(&out);
    assert_eq!(err["code"], code, "patch {patch:?}\nerror {err}");
    assert!(err["message"].as_str().is_some_and(|m| !m.is_empty()), "{err}");
    assert!(out.stdout.is_empty(), "a refusal printed a result");
    assert_same(&before, &snapshot(root), &format!("refused with {code}: {patch:?}"));
    assert_eq!(history(root).len(), lines, "a refusal wrote a history line");
    err
}

mod concurrency;
mod history;
#[cfg(unix)]
mod kills;
mod random;
mod refusals;
mod round_trip;
mod tiers;
