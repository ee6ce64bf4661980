//! People cards: the offline writer keeps the names a person was shown
//! under (from the transport only) in the card's aliases, search finds the
//! card by any of them, and a card is kept within its limits, what was
//! left out reported; a model's edits are held to the same limits.

use std::path::Path;

use scriptorium_bm25_index::hit::{Found, Hit};
use scriptorium_bm25_index::search::{Bm25, Filters};
use scriptorium_bm25_index::tokenize::TokenizerConfig;
use scriptorium_scheduler::{Code, Limit, LimitHit};
use scriptorium_testkit::*;
use scriptorium_topic_markdown::parse::{unescape_item, TopicFile};
use scriptorium_writer::agent::ModelWriter;
use scriptorium_writer::offline;
use scriptorium_writer::people::Limits;
use serde_json::json;

fn read(root: &Path, path: &str) -> String {
    std::fs::read_to_string(root.join(path)).unwrap()
}

/// The aliases of the card at `path`, decoded; the card's front matter
/// must parse.
fn aliases(root: &Path, path: &str) -> Vec<String> {
    let (file, problems) = TopicFile::parse_lenient(&read(root, path));
    assert!(problems.is_empty(), "{path}: {problems:?}");
    file.front_matter.unwrap().aliases().iter().map(|a| unescape_item(a).into_owned()).collect()
}

fn search(root: &Path, q: &str) -> Vec<Hit> {
    scriptorium_bm25_index::workspace::search(
        root,
        TokenizerConfig::default(),
        q,
        &Filters::default(),
        None,
        10,
        Bm25::default(),
    )
    .unwrap()
}

/// The topic files of the hits.
fn cards_found(hits: &[Hit]) -> Vec<String> {
    let mut out: Vec<String> = hits
        .iter()
        .filter_map(|h| match &h.found {
            Found::Block(b) => Some(b.path.clone()),
            Found::Record(_) => None,
        })
        .collect();
    out.dedup();
    out
}

fn validates(root: &Path) {
    let archive = scriptorium_source_archive::archive::Archive::scan(root).unwrap();
    let (topics, bad) = scriptorium_transaction::views::load_topics(root).unwrap();
    assert!(bad.is_empty(), "{bad:?}");
    let checked = scriptorium_topic_markdown::validate::check(
        &topics,
        &scriptorium_topic_markdown::validate::ArchiveResolver::new(&archive),
    );
    assert!(checked.diagnostics.is_empty(), "{:?}", checked.diagnostics);
}

#[test]
fn a_renamed_speaker_keeps_one_card_and_the_new_name_joins_its_aliases() {
    let dir = workspace();
    let root = dir.path();
    offline::write(&input(root, &[record_by("m1", Some(("7391", "Ada")), "I moved to Oslo")])).unwrap();
    let card = ada_file();
    assert!(read(root, &card).starts_with("---\ndescription: "), "{}", read(root, &card));
    assert!(read(root, &card).contains("\nkind: person\naliases: [Ada]\n---\n"), "{}", read(root, &card));
    // Renamed on the platform (the same id): the same card, the new name
    // added, the old one kept; small talk adds the name too.
    let renamed = [
        record_by("m2", Some(("7391", "Adele")), "I work as a surveyor"),
        record_by("m3", Some(("7391", "Adele K")), "thanks!"),
    ];
    let w = offline::write(&input(root, &renamed)).unwrap();
    assert!(w.changed.contains(&card), "{:?}", w.changed);
    assert_eq!(aliases(root, &card), ["Ada", "Adele", "Adele K"]);
    let people: Vec<_> = std::fs::read_dir(root.join("topics/people")).unwrap().collect();
    assert_eq!(people.len(), 1, "one card per person");
    validates(root);
    // The old paragraph names Ada only, and the newest name finds it.
    let hits = search(root, "Oslo Adele");
    assert_eq!(cards_found(&hits), std::slice::from_ref(&card));
    assert_eq!(cards_found(&search(root, "K")), std::slice::from_ref(&card));
    // Once more: nothing new.
    let again = offline::write(&input(root, &[record_by("m4", Some(("7391", "ADELE")), "ok")])).unwrap();
    assert!(!again.changed.contains(&card), "a name there already (letter case ignored) is not added");
}

/// The files of `topics/people/`, workspace-relative, in byte order.
fn people(root: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(root.join("topics/people"))
        .unwrap()
        .map(|e| format!("topics/people/{}", e.unwrap().file_name().to_string_lossy()))
        .collect();
    out.sort();
    out
}

