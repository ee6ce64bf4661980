//! The round trip (`update`, then `status`, the history and `search`
//! agree), `check`, and what readers and the first writer do to a
//! workspace they find: an old layout moved aside, an archive file that
//! does not parse reported, torn views rebuilt.

use super::*;

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
