//! The git history of a workspace: one commit per installed transaction,
//! made exactly once whatever crashes, edits made outside committed first,
//! and an archive whose committed frames no write launders. Checked with the
//! `git` command line, as a person would read it.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use scriptorium_testkit::{ada_record, big_change, block, fixture, patch, revision, THREAD};
use scriptorium_transaction::disk::{Faults, Mode};
use scriptorium_transaction::history::Stamp;
use scriptorium_transaction::{install, Base, Code, Committer, Edit, Tier};

const WAIT: Duration = Duration::from_secs(5);

fn git(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git").arg("-C").arg(root).args(args).output().expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Every commit's stamp, newest first.
fn stamps(root: &Path) -> Vec<Stamp> {
    let log = git(root, &["log", "--format=%B%x00"]);
    log.split('\0')
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(|m| Stamp::parse(m).unwrap_or_else(|| panic!("a commit without a stamp: {m:?}")))
        .collect()
}

fn assert_sound(root: &Path) {
    git(root, &["fsck", "--strict"]);
    assert_eq!(git(root, &["status", "--porcelain"]), "", "git status is clean after a transaction");
}

#[test]
fn each_transaction_is_one_commit_whose_trailers_say_what_made_it() {
    let (_dir, root) = fixture();
    let before = revision(&root);
    let mut w = Committer::open(&root, WAIT).unwrap();
    let by = scriptorium_transaction::observe::Provenance::of_turns(
        "model:qwen",
        "s-9",
        vec!["n1".into(), "n2".into()],
    );
    let done = w.commit_as(&big_change(&before), Tier::Owner, Base::Check, &by).unwrap();
    drop(w);
    let all = stamps(&root);
    assert_eq!(all.len(), 2, "the fixture's commit and this one: {all:?}");
    let head = &all[0];
    assert_eq!(head.revision, done.revision);
    assert_eq!((head.writer.as_str(), head.tier.as_str()), ("model:qwen", "owner"));
    assert_eq!(head.session.as_deref(), Some("s-9"));
    assert_eq!(head.turns, ["n1", "n2"]);
    assert_eq!(all[1].revision, before);
    assert_eq!(all[1].writer, "external");
    // The diff of the commit is the transaction, nothing else.
    let diff = git(&root, &["diff", "--name-status", "HEAD~1", "HEAD"]);
    assert_eq!(diff, "M\tsources/chat/_v2/t.md\nM\ttopics/a.md\nD\ttopics/c.md\nA\ttopics/people/b.md\n");
    assert_eq!(git(&root, &["diff", "HEAD"]), "", "the working tree is the head");
    let tree = git(&root, &["ls-tree", "-r", "--name-only", "HEAD"]);
    assert!(
        tree.lines().all(|p| p == ".gitignore" || p.starts_with("topics/") || p.starts_with("sources/")),
        "{tree}"
    );
    assert!(
        !tree.contains("core.md\n") || tree.contains("topics/core.md"),
        "derived views are not committed"
    );
    assert_sound(&root);
}

#[test]
fn a_transaction_that_changes_nothing_makes_no_commit() {
    let (_dir, root) = fixture();
    let before = stamps(&root).len();
    let rev = revision(&root);
    let mut w = Committer::open(&root, WAIT).unwrap();
    // The same records again: all duplicates.
    let p = patch(&rev, vec![ada_record("m1", "the budget is 50k")], vec![]);
    let done = w.commit(&p, Tier::Owner, Base::Check).unwrap();
    assert!(done.changed.is_empty());
    drop(w);
    assert_eq!(stamps(&root).len(), before);
}

/// The commit count and head stamp once the workspace is at `rev`.
fn assert_committed_once(root: &Path, rev: &str, at: &str) {
    let all = stamps(root);
    assert_eq!(all[0].revision, rev, "{at}: the head records the workspace");
    assert_eq!(all.iter().filter(|s| s.revision == rev).count(), 1, "{at}: one commit of the revision");
    assert_sound(root);
}

#[test]
fn a_crash_at_any_step_ends_in_exactly_one_commit_of_the_revision_installed() {
    let (_dir, root) = fixture();
    let old_rev = revision(&root);
    let faults = Faults::new(Mode::Off);
    let calls = {
        let mut w = Committer::open_with(&root, WAIT, &faults).unwrap();
        w.commit(&big_change(&old_rev), Tier::Owner, Base::Check).unwrap();
        faults.calls()
    };
    let mut rolled = 0;
    for i in 0..=calls {
        let (_dir, root) = fixture();
        let faults = Faults::new(Mode::CrashAfter(i));
        {
            let mut w = Committer::open_with(&root, WAIT, &faults).unwrap();
            let _ = w.commit(&big_change(&old_rev), Tier::Owner, Base::Check);
        }
        rolled += usize::from(install::pending(&root));
        drop(Committer::open(&root, WAIT).unwrap());
        let rev = revision(&root);
        assert_committed_once(&root, &rev, &format!("crash after call {i}"));
        // Recovering again changes nothing; the next transaction commits.
        drop(Committer::open(&root, WAIT).unwrap());
        assert_committed_once(&root, &rev, &format!("crash after call {i}, reopened"));
        let mut w = Committer::open(&root, WAIT).unwrap();
        let more = Edit::Append { path: "topics/a.md".into(), content: block(9, "m2", "More.", 0) };
        let next = w.commit(&patch(&rev, vec![], vec![more]), Tier::Owner, Base::Check).unwrap();
        drop(w);
        assert_committed_once(&root, &next.revision, &format!("crash after call {i}, then a commit"));
    }
    assert!(rolled > 3, "only {rolled} crash points left an install to roll forward");
}

#[test]
fn a_crash_during_recovery_still_commits_once() {
    let (_dir, root) = fixture();
    let old_rev = revision(&root);
    let mut exercised = 0;
    for i in 0..60 {
        let (_dir, root) = fixture();
        let faults = Faults::new(Mode::CrashAfter(i));
        {
            let mut w = Committer::open_with(&root, WAIT, &faults).unwrap();
            let _ = w.commit(&big_change(&old_rev), Tier::Owner, Base::Check);
        }
        if !install::pending(&root) {
            continue;
        }
        exercised += 1;
        for j in 0..40 {
            let again = Faults::new(Mode::CrashAfter(j));
            let _ = Committer::open_with(&root, WAIT, &again);
            if !install::pending(&root) {
                break;
            }
        }
        drop(Committer::open(&root, WAIT).unwrap());
        assert_committed_once(&root, &revision(&root), &format!("crash after call {i}, crashes in recovery"));
    }
    assert!(exercised > 3);
}

#[test]
fn an_edit_made_outside_is_committed_first_as_its_own_external_commit() {
    let (_dir, root) = fixture();
    std::fs::write(root.join("topics/c.md"), format!("# C\n{}", block(2, "m2", "Deadline is Friday.", 0)))
        .unwrap();
    let rev = revision(&root);
    let mut w = Committer::open(&root, WAIT).unwrap();
    let edit = Edit::Append { path: "topics/a.md".into(), content: block(8, "m2", "A note.", 0) };
    w.commit(&patch(&rev, vec![], vec![edit]), Tier::Owner, Base::Check).unwrap();
    drop(w);
    let all = stamps(&root);
    assert_eq!(all[1].writer, "external");
    assert_eq!(all[1].revision, rev);
    assert_eq!(git(&root, &["diff", "--name-only", "HEAD~2", "HEAD~1"]), "topics/c.md\n");
    assert_eq!(git(&root, &["diff", "--name-only", "HEAD~1", "HEAD"]), "topics/a.md\n");
    assert_sound(&root);
}

#[test]
fn an_existing_repository_keeps_its_other_files_and_staged_changes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    git(&root, &["init", "-q"]);
    std::fs::write(root.join("README.md"), "mine\n").unwrap();
    std::fs::write(root.join("notes.txt"), "draft\n").unwrap();
    git(&root, &["add", "README.md"]);
    git(&root, &["-c", "user.name=Me", "-c", "user.email=me@x", "commit", "-qm", "my readme"]);
    std::fs::write(root.join("README.md"), "mine, edited\n").unwrap();
    git(&root, &["add", "README.md"]);
    let mut w = Committer::open(&root, WAIT).unwrap();
    let create = Edit::Create {
        path: "topics/a.md".into(),
        content: format!("# A\n{}", block(1, "m1", "Budget.", 0)),
    };
    w.commit(&patch("", vec![ada_record("m1", "the budget")], vec![create]), Tier::Owner, Base::Any).unwrap();
    drop(w);
    let tree = git(&root, &["ls-tree", "-r", "--name-only", "HEAD"]);
    assert_eq!(tree, ".gitignore\nREADME.md\nsources/chat/_v2/t.md\ntopics/a.md\n");
    assert_eq!(git(&root, &["show", "HEAD:README.md"]), "mine\n", "the user's staged edit is not committed");
    assert_eq!(git(&root, &["diff", "--cached", "--name-only"]), "README.md\n", "and stays staged");
    assert_eq!(git(&root, &["log", "--format=%s"]).lines().last(), Some("my readme"));
}

