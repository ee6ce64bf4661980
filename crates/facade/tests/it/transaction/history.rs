//! `log`, `show` and `undo` through the binary: the exact JSON shapes,
//! `--path` and `--session`, naming a commit by an abbreviated id, a
//! workspace revision or `HEAD~N`, `NOT_FOUND`, and undo's round trip,
//! conflict, `--force` and archive-only commits.

use std::path::Path;

use serde_json::Value;

use super::{appended_block, patch, record, revision, str_replace, updated, w, workspace, ADA_PATH};
use crate::{error_of, json_lines, run, snapshot};

const LOG_KEYS: [&str; 8] = ["commit", "revision", "writer", "tier", "session", "turns", "time", "message"];

fn ok(args: &[&str], root: &Path) -> Vec<Value> {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--workspace", w(root), "--json"]);
    let out = run(&all, b"");
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    json_lines(&out.stdout)
}

fn log(root: &Path, extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["log"];
    args.extend_from_slice(extra);
    ok(&args, root)
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn topics(root: &Path) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    snapshot(root).into_iter().filter(|(p, _)| p.starts_with(root.join("topics"))).collect()
}

/// Appends block `id` to Ada's file.
fn add_block(root: &Path, text: &str, id: &str) -> Value {
    let edit = super::append(ADA_PATH, &appended_block(text, "e-00000000a1", id));
    updated(root, &patch(&revision(root), vec![], vec![edit]), &[])
}

fn head(root: &Path) -> String {
    log(root, &[])[0]["commit"].as_str().unwrap().to_owned()
}

#[test]
fn log_and_show_print_their_exact_shapes() {
    let ws = workspace();
    let root = ws.path();
    add_block(root, "Ada (7391) said the budget is 50k again.", "b2");
    let entries = log(root, &[]);
    for e in &entries {
        assert_eq!(sorted(keys(e)), sorted(LOG_KEYS.map(String::from).to_vec()), "{e}");
        assert_eq!(e["commit"].as_str().unwrap().len(), 40);
        assert!(e["time"].as_str().unwrap().ends_with('Z'), "{e}");
    }
    let newest = &entries[0];
    assert_eq!((newest["writer"].as_str(), newest["tier"].as_str()), (Some("update"), Some("owner")));
    assert_eq!((&newest["session"], &newest["turns"]), (&Value::Null, &serde_json::json!([])));
    assert_eq!(newest["revision"].as_str(), Some(revision(root).as_str()));
    assert_eq!(newest["message"], "test");

    let shown = &ok(&["show", "HEAD"], root)[0];
    let mut want = LOG_KEYS.map(String::from).to_vec();
    want.extend(["blocks", "sources", "paths"].map(String::from));
    assert_eq!(sorted(keys(shown)), sorted(want));
    for k in LOG_KEYS {
        assert_eq!(shown[k], newest[k], "{k}");
    }
    let blocks = serde_json::json!({"added": [format!("{ADA_PATH}#^b2")], "changed": [], "removed": []});
    assert_eq!(shown["blocks"], blocks);
    assert_eq!(shown["paths"], serde_json::json!([ADA_PATH]));
    assert_eq!(shown["sources"], serde_json::json!([]));

    // The same commit by an abbreviated id, by its workspace revision.
    let id = newest["commit"].as_str().unwrap();
    assert_eq!(ok(&["show", &id[..7]], root)[0]["commit"], id);
    assert_eq!(ok(&["show", newest["revision"].as_str().unwrap()], root)[0]["commit"], id);
    assert_eq!(ok(&["show", "HEAD~1"], root)[0]["commit"], entries[1]["commit"]);

    // The text forms: one line per commit; a summary naming the block.
    let text = run(&["log", "--workspace", w(root)], b"");
    assert_eq!(String::from_utf8(text.stdout).unwrap().lines().count(), entries.len());
    let text = String::from_utf8(run(&["show", &id[..7], "--workspace", w(root)], b"").stdout).unwrap();
    assert!(text.starts_with(&format!("commit {id}\n")), "{text}");
    assert!(text.contains(&format!("added   {ADA_PATH}#^b2")), "{text}");
}

