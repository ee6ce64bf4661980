//! Which commits touched which topic blocks (`history::block_history`),
//! on a repository made by real transactions and one edit made by hand,
//! checked against the `git` command line.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use scriptorium_testkit::{ada_record, big_change, fixture, patch, revision};
use scriptorium_transaction::history::read::{log, LogFilter};
use scriptorium_transaction::history::{block_history, BlockHistory};
use scriptorium_transaction::observe::Provenance;
use scriptorium_transaction::{Base, Committer, Edit, Tier};

const WAIT: Duration = Duration::from_secs(5);

fn git(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git").arg("-C").arg(root).args(args).output().expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The fixture, then: the big change (appends `b3` to `a.md`, creates
/// `people/b.md` with `b4`, deletes `c.md` and its `b2`); `b1` edited by a model;
/// `b3` edited by hand; a record archived alone (which commits the hand
/// edit first, as `external`).
fn workspace() -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, root) = fixture();
    let mut w = Committer::open(&root, WAIT).unwrap();
    w.commit(&big_change(&revision(&root)), Tier::Owner, Base::Check).unwrap();
    let edit = Edit::StrReplace {
        path: "topics/a.md".into(),
        old: "Budget is 50k.".into(),
        new: "Budget is 60k.".into(),
    };
    let mut p = patch(&revision(&root), vec![], vec![edit]);
    p.message = "raise the budget".into();
    let by = Provenance::of_turns("model:qwen", "s-9", vec!["n1".into(), "n2".into()]);
    w.commit_as(&p, Tier::Owner, Base::Check, &by).unwrap();
    drop(w);
    let a = root.join("topics/a.md");
    let text = std::fs::read_to_string(&a).unwrap();
    assert!(text.contains("Venue is Lisbon."));
    std::fs::write(&a, text.replace("Venue is Lisbon.", "Venue is Porto.")).unwrap();
    let mut w = Committer::open(&root, WAIT).unwrap();
    let mut p = patch(&revision(&root), vec![ada_record("m9", "the room is 4b")], vec![]);
    p.message = "archive a record".into();
    w.commit_as(&p, Tier::Owner, Base::Any, &Provenance::by("archive")).unwrap();
    drop(w);
    (dir, root)
}

fn messages(h: &BlockHistory) -> Vec<&str> {
    h.entries.iter().map(|e| e.message.as_str()).collect()
}

#[test]
fn every_block_names_the_commits_that_added_changed_or_removed_it() {
    let (_dir, root) = workspace();
    let h = block_history(&root, 1000).unwrap();
    assert!(!h.truncated);
    // The commits are the log's, newest first, as git lists them.
    assert_eq!(h.entries, log(&root, &LogFilter::default()).unwrap());
    let ids: Vec<&str> = h.entries.iter().map(|e| e.commit.as_str()).collect();
    assert_eq!(git(&root, &["log", "--format=%H"]).lines().collect::<Vec<_>>(), ids);
    let n = h.entries.len();
    assert_eq!(
        &messages(&h)[..4],
        ["archive a record", "edits made outside Scriptorium (1 files)", "raise the budget", "test"]
    );
    let stamps: Vec<(&str, &str)> = h.entries.iter().map(|e| (e.writer.as_str(), e.tier.as_str())).collect();
    assert_eq!(
        &stamps[..3],
        [("archive", "owner"), ("external", "owner"), ("model:qwen", "owner")],
        "what made each commit, from its trailers"
    );
    assert_eq!(h.entries[2].session.as_deref(), Some("s-9"));
    assert_eq!(h.entries[2].turns, ["n1", "n2"]);
    // The fixture's commit is the oldest; it made b1 and b2.
    let first = n - 1;
    let at = |key: &str| h.touched.get(key).cloned().unwrap_or_default();
    assert_eq!(at("topics/a.md#^b1"), [2, first], "changed by \"raise the budget\", made first");
    assert_eq!(at("topics/c.md#^b2"), [3, first], "removed by the big change");
    assert_eq!(at("topics/a.md#^b3"), [1, 3], "edited by hand, added by the big change");
    assert_eq!(at("topics/people/b.md#^b4"), [3]);
    assert!(h.touched.keys().all(|k| k.starts_with("topics/")), "{:?}", h.touched.keys());
    assert!(h.touched.values().all(|v| !v.contains(&0)), "archiving a record touches no block");
    // The per-block view agrees with git's own diff of each commit.
    for (key, commits) in &h.touched {
        let path = key.split("#^").next().unwrap();
        for &k in commits {
            let c = &h.entries[k].commit;
            let changed = if k == first {
                git(&root, &["show", "--format=", "--name-only", c])
            } else {
                git(&root, &["diff", "--name-only", &format!("{c}~1"), c])
            };
            assert!(changed.lines().any(|l| l == path), "{c} changed {path}: {changed}");
        }
    }
}

#[test]
fn a_limit_keeps_the_newest_commits_and_says_more_exist() {
    let (_dir, root) = workspace();
    let all = block_history(&root, 1000).unwrap();
    let n = all.entries.len();
    let h = block_history(&root, 3).unwrap();
    assert!(h.truncated);
    assert_eq!(h.entries, all.entries[..3]);
    assert_eq!(h.touched.get("topics/a.md#^b1"), Some(&vec![2]));
    assert_eq!(h.touched.get("topics/a.md#^b3"), Some(&vec![1]));
    assert!(!h.touched.contains_key("topics/c.md#^b2"), "only the big change and the fixture touched it");
    let exact = block_history(&root, n).unwrap();
    assert!(!exact.truncated, "no commit is older than the last of {n}");
    assert_eq!(exact, all);
    let none = block_history(&root, 0).unwrap();
    assert!(none.truncated && none.entries.is_empty() && none.touched.is_empty());
}
