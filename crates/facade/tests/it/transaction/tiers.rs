//! The tiers and promotion: the paired tier may create and append (and
//! archive only pending, speakerless records); promotion trusts a pending
//! source without touching the archive or the revision.

use super::*;

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
            "written": {"batches": 0, "records": 0, "changed": [], "limits": []}})],
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