/// A paragraph of Ada's (`7391`) shown as `display` saying `fact`.
fn said(display: &str, fact: &str) -> String {
    format!(
        "{} said: “{fact}”",
        scriptorium_source_archive::speaker::attribution(Some(display), Some("7391"))
    )
}

#[test]
fn a_person_renamed_within_one_batch_keeps_one_card_named_after_the_first_name() {
    let facts = [
        "I moved to Oslo",
        "I work as a surveyor",
        "I grew up in Rome",
        "I live in Paris",
        "I work as a pilot",
    ];
    let names = ["Ada", "Adele", "Adele K", "A. Lovelace", "Lady Ada"];
    for n in [1, 2, 5] {
        let dir = workspace();
        let root = dir.path();
        // Five turns of one person (one id) in one batch, under `n` names.
        let shown = |k: usize| names[k.min(n - 1)];
        let recs: Vec<_> =
            (0..5).map(|k| record_by(&format!("m{k}"), Some(("7391", shown(k))), facts[k])).collect();
        let w = offline::write(&input(root, &recs)).unwrap();
        let card = ada_file();
        assert_eq!(people(root), std::slice::from_ref(&card), "{n} names: one card");
        assert!(w.changed.contains(&card), "{:?}", w.changed);
        assert_eq!(aliases(root, &card), names[..n], "{n} names, the first first");
        let text = read(root, &card);
        assert!(text.contains("\n# Ada [id 7391]\n"), "named after the first name: {text}");
        assert_eq!(blocks(root, &card), 5, "{text}");
        for (k, fact) in facts.iter().enumerate() {
            assert!(text.contains(&said(shown(k), fact)), "{n} names, {fact}: {text}");
        }
        validates(root);
        for name in &names[..n] {
            assert_eq!(cards_found(&search(root, name)), std::slice::from_ref(&card), "{name}");
        }
    }
}

#[test]
fn a_rename_within_a_batch_joins_the_card_an_earlier_write_made() {
    let dir = workspace();
    let root = dir.path();
    offline::write(&input(root, &[record_by("m1", Some(("7391", "Ada")), "I moved to Oslo")])).unwrap();
    let card = ada_file();
    let renamed = [
        record_by("m2", Some(("7391", "Adele")), "I work as a surveyor"),
        record_by("m3", Some(("7391", "Adele K")), "I grew up in Rome"),
        record_by("m4", Some(("7391", "Ada")), "I live in Paris"),
    ];
    let w = offline::write(&input(root, &renamed)).unwrap();
    assert!(w.changed.contains(&card), "{:?}", w.changed);
    assert_eq!(people(root), std::slice::from_ref(&card));
    assert_eq!(aliases(root, &card), ["Ada", "Adele", "Adele K"]);
    let text = read(root, &card);
    for (display, fact) in [
        ("Ada", "I moved to Oslo"),
        ("Adele", "I work as a surveyor"),
        ("Adele K", "I grew up in Rome"),
        ("Ada", "I live in Paris"),
    ] {
        assert!(text.contains(&said(display, fact)), "{fact}: {text}");
    }
    assert_eq!(blocks(root, &card), 4);
    validates(root);
}

#[test]
fn a_new_card_is_named_after_the_first_trusted_name_and_a_pending_one_joins_no_aliases() {
    let dir = workspace();
    let root = dir.path();
    let pending = json!({"provider": "chat", "thread": "t1", "message": "m1", "role": "user",
        "timestamp": "2026-03-01T10:00:00Z", "content": "I moved to Bergen", "speaker_id": "7391",
        "speaker_display": "Mallory", "pending": true});
    let recs = [
        scriptorium_source_archive::input::parse_record(&pending.to_string()).unwrap(),
        // Small talk: no paragraph, but the name is the first trusted one.
        record_by("m2", Some(("7391", "Ada")), "thanks!"),
        record_by("m3", Some(("7391", "Adele")), "I work as a surveyor"),
    ];
    offline::write(&input(root, &recs)).unwrap();
    let card = ada_file();
    assert_eq!(people(root), std::slice::from_ref(&card));
    assert_eq!(aliases(root, &card), ["Ada", "Adele"]);
    let text = read(root, &card);
    assert!(
        text.contains(&said("Mallory", "I moved to Bergen"))
            && text.contains(&said("Adele", "I work as a surveyor")),
        "{text}"
    );
    validates(root);
}

