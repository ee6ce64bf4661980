//! The root `core.md` through the binary: one that is not a regular file
//! never blocks memory, and everything a hand-written one says reaches the
//! prompt (FORMAT.md §4.4).

use std::path::Path;

use serde_json::Value;

use super::{json_lines, run};

fn w(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs the binary, asserting success; its JSON lines and its stderr.
fn ok(args: &[&str], stdin: &[u8]) -> (Vec<Value>, String) {
    let out = run(args, stdin);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    (json_lines(&out.stdout), stderr)
}

fn prompt_text(root: &Path) -> String {
    let (lines, _) = ok(&["prompt", "--workspace", w(root), "--json"], b"");
    lines[0]["text"].as_str().unwrap().to_owned()
}

/// A workspace folder `ws` holding only `core.md` with `text`.
fn with_core(text: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("core.md"), text).unwrap();
    (dir, root)
}

#[cfg(unix)]
#[test]
fn a_linked_core_md_never_blocks_memory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    let notes = dir.path().join("notes.md");
    std::fs::write(&notes, "Please be terse.\n").unwrap();
    std::os::unix::fs::symlink(&notes, root.join("core.md")).unwrap();
    // prompt does not follow it.
    let (lines, stderr) = ok(&["prompt", "--workspace", w(&root), "--json"], b"");
    assert_eq!(lines[0]["text"], "", "the link is not followed");
    assert!(stderr.contains("core.md is a symbolic link"), "{stderr}");
    let (lines, stderr) = ok(&["render", "--workspace", w(&root), "--json"], b"");
    assert!(lines[0]["warnings"][0].as_str().unwrap().contains("symbolic link"), "{:?}", lines[0]);
    assert!(stderr.contains("core.md is a symbolic link"), "{stderr}");
    // Session turns are written.
    let turn = r#"{"session":"s","id":"m1","role":"user","timestamp":"2026-08-01T10:00:00Z","content":"I am a nurse. Please avoid jargon."}"#;
    let file = dir.path().join("s.jsonl");
    std::fs::write(&file, format!("{turn}\n")).unwrap();
    let import = run(&["session", "import", "--workspace", w(&root), "--format", "jsonl", w(&file)], b"");
    assert!(import.status.success(), "{}", String::from_utf8_lossy(&import.stderr));
    let (lines, stderr) = ok(&["write", "--workspace", w(&root), "--force", "--json"], b"");
    assert_eq!(lines[0]["turns"], 1, "{:?}", lines[0]);
    assert!(stderr.contains("core.md is a symbolic link"), "{stderr}");
    let (lines, _) = ok(&["status", "--workspace", w(&root), "--json"], b"");
    assert_eq!(lines[0]["pending_turns"], 0, "{:?}", lines[0]);
    assert!(std::fs::read_to_string(root.join("topics/core.md")).unwrap().contains("Please avoid jargon"));
    // The link and what it points to are untouched, and nothing was set aside.
    assert!(std::fs::symlink_metadata(root.join("core.md")).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "Please be terse.\n");
    assert!(!dir.path().join("ws-superseded").exists());
    assert_eq!(prompt_text(&root), "", "still not followed");
    // Once it is moved away, the render takes its place.
    std::fs::remove_file(root.join("core.md")).unwrap();
    ok(&["render", "--workspace", w(&root), "--json"], b"");
    assert!(prompt_text(&root).contains("Please avoid jargon"));
}

#[test]
fn a_folder_named_core_md_never_blocks_memory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(root.join("core.md")).unwrap();
    let (lines, stderr) = ok(&["render", "--workspace", w(&root), "--json"], b"");
    assert!(lines[0]["warnings"][0].as_str().unwrap().contains("core.md is a folder"), "{:?}", lines[0]);
    assert!(stderr.contains("core.md is a folder"), "{stderr}");
    assert!(root.join("core.md").is_dir());
}

#[test]
fn a_hand_written_core_md_is_appended_to_an_existing_topics_core() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    let turn = r#"{"session":"s","id":"m1","role":"user","timestamp":"2026-08-01T10:00:00Z","content":"I am a nurse. Please avoid jargon."}"#;
    let file = dir.path().join("s.jsonl");
    std::fs::write(&file, format!("{turn}\n")).unwrap();
    let import = run(&["session", "import", "--workspace", w(&root), "--format", "jsonl", w(&file)], b"");
    assert!(import.status.success(), "{}", String::from_utf8_lossy(&import.stderr));
    ok(&["write", "--workspace", w(&root), "--force", "--json"], b"");
    let before = std::fs::read_to_string(root.join("topics/core.md")).unwrap();
    let original = b"\xef\xbb\xbf# Rules\nNever deploy on Fridays.\n";
    std::fs::write(root.join("core.md"), original).unwrap();
    let (_, stderr) = ok(&["prompt", "--workspace", w(&root), "--json"], b"");
    assert!(stderr.contains("appended to it"), "{stderr}");
    let topic = std::fs::read_to_string(root.join("topics/core.md")).unwrap();
    assert!(topic.starts_with(before.trim_end()), "the existing blocks are kept:\n{topic}");
    assert!(topic.contains("\n**Rules** [^e-"), "{topic}");
    assert!(topic.contains("\nNever deploy on Fridays. [^e-"), "{topic}");
    assert!(!topic.contains('\u{feff}'), "the byte-order mark is dropped");
    let shown = prompt_text(&root);
    for want in ["Please avoid jargon.", "**Rules**", "Never deploy on Fridays."] {
        assert!(shown.contains(want), "{want:?} in the prompt:\n{shown}");
    }
    // The original bytes are kept beside the workspace and in the archive.
    assert_eq!(std::fs::read(dir.path().join("ws-superseded/core.md")).unwrap(), original);
    let archived = std::fs::read_to_string(root.join("sources/workspace/_v2/core-md.md")).unwrap();
    assert!(archived.contains("\u{feff}# Rules"), "{archived}");
    assert_eq!(run(&["check", "--workspace", w(&root)], b"").status.code(), Some(0), "{topic}");
}

