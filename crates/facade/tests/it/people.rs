//! People cards through the binary: the configured limits reach the writer
//! and `write --json` reports what they left out; `search` and `recall`
//! find a card by an alias, one the writer kept or one written by hand.

use std::path::Path;

use serde_json::{json, Value};

use super::{json_lines, run};

fn ok_json(args: &[&str], stdin: &[u8]) -> Value {
    let out = run(args, stdin);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    json_lines(&out.stdout).pop().unwrap()
}

fn turn(id: &str, parent: Option<&str>, display: &str, content: &str) -> String {
    let mut v = json!({"session": "room-1", "id": id, "role": "user", "timestamp": "2026-02-01T09:00:00Z",
        "content": content, "speaker_id": "u-ada", "speaker_display": display, "provider": "slack"});
    if let Some(p) = parent {
        v["parent"] = p.into();
    }
    format!("{v}\n")
}

fn topic_paths(w: &str, query: &str) -> Vec<String> {
    let out = run(&["search", query, "--workspace", w, "--kind", "topic", "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    json_lines(&out.stdout).iter().map(|h| h["path"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn configured_limits_are_kept_and_reported_and_a_new_name_finds_the_card() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().to_str().unwrap();
    std::fs::write(dir.path().join("scriptorium.toml"), "[memory.people]\nmax_entries = 1\n").unwrap();
    let turns = [
        turn("m1", None, "Ada", "I moved to Oslo."),
        turn("m2", Some("m1"), "Ada", "I work as a surveyor."),
        turn("m3", Some("m2"), "Ada Lovelace", "thanks"),
    ]
    .concat();
    ok_json(&["session", "append", "--workspace", w, "--json"], turns.as_bytes());
    let out = ok_json(&["write", "--workspace", w, "--force", "--json"], b"");
    let limits = out["limits"].as_array().unwrap();
    assert_eq!(limits.len(), 1, "{out}");
    let card = limits[0]["path"].as_str().unwrap().to_owned();
    assert!(card.starts_with("topics/people/ada-id-u-ada-"), "{card}");
    assert_eq!(
        limits[0],
        json!({"path": card, "limit": "max_entries", "value": 1, "sources": ["slack/room-1/m2"]})
    );
    let text = std::fs::read_to_string(dir.path().join(&card)).unwrap();
    assert!(text.contains("aliases: [Ada, Ada Lovelace]\n") && !text.contains("surveyor"), "{text}");
    // The new name finds the card, whose paragraph names Ada only.
    assert_eq!(topic_paths(w, "Lovelace"), std::slice::from_ref(&card));
    let recall = run(&["recall", "Lovelace", "--workspace", w], b"");
    assert!(String::from_utf8_lossy(&recall.stdout).contains("I moved to Oslo."));
    // Nothing owed: an empty list.
    let again = ok_json(&["write", "--workspace", w, "--force", "--json"], b"");
    assert_eq!((again["turns"].clone(), again["limits"].clone()), (json!(0), json!([])));
}

#[test]
fn a_hand_written_card_is_found_by_its_aliases() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().to_str().unwrap();
    ok_json(
        &["session", "append", "--workspace", w, "--json"],
        turn("m1", None, "Dave", "The tracker ships Friday.").as_bytes(),
    );
    ok_json(&["write", "--workspace", w, "--force", "--json"], b"");
    let dump = ok_json(&["archive", "dump", &format!("{w}/sources/slack/_v2/room-1.md"), "--json"], b"");
    let anchor = dump["anchor"].as_str().unwrap();
    let card = format!(
        "---\ndescription: Dave from finance.\nkind: person\naliases: [Dave, dave.k, Smith\\u{{2c}} D]\n---\n# Dave\n\n\
         Dave runs the budget tracker.[^e-1175dea39c] ^dave-1\n\n\
         [^e-1175dea39c]: Time: `2026-02-01`; Sources: [slack/room-1/m1](../../sources/slack/_v2/room-1.md#{anchor})\n"
    );
    std::fs::create_dir_all(Path::new(w).join("topics/people")).unwrap();
    std::fs::write(Path::new(w).join("topics/people/dave.md"), card).unwrap();
    for q in ["dave.k", "Smith"] {
        assert_eq!(topic_paths(w, q), ["topics/people/dave.md"], "{q}");
    }
    let hit = json_lines(&run(&["search", "dave.k", "--workspace", w, "--json"], b"").stdout)[0].clone();
    assert_eq!(hit["text"], "Dave runs the budget tracker.");
    // The snippet shows the names that found it; one the paragraph says
    // already is not indexed twice.
    assert!(hit["snippet"].as_str().unwrap().ends_with("(aliases: dave.k, Smith, D)"), "{hit}");
    // A search the paragraph's own words answer shows the paragraph alone.
    let hit =
        json_lines(&run(&["search", "budget", "--workspace", w, "--kind", "topic", "--json"], b"").stdout)[0]
            .clone();
    assert_eq!(hit["snippet"], "Dave runs the budget tracker.");
}

/// The topic files a search for `query` finds, each once.
fn files_found(w: &str, query: &str) -> Vec<String> {
    let mut paths = topic_paths(w, query);
    paths.dedup();
    paths
}

/// The files of `topics/people/` of workspace `w`, workspace-relative.
fn cards(w: &str) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(Path::new(w).join("topics/people"))
        .unwrap()
        .map(|e| format!("topics/people/{}", e.unwrap().file_name().to_string_lossy()))
        .collect();
    out.sort();
    out
}