#[test]
fn an_impostor_name_in_a_body_never_becomes_an_alias() {
    let dir = workspace();
    let root = dir.path();
    offline::write(&input(root, &[record_by("m1", Some(("7391", "Ada")), "I moved to Oslo")])).unwrap();
    let before = read(root, &ada_file());
    let recs = [
        record_by("m2", Some(("4402", "Bo")), "[Ada (7391)] My name is Ada. I'm Ada [id 7391], call me Ada."),
        record_by("m3", Some(("4402", "Bo")), "---\naliases: [Ada, Queen]\n---\nI live in Paris"),
        // Another person named Ada: her own card, nothing added to Ada's.
        record_by("m4", Some(("9999", "Ada")), "I grew up in Rome"),
    ];
    offline::write(&input(root, &recs)).unwrap();
    assert_eq!(read(root, &ada_file()), before);
    assert_eq!(aliases(root, &bo_file()), ["Bo"]);
    let other = person_file("topics/people", "9999", "Ada");
    assert_eq!(aliases(root, &other), ["Ada"]);
    validates(root);
    // Search for "Queen" finds Bo's words, never a card named so.
    for card in cards_found(&search(root, "Queen")) {
        assert!(!aliases(root, &card).contains(&"Queen".to_owned()), "{card}");
    }
    // A pending turn names nobody either.
    let pending = json!({"provider": "chat", "thread": "t1", "message": "m5", "role": "user",
        "timestamp": "2026-03-01T10:00:00Z", "content": "I moved to Bergen", "speaker_id": "7391",
        "speaker_display": "Mallory", "pending": true});
    let pending = scriptorium_source_archive::input::parse_record(&pending.to_string()).unwrap();
    offline::write(&input(root, &[pending])).unwrap();
    assert_eq!(aliases(root, &ada_file()), ["Ada"]);
}

#[test]
fn hostile_display_names_are_one_alias_each_that_search_finds() {
    let dir = workspace();
    let root = dir.path();
    let names = [
        ("1", "Smith, Jo"),
        ("2", "Bo \"the boss\""),
        ("3", "Ann “Queen” Lee"),
        ("4", "x] [y"),
        ("5", "---"),
        ("6", "# Boss"),
        ("7", "Zed \\u{2c}"),
        ("8", "Ada ［id 7391］ said꞉"),
    ];
    let recs: Vec<_> = names
        .iter()
        .enumerate()
        .map(|(k, (id, display))| record_by(&format!("m{k}"), Some((id, display)), "I moved to Oslo"))
        .collect();
    offline::write(&input(root, &recs)).unwrap();
    validates(root);
    for (id, display) in names {
        let card = person_file("topics/people", id, display);
        let normalised = scriptorium_source_archive::speaker::normalise(display);
        assert_eq!(aliases(root, &card), [normalised], "{display}");
        let front = read(root, &card);
        let line = front.lines().find(|l| l.starts_with("aliases: ")).unwrap();
        assert!(!line[10..line.len() - 1].contains([',', '"', '“', '[', ']']), "{line}");
    }
    assert_eq!(cards_found(&search(root, "Smith")), [person_file("topics/people", "1", "Smith, Jo")]);
    assert_eq!(cards_found(&search(root, "Queen")), [person_file("topics/people", "3", "Ann “Queen” Lee")]);
}

#[test]
fn a_hand_written_card_keeps_its_aliases_and_gains_the_speakers_name() {
    let dir = workspace();
    let root = dir.path();
    let card = person_file("topics/people", "7391", "Ada");
    std::fs::create_dir_all(root.join("topics/people")).unwrap();
    std::fs::write(
        root.join(&card),
        "---\ndescription: Ada, by hand.\nkind: person\naliases: [Ada L.,  the boss ]\nteam: finance\n---\n# Ada\n",
    )
    .unwrap();
    offline::write(&input(root, &[record_by("m1", Some(("7391", "Ada")), "I moved to Oslo")])).unwrap();
    let text = read(root, &card);
    assert!(
        text.starts_with("---\ndescription: Ada, by hand.\nkind: person\naliases: [Ada L.,  the boss , Ada]\nteam: finance\n---\n# Ada\n\nAda [id 7391] said: “I moved to Oslo”"),
        "{text}"
    );
    validates(root);
    assert_eq!(cards_found(&search(root, "boss")), [card]);
}

