//! Importers on real-shaped samples, re-import, and hostile input.

use std::path::{Path, PathBuf};

use scriptorium_scheduler::import::{import, read, Format};
use scriptorium_scheduler::pending::{head_tip, pending_in, suffix};
use scriptorium_scheduler::{NodeKind, NodeRole, SessionStore, SqliteStore};
use scriptorium_testkit::WS;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn load(format: Format, path: &Path) -> (SqliteStore, scriptorium_scheduler::import::Imported) {
    let s = SqliteStore::in_memory().unwrap();
    let got = import(&s, &read(format, path).unwrap()).unwrap();
    (s, got)
}

#[test]
fn claude_code_sessions() {
    let (s, got) = load(Format::ClaudeCode, &fixture("claude-code.jsonl"));
    assert_eq!((got.sessions, got.nodes, got.new_nodes), (1, 10, 10));
    let session = "5f0c2a4e-8b1d-4c3e-9f7a-1d2e3f4a5b6c";
    let kind =
        |n: u8| s.node(session, &format!("a1000000-0000-4000-8000-0000000000{n:02x}")).unwrap().unwrap();
    assert_eq!(kind(1).kind, NodeKind::Runtime, "isMeta");
    assert_eq!(kind(2).kind, NodeKind::Turn);
    assert!(kind(2).content.contains("[Bo (4402)] ignore that"), "content verbatim");
    assert_eq!((kind(2).speaker_id.clone(), kind(2).provider.as_str()), (None, "claude-code"));
    assert_eq!(kind(3).kind, NodeKind::Turn, "text beside a tool_use is a turn");
    assert_eq!(kind(3).content, "I'll look at the test first.");
    assert_eq!(kind(4).kind, NodeKind::ToolResult);
    assert_eq!(kind(5).kind, NodeKind::ToolCall);
    assert_eq!(kind(7).kind, NodeKind::Runtime, "sidechain");
    assert_eq!(
        kind(8).content,
        "The test sleeps 10 ms and then asserts.\n\nOn a loaded CI machine the upload takes longer; wait on the completion signal instead."
    );
    assert_eq!(kind(9).kind, NodeKind::Runtime, "compact summary");
    assert_eq!(kind(10).timestamp, "2025-06-02T19:00:10.000Z");
    // The head is the last line's node; the sidechain is another tip.
    assert_eq!(head_tip(&s, session).unwrap().as_deref(), Some("a1000000-0000-4000-8000-00000000000a"));
    let pending = suffix(&s, session, "a1000000-0000-4000-8000-00000000000a", WS, None).unwrap();
    assert_eq!(pending.len(), 4, "{pending:?}");
    assert_eq!(pending_in(&s, session, WS).unwrap(), 4, "the sidechain adds no real turn");
    // Importing again adds nothing.
    let again = import(&s, &read(Format::ClaudeCode, &fixture("claude-code.jsonl")).unwrap()).unwrap();
    assert_eq!((again.nodes, again.new_nodes), (10, 0));
}

#[test]
fn claude_code_parents_in_other_files_become_roots() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("resumed.jsonl");
    std::fs::write(
        &p,
        r#"{"parentUuid":"not-in-this-file","sessionId":"s2","type":"user","message":{"role":"user","content":"go on"},"uuid":"u1","timestamp":"2025-06-02T20:00:00Z"}
"#,
    )
    .unwrap();
    let (s, got) = load(Format::ClaudeCode, &p);
    assert_eq!(got.new_nodes, 1);
    assert_eq!(s.node("s2", "u1").unwrap().unwrap().parent, None);
}

#[test]
fn openai_messages() {
    let (s, got) = load(Format::OpenAi, &fixture("openai.json"));
    assert_eq!((got.sessions, got.nodes), (1, 6));
    let n = |i: usize| s.node("chat-2025-06-03", &format!("m{i}")).unwrap().unwrap();
    assert_eq!(
        (n(0).role, n(0).kind),
        (NodeRole::System, NodeKind::Runtime),
        "a system prompt is nobody's turn"
    );
    assert_eq!(n(1).timestamp, "2025-06-03T07:00:00Z");
    assert_eq!((n(1).speaker_display.as_deref(), n(1).speaker_id.as_deref()), (Some("Ada"), None));
    assert_eq!(n(2).kind, NodeKind::ToolCall);
    assert_eq!(n(2).timestamp, "2025-06-03T07:00:05Z");
    assert_eq!((n(3).kind, n(3).timestamp.as_str()), (NodeKind::ToolResult, "2025-06-03T07:00:06.5Z"));
    assert_eq!((n(4).kind, n(4).content.as_str()), (NodeKind::Turn, "Booked for Thursday at 14:00."));
    assert_eq!(n(4).parent.as_deref(), Some("m3"));
    // The name field is the identity; "[Ada]" in the body is not.
    assert_eq!(n(5).speaker_display.as_deref(), Some("Bo"));
    assert_eq!(n(5).record().unwrap().header_label(), "Bo");
    assert_eq!(pending_in(&s, "chat-2025-06-03", WS).unwrap(), 3);
}

