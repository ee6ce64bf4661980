//! `remote add`, `sync` and `resolve` through the binary: two machines and
//! a bare repository, the exact JSON shapes, a block conflict listed by
//! `check` (exit 1) and counted by `status` until `resolve` closes it, and
//! the refusals with their codes.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use super::{error_of, json_lines, run};

fn ws(root: &Path) -> &str {
    root.to_str().unwrap()
}

fn ok(args: &[&str], stdin: &[u8]) -> Value {
    let out = run(args, stdin);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    json_lines(&out.stdout).pop().unwrap()
}

fn bare(dir: &Path) -> String {
    let remote = dir.join("remote.git");
    let out = Command::new("git").args(["init", "-q", "--bare"]).arg(&remote).output().unwrap();
    assert!(out.status.success());
    remote.to_str().unwrap().to_owned()
}

fn append(root: &Path, message: &str, day: u32) {
    let record = json!({"provider":"chat","thread":"t1","message":message,"role":"user",
        "timestamp":format!("2026-01-{day:02}T10:00:00Z"),"content":format!("said {message}")});
    ok(&["archive", "append", "--workspace", ws(root)], format!("{record}\n").as_bytes());
}

fn revision(root: &Path) -> String {
    ok(&["status", "--workspace", ws(root), "--json"], b"")["revision"].as_str().unwrap().to_owned()
}

/// Writes `topics/ada.md` with one block `^b1` saying `text` (citing
/// `chat/t1/m1`).
fn write_block(root: &Path, text: &str) {
    let body = format!(
        "# Ada\n\n{text}[^e-0000000001] ^b1\n\n[^e-0000000001]: Time: `2026-01-01`; Sources: [chat/t1/m1](../sources/chat/_v2/t1.md#source-{})\n",
        anchor("chat/t1/m1")
    );
    let op = if root.join("topics/ada.md").exists() { "replace" } else { "create" };
    let patch = json!({"base_revision": revision(root), "edits": [{"op": op, "path": "topics/ada.md", "content": body}]});
    ok(&["update", "--workspace", ws(root), "--patch", "-", "--json"], patch.to_string().as_bytes());
}

fn anchor(id: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(id.as_bytes())[..4].iter().map(|b| format!("{b:02x}")).collect()
}

fn sync(root: &Path) -> Value {
    ok(&["sync", "--workspace", ws(root), "--json"], b"")
}

/// Two machines joined through one bare repository, `a` holding record
/// `m1` and the block `^b1`, `b` a fast-forwarded copy.
fn two_machines() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let remote = bare(dir.path());
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    append(&a, "m1", 1);
    write_block(&a, "Ada likes tea.");
    let added = ok(&["remote", "add", "origin", &remote, "--workspace", ws(&a), "--json"], b"");
    assert_eq!(added, json!({"remote": "origin", "url": remote}));
    let first = sync(&a);
    assert_eq!((first["outcome"].as_str(), first["pushed"].as_bool()), (Some("pushed"), Some(true)));
    // A new machine joins with `remote add` (which creates the workspace),
    // then `sync`.
    ok(&["remote", "add", "origin", &remote, "--workspace", ws(&b), "--json"], b"");
    let joined = sync(&b);
    assert_eq!(joined["outcome"], "fast_forward");
    assert_eq!(joined["head"], first["head"]);
    assert_eq!(revision(&a), revision(&b));
    (dir, a, b)
}

#[test]
fn records_from_two_machines_meet_once_each_in_one_order() {
    let (_dir, a, b) = two_machines();
    append(&a, "a2", 3);
    append(&b, "b2", 2);
    assert_eq!(sync(&a)["outcome"], "pushed");
    let merged = sync(&b);
    assert_eq!(merged["outcome"], "merged");
    assert_eq!(merged["changed"], json!(["sources/chat/_v2/t1.md"]));
    assert_eq!(merged["conflicts"], json!([]));
    assert_eq!(sync(&a)["outcome"], "fast_forward");
    let file = |r: &Path| std::fs::read_to_string(r.join("sources/chat/_v2/t1.md")).unwrap();
    assert_eq!(file(&a), file(&b));
    let text = file(&a);
    let ids: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("<!-- source:")).collect();
    // The canonical order: by timestamp (b2 on the 2nd, a2 on the 3rd).
    assert_eq!(ids, ["chat/t1/m1 -->", "chat/t1/b2 -->", "chat/t1/a2 -->"]);
    for r in [&a, &b] {
        let out = run(&["check", "--workspace", ws(r)], b"");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    }
}

