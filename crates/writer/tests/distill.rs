//! The offline writer chooses: durable statements become blocks, each in
//! one file (core, the speaker's card, or the thread), once; small talk
//! stays in the archive.

use std::collections::BTreeMap;

use proptest::prelude::*;
use scriptorium_source_archive::SourceRecord;
use scriptorium_testkit::*;
use scriptorium_writer::offline;

/// Every topic file under `root` with its text.
fn topics(root: &std::path::Path) -> BTreeMap<String, String> {
    let (loaded, bad) = scriptorium_transaction::views::load_topics(root).unwrap();
    assert!(bad.is_empty(), "{bad:?}");
    loaded
        .into_iter()
        .map(|l| {
            let text = std::fs::read_to_string(root.join(&l.path)).unwrap();
            (l.path, text)
        })
        .collect()
}

fn with_role(message: &str, role: &str, content: &str) -> SourceRecord {
    let v = serde_json::json!({"provider": "chat", "thread": "t1", "message": message, "role": role,
        "timestamp": "2026-03-01T10:00:00Z", "content": content});
    scriptorium_source_archive::input::parse_record(&v.to_string()).unwrap()
}

/// Writes `recs` and answers the paths changed besides the archive file.
fn written(root: &std::path::Path, recs: &[SourceRecord]) -> Vec<String> {
    let w = offline::write(&input(root, recs)).unwrap();
    w.changed.into_iter().filter(|p| p.starts_with("topics/")).collect()
}

#[test]
fn small_talk_stays_in_the_archive() {
    let dir = workspace();
    let recs = [
        record_by("m1", Some(("7391", "Ada")), "Thanks, that sounds great!"),
        record_by("m2", Some(("4402", "Bo")), "Haha, I love it. See you!"),
        record_by("m3", None, "ok"),
    ];
    assert!(written(dir.path(), &recs).is_empty());
    assert!(dir.path().join("sources/chat/_v2/t1.md").exists(), "the turns are archived");
}

#[test]
fn a_standing_preference_goes_to_core_only() {
    let dir = workspace();
    let recs = [
        record_by("m1", Some(("7391", "Ada")), "I prefer short answers."),
        record_by("m2", None, "Please avoid jargon."),
    ];
    assert_eq!(written(dir.path(), &recs), ["topics/core.md"]);
    let core = &topics(dir.path())["topics/core.md"];
    assert!(core.contains("Ada [id 7391] said: “I prefer short answers.”"), "{core}");
    assert!(core.contains("user said: “Please avoid jargon.”"), "{core}");
}

#[test]
fn a_fact_about_the_speaker_goes_to_their_card() {
    let dir = workspace();
    let recs = [record_by("m1", Some(("7391", "Ada")), "The repo lives at ~/src/app. Nice weather today.")];
    assert_eq!(written(dir.path(), &recs), [ada_file()]);
    let ada = &topics(dir.path())[&ada_file()];
    assert!(ada.contains("Ada [id 7391] said: “The repo lives at ~/src/app.”[^"), "{ada}");
    assert!(!ada.contains("weather"), "{ada}");
}

#[test]
fn what_a_speakerless_user_says_of_themselves_goes_to_core() {
    let dir = workspace();
    let recs = [record_by("m1", None, "I'm a product manager.")];
    assert_eq!(written(dir.path(), &recs), ["topics/core.md"]);
}

#[test]
fn a_decision_goes_to_the_thread() {
    let dir = workspace();
    let recs = [record_by("m1", Some(("7391", "Ada")), "We decided I will lead the launch.")];
    assert_eq!(written(dir.path(), &recs), ["topics/threads/chat-t1.md"]);
}

#[test]
fn only_a_user_instructs_core() {
    let dir = workspace();
    let recs = [with_role("m1", "assistant", "Please always answer in French.")];
    assert_eq!(written(dir.path(), &recs), ["topics/threads/chat-t1.md"]);
}

#[test]
fn a_speakers_sentence_is_written_once() {
    let dir = workspace();
    let root = dir.path();
    let recs = [
        record_by("m1", Some(("7391", "Ada")), "I prefer tea."),
        record_by("m2", Some(("7391", "Ada")), "I prefer  tea."),
    ];
    assert_eq!(written(root, &recs), ["topics/core.md"]);
    // And in a later write too.
    assert!(written(root, &[record_by("m3", Some(("7391", "Ada")), "I PREFER TEA.")]).is_empty());
    assert_eq!(topics(root)["topics/core.md"].matches("said:").count(), 1);
}

fn pending(message: &str, speaker: Option<(&str, &str)>, content: &str) -> SourceRecord {
    let mut v = serde_json::json!({"provider": "chat", "thread": "t1", "message": message, "role": "user",
        "timestamp": "2026-03-01T10:00:00Z", "content": content, "pending": true});
    if let Some((id, display)) = speaker {
        v["speaker_id"] = id.into();
        v["speaker_display"] = display.into();
    }
    scriptorium_source_archive::input::parse_record(&v.to_string()).unwrap()
}

#[test]
fn an_assistants_sentence_does_not_suppress_the_users() {
    let dir = workspace();
    let root = dir.path();
    let recs = [
        with_role("m1", "assistant", "You could tell me: Please avoid jargon. I'm a product manager."),
        record_by("m2", None, "Please avoid jargon. I'm a product manager."),
    ];
    offline::write(&input(root, &recs)).unwrap();
    let core = &topics(root)["topics/core.md"];
    assert!(core.contains("user said: “Please avoid jargon.” “I'm a product manager.”"), "{core}");
}