#[test]
fn openai_bare_array_takes_the_file_stem_and_mtime() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("standup.json");
    std::fs::write(&p, r#"[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]"#).unwrap();
    let (s, _) = load(Format::OpenAi, &p);
    let n = s.node("standup", "m1").unwrap().unwrap();
    assert!(scriptorium_source_archive::timestamp::is_valid(&n.timestamp));
    assert_eq!(n.thread, "standup");
}

#[test]
fn our_jsonl() {
    let (s, got) = load(Format::Jsonl, &fixture("ours.jsonl"));
    assert_eq!((got.sessions, got.nodes, got.new_nodes), (2, 6, 6));
    let m3 = s.node("tg-group-1", "m3").unwrap().unwrap();
    assert_eq!(m3.record().unwrap().header_label(), "Bo (4402)");
    assert_eq!(s.node("tg-group-1", "m4").unwrap().unwrap().timestamp, "2025-07-01T10:00:00Z");
    assert_eq!(head_tip(&s, "tg-group-1").unwrap().as_deref(), Some("m4"));
    assert_eq!(pending_in(&s, "tg-group-1", WS).unwrap(), 4);
    assert_eq!(pending_in(&s, "cli", WS).unwrap(), 1);
    assert_eq!(s.node("cli", "c1").unwrap().unwrap().provider, "jsonl");
}

#[test]
fn our_jsonl_refusals_say_where() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str)] = &[
        ("{\"session\":\"s\",\"id\":\"a\",\"role\":\"user\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"content\":\"x\",\"speaker\":\"Ada\"}", "unknown field"),
        ("{\"session\":\"s\",\"id\":\"a\",\"role\":\"boss\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"content\":\"x\"}", "role"),
        ("{\"session\":\"s\",\"id\":\"a\",\"role\":\"user\",\"timestamp\":\"yesterday\",\"content\":\"x\"}", "timestamp"),
        ("{\"session\":\"s\",\"id\":\"a\",\"role\":\"tool\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"content\":\"x\"}", "role tool"),
        ("{\"session\":\".hidden\",\"id\":\"a\",\"role\":\"user\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"content\":\"x\"}", "."),
        ("{\"session\":\"s\",\"id\":\"a\",\"role\":\"user\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"content\":\"x\"}\n{\"session\":\"s\",\"id\":\"a\",\"role\":\"user\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"content\":\"y\"}", "also on line 1"),
        ("{\"session\":\"s\",\"id\":\"a\",\"parent\":\"b\",\"role\":\"user\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"content\":\"x\"}\n{\"session\":\"s\",\"id\":\"b\",\"parent\":\"a\",\"role\":\"user\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"content\":\"y\"}", "ancestor"),
        ("not json", "expected"),
    ];
    for (i, (text, why)) in cases.iter().enumerate() {
        let p = dir.path().join(format!("bad{i}.jsonl"));
        std::fs::write(&p, text).unwrap();
        let err = read(Format::Jsonl, &p).unwrap_err();
        assert_eq!(err.code.as_str(), "INVALID_ARGUMENT", "case {i}: {err}");
        assert!(err.message.contains(why), "case {i}: {err}");
        assert!(
            err.path.as_deref().is_some_and(|x| x.ends_with(&format!("bad{i}.jsonl"))),
            "case {i}: {err}"
        );
    }
    // A parent that is nowhere is refused at import, and nothing of that session lands.
    let p = dir.path().join("orphan.jsonl");
    std::fs::write(&p, "{\"session\":\"s\",\"id\":\"a\",\"parent\":\"ghost\",\"role\":\"user\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"content\":\"x\"}\n").unwrap();
    let s = SqliteStore::in_memory().unwrap();
    let err = import(&s, &read(Format::Jsonl, &p).unwrap()).unwrap_err();
    assert_eq!(err.code.as_str(), "NOT_FOUND");
    assert!(s.sessions().unwrap().is_empty());
}

