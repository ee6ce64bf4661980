//! The Codex importer on real-shaped rollout files, and reading transcripts
//! a piece at a time (Codex and Claude Code): whole or in pieces, the same
//! nodes and the same store.

use std::path::{Path, PathBuf};

use scriptorium_scheduler::import::{import, read, read_text, Format, Origin, Transcript};
use scriptorium_scheduler::pending::head_tip;
use scriptorium_scheduler::{Node, NodeKind, NodeRole, SessionStore, SqliteStore};
use sha2::{Digest, Sha256};

const MTIME: &str = "2025-12-01T00:00:00Z";

fn sample(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/codex");
    let found = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().contains(name));
    found.unwrap_or_else(|| panic!("no sample {name}"))
}

fn text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

fn stem(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

/// The id the format documents: the line number and 16 hex digits of the
/// line's SHA-256.
fn id_of(text: &str, line: usize) -> String {
    let l = text.lines().nth(line - 1).unwrap();
    let hex: String = Sha256::digest(l.as_bytes())[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("{line}-{hex}")
}

/// The file's lines `from..=to` (1-based) with their LFs.
fn lines(text: &str, from: usize, to: usize) -> String {
    text.split_inclusive('\n').skip(from - 1).take(to + 1 - from).collect()
}

fn read_piece(format: Format, text: &str, stem: &str, first_line: usize) -> Vec<Transcript> {
    read_text(format, text, &Origin { stem, mtime: MTIME, first_line }).unwrap()
}

/// (line, kind, role, content) of each expected node, in order.
type Expected<'a> = [(usize, NodeKind, NodeRole, &'a str)];

/// Asserts the transcript's nodes exactly: ids from their lines, a chain in
/// file order, provider and thread, speakerless.
fn assert_nodes(t: &Transcript, text: &str, session: &str, expected: &Expected<'_>) {
    assert_eq!(t.session, session);
    let got: Vec<(String, NodeKind, NodeRole, &str)> =
        t.nodes.iter().map(|n| (n.id.clone(), n.kind, n.role, n.content.as_str())).collect();
    let want: Vec<(String, NodeKind, NodeRole, &str)> =
        expected.iter().map(|&(l, k, r, c)| (id_of(text, l), k, r, c)).collect();
    assert_eq!(got, want);
    for (i, n) in t.nodes.iter().enumerate() {
        assert_eq!(n.parent, (i > 0).then(|| t.nodes[i - 1].id.clone()), "a chain in file order");
        assert_eq!((n.provider.as_str(), n.thread.as_str()), ("codex", session));
        assert_eq!((n.speaker_id.as_deref(), n.speaker_display.as_deref(), n.pending), (None, None, false));
    }
    assert_eq!(t.head, t.nodes.last().map(|n| n.id.clone()));
}

const ASK: &str =
    "The upload test in tests/upload.rs fails on CI about one run in ten. Can you find out why?";
const PATCH: &str = "*** Begin Patch\n*** Update File: tests/upload.rs\n@@\n-    std::thread::sleep(Duration::from_millis(10));\n-    assert!(upload.finished());\n+    assert!(done.recv_timeout(Duration::from_secs(5)).is_ok());\n*** End Patch\n";

