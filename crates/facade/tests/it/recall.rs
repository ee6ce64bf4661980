//! Recall shows five different pieces of memory: a record a shown block
//! cites, a block whose records are shown, and the same text twice are
//! folded into the line that shows them, and the next hit takes the place.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::json;

use crate::{json_lines, run};

fn w(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn recall(root: &Path, text: &str) -> Vec<String> {
    let out = run(&["recall", text, "--workspace", w(root), "--json"], b"");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = &json_lines(&out.stdout)[0];
    let lines: Vec<String> =
        v["text"].as_str().unwrap().lines().filter(|l| l.starts_with("- ")).map(str::to_owned).collect();
    assert_eq!(v["hits"], lines.len(), "{v}");
    lines
}

/// The sentences of a recall line's text (its places and whoever it
/// attributes them to cut off), as lowercase words, those of four words or
/// more.
fn sentences(line: &str) -> Vec<String> {
    let text = line.rsplit_once(" (").map_or(line, |(t, _)| t);
    let text = text.split_once("]: ").map_or(text, |(_, t)| t);
    let text = text.split_once(" said: ").map_or(text, |(_, t)| t);
    text.split(['.', '!', '?', '“', '”', ':'])
        .map(|s| {
            s.to_lowercase()
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|s| s.split(' ').count() >= 4)
        .collect()
}

/// Every sentence shown by more than one line.
fn repeated(lines: &[String]) -> Vec<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for l in lines {
        let mut mine = sentences(l);
        mine.sort();
        mine.dedup();
        for s in mine {
            *seen.entry(s).or_default() += 1;
        }
    }
    seen.into_iter().filter(|(_, n)| *n > 1).map(|(s, _)| s).collect()
}

#[test]
fn the_demo_recalls_each_piece_of_memory_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("demo");
    assert!(run(&["demo", "--workspace", w(&root)], b"").status.success());
    for q in ["is the launch cancelled?", "what is the budget for the offsite?"] {
        let lines = recall(&root, q);
        assert!(!lines.is_empty());
        assert_eq!(repeated(&lines), Vec::<String>::new(), "{q}: {lines:#?}");
    }
    // The record a shown block quotes is cited on the block's line.
    let launch = recall(&root, "is the launch cancelled?");
    assert!(launch[0].ends_with("; also demo/team-chat/m7)"), "{launch:#?}");
}

fn record(message: &str, content: &str) -> serde_json::Value {
    json!({"provider": "chat", "thread": "t", "message": message, "role": "user",
        "timestamp": "2026-08-10T09:00:00Z", "speaker_id": "7391", "speaker_display": "Ada",
        "content": content})
}

#[test]
fn a_folded_hit_frees_its_place_for_the_next() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    let contents = [
        "the rocket deploy is on friday",
        "deploy checklist: fuel, cameras, badges",
        "who signs off the deploy window",
        "deploy dry run went fine",
        "after the deploy we celebrate",
        "the deploy budget is 4k",
    ];
    let input: String = contents
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{}\n", record(&format!("m{}", i + 1), c)))
        .collect();
    assert!(run(&["archive", "append", "--workspace", w(root)], input.as_bytes()).status.success());
    // Two blocks with the same text, in two files, citing m1.
    let anchor = scriptorium::archive::id::anchor_hash(b"chat/t/m1");
    let block = |id: &str| {
        format!(
            "# Notes\n\nThe rocket deploy is on Friday, deploy deploy.[^e-00000000a1] ^{id}\n\n[^e-00000000a1]: Time: `2026-08-10T09:00:00Z`; Sources: [chat/t/m1](../sources/chat/_v2/t.md#source-{anchor})\n"
        )
    };
    let status = run(&["status", "--workspace", w(root), "--json"], b"");
    let rev = json_lines(&status.stdout)[0]["revision"].as_str().unwrap().to_owned();
    let patch = json!({"base_revision": rev, "message": "notes", "sources": [], "edits": [
        {"op": "create", "path": "topics/a.md", "content": block("n1")},
        {"op": "create", "path": "topics/b.md", "content": block("n2")}]});
    let out =
        run(&["update", "--workspace", w(root), "--patch", "-", "--json"], patch.to_string().as_bytes());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines = recall(root, "deploy");
    assert_eq!(lines.len(), 5, "{lines:#?}");
    assert!(lines[0].starts_with("- The rocket deploy is on Friday"), "{lines:#?}");
    let also = lines[0].split_once("; also ").map(|(_, a)| a.trim_end_matches(')')).unwrap_or("");
    let mut also: Vec<&str> = also.split(", ").collect();
    also.sort();
    assert_eq!(also, ["chat/t/m1", "topics/b.md#^n2"], "{lines:#?}");
    assert!(
        lines[1..].iter().all(|l| l.starts_with("- [2026-08-10T09:00:00Z] Ada [id 7391]: ")),
        "{lines:#?}"
    );
    assert!(!lines.iter().any(|l| l.contains("(chat/t/m1)")), "{lines:#?}");
    assert_eq!(repeated(&lines), Vec::<String>::new());
}

#[test]
fn a_flood_of_one_text_neither_hides_the_rest_nor_grows_a_line() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    let bo = |i: usize| {
        json!({"provider": "chat", "thread": "t", "message": format!("b{i}"), "role": "user",
            "timestamp": "2026-08-10T09:00:00Z", "speaker_id": "4402", "speaker_display": "Bo",
            "content": "deploy deploy deploy the deploy key now"})
    };
    let mut input: String = (0..400).map(|i| format!("{}\n", bo(i))).collect();
    for (i, c) in
        ["we deploy on friday", "the deploy window is noon", "who signs the deploy"].iter().enumerate()
    {
        input.push_str(&format!("{}\n", record(&format!("a{i}"), c)));
    }
    assert!(run(&["archive", "append", "--workspace", w(root)], input.as_bytes()).status.success());
    let lines = recall(root, "deploy");
    assert_eq!(lines.len(), 4, "{lines:#?}");
    assert!(lines[0].starts_with("- [2026-08-10T09:00:00Z] Bo [id 4402]: deploy deploy"), "{lines:#?}");
    assert!(lines[0].ends_with(", 391 more)"), "{}", lines[0]);
    assert_eq!(lines[0].matches("chat/t/b").count(), 9, "{}", lines[0]);
    assert!(lines[1..].iter().all(|l| l.contains("Ada [id 7391]")), "{lines:#?}");
}
