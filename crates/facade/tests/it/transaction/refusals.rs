//! Refusals write nothing: every refusal class (`CONFLICT`, `NOT_FOUND`,
//! `INVALID_ARGUMENT`, `PERMISSION_DENIED`, `VALIDATION_FAILED`, `LOCKED`)
//! leaves the workspace byte-identical and writes no history line, and
//! which refusal wins when a patch has several defects.

use super::*;

#[test]
fn every_refusal_leaves_the_workspace_byte_identical() {
    let ws = workspace();
    let root = ws.path();
    let rev = revision(root);
    let good_block = appended_block("Ada prefers tea.", "e-00000000aa", "t1");
    conflicts_and_missing_paths(root, &rev, &good_block);
    invalid_arguments(root, &rev, &good_block);
    paired_tier_refusals(root, &rev);
    validation_failures(root, &rev);

    // After all that, the workspace is as it was and takes a valid patch.
    assert_eq!(revision(root), rev);
    let ok = updated(root, &patch(&rev, new_src(), vec![append(ADA_PATH, &good_block)]), &[]);
    assert_eq!(ok["changed"], json!(["sources/chat/_v2/fresh.md", ADA_PATH]));
}

/// A record no refused patch may archive.
fn new_src() -> Vec<Value> {
    vec![record("fresh", "f1", "a fresh record that must not be archived", false)]
}

/// `CONFLICT` (a stale base, a `create` on an existing path) and
/// `NOT_FOUND` (any other op on a missing path, a missing `old`), and
/// which of them wins.
fn conflicts_and_missing_paths(root: &Path, rev: &str, good_block: &str) {
    // Stale base: CONFLICT (and it wins over NOT_FOUND and VALIDATION_FAILED).
    let stale = "0".repeat(64);
    refused(root, &patch(&stale, new_src(), vec![append(ADA_PATH, good_block)]), &[], "CONFLICT");
    refused(root, &patch(&stale, vec![], vec![append("topics/missing.md", "x")]), &[], "CONFLICT");
    refused(root, &patch(&"0".repeat(64), vec![], vec![append(ADA_PATH, good_block)]), &[], "CONFLICT");

    // create on an existing path: CONFLICT; the sources of the patch are
    // not archived either.
    let err = refused(root, &patch(rev, new_src(), vec![create(ADA_PATH, ADA)]), &[], "CONFLICT");
    assert!(!root.join("sources/chat/_v2/fresh.md").exists());
    assert_eq!(err["path"], ADA_PATH);

    // Any other op on a missing path: NOT_FOUND.
    for e in
        [append("topics/missing.md", "x"), replace("topics/missing.md", "x"), delete("topics/missing.md")]
    {
        refused(root, &patch(rev, new_src(), vec![e]), &[], "NOT_FOUND");
    }
    refused(root, &patch(rev, vec![], vec![str_replace("topics/missing.md", "a", "b")]), &[], "NOT_FOUND");
    // A missing `old`; a later edit failing undoes the earlier ones.
    refused(root, &patch(rev, vec![], vec![str_replace(ADA_PATH, "60k", "70k")]), &[], "NOT_FOUND");
    refused(
        root,
        &patch(rev, new_src(), vec![append(ADA_PATH, good_block), delete("topics/missing.md")]),
        &[],
        "NOT_FOUND",
    );
    // A `str_replace` sees the previous edits of the same patch: deleted,
    // the file is missing for the next edit.
    refused(
        root,
        &patch(rev, vec![], vec![delete(ADA_PATH), str_replace(ADA_PATH, "Ada", "Bo")]),
        &[],
        "NOT_FOUND",
    );
    // NOT_FOUND wins over VALIDATION_FAILED.
    refused(
        root,
        &patch(
            rev,
            vec![],
            vec![create("topics/bad.md", "no citation ^x1\n"), append("topics/gone.md", "x")],
        ),
        &[],
        "NOT_FOUND",
    );
}