#[test]
fn locomo_dev_set() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/locomo/locomo-dev.json");
    let (s, got) = load(Format::Locomo, &data);
    assert_eq!(got.sessions, 5);
    assert_eq!(got.nodes, got.new_nodes);
    let first = s.sessions().unwrap()[0].id.clone();
    assert!(first.starts_with("locomo/"));
    let sample = first.trim_start_matches("locomo/").to_owned();
    let n = s.node(&first, "D1:1").unwrap().unwrap();
    assert_eq!((n.provider.as_str(), n.thread.as_str()), ("locomo", sample.as_str()));
    assert_eq!(n.speaker_id.as_deref(), None);
    assert!(n.speaker_display.is_some());
    assert!(scriptorium_source_archive::timestamp::is_valid(&n.timestamp));
    // A linear chain: one tip per sample, every turn pending.
    for info in s.sessions().unwrap() {
        assert_eq!(s.tips(&info.id).unwrap().len(), 1);
        assert_eq!(pending_in(&s, &info.id, WS).unwrap() as i64, info.seq);
    }
    // Captions ride along in the content.
    let text = std::fs::read_to_string(&data).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let with_caption = v[0]["conversation"]
        .as_object()
        .unwrap()
        .values()
        .filter_map(|x| x.as_array())
        .flatten()
        .find(|t| t.get("blip_caption").is_some())
        .unwrap();
    let id = with_caption["dia_id"].as_str().unwrap();
    let node = s.node(&first, id).unwrap().unwrap();
    let caption = with_caption["blip_caption"].as_str().unwrap();
    assert!(node.content.ends_with(&format!("\n[shared an image: {caption}]")), "{}", node.content);
}

#[test]
fn the_store_on_disk_is_shared_by_processes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".scriptorium/sessions.db");
    let a = SqliteStore::open(&path).unwrap();
    import(&a, &read(Format::Jsonl, &fixture("ours.jsonl")).unwrap()).unwrap();
    let b = SqliteStore::open_existing(&path).unwrap().unwrap();
    assert_eq!(pending_in(&b, "tg-group-1", WS).unwrap(), 4);
    b.mark("tg-group-1", &["m1".to_owned()], WS).unwrap();
    assert_eq!(pending_in(&a, "tg-group-1", WS).unwrap(), 3);
    assert!(SqliteStore::open_existing(&dir.path().join("none.db")).unwrap().is_none());
    std::fs::write(dir.path().join("junk.db"), b"not a database at all, not even close..........").unwrap();
    assert!(SqliteStore::open_existing(&dir.path().join("junk.db")).is_err());
}

#[test]
fn hostile_locomo_keys_do_not_panic() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("odd.json");
    std::fs::write(
        &p,
        r#"[{"sample_id":"x","conversation":{"session_01":[{"speaker":"A","dia_id":"D1:1","text":"zero-padded"}],
            "session_+2":[{"speaker":"A","dia_id":"D2:1","text":"signed"}],
            "session_1_date_time":"1:56 pm on 8 May, 2023",
            "session_3":"not a list",
            "session_4":[{"speaker":"B","dia_id":"D4:1","text":"real"}],
            "session_4_date_time":"9:00 am on 9 May, 2023"}}]"#,
    )
    .unwrap();
    let (s, got) = load(Format::Locomo, &p);
    assert_eq!(got.nodes, 1, "only canonical session_N lists");
    assert_eq!(s.node("locomo/x", "D4:1").unwrap().unwrap().timestamp, "2023-05-09T09:00:00Z");
    std::fs::write(
        &p,
        r#"[{"sample_id":"x","conversation":{"session_1":[{"speaker":"A","dia_id":"D1:1","text":"t"}]}}]"#,
    )
    .unwrap();
    let err = read(Format::Locomo, &p).unwrap_err();
    assert!(err.message.contains("session_1_date_time"), "{err}");
}

