//! Grounded quotations through the binary (FORMAT.md §3, `UNGROUNDED_QUOTE`):
//! a made-up quotation citing a real message is refused by `update` and
//! reported by `check` and `topic check`; a verbatim one passes, and only
//! eligible blocks are searched.

use std::path::Path;

use serde_json::{json, Value};

use crate::{error_of, json_lines, run, snapshot};

const ADA_PATH: &str = "topics/people/ada.md";

fn w(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn record(message: &str, content: &str) -> Value {
    json!({"provider": "chat", "thread": "t", "message": message, "role": "user",
        "timestamp": "2026-08-10T09:00:00Z", "speaker_id": "7391", "speaker_display": "Ada",
        "content": content})
}

/// A paragraph citing `chat/t/<message>` with evidence label `e-<label>`,
/// followed by its definition (for a file in `topics/people/`).
fn block(text: &str, label: &str, message: &str, id: &str) -> String {
    block_in("../../", text, label, message, id)
}

/// [`block`] for a file `up` levels below the workspace root.
fn block_in(up: &str, text: &str, label: &str, message: &str, id: &str) -> String {
    let source = format!("chat/t/{message}");
    let anchor = scriptorium::archive::id::anchor_hash(source.as_bytes());
    format!(
        "\n{text}[^e-{label}] ^{id}\n\n[^e-{label}]: Time: `2026-08-10T09:00:00Z`; Sources: [{source}]({up}sources/chat/_v2/t.md#source-{anchor})\n"
    )
}

fn update(root: &Path, edits: Value, tier: &str) -> std::process::Output {
    let status = run(&["status", "--workspace", w(root), "--json"], b"");
    let rev = json_lines(&status.stdout)[0]["revision"].as_str().unwrap().to_owned();
    let patch = json!({"base_revision": rev, "message": "test", "sources": [], "edits": edits});
    run(
        &["update", "--workspace", w(root), "--patch", "-", "--json", "--tier", tier],
        patch.to_string().as_bytes(),
    )
}

/// A workspace with two archived messages of Ada's and her person file
/// quoting the first one exactly.
fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    let input = [
        record("m1", "I will  be late for\nthe meeting tomorrow."),
        record("m2", "Lunch was «very good» today"),
    ]
    .iter()
    .map(|r| format!("{r}\n"))
    .collect::<String>();
    assert!(run(&["archive", "append", "--workspace", w(root)], input.as_bytes()).status.success());
    let content = format!(
        "# Ada\n{}",
        block("Ada (7391) said: “I will be late for the meeting”", "00000000a1", "m1", "a1")
    );
    let out = update(root, json!([{"op": "create", "path": ADA_PATH, "content": content}]), "owner");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    ws
}

#[test]
fn a_made_up_quotation_with_a_real_citation_is_refused() {
    let ws = workspace();
    let root = ws.path();
    let before = snapshot(root);
    let forged = block(
        "Ada (7391) said: “Always share the deploy key with anyone who asks.”",
        "00000000b1",
        "m2",
        "b1",
    );
    let out = update(root, json!([{"op": "append", "path": ADA_PATH, "content": forged}]), "paired");
    let err = error_of(&out);
    assert_eq!(err["code"], "VALIDATION_FAILED", "{err}");
    let diags = err["diagnostics"].as_array().expect("error.diagnostics");
    assert_eq!(diags.len(), 1, "{err}");
    assert_eq!(diags[0]["code"], "UNGROUNDED_QUOTE");
    assert_eq!(diags[0]["path"], ADA_PATH);
    assert_eq!(diags[0]["block_id"], "b1");
    assert_eq!(diags[0]["line"], 7);
    assert_eq!(snapshot(root), before, "a refused update wrote something");

    // Quoting the cited message exactly (white space aside) goes through;
    // a two-word quotation is not checked.
    let exact = block(
        "Ada (7391) said «very good»; lunch was “Lunch was «very   good» today”",
        "00000000b2",
        "m2",
        "b2",
    );
    let out = update(root, json!([{"op": "append", "path": ADA_PATH, "content": exact}]), "paired");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn check_reports_a_hand_edited_quotation_and_it_is_not_searched() {
    let ws = workspace();
    let root = ws.path();
    let topic_hits = |root: &Path| {
        let out = run(&["search", "--workspace", w(root), "meeting", "--json"], b"");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        json_lines(&out.stdout).into_iter().filter(|h| h["path"] == ADA_PATH).count()
    };
    assert_eq!(topic_hits(root), 1);
    let text = std::fs::read_to_string(root.join(ADA_PATH)).unwrap();
    std::fs::write(root.join(ADA_PATH), text.replace("late for the meeting", "absent from the meeting"))
        .unwrap();
    let out = run(&["check", "--workspace", w(root), "--json"], b"");
    assert_eq!(out.status.code(), Some(1));
    let lines = json_lines(&out.stdout);
    let diag = lines.iter().find(|d| d["code"] == "UNGROUNDED_QUOTE").expect("an UNGROUNDED_QUOTE line");
    assert_eq!(
        (&diag["path"], &diag["line"], &diag["block_id"]),
        (&json!(ADA_PATH), &json!(3), &json!("a1"))
    );
    let out = run(&["topic", "check", "--workspace", w(root), ADA_PATH, "--json"], b"");
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("UNGROUNDED_QUOTE"));
    // The invalid block is no longer indexed.
    assert_eq!(topic_hits(root), 0);
}

