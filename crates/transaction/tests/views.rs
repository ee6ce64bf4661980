//! The derived views a commit assembles from the pieces of earlier commits
//! are the views a rebuild from scratch gives: past the 1,000-line cap of
//! `recent_events.jsonl`, with links whose targets change eligibility, with
//! file names whose runs interleave; and views torn, truncated, deleted or
//! left stale by hand are recognised and rebuilt.

use std::path::Path;
use std::time::Duration;

use scriptorium_source_archive::{Role, SourceId, SourceRecord, Speaker};
use scriptorium_testkit::{assert_views_rebuilt, derived, patch, revision};
use scriptorium_transaction::views::stamp::{self, DERIVED_FROM};
use scriptorium_transaction::{Base, Committer, Edit, Tier};

const WAIT: Duration = Duration::from_secs(5);

fn rec(n: u32) -> SourceRecord {
    let id = SourceId::new("chat", "t", &format!("m{n}")).unwrap();
    let speaker = Speaker::from_transport(Some("7391"), Some("Ada"));
    SourceRecord::new(id, Role::User, "2026-01-01T00:00:00Z", speaker, false, format!("fact number {n}"))
        .unwrap()
}

/// Block `n` of a file directly under `topics/`, its evidence `minute`
/// minutes into 2026 (so blocks fall on different days), with `extra`
/// text (links) before its footnote.
fn blk(n: u32, minute: u32, extra: &str) -> String {
    let id = SourceId::new("chat", "t", &format!("m{n}")).unwrap();
    let (day, rest) = (minute / 1440, minute % 1440);
    format!(
        "\nFact number {n}.{extra}[^e-{n:010x}] ^b{n}\n\n[^e-{n:010x}]: Time: `2026-{:02}-{:02}T{:02}:{:02}:00Z`; Sources: [{}](../{}#{})\n",
        1 + day / 28,
        1 + day % 28,
        rest / 60,
        rest % 60,
        id.text(),
        id.v2_path(),
        id.anchor()
    )
}

fn commit(root: &Path, sources: Vec<SourceRecord>, edits: Vec<Edit>) {
    let mut w = Committer::open(root, WAIT).unwrap();
    let base = revision(root);
    let done = w.commit(&patch(&base, sources, edits), Tier::Owner, Base::Check).unwrap();
    assert!(!done.rebuilt_views, "the views did not follow the change");
}

fn workspace() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    (dir, root)
}

fn lines(root: &Path, rel: &str) -> usize {
    std::fs::read_to_string(root.join(rel)).map_or(0, |s| s.lines().count())
}

#[test]
fn commits_past_the_recent_cap_give_the_views_of_a_rebuild() {
    let (_dir, root) = workspace();
    // 12 files of 100 blocks; file f holds minutes 600·f + 5·k.
    let mut sources = Vec::new();
    let mut edits = Vec::new();
    for f in 0..12u32 {
        let mut content = format!("# File {f}\n");
        for k in 0..100u32 {
            let n = f * 100 + k + 1;
            sources.push(rec(n));
            let link = if k == 0 && f > 0 {
                format!(" See [before](f{}.md#^b{}).", f - 1, n - 100)
            } else {
                String::new()
            };
            content.push_str(&blk(n, 600 * f + 5 * k, &link));
        }
        edits.push(Edit::Create { path: format!("topics/f{f}.md"), content });
    }
    commit(&root, sources, edits);
    assert_eq!(lines(&root, "recent_events.jsonl"), 1000);
    assert_views_rebuilt(&root);
    // The newest block of all, in an old file.
    commit(
        &root,
        vec![rec(5000)],
        vec![Edit::Append { path: "topics/f3.md".into(), content: blk(5000, 9000, "") }],
    );
    assert_views_rebuilt(&root);
    // The file holding the newest hundred goes: older lines move up.
    commit(&root, Vec::new(), vec![Edit::Delete { path: "topics/f11.md".into() }]);
    assert_eq!(lines(&root, "recent_events.jsonl"), 1000);
    assert_views_rebuilt(&root);
    // A file moves to the top.
    let mut moved = "# File 0\n".to_owned();
    for k in 0..100u32 {
        moved.push_str(&blk(k + 1, 20_000 + k, ""));
    }
    commit(&root, Vec::new(), vec![Edit::Replace { path: "topics/f0.md".into(), content: moved }]);
    assert_views_rebuilt(&root);
    // A file written by hand takes an id f2 holds: both copies leave the
    // views, and so does the link from f3 to it (a full rebuild). Deleting
    // it makes f2's block eligible again, and f3's link an edge, though
    // f3 is neither changed nor linked to by what changed.
    std::fs::write(root.join("topics/twin.md"), format!("# Twin\n{}", blk(201, 10, ""))).unwrap();
    drop(Committer::open(&root, WAIT).unwrap());
    let rel = std::fs::read_to_string(root.join("relations.json")).unwrap();
    assert!(!rel.contains("\"to\":\"topics/f2.md#^b201\""), "{rel}");
    commit(&root, Vec::new(), vec![Edit::Delete { path: "topics/twin.md".into() }]);
    let rel = std::fs::read_to_string(root.join("relations.json")).unwrap();
    assert!(rel.contains("{\"from\":\"topics/f3.md#^b301\",\"to\":\"topics/f2.md#^b201\"}"), "{rel}");
    assert_views_rebuilt(&root);
}