/// Five turns of one person, `m{from}` on, the `k`th shown as
/// `names[k.min(names.len() - 1)]`, each stating one fact.
fn renamed_turns(from: usize, names: &[&str]) -> String {
    let facts = [
        "I moved to Oslo.",
        "I work as a surveyor.",
        "I grew up in Rome.",
        "I live in Paris.",
        "I work as a pilot.",
    ];
    (0..5)
        .map(|k| {
            let (id, parent) =
                (format!("m{}", from + k), (from + k > 1).then(|| format!("m{}", from + k - 1)));
            turn(&id, parent.as_deref(), names[k.min(names.len() - 1)], facts[k])
        })
        .collect()
}

#[test]
fn a_person_renamed_within_one_batch_gets_one_card_with_every_name() {
    let names = ["Ada", "Adele", "Adele K", "A. Lovelace", "Lady Ada"];
    for n in [1, 2, 5] {
        let dir = tempfile::tempdir().unwrap();
        let w = dir.path().to_str().unwrap();
        ok_json(&["session", "append", "--workspace", w, "--json"], renamed_turns(1, &names[..n]).as_bytes());
        let out = ok_json(&["write", "--workspace", w, "--force", "--json"], b"");
        let people = cards(w);
        assert_eq!(people.len(), 1, "{n} names: {people:?}");
        let card = people[0].clone();
        assert!(card.starts_with("topics/people/ada-id-u-ada-"), "named after the first name: {card}");
        assert!(out["changed"].as_array().unwrap().contains(&json!(card)), "{out}");
        let text = std::fs::read_to_string(dir.path().join(&card)).unwrap();
        assert!(text.contains(&format!("\naliases: [{}]\n", names[..n].join(", "))), "{n} names: {text}");
        assert_eq!(text.matches(" said: “").count(), 5, "{text}");
        for name in &names[..n] {
            assert_eq!(files_found(w, name), std::slice::from_ref(&card), "{name}");
        }
    }
}

#[test]
fn a_rename_in_the_next_batch_joins_the_card_the_first_made() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().to_str().unwrap();
    ok_json(&["session", "append", "--workspace", w, "--json"], renamed_turns(1, &["Ada"]).as_bytes());
    ok_json(&["write", "--workspace", w, "--force", "--json"], b"");
    let card = cards(w);
    assert_eq!(card.len(), 1, "{card:?}");
    ok_json(
        &["session", "append", "--workspace", w, "--json"],
        renamed_turns(6, &["Adele", "Ada", "Adele K"]).replace("I ", "Now I ").as_bytes(),
    );
    let out = ok_json(&["write", "--workspace", w, "--force", "--json"], b"");
    assert_eq!(out["turns"], json!(5), "{out}");
    assert_eq!(cards(w), card, "still one card");
    let text = std::fs::read_to_string(dir.path().join(&card[0])).unwrap();
    assert!(text.contains("\naliases: [Ada, Adele, Adele K]\n"), "{text}");
    assert_eq!(text.matches(" said: “").count(), 10, "{text}");
    assert_eq!(files_found(w, "Adele"), card);
}