#[test]
fn a_block_changed_on_both_sides_is_a_conflict_until_resolved() {
    let (_dir, a, b) = two_machines();
    write_block(&a, "Ada likes green tea.");
    write_block(&b, "Ada likes black tea.");
    sync(&a);
    let merged = sync(&b);
    assert_eq!((merged["outcome"].as_str(), merged["conflicts"].clone()), (Some("merged"), json!(["b1"])));
    let text = std::fs::read_to_string(b.join("topics/ada.md")).unwrap();
    assert!(text.contains("black tea") && !text.contains("green tea"), "ours is kept: {text}");
    assert_eq!(ok(&["status", "--workspace", ws(&b), "--json"], b"")["conflicts"], 1);
    let out = run(&["check", "--workspace", ws(&b), "--json"], b"");
    assert_eq!(out.status.code(), Some(1));
    let lines = json_lines(&out.stdout);
    let c = lines.iter().find(|l| l["code"] == "MERGE_CONFLICT").expect("a MERGE_CONFLICT line");
    assert_eq!(
        (c["path"].as_str(), c["id"].as_str(), c["kind"].as_str()),
        (Some("topics/ada.md"), Some("b1"), Some("block"))
    );
    // The other machine merged nothing: its check is clean.
    assert!(run(&["check", "--workspace", ws(&a)], b"").status.success());

    let bad = error_of(&run(&["resolve", "nope", "--take", "ours", "--workspace", ws(&b)], b""));
    assert_eq!(bad["code"], "NOT_FOUND");
    let bad = error_of(&run(&["resolve", "b1", "--take", "mine", "--workspace", ws(&b)], b""));
    assert_eq!(bad["code"], "INVALID_ARGUMENT");
    let done =
        ok(&["resolve", "topics/ada.md#^b1", "--take", "theirs", "--workspace", ws(&b), "--json"], b"");
    assert_eq!((done["id"].as_str(), done["take"].as_str()), (Some("b1"), Some("theirs")));
    assert_eq!(done["changed"], json!(["topics/ada.md"]));
    assert!(std::fs::read_to_string(b.join("topics/ada.md")).unwrap().contains("green tea"));
    assert_eq!(ok(&["status", "--workspace", ws(&b), "--json"], b"")["conflicts"], 0);
    assert!(run(&["check", "--workspace", ws(&b)], b"").status.success());
    // The resolution syncs like any other change.
    assert_eq!(sync(&b)["outcome"], "pushed");
    assert_eq!(sync(&a)["outcome"], "fast_forward");
    assert_eq!(revision(&a), revision(&b));
}

#[test]
fn both_keeps_ours_and_adds_theirs_as_a_new_block() {
    let (_dir, a, b) = two_machines();
    write_block(&a, "Ada likes green tea.");
    write_block(&b, "Ada likes black tea.");
    sync(&a);
    sync(&b);
    ok(&["resolve", "b1", "--take", "both", "--workspace", ws(&b), "--json"], b"");
    let text = std::fs::read_to_string(b.join("topics/ada.md")).unwrap();
    let black = text.lines().find(|l| l.contains("black tea")).unwrap();
    let green = text.lines().find(|l| l.contains("green tea")).unwrap();
    assert!(black.ends_with(" ^b1"), "{text}");
    assert!(!green.ends_with(" ^b1") && green.contains(" ^"), "theirs under a new id: {text}");
    assert!(run(&["check", "--workspace", ws(&b)], b"").status.success());
}

#[test]
fn refusals_name_their_cause_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    append(&a, "m1", 1);
    let e = error_of(&run(&["sync", "--workspace", ws(&a)], b""));
    assert_eq!(e["code"], "NOT_FOUND", "no remote origin: {e}");
    for name in ["-x", ".x", "a/b", ""] {
        let e = error_of(&run(&["remote", "add", "--workspace", ws(&a), "--", name, "/tmp/x"], b""));
        assert_eq!(e["code"], "INVALID_ARGUMENT", "{name:?}: {e}");
    }
    let e = error_of(&run(
        &["remote", "add", "--workspace", ws(&a), "--", "origin", "--upload-pack=touch /tmp/pwned"],
        b"",
    ));
    assert_eq!(e["code"], "INVALID_ARGUMENT");
    let remote = bare(dir.path());
    ok(&["remote", "add", "origin", &remote, "--workspace", ws(&a), "--json"], b"");
    let e = error_of(&run(&["remote", "add", "origin", &remote, "--workspace", ws(&a)], b""));
    assert_eq!(e["code"], "CONFLICT");
    // An unreachable remote is IO, with git's reason.
    ok(
        &[
            "remote",
            "add",
            "gone",
            &dir.path().join("missing.git").to_string_lossy(),
            "--workspace",
            ws(&a),
            "--json",
        ],
        b"",
    );
    let before = super::snapshot(&a);
    let e = error_of(&run(&["sync", "--remote", "gone", "--workspace", ws(&a)], b""));
    assert_eq!(e["code"], "IO", "{e}");
    assert_eq!(super::snapshot(&a), before);
    // A workspace without a history cannot sync.
    let off = dir.path().join("off");
    append(&off, "m1", 1);
    std::fs::write(off.join("scriptorium.toml"), "[memory]\nhistory = \"off\"\n").unwrap();
    let e = error_of(&run(&["sync", "--workspace", ws(&off)], b""));
    assert_eq!(e["code"], "INVALID_ARGUMENT");
}

