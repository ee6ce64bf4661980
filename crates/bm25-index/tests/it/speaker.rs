//! A speaker filter names one identity or refuses: impostors whose header
//! labels equal Ada's never come back as Ada.

use std::path::Path;

use scriptorium_bm25_index::hit::Found;
use scriptorium_bm25_index::search::{Bm25, Filters};
use scriptorium_bm25_index::tokenize::TokenizerConfig;
use scriptorium_bm25_index::workspace::search;
use scriptorium_source_archive::{append, input, Code};

fn rec(msg: &str, id: Option<&str>, display: &str, content: &str) -> String {
    in_thread("g1", msg, id, display, content)
}

fn in_thread(thread: &str, msg: &str, id: Option<&str>, display: &str, content: &str) -> String {
    let mut v = serde_json::json!({"provider": "chat", "thread": thread, "message": msg, "role": "user",
        "timestamp": "2026-08-09T10:00:00Z", "content": content, "speaker_display": display});
    if let Some(id) = id {
        v["speaker_id"] = id.into();
    }
    v.to_string()
}

fn speaker(root: &Path, name: &str) -> Result<Vec<String>, scriptorium_source_archive::Error> {
    let hits = search(
        root,
        TokenizerConfig::default(),
        "deploy",
        &Filters::default(),
        Some(name),
        10,
        Bm25::default(),
    )?;
    let mut messages: Vec<String> = hits
        .into_iter()
        .map(|h| match h.found {
            Found::Record(r) => r.message.clone().unwrap(),
            Found::Block(b) => panic!("a speaker search found the block {}", b.block_id),
        })
        .collect();
    messages.sort();
    Ok(messages)
}

#[test]
fn a_speaker_is_an_exact_id_or_the_one_identity_with_that_name() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let lines = [
        rec("m1", Some("7391"), "Ada", "the deploy is at noon"),
        rec("m2", None, "Ada (7391)", "deploy key goes to everyone"),
        rec("m3", Some("7391\u{200b}"), "Ada\u{202e}", "deploy it now"),
        rec("m4", None, "assistant", "deploy approved"),
        rec("m5", Some("7391"), "Ada", "deploy done"),
    ];
    let records = input::read_records(lines.join("\n").as_bytes()).unwrap();
    append::append(root, &records).unwrap();

    // An exact id: Ada's records only, never the look-alikes.
    assert_eq!(speaker(root, "7391").unwrap(), ["m1", "m5"]);
    assert_eq!(speaker(root, "7391\u{200b}").unwrap(), ["m3"]);
    // The label all three share is refused, naming each identity.
    let e = speaker(root, "Ada (7391)").unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    for who in ["\"Ada [id 7391]\"", "\"Ada [id 7391\\u{200b}]\"", "\"Ada (7391) [no id]\""] {
        assert!(e.message().contains(who), "{who} missing from {}", e.message());
    }
    let e = speaker(root, "ada").unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "two identities show the display Ada");
    // An attribution names exactly one identity.
    assert_eq!(speaker(root, "Ada (7391) [no id]").unwrap(), ["m2"]);
    assert_eq!(speaker(root, "Ada [id 7391\\u{200b}]").unwrap(), ["m3"]);
    assert_eq!(speaker(root, "ada [ID 7391]").unwrap(), ["m1", "m5"]);
    // A display that is a role is a person like any other.
    assert_eq!(speaker(root, "assistant").unwrap(), ["m4"]);
    // Nobody by that name: nothing, not an error.
    assert!(speaker(root, "Bo").unwrap().is_empty());
    assert!(speaker(root, "739").unwrap().is_empty(), "never a prefix of an id");
}

#[test]
fn an_id_that_is_another_persons_name_is_ambiguous() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let lines = [
        rec("m1", Some("7391"), "Ada", "the deploy is at noon"),
        rec("m2", Some("Ada"), "Mallory", "deploy key goes to everyone"),
        rec("m3", Some("5"), "Bo", "deploy later"),
    ];
    append::append(root, &input::read_records(lines.join("\n").as_bytes()).unwrap()).unwrap();
    // Mallory's id is Ada's name: neither takes the other's searches.
    let e = speaker(root, "Ada").unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    for who in ["\"Ada [id 7391]\"", "\"Mallory [id Ada]\""] {
        assert!(e.message().contains(who), "{who} missing from {}", e.message());
    }
    assert_eq!(speaker(root, "7391").unwrap(), ["m1"]);
    assert_eq!(speaker(root, "Mallory").unwrap(), ["m2"]);
    assert_eq!(speaker(root, "Mallory [id Ada]").unwrap(), ["m2"]);
    // An id nobody else is named stays exact.
    assert_eq!(speaker(root, "5").unwrap(), ["m3"]);
}

#[test]
fn an_identity_whose_records_are_gone_is_no_candidate() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let lines = [
        rec("m1", Some("7391"), "Ada", "the deploy is at noon"),
        in_thread("g2", "m2", None, "Ada (7391)", "deploy key goes to everyone"),
    ];
    let records = input::read_records(lines.join("\n").as_bytes()).unwrap();
    append::append(root, &records).unwrap();
    assert_eq!(speaker(root, "Ada (7391)").unwrap_err().code(), Code::InvalidArgument);
    // The impostor's file is removed by hand: the refreshed index (a delta
    // deleting its base documents) no longer counts it.
    std::fs::remove_file(root.join("sources/chat/_v2/g2.md")).unwrap();
    assert_eq!(speaker(root, "Ada (7391)").unwrap(), ["m1"]);
}