/// Ada's card with `front` (front matter lines) and `n` paragraphs, each
/// citing the record `m0`, archived first.
fn card_with(root: &Path, front: &str, n: usize) -> String {
    let first = record_by("m0", Some(("7391", "Ada")), "hello");
    let inp = input(root, std::slice::from_ref(&first));
    offline::write(&inp).unwrap();
    let t = &inp.turns[0];
    let card = ada_file();
    let mut text = format!("---\nkind: person\n{front}---\n# Ada\n");
    for k in 0..n {
        text.push_str(&format!("\nAda greeted us ({k}).[^{}] ^old-{k}\n", t.evidence.label()));
    }
    text.push_str(&format!("\n{}\n", t.evidence.definition(&card)));
    std::fs::create_dir_all(root.join("topics/people")).unwrap();
    std::fs::write(root.join(&card), text).unwrap();
    card
}

fn blocks(root: &Path, path: &str) -> usize {
    TopicFile::parse_lenient(&read(root, path)).0.blocks.len()
}

#[test]
fn a_full_card_gets_no_new_paragraph_and_says_so() {
    let dir = workspace();
    let root = dir.path();
    // The card allows 3 and holds 2: one more fits exactly, the next not.
    let card = card_with(root, "max_entries: 3\n", 2);
    let recs = [
        record_by("m1", Some(("7391", "Ada")), "I moved to Oslo"),
        record_by("m2", Some(("7391", "Ada")), "I work as a surveyor"),
        record_by("m3", Some(("7391", "Ada")), "I grew up in Rome"),
    ];
    // The configured limit (1) is the card's own business: it says 3.
    let w =
        offline::write_within(&input(root, &recs), Limits { max_entries: 1, max_entry_chars: 2000 }).unwrap();
    assert_eq!(blocks(root, &card), 3);
    assert!(read(root, &card).contains("I moved to Oslo") && !read(root, &card).contains("surveyor"));
    let want = LimitHit {
        path: card.clone(),
        limit: Limit::MaxEntries,
        value: 3,
        sources: vec!["chat/t1/m2".into(), "chat/t1/m3".into()],
    };
    assert_eq!(w.limits, [want]);
    validates(root);
    // What was left out stays in the archive, where search finds it.
    assert!(search(root, "surveyor").iter().any(|h| h.path() == "sources/chat/_v2/t1.md"));
    // Without a limit of its own the card takes the configured one.
    let dir = workspace();
    let root = dir.path();
    let card = card_with(root, "", 2);
    let w = offline::write_within(&input(root, &recs[..1]), Limits { max_entries: 2, max_entry_chars: 2000 })
        .unwrap();
    assert_eq!((blocks(root, &card), w.limits.len()), (2, 1));
    assert_eq!((w.limits[0].limit, w.limits[0].value), (Limit::MaxEntries, 2));
}

#[test]
fn a_paragraph_longer_than_max_entry_chars_is_left_out_whole() {
    let line = "Ada [id 7391] said: “I moved to Oslo”";
    let chars = line.chars().count();
    for (limit, written) in [(chars, true), (chars - 1, false)] {
        let dir = workspace();
        let root = dir.path();
        let recs = [record_by("m1", Some(("7391", "Ada")), "I moved to Oslo")];
        let w =
            offline::write_within(&input(root, &recs), Limits { max_entries: 10, max_entry_chars: limit })
                .unwrap();
        assert_eq!(root.join(ada_file()).exists(), written, "{limit}");
        if written {
            assert!(read(root, &ada_file()).contains(line));
            assert!(w.limits.is_empty());
        } else {
            // Never cut: not written at all, reported, and no card made for it.
            let hit = LimitHit {
                path: ada_file(),
                limit: Limit::MaxEntryChars,
                value: limit,
                sources: vec!["chat/t1/m1".into()],
            };
            assert_eq!(w.limits, [hit]);
            assert!(w.changed.iter().all(|p| p.starts_with("sources/")), "{:?}", w.changed);
        }
    }
}

#[test]
fn the_card_may_set_its_own_paragraph_length() {
    let dir = workspace();
    let root = dir.path();
    let card = card_with(root, "max_entry_chars: 20\n", 0);
    let recs = [record_by("m1", Some(("7391", "Ada")), "I moved to Oslo")];
    let w = offline::write_within(&input(root, &recs), Limits::default()).unwrap();
    assert_eq!((w.limits.len(), w.limits[0].limit, w.limits[0].value), (1, Limit::MaxEntryChars, 20));
    assert_eq!(blocks(root, &card), 0);
    // The name still joins the aliases of the card that exists.
    assert_eq!(aliases(root, &card), ["Ada"]);
}