#[test]
fn a_session_with_tool_calls_and_reasoning() {
    use NodeKind::{Runtime, ToolCall, ToolResult, Turn};
    use NodeRole::{Assistant, System, Tool, User};
    let path = sample("2025-10-01");
    let text = text(&path);
    let got = read(Format::Codex, &path).unwrap();
    assert_eq!(got.len(), 1);
    let t = &got[0];
    let n = |i: usize| &t.nodes[i];
    assert!(n(0).content.starts_with("<permissions instructions>"));
    assert!(n(1).content.starts_with("# AGENTS.md instructions for /home/ada/proj"));
    assert!(n(2).content.starts_with("<environment_context>"));
    let shell_args = r#"{"command":["bash","-lc","sed -n 1,40p tests/upload.rs"],"workdir":"/home/ada/proj","timeout_ms":120000}"#;
    let shell = format!("shell\n{shell_args}");
    let output = r##"{"output":"#[test]\nfn upload_finishes() {\n    let upload = start_upload();\n    std::thread::sleep(Duration::from_millis(10));\n    assert!(upload.finished());\n}\n","metadata":{"exit_code":0,"duration_seconds":0.1}}"##;
    let local_shell = format!("local_shell\n{}", n(10).content.strip_prefix("local_shell\n").unwrap());
    let search = format!("web_search\n{}", n(12).content.strip_prefix("web_search\n").unwrap());
    let patch = format!("apply_patch\n{PATCH}");
    let expected: &Expected<'_> = &[
        (2, Runtime, System, n(0).content.as_str()),
        (3, Runtime, User, n(1).content.as_str()),
        (4, Runtime, User, n(2).content.as_str()),
        (6, Turn, User, ASK),
        (9, Runtime, Assistant, "**Reading the test**\n\nI'll look at how the test waits for the upload."),
        (11, ToolCall, Assistant, &shell),
        (12, ToolResult, Tool, output),
        (13, Turn, Assistant, "The test sleeps 10 ms and then asserts; I'll make it wait for the completion signal."),
        (15, ToolCall, Assistant, &patch),
        (16, ToolResult, Tool, "Success. Updated the following files:\nM tests/upload.rs\n"),
        (17, ToolCall, Assistant, &local_shell),
        (18, ToolResult, Tool, "running 1 test\ntest upload_finishes ... ok\n\ntest result: ok. 1 passed"),
        (19, ToolCall, Assistant, &search),
        (
            20,
            Turn,
            Assistant,
            "The test slept 10 ms and then asserted that the upload had finished; on a loaded CI machine the upload takes longer.\n\nI changed it to wait on the completion signal with a 5 s timeout instead, and `cargo test upload` passes.",
        ),
        (24, Turn, User, "Here is the CI log from the failing run too."),
        (26, Turn, Assistant, "The log shows the same timeout, so the fix covers it."),
    ];
    assert_nodes(t, &text, "0199a213-81c0-7800-8aa1-bbab2a035a53", expected);
    let action: serde_json::Value =
        serde_json::from_str(local_shell.strip_prefix("local_shell\n").unwrap()).unwrap();
    assert_eq!(action["command"], serde_json::json!(["cargo", "test", "upload"]));
    assert!(search.contains("std mpsc recv_timeout"));
    assert_eq!(n(3).timestamp, "2025-10-01T12:00:04.211Z", "each line's own time");
    // Into a store: every node once, the last line's node the head; again, nothing new.
    let s = SqliteStore::in_memory().unwrap();
    let first = import(&s, &got).unwrap();
    assert_eq!((first.sessions, first.nodes, first.new_nodes), (1, 16, 16));
    let session = "0199a213-81c0-7800-8aa1-bbab2a035a53";
    assert_eq!(head_tip(&s, session).unwrap(), Some(id_of(&text, 26)));
    assert_eq!(s.node(session, &id_of(&text, 6)).unwrap().unwrap().content, ASK);
    let again = import(&s, &read(Format::Codex, &path).unwrap()).unwrap();
    assert_eq!((again.nodes, again.new_nodes), (16, 0));
}

#[test]
fn a_resumed_session_goes_on_in_the_same_file() {
    use NodeKind::{Runtime, ToolCall, ToolResult, Turn};
    use NodeRole::{Assistant, System, Tool, User};
    let path = sample("2025-10-02");
    let text = text(&path);
    let got = read(Format::Codex, &path).unwrap();
    let t = &got[0];
    let c = |l: usize| t.nodes.iter().find(|n| n.id == id_of(&text, l)).unwrap().content.clone();
    let expected: &Expected<'_> = &[
        (2, Runtime, System, &c(2)),
        (3, Runtime, User, &c(3)),
        (5, Turn, User, "Please always run clippy before you commit."),
        (7, Turn, Assistant, "Noted: I'll run clippy before every commit."),
        (10, Runtime, System, &c(10)),
        (11, Runtime, User, &c(11)),
        (12, Runtime, User, &c(12)),
        (14, Turn, User, "Let's continue: open a pull request for the upload fix."),
        (16, ToolCall, Assistant, &c(16)),
        (17, ToolResult, Tool, "https://github.com/ada/proj/pull/42\n"),
        (18, Turn, Assistant, "Opened pull request #42 with the upload fix."),
    ];
    assert_nodes(t, &text, "0199a5c0-1111-7222-8333-444455556666", expected);
    assert!(c(12).starts_with("<user_shell_command>"), "a command the user ran is the harness's report");
    // Imported as it stood before the resume, then as it is: one chain.
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join(path.file_name().unwrap());
    std::fs::write(&live, lines(&text, 1, 9)).unwrap();
    let s = SqliteStore::in_memory().unwrap();
    assert_eq!(import(&s, &read(Format::Codex, &live).unwrap()).unwrap().new_nodes, 4);
    std::fs::write(&live, &text).unwrap();
    let after = import(&s, &read(Format::Codex, &live).unwrap()).unwrap();
    assert_eq!((after.nodes, after.new_nodes), (11, 7));
    let session = "0199a5c0-1111-7222-8333-444455556666";
    let resumed = s.node(session, &id_of(&text, 10)).unwrap().unwrap();
    assert_eq!(resumed.parent, Some(id_of(&text, 7)), "the resumed part follows the last answer");
    assert_eq!(s.tips(session).unwrap(), vec![id_of(&text, 18)]);
}