#[test]
fn a_commit_that_is_not_there_is_not_found_and_a_bad_name_is_invalid() {
    let ws = workspace();
    let root = ws.path();
    add_block(root, "Ada (7391) said the budget is 50k again.", "b2");
    for rev in ["deadbeef", "HEAD~50", &"0".repeat(64)] {
        let out = run(&["show", rev, "--workspace", w(root), "--json"], b"");
        assert_eq!(error_of(&out)["code"], "NOT_FOUND", "{rev}");
    }
    for rev in ["abc", "main", "HEAD^^"] {
        let out = run(&["show", rev, "--workspace", w(root), "--json"], b"");
        assert_eq!(error_of(&out)["code"], "INVALID_ARGUMENT", "{rev}");
    }
    // No repository: an empty log, and nothing to show.
    let bare = tempfile::tempdir().unwrap();
    assert!(log(bare.path(), &[]).is_empty());
    let out = run(&["show", "HEAD", "--workspace", w(bare.path()), "--json"], b"");
    assert_eq!(error_of(&out)["code"], "NOT_FOUND");
}

fn git(root: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=T", "-c", "user.email=t@example.com", "-C", w(root)])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn log_keeps_the_commits_of_a_path_or_a_session() {
    let ws = workspace();
    let root = ws.path();
    add_block(root, "Ada (7391) said the budget is 50k again.", "b2");
    let all = log(root, &[]);
    let people = log(root, &["--path", "topics/people"]);
    assert!(!people.is_empty() && people.len() < all.len() + 1);
    assert!(people.iter().all(|e| {
        let shown = &ok(&["show", e["commit"].as_str().unwrap()], root)[0];
        shown["paths"].as_array().unwrap().iter().any(|p| p.as_str().unwrap().starts_with("topics/people/"))
    }));
    assert_eq!(log(root, &["--path", ADA_PATH]).len(), people.len());
    assert!(log(root, &["--path", "topics/nowhere.md"]).is_empty());
    assert_eq!(log(root, &["--path", "topics/team.md"]).len(), 1, "only the commit that brought it in");

    // A commit made by hand: listed as external; one stamped with a session.
    git(root, &["commit", "--allow-empty", "-q", "-m", "by hand"]);
    let stamped = format!(
        "a session's turns\n\nScriptorium-Revision: {}\nScriptorium-Writer: offline\nScriptorium-Tier: owner\nScriptorium-Session: s-1\nScriptorium-Turns: m1,m2\n",
        "ab".repeat(32)
    );
    git(root, &["commit", "--allow-empty", "-q", "-m", &stamped]);
    let entries = log(root, &[]);
    assert_eq!(entries.len(), all.len() + 2);
    assert_eq!(
        (entries[1]["writer"].as_str(), entries[1]["revision"].as_str()),
        (Some("external"), Some(""))
    );
    let s1 = log(root, &["--session", "s-1"]);
    assert_eq!(s1.len(), 1);
    assert_eq!(s1[0]["commit"], entries[0]["commit"]);
    assert_eq!(s1[0]["turns"], serde_json::json!(["m1", "m2"]));
    assert!(log(root, &["--session", "s-2"]).is_empty());
    assert_eq!(ok(&["show", &"ab".repeat(32)], root)[0]["commit"], entries[0]["commit"]);
    assert_eq!(git(root, &["rev-parse", "HEAD"]).trim(), entries[0]["commit"].as_str().unwrap());
}

fn undo(root: &Path, rev: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["undo", rev, "--workspace", w(root), "--json"];
    args.extend_from_slice(extra);
    run(&args, b"")
}