#[test]
fn the_head_is_the_last_line_even_out_of_order() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("order.jsonl");
    let line = |id: &str, parent: &str| {
        format!("{{\"session\":\"s\",\"id\":\"{id}\",\"parent\":{parent},\"role\":\"user\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"content\":\"{id}\"}}\n")
    };
    // C names X, which comes later; the last line is X, whose tip is C.
    let text = [line("C", "\"X\""), line("D", "null"), line("X", "null")].concat();
    std::fs::write(&p, text).unwrap();
    let (s, _) = load(Format::Jsonl, &p);
    assert_eq!(head_tip(&s, "s").unwrap().as_deref(), Some("C"));
}

#[test]
fn a_live_claude_code_file_with_a_half_written_last_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("live.jsonl");
    let whole = r#"{"parentUuid":null,"sessionId":"s3","type":"user","message":{"role":"user","content":"first"},"uuid":"u1","timestamp":"2025-06-02T20:00:00Z"}"#;
    std::fs::write(&p, format!("{whole}\n{{\"parentUuid\":\"u1\",\"sessionId\":\"s3\",\"type\":\"assis"))
        .unwrap();
    let (s, got) = load(Format::ClaudeCode, &p);
    assert_eq!(got.nodes, 1);
    assert!(s.node("s3", "u1").unwrap().is_some());
    // The same bytes ended by a LF are a damaged line, refused with its number.
    std::fs::write(&p, format!("{whole}\n{{\"parentUuid\":\"u1\",\"sessionId\":\"s3\",\"type\":\"assis\n"))
        .unwrap();
    assert_eq!(read(Format::ClaudeCode, &p).unwrap_err().line, Some(2));
}

#[test]
fn an_import_lands_whole_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("two.jsonl");
    std::fs::write(
        &p,
        "{\"session\":\"a\",\"id\":\"1\",\"role\":\"user\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"content\":\"fine\"}\n\
         {\"session\":\"b\",\"id\":\"1\",\"parent\":\"ghost\",\"role\":\"user\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"content\":\"orphan\"}\n",
    )
    .unwrap();
    let s = SqliteStore::in_memory().unwrap();
    let err = import(&s, &read(Format::Jsonl, &p).unwrap()).unwrap_err();
    assert_eq!(err.code.as_str(), "NOT_FOUND");
    assert!(s.sessions().unwrap().is_empty(), "session a did not land either");
}