#[test]
fn a_compaction_is_one_runtime_node_and_its_copies_none() {
    use NodeKind::{Runtime, Turn};
    use NodeRole::{Assistant, System, User};
    let path = sample("2025-10-03");
    let text = text(&path);
    let got = read(Format::Codex, &path).unwrap();
    let t = &got[0];
    let env = t.nodes[0].content.clone();
    let expected: &Expected<'_> = &[
        (2, Runtime, User, &env),
        (3, Turn, User, "My name is Ada and I work on the storage team."),
        (5, Turn, Assistant, "Hello Ada! What are you working on today?"),
        (
            6,
            Runtime,
            System,
            "Ada works on the storage team. She introduced herself; nothing else was decided.",
        ),
        (9, Runtime, User, &env),
        (10, Turn, User, "Which team am I on?"),
        (12, Turn, Assistant, "You're on the storage team."),
    ];
    assert_nodes(t, &text, "0199aa00-aaaa-7bbb-8ccc-dddddddddddd", expected);
    assert!(env.starts_with("<environment_context>"));
}

#[test]
fn a_last_line_still_being_written_is_read_next_time() {
    use NodeKind::Turn;
    use NodeRole::{Assistant, User};
    let path = sample("2025-10-04");
    let cut = text(&path);
    assert!(!cut.ends_with('\n'));
    let got = read(Format::Codex, &path).unwrap();
    let expected: &Expected<'_> =
        &[(2, Turn, User, "Hi! Can you check the build?"), (3, Turn, Assistant, "Sure, running it now.")];
    let session = "0199ab00-0000-7000-8000-000000000001";
    assert_nodes(&got[0], &cut, session, expected);
    let s = SqliteStore::in_memory().unwrap();
    import(&s, &got).unwrap();
    // The writer finishes the line: read again, it is the next node.
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join(path.file_name().unwrap());
    let done = format!("{cut}he build passes.\"}}]}}}}\n");
    std::fs::write(&live, &done).unwrap();
    let after = import(&s, &read(Format::Codex, &live).unwrap()).unwrap();
    assert_eq!((after.nodes, after.new_nodes), (3, 1));
    let last = s.node(session, &id_of(&done, 4)).unwrap().unwrap();
    assert_eq!((last.content.as_str(), last.parent), ("The build passes.", Some(id_of(&done, 3))));
    // The same cut bytes ended by a LF are a damaged line, refused with its number.
    std::fs::write(&live, format!("{cut}\n")).unwrap();
    let err = read(Format::Codex, &live).unwrap_err();
    assert_eq!((err.code.as_str(), err.line), ("INVALID_ARGUMENT", Some(4)));
    assert!(err.path.as_deref().is_some_and(|p| p.ends_with(".jsonl")), "{err}");
    // A file cut inside a character is read up to it.
    let mut bytes = lines(&done, 1, 3).into_bytes();
    bytes.extend_from_slice("{\"timestamp\":\"2025-10-04T10:00:09.000Z\",\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"caf".as_bytes());
    bytes.extend_from_slice(&"é".as_bytes()[..1]);
    std::fs::write(&live, bytes).unwrap();
    assert_eq!(read(Format::Codex, &live).unwrap()[0].nodes.len(), 2);
}

#[test]
fn refusals_say_which_line() {
    let dir = tempfile::tempdir().unwrap();
    let ok = r#"{"timestamp":"2025-10-04T10:00:00Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}"#;
    let cases: &[(&str, &str)] = &[
        ("[1,2]", "not a JSON object"),
        (r#"{"timestamp":"2025-10-04T10:00:00Z","payload":{}}"#, "\"type\""),
        (&ok.replace("2025-10-04T10:00:00Z", "yesterday"), "timestamp"),
        (&ok.replace("\"2025-10-04T10:00:00Z\"", "17"), "not a time"),
        ("{\"type\":", "not JSON"),
    ];
    for (i, (bad, why)) in cases.iter().enumerate() {
        let p = dir.path().join(format!("rollout-bad{i}.jsonl"));
        std::fs::write(&p, format!("{ok}\n{bad}\n")).unwrap();
        let err = read(Format::Codex, &p).unwrap_err();
        assert_eq!((err.code.as_str(), err.line), ("INVALID_ARGUMENT", Some(2)), "case {i}: {err}");
        assert!(err.message.contains(why), "case {i}: {err}");
    }
    // Without a session_meta, nor a rollout name, the session is the stem;
    // a line without a time is dated by the file.
    let p = dir.path().join("handmade.jsonl");
    std::fs::write(&p, ok.replace(r#""timestamp":"2025-10-04T10:00:00Z","#, "") + "\n").unwrap();
    let t = read(Format::Codex, &p).unwrap();
    assert_eq!(t[0].session, "handmade");
    assert_ne!(t[0].nodes[0].timestamp, "2025-10-04T10:00:00Z");
    // A piece of a one-document format is refused.
    let piece = Origin { stem: "x", mtime: MTIME, first_line: 2 };
    assert_eq!(read_text(Format::OpenAi, "[]", &piece).unwrap_err().code.as_str(), "INVALID_ARGUMENT");
}

/// Everything a store says about a session, by the ids a whole read gives.
fn snapshot(s: &SqliteStore, session: &str, ids: &[String]) -> (Vec<Option<Node>>, Vec<String>, String) {
    let info = s.session(session).unwrap().unwrap();
    let nodes = ids.iter().map(|id| s.node(session, id).unwrap()).collect();
    (nodes, s.tips(session).unwrap(), format!("{:?} {} {}", info.head, info.seq, info.active_at))
}

/// Reads the file whole into one store, and for every way of cutting it in
/// two at a line boundary, piece by piece into another: same nodes, same
/// store; then one line at a time, and every piece again.
fn pieces_equal_whole(format: Format, path: &Path) {
    let text = text(path);
    let stem = stem(path);
    let whole = read_piece(format, &text, &stem, 1);
    let session = whole[0].session.clone();
    let ids: Vec<String> = whole[0].nodes.iter().map(|n| n.id.clone()).collect();
    let expected = SqliteStore::in_memory().unwrap();
    import(&expected, &whole).unwrap();
    let want = snapshot(&expected, &session, &ids);
    let count = text.lines().count();
    let mut cuts: Vec<Vec<usize>> = (1..count).map(|k| vec![1, k + 1]).collect();
    cuts.push((1..=count).collect());
    for starts in cuts {
        let s = SqliteStore::in_memory().unwrap();
        let mut nodes: Vec<Node> = Vec::new();
        for (i, &from) in starts.iter().enumerate() {
            let to = starts.get(i + 1).map_or(count, |next| next - 1);
            let piece = read_piece(format, &lines(&text, from, to), &stem, from);
            import(&s, &piece).unwrap();
            assert_eq!(import(&s, &piece).unwrap().new_nodes, 0, "a piece again adds nothing");
            nodes.extend(piece.into_iter().flat_map(|t| t.nodes));
        }
        let read_ids: Vec<&String> = nodes.iter().map(|n| &n.id).collect();
        assert_eq!(read_ids, ids.iter().collect::<Vec<_>>(), "cut at {starts:?}: the same nodes");
        assert_eq!(snapshot(&s, &session, &ids), want, "cut at {starts:?}: the same store");
    }
}

#[test]
fn codex_files_read_in_pieces_are_read_whole() {
    for name in ["2025-10-01", "2025-10-02", "2025-10-03", "2025-10-04"] {
        pieces_equal_whole(Format::Codex, &sample(name));
    }
}

#[test]
fn claude_code_files_read_in_pieces_are_read_whole() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code.jsonl");
    pieces_equal_whole(Format::ClaudeCode, &fixture);
}

#[test]
fn a_piece_of_our_jsonl_leaves_its_unfinished_last_line() {
    let line = |id: &str| {
        format!("{{\"session\":\"s\",\"id\":\"{id}\",\"role\":\"user\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"content\":\"{id}\"}}")
    };
    let whole = format!("{}\n{}\n", line("a"), line("b"));
    let cut = &whole[..whole.len() - 10];
    let piece = read_piece(Format::Jsonl, cut, "x", 7);
    assert_eq!(piece[0].nodes.len(), 1, "the cut line is read next time");
    let err =
        read_text(Format::Jsonl, &format!("{cut}\n"), &Origin { stem: "x", mtime: MTIME, first_line: 7 })
            .unwrap_err();
    assert_eq!(err.line, Some(8), "a damaged line is refused with its number in the file");
    // A whole file without its final LF, its last line complete, is read whole.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("no-final-lf.jsonl");
    std::fs::write(&p, whole.trim_end()).unwrap();
    assert_eq!(read(Format::Jsonl, &p).unwrap()[0].nodes.len(), 2);
}
