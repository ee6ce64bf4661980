//! Tamper evidence through the binary: a committed frame of the demo's
//! archive changed by one byte, removed, or swapped with another is a
//! `TAMPERED` finding of `check` naming the file and the record; an append
//! to the file is refused and writes nothing; the tampered bytes are never
//! committed; search marks the hits from that file.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::{error_of, json_lines, run};

pub(super) const FILE: &str = "sources/demo/_v2/team-chat.md";

pub(super) fn demo() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    let out = run(&["demo", "--workspace", root.to_str().unwrap()], b"");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (dir, root)
}

fn git(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git").arg("-C").arg(root).args(args).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// `check --json`: its exit code, its TAMPERED lines and its summary.
fn check(root: &Path) -> (Option<i32>, Vec<Value>, Value) {
    let out = run(&["check", "--workspace", root.to_str().unwrap(), "--json"], b"");
    let mut lines = json_lines(&out.stdout);
    let summary = lines.pop().unwrap();
    let tampered = lines.into_iter().filter(|l| l["code"] == "TAMPERED").collect();
    (out.status.code(), tampered, summary)
}

/// The frames of the demo's archive file: its marker, then one slice per
/// record (each starts with the blank line before its anchor).
fn frames(bytes: &[u8]) -> (Vec<u8>, Vec<Vec<u8>>) {
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    let mut parts = text.split("\n\n<a id=");
    let marker = format!("{}\n", parts.next().unwrap());
    let frames = parts.map(|p| format!("\n<a id={p}\n").into_bytes()).collect::<Vec<_>>();
    let mut frames = frames;
    // The last frame already ends in the file's final LF.
    let last = frames.last_mut().unwrap();
    last.pop();
    (marker.into_bytes(), frames)
}

/// The file with one byte of its first record changed.
pub(super) fn lower_morning(bytes: &[u8]) -> Vec<u8> {
    let at = bytes.windows(11).position(|w| w == b"Morning all").unwrap();
    let mut out = bytes.to_vec();
    out[at] = b'm';
    out
}

fn assemble(marker: &[u8], frames: &[&[u8]]) -> Vec<u8> {
    let mut out = marker.to_vec();
    for f in frames {
        out.extend_from_slice(f);
    }
    out
}

#[test]
fn the_frames_of_the_demo_file_reassemble_it() {
    let (_dir, root) = demo();
    let bytes = std::fs::read(root.join(FILE)).unwrap();
    let (marker, frames) = frames(&bytes);
    assert!(frames.len() >= 3);
    let refs: Vec<&[u8]> = frames.iter().map(Vec::as_slice).collect();
    assert_eq!(assemble(&marker, &refs), bytes);
    let (status, tampered, summary) = check(&root);
    assert_eq!((status, tampered.len(), summary["errors"].as_u64()), (Some(0), 0, Some(0)), "{summary}");
}

#[test]
fn a_changed_byte_a_removed_frame_and_a_swap_are_each_tampered() {
    let (_dir, root) = demo();
    let path = root.join(FILE);
    let original = std::fs::read(&path).unwrap();
    let (marker, frames) = frames(&original);
    let f: Vec<&[u8]> = frames.iter().map(Vec::as_slice).collect();

    let one_byte = lower_morning(&original);
    let removed = assemble(&marker, &[f[0], f[2]]);
    let swapped = assemble(&marker, &[f[1], f[0], f[2]]);
    let cases: [(&[u8], &str, &str); 3] = [
        (&one_byte, "changed", "demo/team-chat/m1"),
        (&removed, "removed", "demo/team-chat/m2"),
        (&swapped, "reordered", "demo/team-chat/m2"),
    ];
    for (bytes, breach, id) in cases {
        std::fs::write(&path, bytes).unwrap();
        let (status, tampered, summary) = check(&root);
        assert_eq!(status, Some(1), "{breach}");
        assert_eq!(summary["ok"], false);
        assert_eq!(tampered.len(), 1, "{tampered:?}");
        let t = &tampered[0];
        assert_eq!(
            (t["path"].as_str(), t["source_id"].as_str(), t["breach"].as_str()),
            (Some(FILE), Some(id), Some(breach))
        );
        let text = run(&["check", "--workspace", root.to_str().unwrap()], b"");
        let stdout = String::from_utf8(text.stdout).unwrap();
        assert!(stdout.contains(&format!("{FILE}: TAMPERED {id}: ")), "{stdout}");
    }
    std::fs::write(&path, &original).unwrap();
    assert_eq!(check(&root).0, Some(0), "restored, it is clean again");
}

#[test]
fn an_append_to_a_tampered_file_is_refused_and_nothing_is_committed() {
    let (_dir, root) = demo();
    let w = root.to_str().unwrap();
    let path = root.join(FILE);
    let bytes = lower_morning(&std::fs::read(&path).unwrap());
    std::fs::write(&path, &bytes).unwrap();
    let head = git(&root, &["rev-parse", "HEAD"]);

    let record = r#"{"provider":"demo","thread":"team-chat","message":"m99","role":"user","timestamp":"2026-03-02T10:00:00Z","content":"one more"}"#;
    let out = run(&["archive", "append", "--workspace", w, "--json"], format!("{record}\n").as_bytes());
    let err = error_of(&out);
    assert_eq!(err["code"], "TAMPERED", "{err}");
    assert_eq!(err["path"], FILE);
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "nothing written");
    assert_eq!(git(&root, &["rev-parse", "HEAD"]), head, "nothing committed");
    // No commit anywhere in history holds the tampered text.
    let log = git(&root, &["log", "-p", "--all", "--", FILE]);
    assert!(log.contains("Morning all") && !log.contains("morning all"), "{log}");
    assert_eq!(check(&root).1.len(), 1);
}

#[test]
fn search_marks_hits_from_a_tampered_file_only() {
    let (_dir, root) = demo();
    let w = root.to_str().unwrap();
    let search = |query: &str| {
        let out = run(&["search", "--workspace", w, "--json", query], b"");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        json_lines(&out.stdout)
    };
    let before = search("budget");
    assert!(before.iter().any(|h| h["kind"] == "source"));
    assert!(before.iter().all(|h| h.get("tampered").is_none()), "clean: no key at all");

    let path = root.join(FILE);
    let bytes = lower_morning(&std::fs::read(&path).unwrap());
    std::fs::write(&path, &bytes).unwrap();
    let after = search("budget");
    let sources: Vec<&Value> = after.iter().filter(|h| h["kind"] == "source").collect();
    assert!(!sources.is_empty());
    assert!(sources.iter().all(|h| h["tampered"] == true && h["path"] == FILE), "{sources:?}");
    assert!(after.iter().filter(|h| h["kind"] == "topic").all(|h| h.get("tampered").is_none()));
    let text = run(&["search", "--workspace", w, "budget"], b"");
    let text = String::from_utf8(text.stdout).unwrap();
    let marked: Vec<&str> = text.lines().filter(|l| l.contains("  (tampered)  ")).collect();
    assert_eq!(marked.len(), sources.len(), "{text}");
    assert!(marked.iter().all(|l| l.contains(FILE)), "{text}");
}