#[test]
fn headings_footnotes_and_front_matter_reach_the_prompt() {
    let cases: [(&[u8], &[&str]); 3] = [
        (
            b"# Rules\nPlease be terse.\n\n[^x]: Never deploy on Fridays.\n## The wifi password is hunter2\n",
            &[
                "**Rules**",
                "Please be terse.",
                "[\\^x]: Never deploy on Fridays.",
                "**The wifi password is hunter2**",
            ],
        ),
        (
            b"[^a]: first def\n[^a]: second def\nText citing [^a] and [^missing] here.\n",
            &["first def", "second def", "Text citing [\\^a] and [\\^missing] here."],
        ),
        (b"---\ndescription: my notes\n---\nBe terse.\n", &["Be terse."]),
    ];
    for (original, wants) in cases {
        let (_dir, root) = with_core(original);
        let shown = prompt_text(&root);
        for want in wants {
            assert!(shown.contains(want), "{want:?} in the prompt:\n{shown}");
        }
        let topic = std::fs::read_to_string(root.join("topics/core.md")).unwrap();
        if original.starts_with(b"---") {
            assert!(topic.starts_with("---\ndescription: my notes\n---\n\n# Core\n"), "{topic}");
        }
        assert_eq!(run(&["check", "--workspace", w(&root)], b"").status.code(), Some(0), "{topic}");
    }
}

/// Runs `render`, `prompt`, `write` and `update` (an empty patch on the
/// current revision) on `root`, asserting success; their stderr.
fn every_verb(root: &Path) -> Vec<String> {
    let mut stderrs = Vec::new();
    for verb in ["render", "prompt", "write"] {
        stderrs.push(ok(&[verb, "--workspace", w(root), "--json"], b"").1);
    }
    let (status, _) = ok(&["status", "--workspace", w(root), "--json"], b"");
    let patch = serde_json::json!({"base_revision": status[0]["revision"], "edits": []});
    let args = ["update", "--workspace", w(root), "--patch", "-", "--json"];
    stderrs.push(ok(&args, patch.to_string().as_bytes()).1);
    stderrs
}

#[test]
fn a_taken_superseded_name_never_blocks_memory_nor_repeats_the_migration() {
    for link in [false, true] {
        let (dir, root) = with_core(b"Please call me Sam.\n");
        let taken = dir.path().join("ws-superseded");
        if link {
            std::fs::create_dir_all(dir.path().join("elsewhere")).unwrap();
            #[cfg(unix)]
            std::os::unix::fs::symlink(dir.path().join("elsewhere"), &taken).unwrap();
            #[cfg(not(unix))]
            continue;
        } else {
            std::fs::write(&taken, "a file\n").unwrap();
        }
        every_verb(&root);
        let topic = std::fs::read_to_string(root.join("topics/core.md")).unwrap();
        assert_eq!(topic.matches("Please call me Sam.").count(), 1, "{topic}");
        assert!(prompt_text(&root).contains("Please call me Sam."));
        let kept = dir.path().join("ws-superseded.1/core.md");
        assert_eq!(std::fs::read_to_string(kept).unwrap(), "Please call me Sam.\n");
        if link {
            assert_eq!(
                std::fs::read_dir(dir.path().join("elsewhere")).unwrap().count(),
                0,
                "not through the link"
            );
        } else {
            assert_eq!(std::fs::read_to_string(&taken).unwrap(), "a file\n");
        }
    }
}

#[test]
fn a_core_md_that_cannot_be_set_aside_is_migrated_once_and_warned_about() {
    // `<root>-superseded` is a name too long for the file system, so the
    // original cannot be set aside anywhere.
    for (original, case) in [("Please call me Sam.\n", "converted"), ("# Core\n", "moved")] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("w".repeat(250));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("core.md"), original).unwrap();
        for stderr in every_verb(&root) {
            assert!(
                stderr.contains("warning: the hand-written core.md could not be set aside"),
                "{case}: {stderr}"
            );
        }
        let topic = std::fs::read_to_string(root.join("topics/core.md")).unwrap();
        assert_eq!(topic.matches("Please call me Sam.").count(), usize::from(case == "converted"), "{topic}");
        assert_eq!(topic.matches("# Core").count(), 1, "{case}: {topic}");
        assert_eq!(std::fs::read_to_string(root.join("core.md")).unwrap(), original, "left where it is");
        assert_eq!(run(&["check", "--workspace", w(&root)], b"").status.code(), Some(0), "{topic}");
    }
}

#[test]
fn the_original_goes_beside_the_workspace_named_dot() {
    let (dir, root) = with_core(b"Please call me Sam.\n");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_scriptorium"))
        .args(["render", "--workspace", ".", "--json"])
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let kept = dir.path().join("ws-superseded/core.md");
    assert_eq!(std::fs::read_to_string(kept).unwrap(), "Please call me Sam.\n");
    assert!(!root.join("workspace-superseded").exists());
}

#[test]
fn a_lone_cr_in_a_hand_written_core_md_stays_a_line_end() {
    let (_dir, root) = with_core(b"# Rules\r\nNever delete\rprod backups.\r\n");
    let shown = prompt_text(&root);
    assert!(shown.contains("Never delete\nprod backups."), "{shown}");
}