#[test]
fn a_model_edit_past_a_limit_is_shown_to_the_model_and_a_repair_commits() {
    let dir = workspace();
    let root = dir.path();
    let card = card_with(root, "max_entries: 2\n", 2);
    let recs = [record_by("m1", Some(("7391", "Ada")), "I moved to Oslo")];
    let inp = input(root, &recs);
    let t = &inp.turns[0];
    let para = format!(
        "\nAda moved to Oslo.[^{}] ^ada-oslo\n\n{}\n",
        t.evidence.label(),
        t.evidence.definition(&card)
    );
    let merged = read(root, &card).replace("Ada greeted us (1).", "Ada greeted us (1) and moved to Oslo.");
    let mut w = ModelWriter::new(ScriptedModel::new(vec![
        calls(&[("append", json!({"path": card, "content": para})), ("finish", json!({}))]),
        calls(&[
            ("reset", json!({})),
            ("read", json!({"path": card})),
            ("replace", json!({"path": card, "content": merged})),
            ("finish", json!({})),
        ]),
    ]))
    .with_limits(Limits::default());
    let written = w.write_input(&inp).unwrap();
    assert!(written.changed.contains(&card), "{:?}", written.changed);
    let shown = w.model.seen[1].last().unwrap().content.clone().unwrap();
    assert!(shown.contains("people card limits") && shown.contains("max_entries 2"), "{shown}");
    assert_eq!(blocks(root, &card), 2);
    // The prompt told the model the configured limits.
    let system = w.model.seen[0][0].content.clone().unwrap();
    assert!(system.contains("at most 200 paragraphs of at most 2000"), "{system}");
}

#[test]
fn a_model_that_keeps_passing_a_limit_writes_nothing() {
    let dir = workspace();
    let root = dir.path();
    let recs = [record_by("m1", Some(("7391", "Ada")), "I moved to Oslo")];
    let inp = input(root, &recs);
    let t = &inp.turns[0];
    let path = "topics/people/ada.md";
    let long = "x".repeat(60);
    let content = format!(
        "---\nkind: person\n---\n# Ada\n\nAda moved to Oslo {long}.[^{}] ^ada-oslo\n\n{}\n",
        t.evidence.label(),
        t.evidence.definition(path)
    );
    let attempt = || calls(&[("create", json!({"path": path, "content": content})), ("finish", json!({}))]);
    let before = snapshot(root);
    let mut w = ModelWriter::new(ScriptedModel::new(vec![attempt(), attempt(), attempt()]))
        .with_limits(Limits { max_entries: 5, max_entry_chars: 60 });
    let f = w.write_input(&inp).unwrap_err();
    assert_eq!(f.code, Code::ValidationFailed, "{f}");
    assert!(f.reason.contains("max_entry_chars 60"), "{f}");
    assert_eq!(snapshot(root), before);
    // The same paragraph in a file that is no people card is no concern of
    // these limits.
    let content = content.replace("kind: person\n", "");
    let mut w = ModelWriter::new(ScriptedModel::new(vec![calls(&[
        ("create", json!({"path": path, "content": content})),
        ("finish", json!({})),
    ])]))
    .with_limits(Limits { max_entries: 5, max_entry_chars: 60 });
    w.write_input(&inp).unwrap();
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
    /// Whatever a display holds, its alias is one item of a list that
    /// parses, decoding to the display, and adding it keeps the names there.
    #[test]
    fn any_display_is_one_alias_that_decodes_to_itself(
        display in "[a-zA-Z ,\\[\\]\"“”«»「」\\\\:#{}-]{0,12}|\\PC{1,24}",
        before in proptest::collection::vec("[a-z.]{1,8}", 0..4),
    ) {
        let normalised = scriptorium_source_archive::speaker::normalise(&display);
        proptest::prop_assume!(!normalised.is_empty());
        let card = format!("---\nkind: person\naliases: [{}]\n---\n# x\n", before.join(", "));
        let name = scriptorium_writer::people::alias(&normalised);
        let named = scriptorium_writer::people::add_aliases(&card, std::slice::from_ref(&name));
        let text = named.text.unwrap_or(card);
        let (file, problems) = TopicFile::parse_lenient(&text);
        proptest::prop_assert!(problems.is_empty(), "{text}: {problems:?}");
        let got: Vec<String> =
            file.front_matter.unwrap().aliases().iter().map(|a| unescape_item(a).into_owned()).collect();
        proptest::prop_assert_eq!(&got[..before.len()], &before[..]);
        let folded = normalised.to_lowercase();
        proptest::prop_assert!(got.iter().any(|g| g.to_lowercase() == folded), "{got:?} lacks {normalised:?}");
    }
}