#[test]
fn a_block_moved_on_one_machine_and_edited_on_the_other_follows_the_move() {
    let (_dir, a, b) = two_machines();
    // Machine a moves ^b1 from ada.md to bob.md.
    let moved = std::fs::read_to_string(a.join("topics/ada.md")).unwrap().replace("# Ada", "# Bob");
    let patch = json!({"base_revision": revision(&a), "edits": [
        {"op": "create", "path": "topics/bob.md", "content": moved},
        {"op": "delete", "path": "topics/ada.md"}]});
    ok(&["update", "--workspace", ws(&a), "--patch", "-", "--json"], patch.to_string().as_bytes());
    // Machine b edits it where it was.
    write_block(&b, "Ada likes mint tea.");
    sync(&a);
    let merged = sync(&b);
    assert_eq!((merged["outcome"].as_str(), merged["conflicts"].clone()), (Some("merged"), json!([])));
    sync(&a);
    for root in [&a, &b] {
        assert!(!root.join("topics/ada.md").exists(), "the block left its old file");
        let bob = std::fs::read_to_string(root.join("topics/bob.md")).unwrap();
        assert!(bob.contains("Ada likes mint tea.[^e-0000000001] ^b1"), "the edit followed the move: {bob}");
        assert!(run(&["check", "--workspace", ws(root)], b"").status.success());
    }
    assert_eq!(revision(&a), revision(&b));
}

#[test]
fn ours_closes_a_conflict_edited_since_and_keeps_the_edit() {
    let (_dir, a, b) = two_machines();
    write_block(&a, "Ada likes green tea.");
    write_block(&b, "Ada likes black tea.");
    sync(&a);
    sync(&b);
    // Edited by hand after the merge: neither recorded version is there.
    write_block(&b, "Ada likes oolong.");
    let e = error_of(&run(&["resolve", "b1", "--take", "theirs", "--workspace", ws(&b)], b""));
    assert_eq!(e["code"], "CONFLICT", "{e}");
    ok(&["resolve", "b1", "--take", "ours", "--workspace", ws(&b), "--json"], b"");
    assert!(std::fs::read_to_string(b.join("topics/ada.md")).unwrap().contains("oolong"));
    assert_eq!(ok(&["status", "--workspace", ws(&b), "--json"], b"")["conflicts"], 0);
}

#[test]
fn a_block_moved_to_two_places_stays_in_one() {
    let (_dir, a, b) = two_machines();
    let text = std::fs::read_to_string(a.join("topics/ada.md")).unwrap();
    for (root, to) in [(&a, "topics/u.md"), (&b, "topics/v.md")] {
        let patch = json!({"base_revision": revision(root), "edits": [
            {"op": "create", "path": to, "content": text},
            {"op": "delete", "path": "topics/ada.md"}]});
        ok(&["update", "--workspace", ws(root), "--patch", "-", "--json"], patch.to_string().as_bytes());
    }
    sync(&a);
    let merged = sync(&b);
    assert_eq!((merged["outcome"].as_str(), merged["conflicts"].clone()), (Some("merged"), json!([])));
    sync(&a);
    for root in [&a, &b] {
        let holding: Vec<&str> = ["topics/u.md", "topics/v.md"]
            .into_iter()
            .filter(|p| std::fs::read_to_string(root.join(p)).is_ok_and(|t| t.contains(" ^b1")))
            .collect();
        assert_eq!(holding, ["topics/v.md"], "the merging machine's place stays");
        assert!(run(&["check", "--workspace", ws(root)], b"").status.success());
    }
}

#[test]
fn a_case_twin_from_the_remote_is_a_conflict_that_changes_nothing() {
    let (_dir, a, b) = two_machines();
    let text = std::fs::read_to_string(a.join("topics/ada.md")).unwrap().replace("^b1", "^b9");
    for (root, path) in [(&a, "topics/Budget.md"), (&b, "topics/budget.md")] {
        let body = text.replace("^b9", if root == &a { "^b8" } else { "^b9" });
        let patch = json!({"base_revision": revision(root), "edits": [{"op": "create", "path": path, "content": body}]});
        ok(&["update", "--workspace", ws(root), "--patch", "-", "--json"], patch.to_string().as_bytes());
    }
    sync(&a);
    // The memory and the head; the fetch itself leaves objects in .git.
    let memory = |root: &Path| {
        let mut files = super::snapshot(&root.join("topics"));
        files.extend(super::snapshot(&root.join("sources")));
        (files, std::fs::read(root.join(".git/refs/heads/main")).unwrap())
    };
    let before = memory(&b);
    let e = error_of(&run(&["sync", "--workspace", ws(&b)], b""));
    assert_eq!(e["code"], "CONFLICT", "{e}");
    assert!(e["message"].as_str().unwrap().contains("Rename one"), "{e}");
    assert_eq!(memory(&b), before);
}