#[test]
fn another_speakers_sentence_does_not_suppress_ones_own() {
    let dir = workspace();
    let root = dir.path();
    let recs = [
        record_by("b1", Some(("4402", "Bo")), "I live in Paris. My dog is called Rex."),
        record_by("a1", Some(("7391", "Ada")), "I live in Paris. My dog is called Rex."),
    ];
    offline::write(&input(root, &recs)).unwrap();
    let all = topics(root);
    for file in [ada_file(), bo_file()] {
        let text = &all[&file];
        assert!(text.contains("said: “I live in Paris.” “My dog is called Rex.”"), "{file}: {text}");
    }
}

#[test]
fn a_paragraph_naming_one_speaker_but_citing_another_suppresses_nothing() {
    let dir = workspace();
    let root = dir.path();
    let bo = record_by("b1", Some(("4402", "Bo")), "I live in Paris.");
    offline::write(&input(root, std::slice::from_ref(&bo))).unwrap();
    // A paired caller writes Bo's words as Ada's, citing Bo's record.
    let evidence = scriptorium_writer::input::Turn::of_record(&bo).evidence.definition("topics/core.md");
    let label = evidence.strip_prefix("[^").and_then(|s| s.split(']').next()).unwrap();
    let forged =
        format!("# Core\n\nAda [id 7391] said: “I live in Paris.”[^{label}] ^c-forged0001\n\n{evidence}\n");
    let patch = scriptorium_transaction::Patch {
        base_revision: String::new(),
        message: "forged".to_owned(),
        sources: Vec::new(),
        edits: vec![scriptorium_transaction::Edit::Create {
            path: "topics/core.md".to_owned(),
            content: forged,
        }],
    };
    let mut w = scriptorium_transaction::Committer::open(root, std::time::Duration::from_secs(5)).unwrap();
    w.commit(&patch, scriptorium_transaction::Tier::Paired, scriptorium_transaction::Base::Any).unwrap();
    drop(w);
    // Ada's own words are hers to have written.
    assert_eq!(written(root, &[record_by("a1", Some(("7391", "Ada")), "I live in Paris.")]), [ada_file()]);
    let ada = &topics(root)[&ada_file()];
    assert!(ada.contains("Ada [id 7391] said: “I live in Paris.”"), "{ada}");
    // And now they are written: a repeat adds nothing.
    assert!(written(root, &[record_by("a2", Some(("7391", "Ada")), "I live in Paris.")]).is_empty());
}

#[test]
fn a_pending_sentence_does_not_suppress_a_trusted_one() {
    let dir = workspace();
    let root = dir.path();
    // In one write: an unpaired member, then trusted Ada.
    let recs = [
        pending("x1", Some(("999", "Mallory")), "Please always answer in English."),
        record_by("a2", Some(("7391", "Ada")), "Please always answer in English."),
    ];
    offline::write(&input(root, &recs)).unwrap();
    let core = &topics(root)["topics/core.md"];
    assert!(core.contains("Ada [id 7391] said: “Please always answer in English.”"), "{core}");
    // Across writes, for one speaker: the speakerless user's pending text,
    // then the same words trusted.
    offline::write(&input(root, &[pending("p1", None, "Please never use emoji.")])).unwrap();
    offline::write(&input(root, &[record_by("u1", None, "Please never use emoji.")])).unwrap();
    let core = &topics(root)["topics/core.md"];
    assert_eq!(core.matches("user said: “Please never use emoji.”").count(), 2, "{core}");
    // But a pending repeat of trusted words adds nothing.
    assert!(written(root, &[pending("p2", None, "Please never use emoji.")]).is_empty());
}

/// Sentences turns are made of: durable ones of every class, small talk,
/// and hostile ones (brackets, quotation marks).
fn sentence() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "I prefer tea.",
        "Please avoid jargon.",
        "Call me Max.",
        "I'm a product manager, please avoid jargon.",
        "I'm a nurse.",
        "My sister is a doctor.",
        "The project lives at ~/Projects/foo.",
        "I went to the fair yesterday.",
        "I'm flying to Oslo next week!",
        "We decided to ship on Friday.",
        "Let's go with the blue logo.",
        "I work as a [night] nurse.",
        "We agreed on “plan B”.",
        "Thanks!",
        "That sounds great.",
        "Haha, I love it.",
        "See you soon!",
    ])
}

fn speaker() -> impl Strategy<Value = Option<(&'static str, &'static str)>> {
    prop::sample::select(vec![None, Some(("7391", "Ada")), Some(("4402", "Bo")), Some(("5", "Cy"))])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    #[test]
    fn no_speakers_sentence_is_written_twice(
        batches in proptest::collection::vec(
            proptest::collection::vec((speaker(), proptest::collection::vec(sentence(), 1..4)), 1..6),
            1..3,
        )
    ) {
        let dir = workspace();
        let root = dir.path();
        let mut n = 0;
        for batch in &batches {
            let recs: Vec<SourceRecord> = batch
                .iter()
                .map(|(who, parts)| {
                    n += 1;
                    record_by(&format!("m{n}"), *who, &parts.join(" "))
                })
                .collect();
            offline::write(&input(root, &recs)).unwrap();
        }
        let mut seen: BTreeMap<(String, String), String> = BTreeMap::new();
        for (path, text) in topics(root) {
            for said in offline::said_keys(&text) {
                let key = &said.key;
                prop_assert!(!key.contains("thanks") && !key.contains("sounds great"), "small talk {key:?} in {path}");
                if let Some(first) = seen.insert((said.who.clone(), key.clone()), path.clone()) {
                    prop_assert!(false, "{} said {key:?} in {first} and again in {path}", said.who);
                }
            }
        }
    }
}
