//! The transaction through the binary (FORMAT.md §6): `update`, `status`,
//! `check` and `promote` as a caller sees them — the round trip, every
//! refusal class writing nothing, the tiers, promotion, real `SIGKILL`s in
//! the middle of commits, concurrent read-modify-write writers, and random
//! invalid patches.
//!
//! The revision is checked against an independent implementation of its
//! definition (SHA-256 over path, NUL, SHA-256 of the bytes).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::topics::ADA;
use crate::{data, error_of, json_lines, run, snapshot};

/// The stable error codes of FORMAT.md §5.
const CODES: [&str; 9] = [
    "INVALID_ARGUMENT",
    "NOT_FOUND",
    "CONFLICT",
    "PERMISSION_DENIED",
    "VALIDATION_FAILED",
    "LOCKED",
    "MEMORY_DISABLED",
    "MODEL_UNAVAILABLE",
    "IO",
];

const ADA_PATH: &str = "topics/people/ada.md";

// The fixture of topics.rs (private there), with its core file renamed: two
// topic files citing the archived test vector; team.md links to ada.md#^a1
// and holds one pending block (it cites the pending record chat/team-1/m6).
// Not `topics/core.md`: rendering core.md loads the o200k_base tokenizer
// (about 0.7 s of CPU in a debug build), and a commit renders it whenever
// the change can touch it — too slow for the kill and concurrency tests,
// and beside their point.
/// `topics/team.md`: the `topics/core.md` of the topic tests, as a project.
fn team() -> String {
    crate::topics::CORE.replacen("kind: core", "kind: project", 1).replacen("# Core", "# Team", 1)
}

fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let input = std::fs::read(data("append-input.jsonl")).unwrap();
    assert!(run(&["archive", "append", "--workspace", w(ws.path())], &input).status.success());
    std::fs::create_dir_all(ws.path().join("topics/people")).unwrap();
    std::fs::write(ws.path().join("topics/team.md"), team()).unwrap();
    std::fs::write(ws.path().join(ADA_PATH), ADA).unwrap();
    fresh_derived(ws.path());
    ws
}

/// Brings the derived views up to date with the files (any writer rebuilds
/// them when they are stale, a refused one included, so a test comparing
/// the workspace around a refusal starts from fresh views).
fn fresh_derived(root: &Path) {
    let out = run(&["render", "--workspace", w(root)], b"");
    assert!(out.status.success(), "render failed: {}", stderr(&out));
}

fn w(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

// ---------------------------------------------------------------------------
// Helpers: the binary's verbs, the independent revision, patch pieces.

fn status(root: &Path) -> Value {
    let out = run(&["status", "--workspace", w(root), "--json"], b"");
    assert!(out.status.success(), "status failed: {}", stderr(&out));
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 1, "status prints one object");
    lines[0].clone()
}

fn revision(root: &Path) -> String {
    let r = status(root)["revision"].as_str().unwrap().to_owned();
    assert!(is_hex64(&r), "{r}");
    r
}

fn is_hex64(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `update --json` with the patch on stdin.
fn update(root: &Path, patch: &str, extra: &[&str]) -> Output {
    let mut args = vec!["update", "--workspace", w(root), "--patch", "-", "--json"];
    args.extend_from_slice(extra);
    run(&args, patch.as_bytes())
}

/// A successful update's `{"revision","changed"}`.
fn updated(root: &Path, patch: &str, extra: &[&str]) -> Value {
    let out = update(root, patch, extra);
    assert!(out.status.success(), "update refused: {}\npatch: {patch}", stderr(&out));
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 1, "update prints one object");
    lines[0].clone()
}