/// `INVALID_ARGUMENT`: an empty `old`, bad paths, malformed patches and
/// twins.
fn invalid_arguments(root: &Path, rev: &str, good_block: &str) {
    let stale = "0".repeat(64);
    // An empty `old`: INVALID_ARGUMENT, at edits[0].old.
    let err =
        refused(root, &patch(rev, vec![], vec![str_replace(ADA_PATH, "", "x")]), &[], "INVALID_ARGUMENT");
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
            let err = refused(root, &patch(rev, vec![], vec![e]), &[], "INVALID_ARGUMENT");
            assert_eq!(err["path"], "edits[0].path", "{bad:?}");
        }
        let err = refused(
            root,
            &patch(&stale, vec![], vec![append(ADA_PATH, good_block), create(bad, "x")]),
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
    refused(root, &patch(rev, vec![], vec![create("topics/People/x.md", "x")]), &[], "INVALID_ARGUMENT");
    refused(
        root,
        &patch(rev, vec![], vec![create("topics/n/a.md", "x"), create("topics/N/a.md", "y")]),
        &[],
        "INVALID_ARGUMENT",
    );
}

/// `PERMISSION_DENIED` for the paired tier's replace, str_replace and
/// delete, and what wins over it and what it wins over.
fn paired_tier_refusals(root: &Path, rev: &str) {
    let stale = "0".repeat(64);
    // The paired tier: replace, str_replace and delete are refused, even on
    // a file the same patch creates; INVALID_ARGUMENT wins over them.
    let paired = ["--tier", "paired"];
    for e in [replace(ADA_PATH, ADA), str_replace(ADA_PATH, "50k", "60k"), delete(ADA_PATH)] {
        let err = refused(root, &patch(rev, vec![], vec![e]), &paired, "PERMISSION_DENIED");
        assert_eq!(err["path"], "edits[0]");
    }
    let created = format!("# P\n{}", appended_block("Paired note.", "e-00000000ab", "p1"));
    refused(
        root,
        &patch(rev, vec![], vec![create("topics/p.md", &created), replace("topics/p.md", &created)]),
        &paired,
        "PERMISSION_DENIED",
    );
    refused(root, &patch(rev, vec![], vec![replace("../x.md", "x")]), &paired, "INVALID_ARGUMENT");
    refused(
        root,
        &patch(rev, vec![], vec![delete(ADA_PATH), create("/abs.md", "x")]),
        &paired,
        "INVALID_ARGUMENT",
    );
    refused(root, &patch(rev, vec![], vec![str_replace(ADA_PATH, "", "x")]), &paired, "INVALID_ARGUMENT");
    // PERMISSION_DENIED wins over CONFLICT (decided before the lock).
    refused(root, &patch(&stale, vec![], vec![delete(ADA_PATH)]), &paired, "PERMISSION_DENIED");
}

/// `VALIDATION_FAILED` with every diagnostic listed: an unknown source, a
/// wrong anchor, a duplicate block id, a link broken elsewhere.
fn validation_failures(root: &Path, rev: &str) {
    // A block citing a record that is not archived: VALIDATION_FAILED with
    // every diagnostic listed.
    let unknown = format!(
        "# X\n\nCites nothing real.[^e-00000000ac] ^x1\n\n{}\n",
        footnote("e-00000000ac", "team-1", "m404", "../")
    );
    let err = refused(
        root,
        &patch(rev, new_src(), vec![create("topics/x.md", &unknown)]),
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
        &patch(rev, new_src(), vec![create("topics/x.md", &wrong_anchor)]),
        &[],
        "VALIDATION_FAILED",
    );
    assert_eq!(err["diagnostics"][0]["code"], "UNKNOWN_SOURCE");

    // A block id already used in another file: both occurrences reported.
    let dup = format!("# D\n{}", appended_block("Same id as Ada's.", "e-00000000ad", "a1"));
    let err = refused(
        root,
        &patch(rev, vec![], vec![create("topics/people/dup.md", &dup)]),
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
    let err = refused(root, &patch(rev, vec![], vec![delete(ADA_PATH)]), &[], "VALIDATION_FAILED");
    assert_eq!(err["diagnostics"][0]["code"], "BROKEN_LINK", "{err}");
    assert_eq!(err["diagnostics"][0]["path"], "topics/team.md");
    let err = refused(
        root,
        &patch(rev, vec![], vec![str_replace(ADA_PATH, "^a1", "^a2")]),
        &[],
        "VALIDATION_FAILED",
    );
    assert_eq!(err["diagnostics"][0]["code"], "BROKEN_LINK", "{err}");
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