#[test]
fn history_off_makes_no_repository() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("scriptorium.toml"), "[memory]\nhistory = \"off\"\n").unwrap();
    let mut w = Committer::open(&root, WAIT).unwrap();
    w.commit(&patch("", vec![ada_record("m1", "x")], vec![]), Tier::Owner, Base::Any).unwrap();
    assert!(!root.join(".git").exists());
    std::fs::write(root.join("scriptorium.toml"), "[memory]\nhistory = \"sometimes\"\n").unwrap();
    let rev = revision(&root);
    let err =
        w.commit(&patch(&rev, vec![ada_record("m2", "y")], vec![]), Tier::Owner, Base::Any).unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument);
    assert_eq!(err.path.as_deref(), Some("scriptorium.toml"));
}

#[test]
fn the_configured_identity_makes_the_commits() {
    let (_dir, root) = fixture();
    std::fs::write(
        root.join("scriptorium.toml"),
        "[memory]\nhistory_author = \"Ada Memory <ada@example.org>\"\n",
    )
    .unwrap();
    let rev = revision(&root);
    let mut w = Committer::open(&root, WAIT).unwrap();
    w.commit(&patch(&rev, vec![ada_record("m9", "z")], vec![]), Tier::Owner, Base::Check).unwrap();
    drop(w);
    assert_eq!(
        git(&root, &["log", "-1", "--format=%an <%ae>|%cn <%ce>"]),
        "Ada Memory <ada@example.org>|Ada Memory <ada@example.org>\n"
    );
}

