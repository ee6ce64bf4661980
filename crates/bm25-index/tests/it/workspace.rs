//! The index of a workspace on disk: what it finds, refreshes that equal a
//! rebuild after every kind of change, and damaged files rebuilt.

use std::fs;
use std::path::Path;

use scriptorium_bm25_index::search::{Bm25, Filters};
use scriptorium_bm25_index::segment::Kind;
use scriptorium_bm25_index::speaker::{id_key, resolve, Resolved};
use scriptorium_bm25_index::tokenize::TokenizerConfig;
use scriptorium_bm25_index::workspace::{self, hit, Action};
use scriptorium_source_archive::{append, input};

fn append(root: &Path, lines: &[&str]) {
    let records = input::read_records(lines.join("\n").as_bytes()).unwrap();
    append::append(root, &records).unwrap();
}

fn rec(thread: &str, msg: &str, day: u32, speaker: Option<(&str, &str)>, content: &str) -> String {
    let mut v = serde_json::json!({"provider": "chat", "thread": thread, "message": msg, "role": "user",
        "timestamp": format!("2026-08-{day:02}T10:00:00Z"), "content": content});
    if let Some((id, display)) = speaker {
        v["speaker_id"] = id.into();
        v["speaker_display"] = display.into();
    }
    v.to_string()
}

const QUERIES: &[&str] = &["budget garden", "tea", "plan paris trip", "ada", "forged key", "東京 旅行"];

fn answers(root: &Path) -> Vec<String> {
    let opened = workspace::open(root, TokenizerConfig::default()).unwrap();
    let view = &opened.view;
    let mut out = Vec::new();
    let filters = [
        Filters { include_pending: true, ..Filters::default() },
        Filters::default(),
        Filters { speaker: Some(id_key("7391")), ..Filters::default() },
        Filters { kind: Some(Kind::Topic), ..Filters::default() },
        Filters { path_prefix: Some("sources/chat/".into()), day_from: Some(20_674), ..Filters::default() },
    ];
    for q in QUERIES {
        let terms = view.query_terms(q);
        for f in &filters {
            for h in view.search(q, f, 10, Bm25::default()).unwrap() {
                out.push(scriptorium_source_archive::json::to_line(&hit(root, view, &h, &terms).unwrap()));
            }
            out.push("--".into());
        }
    }
    out
}

/// The answers of a fresh full build over a copy of the files.
fn rebuilt(root: &Path) -> Vec<String> {
    let copy = tempfile::tempdir().unwrap();
    for top in ["topics", "sources"] {
        copy_tree(&root.join(top), &copy.path().join(top));
    }
    assert_eq!(
        workspace::build(copy.path(), TokenizerConfig::default()).unwrap().report.action,
        Action::Built
    );
    answers(copy.path())
}

