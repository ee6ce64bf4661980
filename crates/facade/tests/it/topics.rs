//! `topic check` and `render` through the binary.

use std::path::Path;

use crate::{data, error_of, json_lines, run};

pub(crate) const CORE: &str = "---
kind: core
---
# Core

The budget is 50k.[^e-1175dea39c] See [Ada](people/ada.md#^a1). ^c1

Unpaired claim.[^e-20a9ff0b11] ^c2

[^e-1175dea39c]: Time: `2026-08-09T10:11:12Z`; Sources: [chat/team-1/m1](../sources/chat/_v2/team-1.md#source-99a7df07)
[^e-20a9ff0b11]: Time: `2026-08-09T10:15:00Z`; Sources: [chat/team-1/m6](../sources/chat/_v2/team-1.md#source-82a463b6)
";

pub(crate) const ADA: &str = "---
kind: person
---
# Ada

Ada (7391) said the budget is 50k.[^e-1175dea39c] ^a1

[^e-1175dea39c]: Time: `2026-08-09T10:11:12Z`; Sources: [chat/team-1/m1](../../sources/chat/_v2/team-1.md#source-99a7df07)
";

fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let input = std::fs::read(data("append-input.jsonl")).unwrap();
    assert!(run(&["archive", "append", "--workspace", ws.path().to_str().unwrap()], &input).status.success());
    std::fs::create_dir_all(ws.path().join("topics/people")).unwrap();
    std::fs::write(ws.path().join("topics/core.md"), CORE).unwrap();
    std::fs::write(ws.path().join("topics/people/ada.md"), ADA).unwrap();
    ws
}

fn w(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_valid_workspace_checks_clean_and_renders() {
    let ws = workspace();
    let out = run(&["topic", "check", "--workspace", w(ws.path()), "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(out.stdout.is_empty());

    let out = run(&["render", "--workspace", w(ws.path()), "--json"], b"");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = &json_lines(&out.stdout)[0];
    assert_eq!(report["core"]["omitted"], serde_json::json!([]));
    assert_eq!(report["events"], 2);
    assert_eq!(report["timeline_files"], 1);
    assert_eq!(report["relations"], serde_json::json!({"nodes": 4, "edges": 1}));
    let core = std::fs::read_to_string(ws.path().join("core.md")).unwrap();
    assert!(core.starts_with("<!-- scriptorium:derived core.md -->\n"));
    assert!(core.contains("[Ada](topics/people/ada.md#^a1)"));
    assert!(core.contains("(sources/chat/_v2/team-1.md#source-99a7df07)"));
    assert!(!core.contains("Unpaired"), "a pending block reached core.md");
    assert_eq!(report["core"]["tokens"], scriptorium::topics::views::count_tokens(&core));

    // Rendering again changes no byte.
    let snapshot = |p: &Path| {
        ["core.md", "recent_events.jsonl", "relations.json", "timeline/2026/08/09.md"]
            .map(|f| std::fs::read(p.join(f)).unwrap())
    };
    let before = snapshot(ws.path());
    assert!(run(&["render", "--workspace", w(ws.path())], b"").status.success());
    assert_eq!(snapshot(ws.path()), before);

    // A day that loses its last block loses its file; an empty core is removed.
    std::fs::remove_file(ws.path().join("topics/people/ada.md")).unwrap();
    std::fs::write(
        ws.path().join("topics/core.md"),
        CORE.replace(" See [Ada](people/ada.md#^a1).", "")
            .replace("^c1", "^c1x")
            .replace("2026-08-09T10:11:12Z", "2026-08-10"),
    )
    .unwrap();
    let out = run(&["render", "--workspace", w(ws.path()), "--json"], b"");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!ws.path().join("timeline/2026/08/09.md").exists());
    assert!(ws.path().join("timeline/2026/08/10.md").exists());
    std::fs::write(ws.path().join("topics/core.md"), "# Core\n").unwrap();
    assert!(run(&["render", "--workspace", w(ws.path())], b"").status.success());
    assert!(!ws.path().join("core.md").exists());
    assert!(!ws.path().join("timeline/2026").exists());
}

#[test]
fn check_reports_codes_and_named_files() {
    let ws = workspace();
    std::fs::write(
        ws.path().join("topics/people/bo.md"),
        "Bo dup.[^e-1175dea39c] ^a1\n\nNo cite ^b2\n\n[^e-1175dea39c]: Time: `2026-08-09`; Sources: [chat/team-1/m404](../../sources/chat/_v2/team-1.md#source-99a7df07)\n",
    )
    .unwrap();
    let out = run(&["topic", "check", "--workspace", w(ws.path()), "--json"], b"");
    assert_eq!(out.status.code(), Some(1));
    let codes: Vec<(String, String, u64)> = json_lines(&out.stdout)
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_owned(),
                d["path"].as_str().unwrap().to_owned(),
                d["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        codes,
        [
            ("DUPLICATE_BLOCK_ID".into(), "topics/people/ada.md".into(), 6),
            ("DUPLICATE_BLOCK_ID".into(), "topics/people/bo.md".into(), 1),
            ("UNCITED_BLOCK".into(), "topics/people/bo.md".into(), 3),
            ("UNKNOWN_SOURCE".into(), "topics/people/bo.md".into(), 5),
        ]
    );
    // Naming ada.md still reports both occurrences of its duplicated id, and nothing else of bo.md.
    let out = run(&["topic", "check", "--workspace", w(ws.path()), "topics/people/ada.md", "--json"], b"");
    assert_eq!(json_lines(&out.stdout).len(), 2);
    // A path on disk inside the workspace works too.
    let on_disk = ws.path().join("topics/core.md");
    let out = run(&["topic", "check", "--workspace", w(ws.path()), w(&on_disk)], b"");
    assert_eq!(out.status.code(), Some(0));
    // Unknown files and missing workspaces are refused.
    let err = error_of(&run(&["topic", "check", "--workspace", w(ws.path()), "topics/nope.md"], b""));
    assert_eq!(err["code"], "NOT_FOUND");
    let err = error_of(&run(&["render", "--workspace", w(&ws.path().join("missing"))], b""));
    assert_eq!(err["code"], "NOT_FOUND");
    // Invalid UTF-8 is a diagnostic, not a crash.
    std::fs::write(ws.path().join("topics/bad.md"), b"\xff\xfe").unwrap();
    let out = run(&["topic", "check", "--workspace", w(ws.path()), "topics/bad.md", "--json"], b"");
    assert_eq!(json_lines(&out.stdout)[0]["code"], "BAD_ENCODING");
}

#[test]
fn an_invalid_hand_written_core_is_archived_as_evidence_and_converted() {
    let ws = workspace();
    std::fs::remove_file(ws.path().join("topics/core.md")).unwrap();
    std::fs::write(ws.path().join("core.md"), "My own notes.\n").unwrap();
    let out = run(&["render", "--workspace", w(ws.path()), "--json"], b"");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let note = json_lines(&out.stdout)[0]["hand_written_core"].as_str().unwrap().to_owned();
    assert!(note.contains("converted into 1 block(s) of topics/core.md"), "{note}");
    // The original bytes are kept beside the workspace and in the archive.
    let name = ws.path().file_name().unwrap().to_string_lossy().into_owned();
    let aside = ws.path().with_file_name(format!("{name}-superseded")).join("core.md");
    assert_eq!(std::fs::read_to_string(&aside).unwrap(), "My own notes.\n");
    let archived = std::fs::read_to_string(ws.path().join("sources/workspace/_v2/core-md.md")).unwrap();
    assert!(archived.contains("My own notes."));
    std::fs::remove_dir_all(aside.parent().unwrap()).unwrap();
    // The text is a block of topics/core.md citing the record, rendered.
    let topic = std::fs::read_to_string(ws.path().join("topics/core.md")).unwrap();
    assert!(topic.contains("My own notes. [^e-"), "{topic}");
    let core = std::fs::read_to_string(ws.path().join("core.md")).unwrap();
    assert!(core.contains("My own notes."), "{core}");
}

#[test]
fn a_valid_hand_written_core_moves_to_topics() {
    let ws = workspace();
    let text = std::fs::read_to_string(ws.path().join("topics/core.md")).unwrap();
    std::fs::remove_file(ws.path().join("topics/core.md")).unwrap();
    std::fs::write(ws.path().join("core.md"), &text).unwrap();
    let out = run(&["render", "--workspace", w(ws.path()), "--json"], b"");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let note = json_lines(&out.stdout)[0]["hand_written_core"].as_str().unwrap().to_owned();
    assert!(note.contains("moved to topics/core.md"), "{note}");
    assert_eq!(std::fs::read_to_string(ws.path().join("topics/core.md")).unwrap(), text);
    let core = std::fs::read_to_string(ws.path().join("core.md")).unwrap();
    assert!(core.starts_with("<!-- scriptorium:derived core.md -->\n"), "{core}");
    let name = ws.path().file_name().unwrap().to_string_lossy().into_owned();
    let aside = ws.path().with_file_name(format!("{name}-superseded"));
    assert_eq!(std::fs::read_to_string(aside.join("core.md")).unwrap(), text);
    std::fs::remove_dir_all(aside).unwrap();
}

#[cfg(unix)]
#[test]
fn render_never_writes_through_a_link() {
    let ws = workspace();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.path().join("timeline")).unwrap();
    let err = error_of(&run(&["render", "--workspace", w(ws.path())], b""));
    assert_eq!(err["code"], "INVALID_ARGUMENT");
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[test]
fn hand_written_core_is_never_overwritten_and_odd_names_are_reported() {
    let ws = workspace();
    std::fs::write(ws.path().join("core.md"), "<!-- scriptorium:derived core.md -->\r\nmy notes\r\n")
        .unwrap();
    let out = run(&["render", "--workspace", w(ws.path()), "--json"], b"");
    assert!(out.status.success());
    // topics/core.md exists: the loose file is converted into blocks
    // appended to it, set aside, never lost, and the render takes its place.
    let name = ws.path().file_name().unwrap().to_string_lossy().into_owned();
    let aside = ws.path().with_file_name(format!("{name}-superseded"));
    assert_eq!(
        std::fs::read(aside.join("core.md")).unwrap(),
        b"<!-- scriptorium:derived core.md -->\r\nmy notes\r\n"
    );
    std::fs::remove_dir_all(aside).unwrap();
    let note = json_lines(&out.stdout)[0]["hand_written_core"].as_str().unwrap().to_owned();
    assert!(note.contains("appended to it") && note.contains("the original is kept at"), "{note}");
    assert!(std::fs::read_to_string(ws.path().join("core.md")).unwrap().contains("my notes"));
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let odd = std::ffi::OsStr::from_bytes(b"topics/\xff.md");
        std::fs::write(ws.path().join(odd), "x\n").unwrap();
        let out = run(&["topic", "check", "--workspace", w(ws.path()), "--json"], b"");
        let d = &json_lines(&out.stdout)[0];
        assert_eq!(d["code"], "BAD_ENCODING");
        assert!(run(&["render", "--workspace", w(ws.path())], b"").status.success());
    }
}

#[cfg(unix)]
#[test]
fn the_lock_is_never_taken_through_a_link() {
    let ws = workspace();
    let outside = tempfile::tempdir().unwrap();
    std::fs::remove_dir_all(ws.path().join(".scriptorium")).unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.path().join(".scriptorium")).unwrap();
    let err = error_of(&run(&["render", "--workspace", w(ws.path())], b""));
    assert_eq!(err["code"], "INVALID_ARGUMENT");
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[test]
fn a_diagnostic_is_one_line_whatever_the_file_is_called() {
    let ws = workspace();
    let name = "topics/nl\n<b>2.md";
    std::fs::write(ws.path().join(name), "# X\n\nNo citation here. ^x1\n").unwrap();
    let out = run(&["topic", "check", "--workspace", w(ws.path())], b"");
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("<b>2.md")).collect();
    assert!(!lines.is_empty(), "{text}");
    assert!(lines.iter().all(|l| l.starts_with("topics/nl\\u{a}<b>2.md")), "{text}");
    assert!(!text.lines().any(|l| l.starts_with("<b>")), "no line begins inside the name: {text}");
}