#[test]
fn a_rewritten_record_is_never_committed() {
    let (_dir, root) = fixture();
    let committed = git(&root, &["show", &format!("HEAD:{THREAD}")]);
    let path = root.join(THREAD);
    let text = std::fs::read_to_string(&path).unwrap().replace("the budget is 50k", "the budget is 90k");
    std::fs::write(&path, &text).unwrap();
    // A topic edit goes through; the external commit leaves the archive file
    // as committed.
    let rev = revision(&root);
    let mut w = Committer::open(&root, WAIT).unwrap();
    let edit = Edit::Append { path: "topics/a.md".into(), content: block(8, "m2", "A note.", 0) };
    w.commit(&patch(&rev, vec![], vec![edit]), Tier::Owner, Base::Check).unwrap();
    assert_eq!(git(&root, &["show", &format!("HEAD:{THREAD}")]), committed);
    // Appending to the tampered file is refused, and nothing is written.
    let rev = revision(&root);
    let err =
        w.commit(&patch(&rev, vec![ada_record("m7", "new")], vec![]), Tier::Owner, Base::Check).unwrap_err();
    assert_eq!(err.code, Code::Tampered, "{err}");
    assert_eq!(err.path.as_deref(), Some(THREAD));
    assert!(err.message.contains("chat/t/m1"), "{}", err.message);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    drop(w);
    let log = git(&root, &["log", "-p", "--format=%H"]);
    assert!(!log.contains("90k"), "the tampered bytes are in no commit");
}

#[test]
fn a_lock_another_git_holds_postpones_the_commit_and_never_fails_the_install() {
    let (_dir, root) = fixture();
    let lock = root.join(".git/index.lock");
    std::fs::write(&lock, "").unwrap();
    let rev = revision(&root);
    let mut w = Committer::open(&root, WAIT).unwrap();
    let first = w.commit(&big_change(&rev), Tier::Owner, Base::Check).unwrap();
    assert!(first.warnings.iter().any(|m| m.contains("postponed")), "{:?}", first.warnings);
    assert!(!install::pending(&root), "the install is complete: readers are not blocked");
    assert_eq!(revision(&root), first.revision);
    // While git still refuses, the next transaction is refused before
    // anything is written.
    let more = Edit::Append { path: "topics/a.md".into(), content: block(9, "m2", "More.", 0) };
    let err =
        w.commit(&patch(&first.revision, vec![], vec![more.clone()]), Tier::Owner, Base::Check).unwrap_err();
    assert_eq!((err.code, err.path.as_deref()), (Code::Io, Some(".git")), "{err}");
    assert!(err.message.contains("postponed"), "{err}");
    assert_eq!(revision(&root), first.revision);
    // Once the lock is gone, the postponed commit comes first, then this one.
    std::fs::remove_file(&lock).unwrap();
    let next = w.commit(&patch(&first.revision, vec![], vec![more]), Tier::Owner, Base::Check).unwrap();
    assert!(next.warnings.is_empty(), "{:?}", next.warnings);
    drop(w);
    let all = stamps(&root);
    assert_eq!(all[0].revision, next.revision);
    assert_eq!(all[1].revision, first.revision);
    assert_committed_once(&root, &next.revision, "after the postponed commit");
}