#[test]
fn file_names_whose_runs_interleave_still_sort_whole() {
    let (_dir, root) = workspace();
    commit(
        &root,
        (1..=5).map(rec).collect(),
        vec![
            Edit::Create { path: "topics/a.md".into(), content: format!("# A\n{}", blk(1, 1, "")) },
            Edit::Create { path: "topics/z.md".into(), content: format!("# Z\n{}", blk(4, 4, "")) },
        ],
    );
    // `a.md!.md` sorts between `a.md` and `a.md#^b1`.
    commit(
        &root,
        Vec::new(),
        vec![Edit::Create {
            path: "topics/a.md!.md".into(),
            content: format!("# B\n{}", blk(2, 2, " See [a](a.md).")),
        }],
    );
    let rel = std::fs::read_to_string(root.join("relations.json")).unwrap();
    let at = |id: &str| rel.find(&format!("{{\"id\":\"{id}\"")).unwrap();
    assert!(at("topics/a.md!.md") < at("topics/a.md#^b1"), "{rel}");
    assert_views_rebuilt(&root);
    // The runs of the untouched z.md moved when the document was sorted
    // whole: they are not copied from where they were.
    commit(
        &root,
        Vec::new(),
        vec![Edit::Append { path: "topics/a.md".into(), content: blk(3, 3, " See [x](a.md!.md#^b2).") }],
    );
    assert_views_rebuilt(&root);
    commit(
        &root,
        Vec::new(),
        vec![
            Edit::Replace { path: "topics/a.md".into(), content: format!("# A\n{}", blk(1, 1, "")) },
            Edit::Delete { path: "topics/a.md!.md".into() },
        ],
    );
    assert_views_rebuilt(&root);
    commit(&root, Vec::new(), vec![Edit::Append { path: "topics/z.md".into(), content: blk(5, 5, "") }]);
    assert_views_rebuilt(&root);
}

/// A workspace with views, and its views as written.
fn with_views() -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, root) = workspace();
    commit(
        &root,
        (1..=3).map(rec).collect(),
        vec![Edit::Create {
            path: "topics/a.md".into(),
            content: format!("# A\n{}{}", blk(1, 1, ""), blk(2, 2000, " See [b](a.md#^b1).")),
        }],
    );
    (dir, root)
}

/// Opening a writer rebuilds views that were damaged, and they are then
/// those of a rebuild.
fn reopened_views_are_rebuilt(root: &Path) {
    drop(Committer::open(root, WAIT).unwrap());
    assert!(!stamp::views_torn(root));
    assert_views_rebuilt(root);
}

#[test]
fn truncated_torn_deleted_or_stale_views_are_rebuilt() {
    // Truncated.
    let (_dir, root) = with_views();
    let good = derived(&root);
    for rel in ["relations.json", "recent_events.jsonl"] {
        let bytes = std::fs::read(root.join(rel)).unwrap();
        std::fs::write(root.join(rel), &bytes[..bytes.len() / 2]).unwrap();
        assert!(stamp::views_torn(&root), "{rel} truncated");
        reopened_views_are_rebuilt(&root);
        assert_eq!(derived(&root), good);
    }
    // Torn in the middle, same length.
    let rel = root.join("recent_events.jsonl");
    let mut bytes = std::fs::read(&rel).unwrap();
    bytes[10..20].fill(b'\0');
    std::fs::write(&rel, &bytes).unwrap();
    assert!(stamp::views_torn(&root));
    reopened_views_are_rebuilt(&root);
    assert_eq!(derived(&root), good);
    // Deleted.
    std::fs::remove_file(root.join("relations.json")).unwrap();
    assert!(stamp::views_torn(&root));
    reopened_views_are_rebuilt(&root);
    assert_eq!(derived(&root), good);
    // Stale: the files of an older revision put back.
    let old = derived(&root);
    commit(&root, vec![rec(9)], vec![Edit::Append { path: "topics/a.md".into(), content: blk(9, 9000, "") }]);
    for rel in ["relations.json", "recent_events.jsonl"] {
        std::fs::write(root.join(rel), &old[rel]).unwrap();
    }
    assert!(stamp::views_torn(&root));
    reopened_views_are_rebuilt(&root);
    assert_ne!(derived(&root)["relations.json"], old["relations.json"]);
}

#[test]
fn views_written_in_another_boot_are_not_trusted_by_a_writer() {
    let Some(boot) = stamp::boot_id() else { return };
    let (_dir, root) = with_views();
    let good = derived(&root);
    // Same length, time and inode, other bytes: what a power loss can
    // leave of a file written without fsync.
    let path = root.join("relations.json");
    let when = std::fs::metadata(&path).unwrap().modified().unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.fill(b'\0');
    std::io::Write::write_all(&mut std::fs::OpenOptions::new().write(true).open(&path).unwrap(), &bytes)
        .unwrap();
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(when).unwrap();
    // Within this boot the stamp cannot tell; another boot id makes the
    // next writer rebuild.
    assert!(!stamp::views_torn(&root));
    let record = std::fs::read_to_string(root.join(DERIVED_FROM)).unwrap();
    assert!(record.contains(&format!("boot {boot}\n")), "{record}");
    std::fs::write(root.join(DERIVED_FROM), record.replace(&boot, "00000000-0000-0000-0000-000000000000"))
        .unwrap();
    drop(Committer::open(&root, WAIT).unwrap());
    assert_eq!(derived(&root), good);
}