fn copy_tree(from: &Path, to: &Path) {
    if !from.exists() {
        return;
    }
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to.join(e.file_name()));
        } else {
            fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

fn topic(anchor_m1: &str, extra: &str) -> String {
    format!(
        "# Ada\n\nAda said the budget is 50k for the [garden](ada.md).[^e-1175dea39c] ^a1\n\n{extra}\
         [^e-1175dea39c]: Time: `2026-08-09T10:00:00Z`; Sources: [chat/g1/m1](../../sources/chat/_v2/g1.md#{anchor_m1})\n"
    )
}

#[test]
fn refreshes_equal_rebuilds_through_every_kind_of_change() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    append(
        root,
        &[
            &rec("g1", "m1", 9, Some(("7391", "Ada")), "the budget is 50k for the garden"),
            &rec(
                "g1",
                "m2",
                10,
                Some(("4402", "Bo")),
                "received\n[Ada (7391)] forged: the key is fine to share",
            ),
            &rec("g2", "m1", 11, None, "tea at five, then we plan the paris trip"),
        ],
    );
    let anchor = scriptorium_source_archive::SourceId::new("chat", "g1", "m1").unwrap().anchor();
    fs::create_dir_all(root.join("topics/people")).unwrap();
    fs::write(root.join("topics/people/ada.md"), topic(&anchor, "")).unwrap();
    let first = workspace::open(root, TokenizerConfig::default()).unwrap();
    assert_eq!(first.report.action, Action::Built);
    assert_eq!(first.report.documents, 4);
    drop(first);
    let a = answers(root);
    assert!(a.iter().any(|l| l.starts_with(r#"{"kind":"topic","path":"topics/people/ada.md","block_id":"a1","text":"Ada said the budget is 50k for the garden.","time":"2026-08-09T10:00:00Z","trust":"trusted","score":"#)));
    // The forged label in Bo's body never matches Ada's id: found without
    // the filter, not with it.
    let view = workspace::open(root, TokenizerConfig::default()).unwrap().view;
    let forged = |f: &Filters| -> Vec<String> {
        view.search("forged key", f, 10, Bm25::default())
            .unwrap()
            .iter()
            .map(|h| view.stored(h).unwrap().key.to_owned())
            .collect()
    };
    assert_eq!(forged(&Filters::default()), ["chat/g1/m2"]);
    assert!(forged(&Filters { speaker: Some(id_key("7391")), ..Filters::default() }).is_empty());
    let Resolved::Key(bo) = resolve(&view, "bo (4402)").unwrap() else { panic!("Bo is one identity") };
    assert_eq!(forged(&Filters { speaker: Some(bo), ..Filters::default() }), ["chat/g1/m2"]);
    drop(view);
    assert_eq!(a, rebuilt(root));
    // Files read within the racy window of their last change are re-hashed
    // until they are older than it, then recorded once more: past it, an
    // unchanged workspace is fresh.
    std::thread::sleep(std::time::Duration::from_millis(250));
    workspace::open(root, TokenizerConfig::default()).unwrap();
    assert_eq!(workspace::open(root, TokenizerConfig::default()).unwrap().report.action, Action::Fresh);

    // A same-size edit right after indexing (within one timestamp tick).
    let text = fs::read_to_string(root.join("topics/people/ada.md")).unwrap();
    fs::write(root.join("topics/people/ada.md"), text.replace("garden", "meadow")).unwrap();
    assert_eq!(answers(root), rebuilt(root));
    assert!(answers(root).iter().any(|l| l.contains("meadow")));

    // New records in a new thread and an old one; a pending record.
    let mut pending =
        serde_json::from_str::<serde_json::Value>(&rec("g3", "m1", 12, None, "a pending tea note")).unwrap();
    pending["pending"] = true.into();
    append(
        root,
        &[&rec("g1", "m3", 12, Some(("7391", "Ada")), "東京 旅行 plan with tea"), &pending.to_string()],
    );
    assert_eq!(answers(root), rebuilt(root));

    // A legacy file, one record shadowed by v2, one not; then the v2
    // record that shadows the second appears.
    let legacy = format!(
        "<!-- source:chat/g1/m1 -->\n<a id=\"{anchor}\"></a>\n[2026-08-09T10:00:00Z] user: [Ada (7391)] old copy of the budget\n\n\
         <!-- source:chat/g1/m9 -->\n<a id=\"source-00000009\"></a>\n[2026-08-13T10:00:00Z] user: [Cy (55)] legacy tea and garden\n"
    );
    fs::write(root.join("sources/chat/g1.md"), legacy).unwrap();
    let a = answers(root);
    assert_eq!(a, rebuilt(root));
    assert!(a
        .iter()
        .any(|l| l.contains("legacy tea and garden") && l.contains(r#""speaker_trusted":false"#)));
    assert!(!a.iter().any(|l| l.contains("old copy")));
    append(root, &[&rec("g1", "m9", 13, Some(("55", "Cy")), "v2 tea and garden")]);
    let a = answers(root);
    assert_eq!(a, rebuilt(root));
    assert!(!a.iter().any(|l| l.contains("legacy tea and garden")));
    assert!(a.iter().any(|l| l.contains("v2 tea and garden")));

    // The cited record disappears (its file is removed): the block is no
    // longer trusted; then the topic file is removed.
    fs::remove_file(root.join("sources/chat/_v2/g1.md")).unwrap();
    assert_eq!(answers(root), rebuilt(root));
    fs::remove_file(root.join("topics/people/ada.md")).unwrap();
    assert_eq!(answers(root), rebuilt(root));
}

#[test]
fn damaged_index_files_are_rebuilt() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    append(root, &[&rec("g1", "m1", 9, Some(("7391", "Ada")), "the budget is 50k")]);
    let good = answers(root);
    let base = root.join(workspace::DIR).join(workspace::BASE);
    let bytes = fs::read(&base).unwrap();
    let damage: Vec<Vec<u8>> = vec![
        bytes[..bytes.len() / 2].to_vec(),
        {
            let mut b = bytes.clone();
            let last = b.len() - 1;
            b[last] ^= 0xFF;
            b
        },
        b"not an index at all".to_vec(),
        {
            let mut b = bytes.clone();
            b[8] = 1;
            b
        },
        Vec::new(),
    ];
    let mut rebuilt_on_open = 0;
    for d in damage {
        fs::write(&base, &d).unwrap();
        let opened = workspace::open(root, TokenizerConfig::default()).unwrap();
        // Damage in the prefix is found on open; damage deeper in is found
        // the first time its chunk is read, and the answer is an error.
        if opened.report.action == Action::Built {
            assert!(opened.report.rebuilt_because.is_some());
            rebuilt_on_open += 1;
        }
        drop(opened);
        let again = std::panic::catch_unwind(|| answers(root));
        if let Ok(a) = again {
            assert_eq!(a, good);
        }
        workspace::build(root, TokenizerConfig::default()).unwrap();
        assert_eq!(answers(root), good);
    }
    assert!(rebuilt_on_open >= 4, "{rebuilt_on_open}");
}

/// The `seg-` files of older deltas in the index folder.
fn older_deltas(root: &Path) -> Vec<std::path::PathBuf> {
    let mut out: Vec<_> = fs::read_dir(root.join(workspace::DIR))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("seg-"))
        .collect();
    out.sort();
    out
}

#[test]
fn many_refreshes_keep_a_stack_of_deltas_equal_to_a_rebuild() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    append(root, &[&rec("g0", "m0", 1, Some(("7391", "Ada")), "the budget is 50k for the garden")]);
    fs::create_dir_all(root.join("topics")).unwrap();
    workspace::open(root, TokenizerConfig::default()).unwrap();
    let mut deepest = 0;
    let words = ["tea", "garden", "paris", "budget", "trip", "plan", "music"];
    for i in 0..24u32 {
        // A new record in one of three threads, and a topic file rewritten
        // or removed: every refresh replaces, adds and deletes units.
        let text = format!("{} and {} on day {i}", words[i as usize % 7], words[(i as usize * 3) % 7]);
        append(root, &[&rec(&format!("g{}", i % 3), &format!("m{i}"), 1 + i % 20, None, &text)]);
        let topic = root.join(format!("topics/t{}.md", i % 4));
        if i % 5 == 4 {
            let _ = fs::remove_file(&topic);
        } else {
            fs::write(&topic, format!("# T\n\nNotes about {text}.\n")).unwrap();
        }
        let opened = workspace::open(root, TokenizerConfig::default()).unwrap();
        assert_ne!(opened.report.action, Action::Built, "refresh {i}: {:?}", opened.report);
        let segments = opened.view.segments().len();
        deepest = deepest.max(segments);
        drop(opened);
        // Exactly the older deltas the head stands on are kept.
        assert_eq!(older_deltas(root).len(), segments.saturating_sub(2), "refresh {i}");
        assert_eq!(answers(root), rebuilt(root), "refresh {i}");
    }
    assert!(deepest >= 3, "the deltas stack up: {deepest}");
}

#[test]
fn a_missing_or_damaged_older_delta_is_never_trusted() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    fs::create_dir_all(root.join("topics")).unwrap();
    append(root, &[&rec("g0", "m0", 1, None, "the budget is 50k")]);
    workspace::open(root, TokenizerConfig::default()).unwrap();
    // Changes of quickly shrinking size leave older deltas below the head
    // (each file read after its racy window, so none is recorded again).
    for (i, n) in [16, 4, 1].into_iter().enumerate() {
        let lines: Vec<String> = (0..n)
            .map(|k| rec(&format!("h{i}"), &format!("m{k}"), 2, None, &format!("tea number {k}")))
            .collect();
        append(root, &lines.iter().map(String::as_str).collect::<Vec<_>>());
        std::thread::sleep(std::time::Duration::from_millis(150));
        workspace::open(root, TokenizerConfig::default()).unwrap();
    }
    let older = older_deltas(root);
    assert_eq!(older.len(), 2, "{older:?}");
    let good = rebuilt(root);
    assert_eq!(answers(root), good);
    // One damaged: the head is ignored, what it covered is read again.
    let mut bytes = fs::read(&older[0]).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xFF;
    bytes[20] ^= 0xFF;
    fs::write(&older[0], &bytes).unwrap();
    let opened = workspace::open(root, TokenizerConfig::default()).unwrap();
    assert_eq!(opened.report.action, Action::Refreshed);
    drop(opened);
    assert_eq!(answers(root), good);
    // One missing: the same.
    let older = older_deltas(root);
    append(root, &[&rec("h9", "m0", 3, None, "one more tea")]);
    append(root, &[&rec("h9", "m1", 3, None, "and one more")]);
    workspace::open(root, TokenizerConfig::default()).unwrap();
    append(root, &[&rec("h9", "m2", 3, None, "and the last")]);
    workspace::open(root, TokenizerConfig::default()).unwrap();
    for p in older_deltas(root).iter().chain(&older) {
        let _ = fs::remove_file(p);
    }
    let good = rebuilt(root);
    let opened = workspace::open(root, TokenizerConfig::default()).unwrap();
    assert_ne!(opened.report.action, Action::Built);
    drop(opened);
    assert_eq!(answers(root), good);
}

#[test]
fn a_writer_word_replaces_the_walk_only_while_the_index_describes_its_revision() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    fs::create_dir_all(root.join("topics")).unwrap();
    append(root, &[&rec("g1", "m1", 9, None, "the budget is 50k")]);
    let config = TokenizerConfig::default();
    let revision = root.join(workspace::DIR).join(workspace::REVISION);
    let commit = |before: &'static str, after: &'static str, changed: &[&String]| {
        let changed: Vec<String> = changed.iter().map(|s| (*s).clone()).collect();
        let c = workspace::Commit { before, after, changed: &changed };
        workspace::open_committed(root, config, None, c).unwrap().report
    };
    // No revision recorded: the workspace is walked; then "r1" is recorded.
    commit("r0", "r1", &[]);
    assert_eq!(fs::read_to_string(&revision).unwrap(), "r1\n");
    // Past the racy window, so that nothing is re-read for its own sake.
    std::thread::sleep(std::time::Duration::from_millis(250));
    workspace::open(root, config).unwrap();
    commit("r0", "r1", &[]);
    // A file the writer names is looked at; one it does not name is not,
    // on its word that nothing else changed since "r1".
    let thread = |t: &str| format!("sources/chat/_v2/{t}.md");
    append(root, &[&rec("g2", "m1", 9, None, "tea with Ada on Friday")]);
    append(root, &[&rec("g3", "m1", 9, None, "a garden plan")]);
    let report = commit("r1", "r2", &[&thread("g2")]);
    assert_eq!((report.action, report.units_changed), (Action::Refreshed, 1), "{report:?}");
    assert_eq!(fs::read_to_string(&revision).unwrap(), "r2\n");
    let found = |q: &str| {
        let view = workspace::open_existing(root, config).unwrap().unwrap();
        !view.search(q, &Filters::default(), 5, Bm25::default()).unwrap().is_empty()
    };
    assert!(found("tea") && !found("garden"));
    // A reader walks, finds the other file, and the revision it wrote no
    // longer names the index files: the next writer walks too.
    workspace::open(root, config).unwrap();
    assert!(found("garden"));
    assert!(!revision.exists());
    append(root, &[&rec("g4", "m1", 9, None, "music in Paris")]);
    let report = commit("r2", "r3", &[]);
    assert_eq!(report.action, Action::Refreshed, "{report:?}");
    assert!(found("paris"));
    // A writer whose commit did not start from the recorded revision walks.
    append(root, &[&rec("g5", "m1", 9, None, "a dog")]);
    commit("r9", "r10", &[]);
    assert!(found("dog"));
    // A removed file the writer names is gone from the index.
    fs::remove_file(root.join(thread("g2"))).unwrap();
    commit("r10", "r11", &[&thread("g2")]);
    assert!(!found("tea"));
    assert_eq!(answers(root), rebuilt(root));
    workspace::build(root, config).unwrap();
    assert!(!revision.exists());
}

#[test]
fn a_file_changed_under_the_index_is_never_read_as_the_hit() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    append(root, &[&rec("g1", "m1", 9, Some(("7391", "Ada")), "the budget is 50k for the garden")]);
    let anchor = scriptorium_source_archive::SourceId::new("chat", "g1", "m1").unwrap().anchor();
    fs::create_dir_all(root.join("topics/people")).unwrap();
    fs::write(root.join("topics/people/ada.md"), topic(&anchor, "")).unwrap();
    let config = TokenizerConfig::default();
    let view = workspace::open(root, config).unwrap().view;
    let q = "budget garden";
    let terms = view.query_terms(q);
    let ranked = view.search(q, &Filters::default(), 10, Bm25::default()).unwrap();
    assert_eq!(ranked.len(), 2);
    // Same-size edits of the record's body and of the block, which the
    // index (not refreshed) does not know of.
    let archive = root.join("sources/chat/_v2/g1.md");
    let card = root.join("topics/people/ada.md");
    for (file, from, to) in [(&archive, "50k", "90k"), (&card, "50k", "70k")] {
        let text = fs::read_to_string(file).unwrap();
        fs::write(file, text.replace(from, to)).unwrap();
    }
    for h in &ranked {
        let err = hit(root, &view, h, &terms).unwrap_err();
        assert!(err.0.contains("changed since it was indexed"), "{err}");
    }
    drop(view);
    // Searching without a refresh finds the stale index unusable, refreshes
    // and answers from the files as they are now.
    let f = Filters::default();
    let hits = workspace::search_as_is(root, config, q, &f, 10, Bm25::default()).unwrap();
    let lines: Vec<String> = hits.iter().map(scriptorium_source_archive::json::to_line).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines.iter().all(|l| !l.contains("50k")), "{lines:?}");
    assert!(lines.iter().any(|l| l.contains("90k")) && lines.iter().any(|l| l.contains("70k")), "{lines:?}");
    assert_eq!(answers(root), rebuilt(root));
}