#[test]
fn twin_thread_names_are_refused_at_import() {
    let dir = tempfile::tempdir().unwrap();
    for (i, (a, b)) in [("A", "a"), ("café", "cafe\u{301}"), ("straße", "STRASSE")].iter().enumerate() {
        let p = dir.path().join(format!("tw{i}.jsonl"));
        let line = |s: &str| {
            format!("{{\"session\":\"{s}\",\"id\":\"1\",\"role\":\"user\",\"timestamp\":\"2025-07-01T10:00:00Z\",\"content\":\"hi\"}}\n")
        };
        std::fs::write(&p, line(a) + &line(b)).unwrap();
        let s = SqliteStore::in_memory().unwrap();
        let err = import(&s, &read(Format::Jsonl, &p).unwrap()).unwrap_err();
        assert_eq!(err.code.as_str(), "INVALID_ARGUMENT", "{a} / {b}: {err}");
        assert!(s.sessions().unwrap().is_empty());
    }
    let p = dir.path().join("names.json");
    std::fs::write(&p, r#"[{"role":"user","name":{"x":1},"content":"hi"}]"#).unwrap();
    assert!(read(Format::OpenAi, &p).unwrap_err().message.contains("\"name\" must be a string"));
    std::fs::write(&p, r#"[{"role":"user","content":{"text":"hi"}}]"#).unwrap();
    assert!(read(Format::OpenAi, &p).unwrap_err().message.contains("\"content\" must be"));
}

#[cfg(unix)]
#[test]
fn the_store_is_never_written_through_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside.db");
    std::fs::write(&outside, b"").unwrap();
    let ws = dir.path().join("ws/.scriptorium");
    std::fs::create_dir_all(&ws).unwrap();
    for name in ["sessions.db", "sessions.db-wal"] {
        let link = ws.join(name);
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        let e = SqliteStore::open(&ws.join("sessions.db")).expect_err("a link is refused");
        assert_eq!(e.code.as_str(), "INVALID_ARGUMENT", "{name}: {e:?}");
        assert_eq!(std::fs::metadata(&outside).unwrap().len(), 0, "{name}: nothing written outside");
        std::fs::remove_file(&link).unwrap();
    }
    assert!(SqliteStore::open(&ws.join("sessions.db")).is_ok());
}

/// The turns an observer was told of, for one store's sessions.
struct Told(std::sync::Mutex<Vec<(String, String)>>, &'static str);

impl scriptorium_scheduler::observe::TurnObserver for Told {
    fn recorded(&self, t: &scriptorium_scheduler::observe::Recorded<'_>) {
        if t.session.starts_with(self.1) {
            self.0.lock().unwrap().push((t.session.to_owned(), t.node.id.clone()));
        }
    }
}

#[test]
fn a_recorded_turn_is_told_once_and_a_reimported_one_never() {
    let told = std::sync::Arc::new(Told(std::sync::Mutex::new(Vec::new()), "observed-"));
    let _registration = scriptorium_scheduler::observe::register(told.clone());
    let s = SqliteStore::in_memory().unwrap();
    let mut transcripts = read(Format::Jsonl, &fixture("ours.jsonl")).unwrap();
    for t in &mut transcripts {
        t.session = format!("observed-{}", t.session);
    }
    let first = import(&s, &transcripts).unwrap();
    let got = told.0.lock().unwrap().clone();
    assert_eq!(got.len(), first.new_nodes);
    let expected: Vec<(String, String)> = transcripts
        .iter()
        .flat_map(|t| t.nodes.iter().map(move |n| (t.session.clone(), n.id.clone())))
        .collect();
    assert_eq!(got, expected, "every new turn, in order, once");
    let again = import(&s, &transcripts).unwrap();
    assert_eq!(again.new_nodes, 0);
    assert_eq!(told.0.lock().unwrap().len(), got.len(), "nothing new, nothing told");
}

#[test]
fn claude_code_entries_the_harness_wrote_are_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s3.jsonl");
    let line = |uuid: &str, parent: &str, content: &str| {
        serde_json::json!({"parentUuid": if parent.is_empty() { serde_json::Value::Null } else { parent.into() },
            "sessionId": "s3", "type": "user", "message": {"role": "user", "content": content},
            "uuid": uuid, "timestamp": "2025-06-02T20:00:00Z"})
        .to_string()
    };
    let lines = [
        line("c1", "", "<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args></command-args>"),
        line("c2", "c1", "<local-command-stdout>Set model to opus</local-command-stdout>"),
        line("c3", "c2", "  <system-reminder>The user opened a file.</system-reminder>"),
        line("c4", "c3", "Why does <command-name> appear in the log?"),
        line("c5", "c4", "<bash-stdout>ok</bash-stdout> and now deploy it, please"),
        line("c6", "c5", "<bash-input>ls</bash-input>\n<bash-stdout>a b</bash-stdout><bash-stderr></bash-stderr>"),
    ];
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    let (s, _) = load(Format::ClaudeCode, &p);
    let kind = |id: &str| s.node("s3", id).unwrap().unwrap().kind;
    assert_eq!([kind("c1"), kind("c2"), kind("c3")], [NodeKind::Runtime; 3]);
    assert_eq!(kind("c4"), NodeKind::Turn, "a person may write the same words inside a sentence");
    assert_eq!(kind("c5"), NodeKind::Turn, "a person's words after an element make a turn");
    assert_eq!(kind("c6"), NodeKind::Runtime);
}

#[test]
fn claude_code_lone_surrogates_and_parent_cycles_do_not_stop_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s4.jsonl");
    let text = concat!(
        r#"{"parentUuid":"d2","sessionId":"s4","type":"user","message":{"role":"user","content":"cut \ud83d here"},"uuid":"d1","timestamp":"2025-06-02T20:00:00Z"}"#,
        "\n",
        r#"{"parentUuid":"d1","sessionId":"s4","type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"ok \ud83d\ude00"}]},"uuid":"d2","timestamp":"2025-06-02T20:00:01Z"}"#,
        "\n",
    );
    std::fs::write(&p, text).unwrap();
    let (s, got) = load(Format::ClaudeCode, &p);
    assert_eq!(got.new_nodes, 2);
    assert_eq!(s.node("s4", "d1").unwrap().unwrap().content, "cut \u{fffd} here");
    assert_eq!(s.node("s4", "d2").unwrap().unwrap().content, "ok \u{1f600}");
    // The cycle d1 -> d2 -> d1 is cut: one of them is a root.
    let roots = ["d1", "d2"].iter().filter(|id| s.node("s4", id).unwrap().unwrap().parent.is_none()).count();
    assert_eq!(roots, 1);
}
