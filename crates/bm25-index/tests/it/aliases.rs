//! A topic file's aliases find its blocks: a search for a person's other
//! name finds that person's card, and the hit stays the block's own.

use std::fs;
use std::path::Path;

use scriptorium_bm25_index::hit::{Found, Hit};
use scriptorium_bm25_index::search::{Bm25, Filters};
use scriptorium_bm25_index::tokenize::TokenizerConfig;
use scriptorium_bm25_index::workspace;
use scriptorium_source_archive::{append, input};

const DEF: &str =
    "[^e-1175dea39c]: Time: `2026-08-09T10:00:00Z`; Sources: [chat/g1/m1](../../sources/chat/_v2/g1.md#source-";

fn workspace_with(card: &str) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let line = r#"{"provider":"chat","thread":"g1","message":"m1","role":"user","timestamp":"2026-08-09T10:00:00Z","content":"I run the budget tracker","speaker_id":"7","speaker_display":"Dave"}"#;
    append::append(ws.path(), &input::read_records(line.as_bytes()).unwrap()).unwrap();
    write_card(ws.path(), card);
    ws
}

fn write_card(root: &Path, card: &str) {
    let anchor = scriptorium_source_archive::SourceId::new("chat", "g1", "m1").unwrap().anchor();
    fs::create_dir_all(root.join("topics/people")).unwrap();
    let text = card.replace("{DEF}", &format!("{DEF}{})", &anchor["source-".len()..]));
    fs::write(root.join("topics/people/dave.md"), text).unwrap();
}

fn search(root: &Path, q: &str) -> Vec<Hit> {
    workspace::search(root, TokenizerConfig::default(), q, &Filters::default(), None, 10, Bm25::default())
        .unwrap()
}

fn blocks(hits: &[Hit]) -> Vec<(String, String, String)> {
    hits.iter()
        .filter_map(|h| match &h.found {
            Found::Block(b) => Some((b.path.clone(), b.block_id.clone(), b.text.clone())),
            Found::Record(_) => None,
        })
        .collect()
}

const CARD: &str =
    "---\nkind: person\naliases: [Dave, dave.k, Smith\\u{2c} Jo, O\\u{2019}Brien]\n---\n# Dave\n\n\
    Leads the tracker.[^e-1175dea39c] ^d1\n\n{DEF}\n";

#[test]
fn an_alias_finds_the_card_and_the_hit_is_the_block() {
    let ws = workspace_with(CARD);
    let root = ws.path();
    let want = vec![("topics/people/dave.md".to_owned(), "d1".to_owned(), "Leads the tracker.".to_owned())];
    for q in ["dave.k", "Smith", "Jo", "O\u{2019}Brien"] {
        let hits = search(root, q);
        assert_eq!(blocks(&hits), want, "{q}");
        assert!(
            hits[0].snippet.contains("(aliases: Dave, dave.k, Smith, Jo, O\u{2019}Brien)"),
            "{q}: {:?}",
            hits[0]
        );
    }
    // An escape is read as the character it names, not as `u` and hex.
    assert!(search(root, "2c").is_empty());
    // The record itself is found by its words, and the card by them too.
    assert_eq!(search(root, "tracker").len(), 2);
}

#[test]
fn a_name_the_paragraph_says_is_not_indexed_twice() {
    let ws = workspace_with(&CARD.replace("Leads the tracker.", "Dave leads the tracker."));
    let root = ws.path();
    let hits = search(root, "dave.k");
    assert!(
        hits[0].snippet.ends_with("tracker. (aliases: dave.k, Smith, Jo, O\u{2019}Brien)"),
        "{:?}",
        hits[0]
    );
    // Found by the name it says, the snippet is the paragraph's own.
    let hits = search(root, "Dave");
    assert_eq!(blocks(&hits).len(), 1);
    let block = hits.iter().find(|h| matches!(h.found, Found::Block(_))).unwrap();
    assert_eq!(block.snippet, "Dave leads the tracker.");
}

#[test]
fn editing_the_aliases_refreshes_what_finds_the_card() {
    let ws = workspace_with(CARD);
    let root = ws.path();
    assert_eq!(blocks(&search(root, "dave.k")).len(), 1);
    write_card(root, &CARD.replace("dave.k", "DK"));
    assert!(search(root, "dave.k").is_empty());
    assert_eq!(blocks(&search(root, "DK")).len(), 1);
    // No aliases at all: the name is no longer indexed with the block.
    write_card(root, "---\nkind: person\n---\n# Dave\n\nLeads the tracker.[^e-1175dea39c] ^d1\n\n{DEF}\n");
    assert!(search(root, "Smith").is_empty());
}

#[test]
fn only_the_first_aliases_within_the_bounds_are_read() {
    // 100 names of 10 characters, 1,000 in all, then one of 30.
    let names: Vec<String> = (0..100).map(|k| format!("name{k:03}xyz")).collect();
    let ws =
        workspace_with(&CARD.replace("Dave, dave.k", &format!("{}, {}", names.join(", "), "z".repeat(30))));
    let root = ws.path();
    assert_eq!(blocks(&search(root, "name099xyz")).len(), 1);
    assert!(search(root, &"z".repeat(30)).is_empty());
    let long = "w".repeat(1100);
    write_card(root, &CARD.replace("Dave, dave.k", &format!("Dave, {long}, Late")));
    assert_eq!(blocks(&search(root, "Dave")).len(), 1);
    assert!(search(root, "Late").is_empty());
}

#[test]
fn a_card_whose_block_is_invalid_is_not_found_by_its_aliases() {
    let ws = workspace_with(&CARD.replace("[^e-1175dea39c] ^d1", " ^d1"));
    assert!(search(ws.path(), "dave.k").is_empty());
}