fn undone(root: &Path, rev: &str, extra: &[&str]) -> Value {
    let out = undo(root, rev, extra);
    assert!(out.status.success(), "undo {rev}: {}", String::from_utf8_lossy(&out.stderr));
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 1);
    assert_eq!(
        sorted(keys(&lines[0])),
        sorted(["commit", "revision", "reverted"].map(String::from).to_vec())
    );
    // In that order.
    let text = String::from_utf8(out.stdout).unwrap();
    let at = |k: &str| text.find(&format!("\"{k}\":")).unwrap();
    assert!(at("commit") < at("revision") && at("revision") < at("reverted"), "{text}");
    lines[0].clone()
}

#[test]
fn undo_of_an_update_brings_the_topics_back_byte_identical() {
    let ws = workspace();
    let root = ws.path();
    let before = topics(root);
    let edits = vec![
        str_replace(ADA_PATH, "the budget is 50k.", "the budget is 50k, she said."),
        super::append(
            ADA_PATH,
            &appended_block("Ada (7391) said the budget is 50k again.", "e-00000000a1", "b2"),
        ),
    ];
    updated(root, &patch(&revision(root), vec![], edits), &[]);
    let rev = head(root);
    let u = undone(root, &rev[..8], &[]);
    assert_eq!(topics(root), before);
    assert_eq!(u["revision"].as_str(), Some(revision(root).as_str()));
    let reverted = serde_json::json!([format!("{ADA_PATH}#^b2"), format!("{ADA_PATH}#^a1")]);
    assert_eq!(u["reverted"], reverted);
    let newest = &log(root, &[])[0];
    assert_eq!((&newest["commit"], newest["writer"].as_str()), (&u["commit"], Some("undo")));
    // Undoing the undo gives the update back.
    undone(root, "HEAD", &[]);
    let again = std::fs::read_to_string(root.join(ADA_PATH)).unwrap();
    assert!(again.contains("50k, she said.") && again.contains("^b2"), "{again}");
}

#[test]
fn undo_is_refused_when_a_block_changed_since_unless_forced() {
    let ws = workspace();
    let root = ws.path();
    let original = std::fs::read_to_string(root.join(ADA_PATH)).unwrap();
    let first = vec![str_replace(ADA_PATH, "the budget is 50k.", "the budget is 50k, first.")];
    updated(root, &patch(&revision(root), vec![], first), &[]);
    let target = head(root);
    let second = vec![str_replace(ADA_PATH, "first.", "second.")];
    updated(root, &patch(&revision(root), vec![], second), &[]);
    let (files, newest) = (topics(root), head(root));

    let err = error_of(&undo(root, &target, &[]));
    assert_eq!(err["code"], "CONFLICT");
    assert!(err["message"].as_str().unwrap().contains(&format!("{ADA_PATH}#^a1")), "{err}");
    assert_eq!((topics(root), head(root)), (files, newest), "a refused undo wrote something");

    let u = undone(root, &target, &["--force"]);
    assert_eq!(u["reverted"], serde_json::json!([format!("{ADA_PATH}#^a1")]));
    assert_eq!(std::fs::read_to_string(root.join(ADA_PATH)).unwrap(), original);
}

#[test]
fn undo_of_an_archive_only_commit_changes_nothing() {
    let ws = workspace();
    let root = ws.path();
    let input = record("team-9", "m1", "a new thread", false).to_string();
    assert!(run(&["archive", "append", "--workspace", w(root)], input.as_bytes()).status.success());
    let shown = &ok(&["show", "HEAD"], root)[0];
    assert_eq!(shown["sources"], serde_json::json!(["chat/team-9/m1"]));
    assert_eq!(shown["blocks"]["added"], serde_json::json!([]));
    let (files, rev, newest) = (snapshot(root), revision(root), head(root));
    let u = undone(root, "HEAD", &[]);
    assert_eq!(u, serde_json::json!({"commit": null, "revision": rev, "reverted": []}));
    assert_eq!(head(root), newest);
    let after: Vec<_> = snapshot(root).into_keys().filter(|p| !p.starts_with(root.join(".git"))).collect();
    let before: Vec<_> = files.into_keys().filter(|p| !p.starts_with(root.join(".git"))).collect();
    assert_eq!(after, before);
}