fn history(root: &Path) -> Vec<Value> {
    match std::fs::read(root.join(".scriptorium/history.jsonl")) {
        Ok(b) => json_lines(&b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => panic!("{e}"),
    }
}

fn check(root: &Path) -> (Option<i32>, Vec<Value>) {
    let out = run(&["check", "--workspace", w(root), "--json"], b"");
    (out.status.code(), json_lines(&out.stdout))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every regular file under `dir` (links not followed), with its
/// `/`-separated workspace-relative path.
fn regular_files(root: &Path, rel: &str, out: &mut BTreeMap<Vec<u8>, Vec<u8>>) {
    let Ok(rd) = std::fs::read_dir(root.join(rel)) else { return };
    for e in rd {
        let e = e.unwrap();
        let name = e.file_name().into_string().unwrap();
        let child = format!("{rel}/{name}");
        let ft = e.file_type().unwrap();
        if ft.is_dir() {
            regular_files(root, &child, out);
        } else if ft.is_file() {
            out.insert(child.into_bytes(), std::fs::read(e.path()).unwrap());
        }
    }
}

/// The revision FORMAT.md §6 defines, computed here from the files, with
/// `overrides` (path → new bytes, `None` removed) applied first.
fn expected_revision(root: &Path, overrides: &[(&str, Option<&[u8]>)]) -> String {
    let mut files = BTreeMap::new();
    regular_files(root, "topics", &mut files);
    regular_files(root, "sources", &mut files);
    for (p, b) in overrides {
        match b {
            Some(b) => files.insert(p.as_bytes().to_vec(), b.to_vec()),
            None => files.remove(p.as_bytes()),
        };
    }
    let mut h = Sha256::new();
    for (p, bytes) in &files {
        h.update(p);
        h.update([0u8]);
        h.update(Sha256::digest(bytes));
    }
    hex(&h.finalize())
}

/// A record as `archive append` takes it, in provider `chat`.
fn record(thread: &str, message: &str, content: &str, pending: bool) -> Value {
    let mut r = json!({"provider": "chat", "thread": thread, "message": message, "role": "user",
        "timestamp": "2026-08-10T09:00:00Z", "speaker_id": "7391", "speaker_display": "Ada",
        "content": content});
    if pending {
        r["pending"] = true.into();
    }
    r
}

/// An evidence definition citing `chat/<thread>/<message>`; `up` leads
/// from the topic file's folder to the workspace root (`../` per level).
fn footnote(label: &str, thread: &str, message: &str, up: &str) -> String {
    let id = format!("chat/{thread}/{message}");
    let anchor = scriptorium::archive::id::anchor_hash(id.as_bytes());
    format!(
        "[^{label}]: Time: `2026-08-10T09:00:00Z`; Sources: [{id}]({up}sources/chat/_v2/{thread}.md#source-{anchor})"
    )
}

/// A block citing `label`, and its definition citing chat/team-1/m1
/// (archived, trusted), as appended to a file in `topics/people/`.
fn appended_block(text: &str, label: &str, id: &str) -> String {
    format!("\n{text}[^{label}] ^{id}\n\n{}\n", footnote(label, "team-1", "m1", "../../"))
}

fn patch(base: &str, sources: Vec<Value>, edits: Vec<Value>) -> String {
    json!({"base_revision": base, "message": "test", "sources": sources, "edits": edits}).to_string()
}

fn create(path: &str, content: &str) -> Value {
    json!({"op": "create", "path": path, "content": content})
}

fn append(path: &str, content: &str) -> Value {
    json!({"op": "append", "path": path, "content": content})
}

fn replace(path: &str, content: &str) -> Value {
    json!({"op": "replace", "path": path, "content": content})
}

fn str_replace(path: &str, old: &str, new: &str) -> Value {
    json!({"op": "str_replace", "path": path, "old": old, "new": new})
}

fn delete(path: &str) -> Value {
    json!({"op": "delete", "path": path})
}

type Snapshot = BTreeMap<PathBuf, Vec<u8>>;

/// Names the paths that differ, rather than printing whole files.
fn assert_same(before: &Snapshot, after: &Snapshot, what: &str) {
    if before == after {
        return;
    }
    let mut diff = Vec::new();
    for (p, b) in before {
        match after.get(p) {
            None => diff.push(format!("removed {}", p.display())),
            Some(a) if a != b => diff.push(format!("changed {}", p.display())),
            _ => {}
        }
    }
    for p in after.keys().filter(|p| !before.contains_key(*p)) {
        diff.push(format!("added {}", p.display()));
    }
    panic!("{what}: the workspace changed: {diff:?}");
}

/// Runs an update that must be refused with `code`: one error object on
/// stderr, nothing on stdout, no byte changed outside `.scriptorium/`, no
/// history line.
fn refused(root: &Path, patch: &str, extra: &[&str], code: &str) -> Value {
    let before = snapshot(root);
    let lines = history(root).len();
    let out = update(root, patch, extra);
    let err = error_of(&out);
    assert_eq!(err["code"], code, "patch {patch:?}\nerror {err}");
    assert!(err["message"].as_str().is_some_and(|m| !m.is_empty()), "{err}");
    assert!(out.stdout.is_empty(), "a refusal printed a result");
    assert_same(&before, &snapshot(root), &format!("refused with {code}: {patch:?}"));
    assert_eq!(history(root).len(), lines, "a refusal wrote a history line");
    err
}

// ---------------------------------------------------------------------------
// 1. The round trip.

#[test]
fn an_update_round_trips_through_status_history_and_search() {
    let ws = workspace();
    let root = ws.path();
    let rev0 = revision(root);
    assert_eq!(rev0, expected_revision(root, &[]), "status reports FORMAT.md §6's revision");
    let hist0 = history(root);

    let content = format!(
        "# Garden\n\nThe garden needs twelve marigolds.[^e-0a0b0c0d0e] ^g1\n\n{}\n",
        footnote("e-0a0b0c0d0e", "garden", "g1", "../../")
    );
    let p = json!({"base_revision": rev0, "message": "remember the garden",
        "sources": [record("garden", "g1", "order twelve marigolds for the garden", false)],
        "edits": [create("topics/projects/garden.md", &content)]});
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("patch.json");
    std::fs::write(&file, p.to_string()).unwrap();
    let out = run(&["update", "--workspace", w(root), "--patch", w(&file), "--json"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    // No warning (the index and views were rebuilt) and no error object.
    let err = stderr(&out);
    assert!(!err.lines().any(|l| l.starts_with("warning:") || l.starts_with("{\"error\"")), "{err}");
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 1);
    let keys: Vec<&String> = lines[0].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["changed", "revision"]);
    assert_eq!(lines[0]["changed"], json!(["sources/chat/_v2/garden.md", "topics/projects/garden.md"]));
    let rev1 = lines[0]["revision"].as_str().unwrap().to_owned();
    assert!(is_hex64(&rev1));
    assert_ne!(rev1, rev0);

    // status agrees, and so does the definition.
    assert_eq!(revision(root), rev1);
    assert_eq!(expected_revision(root, &[]), rev1);
    assert_eq!(std::fs::read_to_string(root.join("topics/projects/garden.md")).unwrap(), content);
    let dump = run(&["archive", "dump", w(&root.join("sources/chat/_v2/garden.md")), "--json"], b"");
    let recs = json_lines(&dump.stdout);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0]["source_id"], "chat/garden/g1");
    assert_eq!(recs[0]["content"], "order twelve marigolds for the garden");

    // Exactly one history line, describing this transaction.
    let hist = history(root);
    assert_eq!(hist.len(), hist0.len() + 1);
    assert_eq!(hist[..hist0.len()], hist0[..], "earlier history lines are kept");
    let h = hist.last().unwrap();
    assert_eq!(h["revision_before"], rev0.as_str());
    assert_eq!(h["revision_after"], rev1.as_str());
    assert_eq!(h["tier"], "owner");
    assert_eq!(h["message"], "remember the garden");
    assert_eq!(h["changed"], lines[0]["changed"]);
    assert_eq!(h["sources_appended"], 1);

    // search finds the new block (and the new record).
    let out = run(&["search", "marigolds", "--workspace", w(root), "--json"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    let hits = json_lines(&out.stdout);
    let block = hits.iter().find(|h| h["kind"] == "topic").expect("a topic hit");
    assert_eq!(block["block_id"], "g1");
    assert_eq!(block["path"], "topics/projects/garden.md");
    assert_eq!(block["trust"], "trusted");
    assert!(hits.iter().any(|h| h["kind"] == "source" && h["source_id"] == "chat/garden/g1"), "{hits:?}");

    // The same patch again is stale; a patch that changes nothing changes
    // nothing and writes no history.
    refused(root, &p.to_string(), &[], "CONFLICT");
    let same = updated(root, &patch(&rev1, vec![], vec![str_replace(ADA_PATH, "50k", "50k")]), &[]);
    assert_eq!(same, json!({"revision": rev1, "changed": []}));
    assert_eq!(history(root).len(), hist.len());
    assert_eq!(revision(root), rev1);
}

// ---------------------------------------------------------------------------
// 2. Refusals write nothing.

#[test]
fn every_refusal_leaves_the_workspace_byte_identical() {
    let ws = workspace();
    let root = ws.path();
    let rev = revision(root);
    let new_src = || vec![record("fresh", "f1", "a fresh record that must not be archived", false)];
    let good_block = appended_block("Ada prefers tea.", "e-00000000aa", "t1");

    // Stale base: CONFLICT (and it wins over NOT_FOUND and VALIDATION_FAILED).
    let stale = "0".repeat(64);
    refused(root, &patch(&stale, new_src(), vec![append(ADA_PATH, &good_block)]), &[], "CONFLICT");
    refused(root, &patch(&stale, vec![], vec![append("topics/missing.md", "x")]), &[], "CONFLICT");
    refused(root, &patch(&"0".repeat(64), vec![], vec![append(ADA_PATH, &good_block)]), &[], "CONFLICT");

    // create on an existing path: CONFLICT; the sources of the patch are
    // not archived either.
    let err = refused(root, &patch(&rev, new_src(), vec![create(ADA_PATH, ADA)]), &[], "CONFLICT");
    assert!(!root.join("sources/chat/_v2/fresh.md").exists());
    assert_eq!(err["path"], ADA_PATH);

    // Any other op on a missing path: NOT_FOUND.
    for e in
        [append("topics/missing.md", "x"), replace("topics/missing.md", "x"), delete("topics/missing.md")]
    {
        refused(root, &patch(&rev, new_src(), vec![e]), &[], "NOT_FOUND");
    }
    refused(root, &patch(&rev, vec![], vec![str_replace("topics/missing.md", "a", "b")]), &[], "NOT_FOUND");
    // A missing `old`; a later edit failing undoes the earlier ones.
    refused(root, &patch(&rev, vec![], vec![str_replace(ADA_PATH, "60k", "70k")]), &[], "NOT_FOUND");
    refused(
        root,
        &patch(&rev, new_src(), vec![append(ADA_PATH, &good_block), delete("topics/missing.md")]),
        &[],
        "NOT_FOUND",
    );
    // A `str_replace` sees the previous edits of the same patch: deleted,
    // the file is missing for the next edit.
    refused(
        root,
        &patch(&rev, vec![], vec![delete(ADA_PATH), str_replace(ADA_PATH, "Ada", "Bo")]),
        &[],
        "NOT_FOUND",
    );
    // NOT_FOUND wins over VALIDATION_FAILED.
    refused(
        root,
        &patch(
            &rev,
            vec![],
            vec![create("topics/bad.md", "no citation ^x1\n"), append("topics/gone.md", "x")],
        ),
        &[],
        "NOT_FOUND",
    );

    // An empty `old`: INVALID_ARGUMENT, at edits[0].old.
    let err =
        refused(root, &patch(&rev, vec![], vec![str_replace(ADA_PATH, "", "x")]), &[], "INVALID_ARGUMENT");
    assert_eq!(err["path"], "edits[0].old");

    // Bad paths: INVALID_ARGUMENT with the JSON location, whatever the op,
    // and even with a stale base (decided before the lock).
    for bad in [
        "../x.md",
        "/abs.md",
        "topics/a.txt",
        "sources/x.md",
        "topics//a.md",
        "topics\\a.md",
        "topics/a\0b.md",
    ] {
        for e in [create(bad, "x"), append(bad, "x"), delete(bad)] {
            let err = refused(root, &patch(&rev, vec![], vec![e]), &[], "INVALID_ARGUMENT");
            assert_eq!(err["path"], "edits[0].path", "{bad:?}");
        }
        let err = refused(
            root,
            &patch(&stale, vec![], vec![append(ADA_PATH, &good_block), create(bad, "x")]),
            &[],
            "INVALID_ARGUMENT",
        );
        assert_eq!(err["path"], "edits[1].path", "{bad:?}");
    }
    // Other shapes: malformed JSON, unknown keys and ops, a bad record.
    for text in [
        "{".to_owned(),
        String::new(),
        "[]".to_owned(),
        format!(r#"{{"base_revision":"{rev}","edits":[{{"op":"chmod","path":"{ADA_PATH}"}}]}}"#),
        format!(
            r#"{{"base_revision":"{rev}","edits":[{{"op":"append","path":"{ADA_PATH}","content":"x","mode":1}}]}}"#
        ),
        format!(r#"{{"base_revision":"{rev}","extra":1}}"#),
        r#"{"message":"no base revision"}"#.to_owned(),
        format!(r#"{{"base_revision":"{rev}","sources":[{{"provider":"chat"}}]}}"#),
    ] {
        refused(root, &text, &[], "INVALID_ARGUMENT");
    }
    // A twin (case) of an existing folder, or of another path of the patch.
    refused(root, &patch(&rev, vec![], vec![create("topics/People/x.md", "x")]), &[], "INVALID_ARGUMENT");
    refused(
        root,
        &patch(&rev, vec![], vec![create("topics/n/a.md", "x"), create("topics/N/a.md", "y")]),
        &[],
        "INVALID_ARGUMENT",
    );

    // The paired tier: replace, str_replace and delete are refused, even on
    // a file the same patch creates; INVALID_ARGUMENT wins over them.
    let paired = ["--tier", "paired"];
    for e in [replace(ADA_PATH, ADA), str_replace(ADA_PATH, "50k", "60k"), delete(ADA_PATH)] {
        let err = refused(root, &patch(&rev, vec![], vec![e]), &paired, "PERMISSION_DENIED");
        assert_eq!(err["path"], "edits[0]");
    }
    let created = format!("# P\n{}", appended_block("Paired note.", "e-00000000ab", "p1"));
    refused(
        root,
        &patch(&rev, vec![], vec![create("topics/p.md", &created), replace("topics/p.md", &created)]),
        &paired,
        "PERMISSION_DENIED",
    );
    refused(root, &patch(&rev, vec![], vec![replace("../x.md", "x")]), &paired, "INVALID_ARGUMENT");
    refused(
        root,
        &patch(&rev, vec![], vec![delete(ADA_PATH), create("/abs.md", "x")]),
        &paired,
        "INVALID_ARGUMENT",
    );
    refused(root, &patch(&rev, vec![], vec![str_replace(ADA_PATH, "", "x")]), &paired, "INVALID_ARGUMENT");
    // PERMISSION_DENIED wins over CONFLICT (decided before the lock).
    refused(root, &patch(&stale, vec![], vec![delete(ADA_PATH)]), &paired, "PERMISSION_DENIED");

    // A block citing a record that is not archived: VALIDATION_FAILED with
    // every diagnostic listed.
    let unknown = format!(
        "# X\n\nCites nothing real.[^e-00000000ac] ^x1\n\n{}\n",
        footnote("e-00000000ac", "team-1", "m404", "../")
    );
    let err = refused(
        root,
        &patch(&rev, new_src(), vec![create("topics/x.md", &unknown)]),
        &[],
        "VALIDATION_FAILED",
    );
    let diags = err["diagnostics"].as_array().expect("error.diagnostics");
    assert_eq!(diags.len(), 1, "{err}");
    assert_eq!(diags[0]["code"], "UNKNOWN_SOURCE");
    assert_eq!(diags[0]["path"], "topics/x.md");
    assert_eq!(diags[0]["line"], 5);
    // A record archived by the same patch but cited with the wrong anchor.
    let wrong_anchor = unknown.replace("m404", "f1");
    let err = refused(
        root,
        &patch(&rev, new_src(), vec![create("topics/x.md", &wrong_anchor)]),
        &[],
        "VALIDATION_FAILED",
    );
    assert_eq!(err["diagnostics"][0]["code"], "UNKNOWN_SOURCE");

    // A block id already used in another file: both occurrences reported.
    let dup = format!("# D\n{}", appended_block("Same id as Ada's.", "e-00000000ad", "a1"));
    let err = refused(
        root,
        &patch(&rev, vec![], vec![create("topics/people/dup.md", &dup)]),
        &[],
        "VALIDATION_FAILED",
    );
    let mut places: Vec<(String, String)> = err["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["code"].as_str().unwrap().to_owned(), d["path"].as_str().unwrap().to_owned()))
        .collect();
    places.sort();
    assert_eq!(
        places,
        [
            ("DUPLICATE_BLOCK_ID".to_owned(), ADA_PATH.to_owned()),
            ("DUPLICATE_BLOCK_ID".to_owned(), "topics/people/dup.md".to_owned())
        ],
        "{err}"
    );

    // A change that breaks a link in a file it does not touch: team.md
    // links to ada.md#^a1.
    let err = refused(root, &patch(&rev, vec![], vec![delete(ADA_PATH)]), &[], "VALIDATION_FAILED");
    assert_eq!(err["diagnostics"][0]["code"], "BROKEN_LINK", "{err}");
    assert_eq!(err["diagnostics"][0]["path"], "topics/team.md");
    let err = refused(
        root,
        &patch(&rev, vec![], vec![str_replace(ADA_PATH, "^a1", "^a2")]),
        &[],
        "VALIDATION_FAILED",
    );
    assert_eq!(err["diagnostics"][0]["code"], "BROKEN_LINK", "{err}");

    // After all that, the workspace is as it was and takes a valid patch.
    assert_eq!(revision(root), rev);
    let ok = updated(root, &patch(&rev, new_src(), vec![append(ADA_PATH, &good_block)]), &[]);
    assert_eq!(ok["changed"], json!(["sources/chat/_v2/fresh.md", ADA_PATH]));
}

#[test]
fn a_problem_left_by_hand_elsewhere_does_not_block_unrelated_writes() {
    let ws = workspace();
    let root = ws.path();
    // By hand: an uncited block and a broken link in one file, an uncited
    // block in ada.md itself.
    std::fs::write(
        root.join("topics/notes.md"),
        "A note without evidence. ^n1\n\nSee [[nowhere#^zz]]. ^n2\n",
    )
    .unwrap();
    std::fs::write(root.join(ADA_PATH), format!("{ADA}\nAlso uncited. ^a9\n")).unwrap();
    let (code, lines) = check(root);
    assert_eq!(code, Some(1));
    assert_eq!(lines.last().unwrap()["errors"], 4, "{lines:?}");
    fresh_derived(root);
    let rev = revision(root);

    // An unrelated write, and a write to the file holding a problem (which
    // moves its lines), are both accepted.
    let block = format!("# Tea\n{}", appended_block("Ada likes green tea.", "e-00000000b1", "t1"));
    let c = updated(root, &patch(&rev, vec![], vec![create("topics/people/tea.md", &block)]), &[]);
    let rev = c["revision"].as_str().unwrap().to_owned();
    let c = updated(
        root,
        &patch(
            &rev,
            vec![],
            vec![str_replace(
                ADA_PATH,
                "# Ada\n",
                &format!("# Ada\n{}", appended_block("Moved.", "e-00000000b2", "t2")),
            )],
        ),
        &[],
    );
    let rev = c["revision"].as_str().unwrap().to_owned();
    // A write adding one more problem is refused, listing only the new one.
    let err = refused(
        root,
        &patch(&rev, vec![], vec![append("topics/notes.md", "\nAnother uncited. ^n3\n")]),
        &[],
        "VALIDATION_FAILED",
    );
    let diags = err["diagnostics"].as_array().unwrap();
    assert_eq!(diags.len(), 1, "{err}");
    assert_eq!(diags[0]["code"], "UNCITED_BLOCK");
    assert_eq!(diags[0]["block_id"], "n3");
    // Fixing the hand-made problems is accepted too.
    let fixed = format!(
        "# Notes\n\nA note with evidence.[^e-00000000b3] ^n1\n\n{}\n",
        footnote("e-00000000b3", "team-1", "m1", "../")
    );
    let c = updated(root, &patch(&rev, vec![], vec![replace("topics/notes.md", &fixed)]), &[]);
    let rev = c["revision"].as_str().unwrap().to_owned();
    updated(root, &patch(&rev, vec![], vec![str_replace(ADA_PATH, "\nAlso uncited. ^a9\n", "")]), &[]);
    let (code, lines) = check(root);
    assert_eq!(code, Some(0), "{lines:?}");
}

/// An edit path that goes through an existing regular file as if it were a
/// folder is a bad argument (FORMAT.md §6), not an I/O failure.
#[test]
fn a_path_through_a_file_is_an_invalid_argument() {
    let ws = workspace();
    let root = ws.path();
    let rev = revision(root);
    for e in [create("topics/people/ada.md/x.md", "x"), append("topics/people/ada.md/x.md", "x")] {
        let err = refused(root, &patch(&rev, vec![], vec![e]), &[], "INVALID_ARGUMENT");
        assert_eq!(err["path"], "edits[0].path");
    }
}

/// Links and twins on disk are `INVALID_ARGUMENT`, which wins over the
/// paired tier's `PERMISSION_DENIED` (docs/transactions.md, "Which refusal
/// wins").
#[cfg(unix)]
#[test]
fn a_twin_or_a_link_wins_over_the_paired_tier() {
    let ws = workspace();
    let root = ws.path();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("topics/out")).unwrap();
    let rev = revision(root);
    for bad in ["topics/People/x.md", "topics/out/x.md"] {
        let err = refused(
            root,
            &patch(&rev, vec![], vec![delete(ADA_PATH), create(bad, "x")]),
            &["--tier", "paired"],
            "INVALID_ARGUMENT",
        );
        assert_eq!(err["path"], "edits[1].path");
    }
}

#[cfg(unix)]
#[test]
fn edits_never_go_through_a_link() {
    let ws = workspace();
    let root = ws.path();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("victim.md"), "outside\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("topics/out")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("victim.md"), root.join("topics/alias.md")).unwrap();
    std::os::unix::fs::symlink(root.join("topics/people"), root.join("topics/inside")).unwrap();
    let rev = revision(root);
    let block = format!("# O\n{}", appended_block("Written outside?", "e-00000000c1", "o1"));
    let outside_before = snapshot(outside.path());
    for e in [
        create("topics/out/x.md", &block),
        create("topics/out/sub/x.md", &block),
        append("topics/out/victim.md", &block),
        append("topics/alias.md", &block),
        replace("topics/alias.md", &block),
        delete("topics/alias.md"),
        append("topics/inside/ada.md", &block),
    ] {
        let err = refused(root, &patch(&rev, vec![], vec![e.clone()]), &[], "INVALID_ARGUMENT");
        assert_eq!(err["path"], "edits[0].path", "{e}");
        assert_same(&outside_before, &snapshot(outside.path()), &format!("{e}"));
    }
    // A provider folder of the archive that is a link is never written through.
    std::fs::create_dir_all(outside.path().join("_v2")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("sources/evil")).unwrap();
    let outside_before = snapshot(outside.path());
    let before = snapshot(root);
    let rec = json!({"provider": "evil", "thread": "t", "message": "m", "role": "user",
        "timestamp": "2026-08-10T09:00:00Z", "content": "through a link"});
    let out = update(root, &patch(&revision(root), vec![rec], vec![]), &[]);
    let err = error_of(&out);
    assert!(CODES.contains(&err["code"].as_str().unwrap()), "{err}");
    assert_same(&outside_before, &snapshot(outside.path()), "archiving through a link");
    assert_same(&before, &snapshot(root), "archiving through a link");
}

#[test]
fn a_held_lock_refuses_with_locked_and_writes_nothing() {
    let ws = workspace();
    let root = ws.path();
    let rev = revision(root);
    let good =
        patch(&rev, vec![], vec![append(ADA_PATH, &appended_block("Locked out.", "e-00000000d1", "l1"))]);
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(root.join(".scriptorium/write.lock"))
        .unwrap();
    lock.try_lock().expect("nobody else holds the lock");
    let start = Instant::now();
    refused(root, &good, &["--timeout-ms", "100"], "LOCKED");
    assert!(start.elapsed() >= Duration::from_millis(100), "it waited for the timeout");
    // LOCKED wins over CONFLICT; INVALID_ARGUMENT and PERMISSION_DENIED win over LOCKED.
    let stale = patch(&"0".repeat(64), vec![], vec![append(ADA_PATH, "x")]);
    refused(root, &stale, &["--timeout-ms", "100"], "LOCKED");
    refused(
        root,
        &patch(&rev, vec![], vec![create("../x.md", "x")]),
        &["--timeout-ms", "100"],
        "INVALID_ARGUMENT",
    );
    refused(
        root,
        &patch(&rev, vec![], vec![delete(ADA_PATH)]),
        &["--timeout-ms", "100", "--tier", "paired"],
        "PERMISSION_DENIED",
    );
    // The other writers wait too.
    let before = snapshot(root);
    let out = run(&["check", "--workspace", w(root), "--json", "--timeout-ms", "100"], b"");
    assert_eq!(error_of(&out)["code"], "LOCKED");
    let out = run(&["promote", "--workspace", w(root), "chat/team-1/m6", "--timeout-ms", "100"], b"");
    assert_eq!(error_of(&out)["code"], "LOCKED");
    let out = run(&["render", "--workspace", w(root), "--timeout-ms", "100"], b"");
    assert_eq!(error_of(&out)["code"], "LOCKED");
    assert_same(&before, &snapshot(root), "refused writers");
    assert!(!root.join(".scriptorium/audit.jsonl").exists());
    drop(lock);
    assert_eq!(revision(root), rev);
    // Released: the same patch goes through.
    updated(root, &good, &["--timeout-ms", "100"]);
}

// ---------------------------------------------------------------------------
// 3. The paired tier creates and appends.

#[test]
fn the_paired_tier_may_create_and_append() {
    let ws = workspace();
    let root = ws.path();
    let rev = revision(root);
    let content = format!("# Paired\n{}", appended_block("A paired note.", "e-00000000e1", "pa1"));
    let more = appended_block("Another paired note.", "e-00000000e2", "pa2");
    let mut spoken = record("paired", "q1", "a paired source", true);
    let edits =
        || vec![create("topics/people/paired.md", &content), append("topics/people/paired.md", &more)];
    // A paired caller never names who spoke: a speaker it wrote would be
    // archived as a trusted identity.
    let err =
        refused(root, &patch(&rev, vec![spoken.clone()], edits()), &["--tier", "paired"], "INVALID_ARGUMENT");
    assert_eq!(err["path"], "sources[0].speaker_id", "{err}");
    spoken["speaker_id"] = Value::Null;
    let err =
        refused(root, &patch(&rev, vec![spoken.clone()], edits()), &["--tier", "paired"], "INVALID_ARGUMENT");
    assert_eq!(err["path"], "sources[0].speaker_display", "{err}");
    spoken["speaker_display"] = Value::Null;
    let c = updated(
        root,
        &patch(
            &rev,
            vec![spoken],
            vec![create("topics/people/paired.md", &content), append("topics/people/paired.md", &more)],
        ),
        &["--tier", "paired"],
    );
    assert_eq!(c["changed"], json!(["sources/chat/_v2/paired.md", "topics/people/paired.md"]));
    assert_eq!(
        std::fs::read_to_string(root.join("topics/people/paired.md")).unwrap(),
        format!("{content}{more}")
    );
    let rev = c["revision"].as_str().unwrap().to_owned();
    let more = appended_block("Appended to Ada by a paired writer.", "e-00000000e3", "pa3");
    let c = updated(root, &patch(&rev, vec![], vec![append(ADA_PATH, &more)]), &["--tier", "paired"]);
    assert_eq!(revision(root), c["revision"].as_str().unwrap());
    let hist = history(root);
    assert_eq!(
        hist[hist.len() - 2..].iter().map(|h| h["tier"].clone()).collect::<Vec<_>>(),
        ["paired", "paired"]
    );
    assert_eq!(std::fs::read_to_string(root.join(ADA_PATH)).unwrap(), format!("{ADA}{more}"));
    let (code, lines) = check(root);
    assert_eq!(code, Some(0), "{lines:?}");
}

// ---------------------------------------------------------------------------
// 4. Promotion.

fn search_ids(root: &Path, query: &str, pending: bool) -> Vec<String> {
    let mut args = vec!["search", query, "--workspace", w(root), "--json", "--kind", "topic"];
    if pending {
        args.push("--include-pending");
    }
    let out = run(&args, b"");
    assert!(out.status.success(), "{}", stderr(&out));
    json_lines(&out.stdout).iter().map(|h| h["block_id"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn promotion_trusts_a_pending_source_without_touching_the_archive() {
    let ws = workspace();
    let root = ws.path();
    let s0 = status(root);
    let rev = s0["revision"].as_str().unwrap().to_owned();
    let block = format!(
        "# Shed\n\nThe shed key is under the blue flowerpot.[^e-00000000f1] ^s1\n\n{}\n",
        footnote("e-00000000f1", "inbox", "p1", "../../")
    );
    let c = updated(
        root,
        &patch(
            &rev,
            vec![record("inbox", "p1", "the shed key is under the blue flowerpot", true)],
            vec![create("topics/people/shed.md", &block)],
        ),
        &[],
    );
    let rev = c["revision"].as_str().unwrap().to_owned();
    let s1 = status(root);
    assert_eq!(s1["pending_sources"], s0["pending_sources"].as_u64().unwrap() + 1, "{s1}");
    assert_eq!(s1["pending_blocks"], s0["pending_blocks"].as_u64().unwrap() + 1, "{s1}");
    assert_eq!(s1["diagnostics"], 0, "a pending block is not a diagnostic");
    assert!(!search_ids(root, "flowerpot", false).contains(&"s1".to_owned()));
    assert!(search_ids(root, "flowerpot", true).contains(&"s1".to_owned()), "the block is indexed");

    let archive = root.join("sources/chat/_v2/inbox.md");
    let archived = std::fs::read(&archive).unwrap();
    let out = run(&["promote", "--workspace", w(root), "chat/inbox/p1", "--json"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        json_lines(&out.stdout),
        [json!({"promoted": ["chat/inbox/p1"], "already_trusted": [], "revision": rev,
            "written": {"batches": 0, "records": 0, "changed": []}})],
        "a block cites the record already: nothing to write"
    );
    let audit = json_lines(&std::fs::read(root.join(".scriptorium/audit.jsonl")).unwrap());
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0]["action"], "promote");
    assert_eq!(audit[0]["who"], "owner", "the actor is under `who` (FORMAT §6)");
    assert!(audit[0].get("by").is_none(), "{}", audit[0]);
    assert_eq!(audit[0]["sources"], json!(["chat/inbox/p1"]));
    assert_eq!(std::fs::read(&archive).unwrap(), archived, "promotion never rewrites the archive");
    assert_eq!(revision(root), rev, "promotion does not change the revision");
    let s2 = status(root);
    assert_eq!(s2["pending_sources"], s0["pending_sources"], "{s2}");
    assert_eq!(s2["pending_blocks"], s0["pending_blocks"], "{s2}");
    assert!(search_ids(root, "flowerpot", false).contains(&"s1".to_owned()));
    // The record's hit and its memory_get say trusted now (the archived
    // flag stays as written).
    let out = run(&["search", "flowerpot", "--workspace", w(root), "--kind", "source", "--json"], b"");
    let hits = json_lines(&out.stdout);
    assert_eq!(hits.len(), 1, "{}", stderr(&out));
    assert_eq!(hits[0]["trust"], "trusted", "{hits:?}");
    let caller =
        scriptorium::tools::Caller { tier: scriptorium::transaction::Tier::Paired, interactive: false };
    let got =
        scriptorium::tools::call_tool(root, "memory_get", &json!({"source_id": "chat/inbox/p1"}), &caller)
            .unwrap();
    assert_eq!(got["trust"], "trusted", "{got}");
    let out = run(&["archive", "dump", archive.to_str().unwrap(), "--json"], b"");
    assert_eq!(json_lines(&out.stdout).last().unwrap()["trust"], "pending", "the file as archived");

    // Again: already trusted, no audit line. Unknown ids: NOT_FOUND, and
    // nothing is promoted with them.
    let out = run(&["promote", "--workspace", w(root), "chat/inbox/p1", "--json"], b"");
    assert_eq!(json_lines(&out.stdout)[0]["already_trusted"], json!(["chat/inbox/p1"]));
    let before = snapshot(root);
    for ids in [&["chat/inbox/nope"][..], &["chat/team-1/m6", "chat/inbox/nope"], &["chat/nowhere/x"]] {
        let mut args = vec!["promote", "--workspace", w(root), "--json"];
        args.extend_from_slice(ids);
        let err = error_of(&run(&args, b""));
        assert_eq!(err["code"], "NOT_FOUND", "{ids:?}");
    }
    assert_same(&before, &snapshot(root), "refused promotions");
    assert_eq!(json_lines(&std::fs::read(root.join(".scriptorium/audit.jsonl")).unwrap()).len(), 1);
    assert_eq!(status(root)["pending_sources"], s0["pending_sources"]);
}

// ---------------------------------------------------------------------------
// 5. check.

#[test]
fn check_prints_a_summary_and_exits_1_on_errors() {
    let ws = workspace();
    let root = ws.path();
    let rev = revision(root);
    let (code, lines) = check(root);
    assert_eq!(code, Some(0));
    assert_eq!(lines, [json!({"ok": true, "errors": 0, "revision": rev, "recovered": "nothing"})]);

    // A hand edit drops the citation of a block.
    std::fs::write(root.join(ADA_PATH), ADA.replace("50k.[^e-1175dea39c] ^a1", "50k. ^a1")).unwrap();
    let (code, lines) = check(root);
    assert_eq!(code, Some(1));
    let summary = lines.last().unwrap();
    assert_eq!(summary["ok"], false);
    let errors = summary["errors"].as_u64().unwrap();
    assert!(errors > 0);
    assert_eq!(lines.len() as u64, errors + 1, "one line per diagnostic, then the summary");
    assert!(lines[..lines.len() - 1].iter().any(|d| d["code"] == "UNCITED_BLOCK" && d["path"] == ADA_PATH));
    assert_eq!(summary["revision"], revision(root).as_str());
    assert_ne!(summary["revision"], rev.as_str());
}

// ---------------------------------------------------------------------------
// 6. Real kills.

/// SplitMix64: a small seeded generator.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn staging_left(root: &Path) -> Vec<String> {
    std::fs::read_dir(root.join(".scriptorium/tmp"))
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("tx-"))
                .collect()
        })
        .unwrap_or_default()
}

/// Copies `topics/` and `sources/` of `root` into a fresh folder: a
/// workspace at the same revision, to learn what a patch produces.
fn shadow_of(root: &Path) -> tempfile::TempDir {
    let shadow = tempfile::tempdir().unwrap();
    let mut files = BTreeMap::new();
    regular_files(root, "topics", &mut files);
    regular_files(root, "sources", &mut files);
    for (p, bytes) in files {
        let to = shadow.path().join(String::from_utf8(p).unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(to, bytes).unwrap();
    }
    shadow
}

/// The derived views of a workspace (everything outside `topics/`,
/// `sources/` and `.scriptorium/`), by workspace-relative path.
fn derived_views(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    snapshot(root)
        .into_iter()
        .map(|(p, b)| (p.strip_prefix(root).unwrap().to_path_buf(), b))
        .filter(|(p, _)| !p.starts_with("topics") && !p.starts_with("sources"))
        .collect()
}

fn read_opt(p: &Path) -> Option<Vec<u8>> {
    match std::fs::read(p) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => panic!("{}: {e}", p.display()),
    }
}

/// Each trial's patch changes two files — it archives a new record in
/// `sources/chat/_v2/kills.md` and appends a block citing it to ada.md — so
/// a kill between the two renames would show as a mixture without the
/// intent record and its recovery.
#[cfg(unix)]
#[test]
#[allow(clippy::print_stderr)]
fn killed_updates_leave_the_old_revision_or_the_new_one() {
    use std::os::unix::process::ExitStatusExt;

    let seed: u64 =
        std::env::var("SCRIPTORIUM_KILL_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5C21_2026);
    let mut rng = SplitMix64(seed);
    let ws = workspace();
    let root = ws.path();
    let archive = "sources/chat/_v2/kills.md";
    let dir = tempfile::tempdir().unwrap();
    let patch_file = dir.path().join("patch.json");
    let spawn = |root: &Path, patch: &str| {
        std::fs::write(&patch_file, patch).unwrap();
        Command::new(env!("CARGO_BIN_EXE_scriptorium"))
            .args(["update", "--workspace", w(root), "--patch", w(&patch_file), "--json"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let trial_patch = |t: u64, base: &str| {
        let label = format!("e-{:010x}", 0x10_0000 + t);
        let message = format!("k{t}");
        let content = format!(
            "\nKilled trial {t} fact.[^{label}] ^k{t}\n\n{}\n",
            footnote(&label, "kills", &message, "../../")
        );
        patch(
            base,
            vec![record("kills", &message, &format!("trial {t}"), false)],
            vec![append(ADA_PATH, &content)],
        )
    };

    // How long a whole update takes here and now, spawn to exit.
    let mut took = Vec::new();
    for t in 0..5 {
        let p = trial_patch(1000 + t, &revision(root));
        let start = Instant::now();
        let out = spawn(root, &p).wait_with_output().unwrap();
        took.push(start.elapsed());
        assert!(out.status.success(), "{}", stderr(&out));
    }
    took.sort();
    let span_us = u64::try_from((took[2] * 3 / 2).as_micros()).unwrap().max(2_000);

    let trials = 100;
    let (mut kept, mut installed, mut acknowledged) = (0, 0, 0);
    let (mut found_intent, mut found_staging) = (0, 0);
    let mut recovered: BTreeMap<String, usize> = BTreeMap::new();
    let started = Instant::now();
    let mut current = revision(root);
    for t in 0..trials {
        let ctx = format!("trial {t} (seed {seed}, kill within {span_us} µs)");
        let before = current.clone();
        let old = (read_opt(&root.join(ADA_PATH)), read_opt(&root.join(archive)));
        let hist = history(root);
        let views = derived_views(root);
        let p = trial_patch(t, &before);
        // What the patch produces, from a copy at the same revision.
        let shadow = shadow_of(root);
        assert_eq!(expected_revision(shadow.path(), &[]), before, "{ctx}: the copy");
        let after = updated(shadow.path(), &p, &[])["revision"].as_str().unwrap().to_owned();
        assert_eq!(expected_revision(shadow.path(), &[]), after, "{ctx}: the revision is FORMAT.md's");
        let new = (read_opt(&shadow.path().join(ADA_PATH)), read_opt(&shadow.path().join(archive)));
        let new_views = derived_views(shadow.path());

        let mut child = spawn(root, &p);
        std::thread::sleep(Duration::from_micros(rng.below(span_us)));
        let _ = child.kill();
        let out = child.wait_with_output().unwrap();
        let ack = if out.status.success() {
            acknowledged += 1;
            Some(json_lines(&out.stdout)[0]["revision"].as_str().unwrap().to_owned())
        } else {
            assert_eq!(out.status.signal(), Some(9), "{ctx}: the update failed by itself: {}", stderr(&out));
            None
        };
        found_intent += usize::from(root.join(".scriptorium/journal/intent").exists());
        found_staging += usize::from(!staging_left(root).is_empty());

        // Half the time a reader comes first: it must see a whole state.
        let seen = (rng.below(2) == 0).then(|| revision(root));
        let out = run(&["check", "--workspace", w(root), "--json"], b"");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{ctx}: check: {}{}",
            String::from_utf8_lossy(&out.stdout),
            stderr(&out)
        );
        let summary = json_lines(&out.stdout).pop().unwrap();
        *recovered.entry(summary["recovered"].as_str().unwrap().to_owned()).or_default() += 1;
        let now = summary["revision"].as_str().unwrap().to_owned();
        current.clone_from(&now);
        if let Some(seen) = seen {
            assert_eq!(seen, now, "{ctx}: a reader saw a state that recovery then changed");
        }
        assert!(now == before || now == after, "{ctx}: revision {now} is neither {before} nor {after}");
        assert_eq!(expected_revision(root, &[]), now, "{ctx}");
        if let Some(ack) = &ack {
            assert_eq!(*ack, after, "{ctx}: the acknowledged revision");
            assert_eq!(now, after, "{ctx}: an acknowledged update was lost");
        }
        let files = (read_opt(&root.join(ADA_PATH)), read_opt(&root.join(archive)));
        let hist_now = history(root);
        if now == after {
            installed += 1;
            assert!(files == new, "{ctx}: installed, but the files are not what the patch makes");
            assert_eq!(hist_now.len(), hist.len() + 1, "{ctx}: one history line per install");
            let h = hist_now.last().unwrap();
            assert_eq!(h["revision_before"], before.as_str(), "{ctx}");
            assert_eq!(h["revision_after"], after.as_str(), "{ctx}");
            assert!(derived_views(root) == new_views, "{ctx}: the views are not rebuilt from the new files");
        } else {
            kept += 1;
            assert!(files == old, "{ctx}: not installed, but the files changed");
            assert!(derived_views(root) == views, "{ctx}: not installed, but the views changed");
            assert_eq!(hist_now.len(), hist.len(), "{ctx}: a history line without an install");
        }
        assert_eq!(hist_now[..hist.len()], hist[..], "{ctx}: history lines are only ever appended");
        assert!(!root.join(".scriptorium/journal/intent").exists(), "{ctx}: an intent survived recovery");
        assert!(staging_left(root).is_empty(), "{ctx}: staging survived recovery: {:?}", staging_left(root));
    }
    eprintln!(
        "{trials} kills in {:?} (update took {:?}, killed within {span_us} µs): {kept} kept the old revision, \
         {installed} installed ({acknowledged} acknowledged); found after the kill: {found_intent} intent(s), \
         {found_staging} staging folder(s); check recovered {recovered:?}",
        started.elapsed(),
        took[2],
    );
    assert!(kept > 0, "no kill landed before the commit point; the test proves nothing");
    assert!(installed > 0, "no update got through; the test proves nothing");
    assert_eq!(revision(root), current);
    let n = std::fs::read_to_string(root.join(ADA_PATH)).unwrap().matches("Killed trial").count();
    assert_eq!(n, installed + 5, "every installed block is there once");
    let dump = run(&["archive", "dump", w(&root.join(archive)), "--json"], b"");
    assert!(dump.status.success(), "{}", stderr(&dump));
    assert_eq!(json_lines(&dump.stdout).len(), installed + 5, "every installed record is there once");
    // The search index followed every install, and nothing else.
    let out = run(
        &[
            "search",
            "killed trial fact",
            "--workspace",
            w(root),
            "--json",
            "--kind",
            "topic",
            "--limit",
            "1000",
        ],
        b"",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let hits = json_lines(&out.stdout);
    assert_eq!(hits.len(), installed + 5, "one hit per installed block");
}

// ---------------------------------------------------------------------------
// 7. Concurrent read-modify-write writers.

fn counter_of(text: &str) -> u64 {
    let at = text.find("Counter is ").expect("the counter block") + "Counter is ".len();
    let end = at + text[at..].find('.').unwrap();
    text[at..end].parse().unwrap()
}

#[cfg(unix)]
#[test]
#[allow(clippy::print_stderr)]
fn concurrent_writers_lose_no_increment() {
    use std::os::unix::fs::MetadataExt;

    const WRITERS: usize = 4;
    const EACH: usize = 5;
    let ws = workspace();
    let root = ws.path().to_path_buf();
    let counter = "topics/counter.md";
    let body = |n: u64| {
        format!(
            "Counter is {n}.[^e-c0c0c0c0c0] ^ctr\n\n{}\n",
            footnote("e-c0c0c0c0c0", "team-1", "m1", "../")
        )
    };
    let c = updated(&root, &patch(&revision(&root), vec![], vec![create(counter, &body(0))]), &[]);
    let rev0 = c["revision"].as_str().unwrap().to_owned();
    let hist0 = history(&root).len();
    let lock = root.join(".scriptorium/write.lock");
    let inode = std::fs::metadata(&lock).unwrap().ino();

    let handles: Vec<_> = (0..WRITERS)
        .map(|k| {
            let root = root.clone();
            std::thread::spawn(move || {
                let (mut done, mut conflicts, mut locked) = (0, 0, 0);
                let mut attempts = 0;
                while done < EACH {
                    attempts += 1;
                    assert!(attempts < 500, "writer {k} starves");
                    // The revision first, then the file: a file read after
                    // a newer revision can only make the patch stale.
                    let rev = revision(&root);
                    let text = std::fs::read_to_string(root.join(counter)).unwrap();
                    let n = counter_of(&text);
                    let edit = if (k + attempts) % 2 == 0 {
                        replace(
                            counter,
                            &text.replacen(&format!("Counter is {n}."), &format!("Counter is {}.", n + 1), 1),
                        )
                    } else {
                        str_replace(counter, &format!("Counter is {n}."), &format!("Counter is {}.", n + 1))
                    };
                    let out = update(&root, &patch(&rev, vec![], vec![edit]), &["--timeout-ms", "50"]);
                    if out.status.success() {
                        done += 1;
                        continue;
                    }
                    let err = error_of(&out);
                    match err["code"].as_str().unwrap() {
                        "CONFLICT" => conflicts += 1,
                        "LOCKED" => locked += 1,
                        other => panic!("writer {k}: unexpected {other}: {err}"),
                    }
                }
                (done, conflicts, locked)
            })
        })
        .collect();
    let started = Instant::now();
    let (mut successes, mut conflicts, mut locked) = (0, 0, 0);
    for h in handles {
        let (d, c, l) = h.join().unwrap();
        successes += d;
        conflicts += c;
        locked += l;
    }
    let retries = conflicts + locked;
    eprintln!(
        "{WRITERS} writers x {EACH} increments in {:?}: {conflicts} CONFLICT and {locked} LOCKED retries",
        started.elapsed()
    );
    assert_eq!(successes, WRITERS * EACH);
    let text = std::fs::read_to_string(root.join(counter)).unwrap();
    assert_eq!(counter_of(&text), (WRITERS * EACH) as u64, "an increment was lost ({retries} retries)");
    assert_eq!(text, body((WRITERS * EACH) as u64));
    // The history is one chain of 20 transactions.
    let hist = history(&root);
    assert_eq!(hist.len(), hist0 + WRITERS * EACH);
    let mut prev = rev0.clone();
    for h in &hist[hist0..] {
        assert_eq!(h["revision_before"], prev.as_str(), "the history is a chain");
        prev = h["revision_after"].as_str().unwrap().to_owned();
    }
    assert_eq!(prev, revision(&root));
    assert_eq!(std::fs::metadata(&lock).unwrap().ino(), inode, "the lock file never moves");
    let (code, lines) = check(&root);
    assert_eq!(code, Some(0), "{lines:?}");
}

/// Readers (`status`) running while two-file patches install only ever see
/// a revision the history names: never a mixture of one file's new bytes
/// and another's old ones.
#[test]
fn readers_never_see_a_half_installed_patch() {
    let ws = workspace();
    let root = ws.path().to_path_buf();
    let rev0 = revision(&root);
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (root, done) = (root.clone(), done.clone());
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            while !done.load(std::sync::atomic::Ordering::SeqCst) || seen.is_empty() {
                seen.push(revision(&root));
            }
            seen
        })
    };
    let mut rev = rev0.clone();
    for t in 0..12u64 {
        let label = format!("e-{:010x}", 0x20_0000 + t);
        let message = format!("r{t}");
        let content = format!(
            "\nRead trial {t}.[^{label}] ^rd{t}\n\n{}\n",
            footnote(&label, "reads", &message, "../../")
        );
        let p =
            patch(&rev, vec![record("reads", &message, "read me", false)], vec![append(ADA_PATH, &content)]);
        rev = updated(&root, &p, &[])["revision"].as_str().unwrap().to_owned();
    }
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let seen = reader.join().unwrap();
    let mut known: std::collections::BTreeSet<String> =
        history(&root).iter().map(|h| h["revision_after"].as_str().unwrap().to_owned()).collect();
    known.insert(rev0);
    for r in &seen {
        assert!(known.contains(r), "a reader saw revision {r}, which no transaction produced");
    }
}

// ---------------------------------------------------------------------------
// 8. Random invalid patches.

#[derive(Debug, Clone, Copy)]
enum Op {
    Create,
    Append,
    Replace,
    StrReplace,
    Delete,
}

impl Op {
    fn edit(self, path: &str, text: &str) -> Value {
        match self {
            Op::Create => create(path, text),
            Op::Append => append(path, text),
            Op::Replace => replace(path, text),
            Op::StrReplace => str_replace(path, "Ada", text),
            Op::Delete => delete(path),
        }
    }

    fn paired_refuses(self) -> bool {
        matches!(self, Op::Replace | Op::StrReplace | Op::Delete)
    }
}

#[derive(Debug, Clone)]
enum EditKind {
    /// A valid append of a new block to ada.md.
    Good,
    /// A valid create of a new file.
    GoodCreate,
    BadPath(usize, Op),
    BadOp(usize),
    UnknownKey,
    EmptyOld,
    Missing(Op),
    OldAbsent,
    CreateExisting,
    /// A new file citing a record that is not archived.
    Unvalidated,
}

#[derive(Debug, Clone)]
enum Shape {
    Whole,
    Truncated(u16),
    Trailing,
    NotObject(usize),
    ExtraKey,
    NoBase,
}

#[derive(Debug, Clone)]
struct Case {
    shape: Shape,
    stale: Option<String>,
    paired: bool,
    source: bool,
    edits: Vec<EditKind>,
}

const BAD_PATHS: [&str; 12] = [
    "../x.md",
    "/abs.md",
    "topics/a.txt",
    "sources/x.md",
    "topics//a.md",
    "topics\\a.md",
    "topics/a\0b.md",
    "topics/./a.md",
    "topics/x.MD",
    "topics/.md",
    "core.md",
    "topics/a/../../x.md",
];
const BAD_OPS: [&str; 6] = ["chmod", "rename", "Create", "APPEND", "", "insert"];

impl Case {
    fn op_of(e: &EditKind) -> Option<Op> {
        match e {
            EditKind::Good => Some(Op::Append),
            EditKind::GoodCreate | EditKind::CreateExisting | EditKind::Unvalidated => Some(Op::Create),
            // A missing file cannot be "created" wrongly: that one deletes.
            EditKind::Missing(Op::Create) => Some(Op::Delete),
            EditKind::BadPath(_, op) | EditKind::Missing(op) => Some(*op),
            EditKind::EmptyOld | EditKind::OldAbsent => Some(Op::StrReplace),
            EditKind::BadOp(_) => None,
            EditKind::UnknownKey => Some(Op::Append),
        }
    }

    /// The code FORMAT.md §6 says wins.
    fn expected(&self) -> &'static str {
        let invalid = |e: &EditKind| {
            matches!(
                e,
                EditKind::BadPath(..) | EditKind::BadOp(_) | EditKind::UnknownKey | EditKind::EmptyOld
            )
        };
        if !matches!(self.shape, Shape::Whole) || self.edits.iter().any(invalid) {
            return "INVALID_ARGUMENT";
        }
        // The case's record names Ada: a paired caller may not.
        if self.paired && self.source {
            return "INVALID_ARGUMENT";
        }
        if self.paired && self.edits.iter().filter_map(Case::op_of).any(Op::paired_refuses) {
            return "PERMISSION_DENIED";
        }
        if self.stale.is_some() {
            return "CONFLICT";
        }
        // CONFLICT wins over NOT_FOUND whatever the edits' order.
        if self.edits.iter().any(|e| matches!(e, EditKind::CreateExisting)) {
            return "CONFLICT";
        }
        if self.edits.iter().any(|e| matches!(e, EditKind::Missing(_) | EditKind::OldAbsent)) {
            return "NOT_FOUND";
        }
        if self.edits.iter().any(|e| matches!(e, EditKind::Unvalidated)) {
            return "VALIDATION_FAILED";
        }
        unreachable!("every case has a defect: {self:?}")
    }

    fn text(&self, rev: &str) -> String {
        let edits: Vec<Value> = self
            .edits
            .iter()
            .enumerate()
            .map(|(k, e)| match e {
                EditKind::Good => append(
                    ADA_PATH,
                    &appended_block("Random.", &format!("e-{:010x}", 0xabc0 + k), &format!("r{k}")),
                ),
                EditKind::GoodCreate => create(
                    &format!("topics/new-{k}.md"),
                    &format!(
                        "Created.[^e-00000000ff] ^c{k}x\n\n{}\n",
                        footnote("e-00000000ff", "team-1", "m1", "../")
                    ),
                ),
                EditKind::BadPath(i, op) => op.edit(BAD_PATHS[*i], "x"),
                EditKind::BadOp(i) => json!({"op": BAD_OPS[*i], "path": ADA_PATH, "content": "x"}),
                EditKind::UnknownKey => {
                    json!({"op": "append", "path": ADA_PATH, "content": "x", "mode": "0644"})
                }
                EditKind::EmptyOld => str_replace(ADA_PATH, "", "x"),
                EditKind::Missing(op) => match op {
                    Op::Create => delete(&format!("topics/missing-{k}.md")),
                    op => op.edit(&format!("topics/missing-{k}.md"), "x"),
                },
                EditKind::OldAbsent => str_replace(ADA_PATH, "no such text anywhere", "x"),
                EditKind::CreateExisting => create(ADA_PATH, "x"),
                EditKind::Unvalidated => create(
                    &format!("topics/bad-{k}.md"),
                    &format!(
                        "Unknown.[^e-00000000fe] ^u{k}x\n\n{}\n",
                        footnote("e-00000000fe", "team-1", "m404", "../")
                    ),
                ),
            })
            .collect();
        let sources =
            if self.source { vec![record("prop", "p1", "must not be archived", true)] } else { vec![] };
        let mut v = json!({"base_revision": self.stale.as_deref().unwrap_or(rev), "message": "random",
            "sources": sources, "edits": edits});
        match &self.shape {
            Shape::Whole => v.to_string(),
            Shape::Truncated(at) => {
                let s = v.to_string();
                let cut = usize::from(*at) % s.len();
                s[..cut].to_owned()
            }
            Shape::Trailing => format!("{v} x"),
            Shape::NotObject(i) => ["[]", "null", "\"patch\"", "42", "{\"base_revision\": 7}"][*i].to_owned(),
            Shape::ExtraKey => {
                v["extra"] = 1.into();
                v.to_string()
            }
            Shape::NoBase => {
                v.as_object_mut().unwrap().remove("base_revision");
                v.to_string()
            }
        }
    }
}

fn case_strategy() -> impl proptest::strategy::Strategy<Value = Case> {
    use proptest::prelude::*;
    let op = prop_oneof![
        Just(Op::Create),
        Just(Op::Append),
        Just(Op::Replace),
        Just(Op::StrReplace),
        Just(Op::Delete)
    ];
    let edit = prop_oneof![
        3 => Just(EditKind::Good),
        1 => Just(EditKind::GoodCreate),
        2 => (0..BAD_PATHS.len(), op.clone()).prop_map(|(i, op)| EditKind::BadPath(i, op)),
        1 => (0..BAD_OPS.len()).prop_map(EditKind::BadOp),
        1 => Just(EditKind::UnknownKey),
        1 => Just(EditKind::EmptyOld),
        3 => op.prop_map(EditKind::Missing),
        1 => Just(EditKind::OldAbsent),
        1 => Just(EditKind::CreateExisting),
        2 => Just(EditKind::Unvalidated),
    ];
    let shape = prop_oneof![
        10 => Just(Shape::Whole),
        1 => any::<u16>().prop_map(Shape::Truncated),
        1 => Just(Shape::Trailing),
        1 => (0..5usize).prop_map(Shape::NotObject),
        1 => Just(Shape::ExtraKey),
        1 => Just(Shape::NoBase),
    ];
    (
        shape,
        proptest::option::weighted(0.25, "[0-9a-f]{64}"),
        any::<bool>(),
        any::<bool>(),
        proptest::collection::vec(edit, 1..4),
    )
        .prop_map(|(shape, stale, paired, source, edits)| {
            let mut c = Case { shape, stale, paired, source, edits };
            let defect = !matches!(c.shape, Shape::Whole)
                || c.stale.is_some()
                || c.edits.iter().any(|e| !matches!(e, EditKind::Good | EditKind::GoodCreate));
            if !defect {
                c.stale = Some("0".repeat(64));
            }
            c
        })
}

#[test]
fn random_invalid_patches_are_refused_and_write_nothing() {
    use proptest::test_runner::{Config, TestCaseError, TestRunner};

    let ws = workspace();
    let root = ws.path();
    let rev = revision(root);
    let before = snapshot(root);
    let hist = history(root).len();
    let seen = std::cell::RefCell::new(std::collections::BTreeSet::new());
    let mut runner = TestRunner::new(Config { cases: 32, failure_persistence: None, ..Config::default() });
    runner
        .run(&case_strategy(), |case| {
            let text = case.text(&rev);
            let tier = if case.paired { "paired" } else { "owner" };
            let out = update(root, &text, &["--tier", tier]);
            let code = out.status.code();
            if code != Some(1) {
                return Err(TestCaseError::fail(format!("exit {code:?} for {case:?}: {}", stderr(&out))));
            }
            let lines = json_lines(&out.stderr);
            if lines.len() != 1 || !out.stdout.is_empty() {
                return Err(TestCaseError::fail(format!("output for {case:?}: {lines:?}")));
            }
            let got = lines[0]["error"]["code"].as_str().unwrap_or_default().to_owned();
            if !CODES.contains(&got.as_str()) || got != case.expected() {
                return Err(TestCaseError::fail(format!(
                    "{case:?}: expected {}, got {}",
                    case.expected(),
                    lines[0]
                )));
            }
            if snapshot(root) != before || history(root).len() != hist {
                return Err(TestCaseError::fail(format!("{case:?} changed the workspace")));
            }
            seen.borrow_mut().insert(got);
            Ok(())
        })
        .unwrap();
    assert_eq!(revision(root), rev);
    // Not only malformed patches: the refusals made under the lock ran too
    // (all 32 cases sharing one code has a chance of about 1e-5).
    assert!(seen.borrow().len() >= 2, "only {:?} was produced", seen.borrow());
}

#[test]
fn the_old_layout_is_moved_aside_by_the_first_writer() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("memory");
    std::fs::create_dir_all(root.join("journal")).unwrap();
    std::fs::write(root.join("journal/2026-01-01.md"), "old notes\n").unwrap();
    std::fs::create_dir_all(root.join("wiki")).unwrap();
    std::fs::write(root.join("index.sqlite"), b"SQLite format 3\0").unwrap();
    let out = crate::run(&["check", "--workspace", root.to_str().unwrap(), "--json"], b"");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("moved the old layout"));
    let aside = dir.path().join("memory-superseded");
    assert_eq!(std::fs::read_to_string(aside.join("journal/2026-01-01.md")).unwrap(), "old notes\n");
    assert!(aside.join("wiki").is_dir() && aside.join("index.sqlite").is_file());
    assert!(
        !root.join("journal").exists() && !root.join("wiki").exists() && !root.join("index.sqlite").exists()
    );
}

// ---------------------------------------------------------------------------
// Hostile inputs found by review.

#[test]
fn one_patch_cannot_make_a_path_both_a_file_and_a_folder_or_spell_a_folder_twice() {
    let ws = workspace();
    let root = ws.path();
    let rev = revision(root);
    for edits in [
        vec![create("topics/x.md", "# x\n"), create("topics/x.md/b.md", "# b\n")],
        vec![create("topics/x.md/b.md", "# b\n"), create("topics/x.md", "# x\n")],
        vec![create("topics/q/r/a.md", "# a\n"), create("topics/q/R/b.md", "# b\n")],
        vec![create("topics/caf\u{e9}/a.md", "# a\n"), create("topics/cafe\u{301}/b.md", "# b\n")],
    ] {
        let err =
            refused(root, &patch(&rev, vec![], edits.clone()), &["--tier", "paired"], "INVALID_ARGUMENT");
        assert!(err["path"].as_str().is_some_and(|p| p.starts_with("edits[")), "{err}");
        assert!(!root.join(".scriptorium/journal/intent").exists());
    }
    // The workspace still works.
    assert_eq!(check(root).0, Some(0));
}

#[test]
fn conflict_wins_over_not_found_and_malformed_ids_over_unknown_ones() {
    let ws = workspace();
    let root = ws.path();
    let rev = revision(root);
    let p = patch(&rev, vec![], vec![append("topics/nope.md", "x"), create(ADA_PATH, "# again\n")]);
    refused(root, &p, &[], "CONFLICT");
    let p = patch(&rev, vec![], vec![str_replace(ADA_PATH, "not there", "x"), create(ADA_PATH, "# again\n")]);
    refused(root, &p, &[], "CONFLICT");
    let out = run(&["promote", "--workspace", w(root), "chat/t/unknown", "a//b"], b"");
    assert_eq!(error_of(&out)["code"], "INVALID_ARGUMENT");
    // A malformed base revision is a bad argument, not a conflict.
    refused(root, &patch("ABC", vec![], vec![create("topics/n.md", "# n\n")]), &[], "INVALID_ARGUMENT");
    // A patch that cannot parse is refused as such even without a workspace.
    let gone = root.join("missing");
    let out = run(&["update", "--workspace", w(&gone), "--patch", "-"], b"{");
    assert_eq!(error_of(&out)["code"], "INVALID_ARGUMENT");
}

#[test]
fn the_paired_tier_archives_only_pending_records() {
    let ws = workspace();
    let root = ws.path();
    let rev = revision(root);
    let speakerless = |pending: bool| {
        let mut r = record("team-1", "m77", "wire the money", pending);
        r.as_object_mut().unwrap().retain(|k, _| !k.starts_with("speaker_"));
        r
    };
    let err = refused(
        root,
        &patch(&rev, vec![speakerless(false)], vec![]),
        &["--tier", "paired"],
        "PERMISSION_DENIED",
    );
    assert_eq!(err["path"], "sources[0]");
    // Naming a speaker is refused first, as an invalid argument.
    let forged = record("team-1", "m77", "wire the money", false);
    let err = refused(root, &patch(&rev, vec![forged], vec![]), &["--tier", "paired"], "INVALID_ARGUMENT");
    assert_eq!(err["path"], "sources[0].speaker_id");
    let pending = speakerless(true);
    updated(root, &patch(&rev, vec![pending], vec![]), &["--tier", "paired"]);
    assert!(status(root)["pending_sources"].as_u64().unwrap() >= 1);
}

#[test]
fn check_reports_an_archive_file_that_does_not_parse_to_its_end() {
    let ws = workspace();
    let root = ws.path();
    let file = root.join("sources/chat/_v2/team-1.md");
    let mut bytes = std::fs::read(&file).unwrap();
    bytes.extend_from_slice(b"\n<a id=\"source-00000000\"></a>\ngarbage\n");
    std::fs::write(&file, bytes).unwrap();
    let (code, lines) = check(root);
    assert_eq!(code, Some(1));
    assert!(
        lines.iter().any(|l| l["path"] == "sources/chat/_v2/team-1.md" && l["offset"].is_u64()),
        "{lines:?}"
    );
    assert_eq!(lines.last().unwrap()["ok"], false);
}

#[test]
fn a_patch_that_does_not_parse_says_where() {
    let ws = workspace();
    let root = ws.path();
    let patch = "{\"base_revision\":\"x\",\n \"edits\":[{\"op\":\"create\",\"extra\":1}]}";
    let err = error_of(&run(&["update", "--workspace", w(root), "--patch", "-", "--json"], patch.as_bytes()));
    assert_eq!(err["code"], "INVALID_ARGUMENT");
    assert_eq!(err["line"], 2, "{err}");
    let offset = err["offset"].as_u64().unwrap() as usize;
    assert!(patch[..offset].contains("\"extra\"") && offset <= patch.len(), "{err}");
}

#[test]
fn a_reader_has_views_torn_since_they_were_written_rebuilt() {
    let ws = workspace();
    let root = ws.path();
    let good: Vec<Vec<u8>> = ["relations.json", "recent_events.jsonl"]
        .iter()
        .map(|r| std::fs::read(root.join(r)).unwrap())
        .collect();
    for (k, rel) in ["relations.json", "recent_events.jsonl"].into_iter().enumerate() {
        std::fs::write(root.join(rel), &good[k][..good[k].len() / 3]).unwrap();
        for verb in [vec!["search", "budget"], vec!["status"]] {
            let mut args = verb.clone();
            args.extend(["--workspace", w(root)]);
            let out = run(&args, b"");
            assert!(out.status.success(), "{verb:?}: {}", stderr(&out));
            assert_eq!(std::fs::read(root.join(rel)).unwrap(), good[k], "{verb:?} after {rel} was truncated");
            std::fs::write(root.join(rel), b"").unwrap();
        }
    }
}
