//! The seed's rules through the binary: the core report on `status` and
//! `write`, promotion writing memory, a hand-written `core.md` kept in the
//! prompt, unpaired turns through `session import`.

use std::path::Path;

use serde_json::{json, Value};

use super::{json_lines, run};

fn w(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs the binary and returns its one JSON line, asserting success.
fn ok_json(args: &[&str]) -> Value {
    let out = run(args, b"");
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 1, "{args:?}");
    lines[0].clone()
}

/// A record as `archive append` takes it.
fn record(thread: &str, message: &str, content: &str, pending: bool) -> Value {
    let mut r = json!({"provider": "chat", "thread": thread, "message": message, "role": "user",
        "timestamp": "2026-08-10T09:00:00Z", "speaker_id": "7391", "speaker_display": "Ada",
        "content": content});
    if pending {
        r["pending"] = true.into();
    }
    r
}

fn append(root: &Path, records: &[Value]) {
    let input: String = records.iter().map(|r| format!("{r}\n")).collect();
    let out = run(&["archive", "append", "--workspace", w(root)], input.as_bytes());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// An evidence definition citing `chat/<thread>/<message>` from `topics/`.
fn footnote(label: &str, thread: &str, message: &str) -> String {
    let id = format!("chat/{thread}/{message}");
    let anchor = scriptorium::archive::id::anchor_hash(id.as_bytes());
    format!(
        "[^{label}]: Time: `2026-08-10T09:00:00Z`; Sources: [{id}](../sources/chat/_v2/{thread}.md#source-{anchor})"
    )
}

/// The ids every block of the workspace cites, by block.
fn cited(root: &Path) -> Vec<String> {
    let (topics, _) = scriptorium::transaction::views::load_topics(root).unwrap();
    let archive = scriptorium::archive::archive::Archive::scan(root).unwrap();
    let mut resolver = scriptorium::topics::validate::ArchiveResolver::new(&archive);
    resolver.promote(&scriptorium::archive::trust::promoted(root).unwrap());
    let checked = scriptorium::topics::validate::check(&topics, &resolver);
    checked.blocks.iter().flat_map(|b| b.sources.clone()).collect()
}

#[test]
fn status_and_write_carry_the_core_report() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    append(root, &[record("t", "m1", "I'm a product manager, please avoid jargon.", false)]);
    let def = footnote("e-0000000001", "t", "m1");
    let core = format!(
        "# Core\n\nAvoid jargon with Ada.[^e-0000000001] ^c1\n\nAda is a product manager.[^e-0000000001] ^c2\n\n{def}\n"
    );
    std::fs::create_dir_all(root.join("topics")).unwrap();
    std::fs::write(root.join("topics/core.md"), core).unwrap();
    // A budget that holds the first block and not the second.
    std::fs::write(root.join("scriptorium.toml"), "[memory]\ncore_budget = 80\n").unwrap();
    let rendered = ok_json(&["render", "--workspace", w(root), "--json"]);
    assert_eq!(rendered["core"]["omitted"], json!(["c2"]), "{rendered}");
    assert!(rendered["core"]["tokens"].as_u64().unwrap() > 0);
    let status = ok_json(&["status", "--workspace", w(root), "--json"]);
    assert_eq!(status["core"], rendered["core"], "{status}");
    let written = ok_json(&["write", "--workspace", w(root), "--json"]);
    assert_eq!(written["core"], rendered["core"], "{written}");
    let out = run(&["status", "--workspace", w(root)], b"");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("core.md ") && text.contains("1 block(s) left out"), "{text}");
}