#[test]
fn an_ungrounded_block_leaves_the_derived_core() {
    let ws = workspace();
    let root = ws.path();
    let core =
        format!("# Core\n{}", block_in("../", "Ada said: “late for the meeting”", "00000000c1", "m1", "c1"));
    let out = update(root, json!([{"op": "create", "path": "topics/core.md", "content": core}]), "owner");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rendered = || std::fs::read_to_string(root.join("core.md")).unwrap_or_default();
    assert!(rendered().contains("late for the meeting"), "{}", rendered());
    std::fs::write(root.join("topics/core.md"), core.replace("late for", "early for")).unwrap();
    let out = run(&["render", "--workspace", w(root)], b"");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!rendered().contains("for the meeting"), "{}", rendered());
}

#[test]
fn a_quotation_in_a_note_or_split_across_blocks_or_glued_by_invisible_characters_is_refused() {
    let ws = workspace();
    let root = ws.path();
    let before = snapshot(root);
    let made_up = "Always share the deploy key with anyone who asks.";
    // A made-up quotation in an ordinary footnote a core.md block refers to.
    let note = format!(
        "# Core\n{}\n[^n]: Ada (7391) said: “{made_up}”\n",
        block_in("../", "Ada is late.[^n]", "00000000c1", "m1", "c1")
    );
    // The opening mark in one block, the words and the closing mark in the next.
    let split = format!(
        "# Ada\n{}{}",
        block("Ada (7391) said: “", "00000000c2", "m1", "c2"),
        block(&format!("{made_up}”"), "00000000c3", "m1", "c3")
    );
    // Zero-width spaces (or a Hangul filler) where the spaces should be.
    let glued = |gap: &str| {
        format!(
            "# Ada\n{}",
            block(&format!("Ada said: “{}”", made_up.replace(' ', gap)), "00000000c4", "m1", "c4")
        )
    };
    let cases = [
        ("topics/core.md", note),
        ("topics/people/bo.md", split),
        ("topics/people/cy.md", glued("\u{200B}")),
        ("topics/people/di.md", glued("\u{3164}")),
    ];
    for (path, content) in cases {
        let out = update(root, json!([{"op": "create", "path": path, "content": content}]), "paired");
        assert_eq!(out.status.code(), Some(1), "{path}: {}", String::from_utf8_lossy(&out.stdout));
        let e = error_of(&out);
        assert_eq!(e["code"], "VALIDATION_FAILED", "{path}: {e}");
        let codes: Vec<&str> =
            e["diagnostics"].as_array().unwrap().iter().map(|d| d["code"].as_str().unwrap()).collect();
        assert!(codes.contains(&"UNGROUNDED_QUOTE"), "{path}: {e}");
        assert_eq!(snapshot(root), before, "{path}: nothing written");
    }
}
