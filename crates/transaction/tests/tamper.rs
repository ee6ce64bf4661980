//! Tamper evidence: a committed archive frame changed, removed or moved is
//! found, in the working tree and in any commit of the history (one made
//! by hand with the `git` command line included); a clean append is not;
//! the cache of the last clean commit is used and is dropped when history
//! is rewritten.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use scriptorium_source_archive::v2;
use scriptorium_testkit::{ada_record, fixture, patch, THREAD};
use scriptorium_transaction::history::frames::{Breach, Tampered};
use scriptorium_transaction::history::tamper::{self, VERIFIED_CACHE};
use scriptorium_transaction::{Base, Code, Committer, Tier};

fn git(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["-c", "user.name=Someone", "-c", "user.email=someone@example.com"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The archive file as the fixture's records `m1..m3` (and more) in the
/// order named.
fn thread_file(messages: &[&str]) -> Vec<u8> {
    let content = |m: &str| match m {
        "m1" => "the budget is 50k".to_owned(),
        "m2" => "the deadline is friday".to_owned(),
        "m3" => "hello".to_owned(),
        other => format!("said {other}"),
    };
    let records: Vec<_> = messages.iter().map(|m| ada_record(m, &content(m))).collect();
    v2::write_file(&records)
}

fn append(root: &Path, message: &str) -> Result<(), scriptorium_transaction::Error> {
    let mut w = Committer::open(root, Duration::from_secs(5))?;
    let p = patch("", vec![ada_record(message, &format!("said {message}"))], vec![]);
    w.commit(&p, Tier::Owner, Base::Any).map(|_| ())
}

fn one(found: Vec<Tampered>) -> (String, Option<String>, Breach) {
    assert_eq!(found.len(), 1, "{found:?}");
    let t = &found[0];
    (t.path.clone(), t.source_id.clone(), t.breach)
}

fn change_one_byte(root: &Path) {
    let path = root.join(THREAD);
    let mut bytes = std::fs::read(&path).unwrap();
    let at = memchr::memmem::find(&bytes, b"deadline is friday").unwrap();
    bytes[at] = b'D';
    std::fs::write(&path, bytes).unwrap();
}

#[test]
fn the_fixture_is_the_file_these_tests_rewrite() {
    let (_dir, root) = fixture();
    assert_eq!(std::fs::read(root.join(THREAD)).unwrap(), thread_file(&["m1", "m2", "m3"]));
    assert_eq!(tamper::verify(&root).unwrap(), vec![]);
}

#[test]
fn clean_appends_are_not_tampering() {
    let (_dir, root) = fixture();
    append(&root, "m4").unwrap();
    // Appended by hand, not yet committed: still clean.
    std::fs::write(root.join(THREAD), thread_file(&["m1", "m2", "m3", "m4", "m5"])).unwrap();
    assert_eq!(tamper::verify(&root).unwrap(), vec![]);
    assert!(tamper::tampered_files(&root, &[THREAD]).unwrap().is_empty());
}

#[test]
fn a_changed_byte_in_the_working_tree_is_found() {
    let (_dir, root) = fixture();
    change_one_byte(&root);
    let (path, id, breach) = one(tamper::verify(&root).unwrap());
    assert_eq!((path.as_str(), id.as_deref(), breach), (THREAD, Some("chat/t/m2"), Breach::Changed));
    let named = tamper::tampered_files(&root, &[THREAD, "sources/chat/_v2/other.md", "topics/a.md"]).unwrap();
    assert_eq!(named.into_iter().collect::<Vec<_>>(), vec![THREAD.to_owned()]);
}

#[test]
fn a_removed_frame_and_a_swap_are_found() {
    let (_dir, root) = fixture();
    std::fs::write(root.join(THREAD), thread_file(&["m1", "m3"])).unwrap();
    let (_, id, breach) = one(tamper::verify(&root).unwrap());
    assert_eq!((id.as_deref(), breach), (Some("chat/t/m2"), Breach::Removed));
    std::fs::write(root.join(THREAD), thread_file(&["m1", "m3", "m2"])).unwrap();
    let (_, _, breach) = one(tamper::verify(&root).unwrap());
    assert_eq!(breach, Breach::Reordered);
    std::fs::remove_file(root.join(THREAD)).unwrap();
    let (path, id, breach) = one(tamper::verify(&root).unwrap());
    assert_eq!((path.as_str(), id.as_deref(), breach), (THREAD, Some("chat/t/m1"), Breach::Removed));
}

#[test]
fn a_tampered_commit_made_by_hand_is_found_and_never_laundered() {
    let (_dir, root) = fixture();
    append(&root, "m4").unwrap();
    change_one_byte(&root);
    git(&root, &["commit", "-qam", "tidy the archive"]);
    let head = git(&root, &["rev-parse", "HEAD"]);
    // A write on top of it is refused, before anything is written.
    let err = append(&root, "m5").unwrap_err();
    assert_eq!((err.code, err.path.as_deref()), (Code::Tampered, Some(THREAD)), "{err}");
    assert!(err.message.contains("chat/t/m2"), "{err}");
    assert_eq!(git(&root, &["rev-parse", "HEAD"]), head);
    let found = tamper::verify(&root).unwrap();
    assert_eq!(one(found.clone()), (THREAD.to_owned(), Some("chat/t/m2".to_owned()), Breach::Changed));
    // The working tree is the tampered head, yet search is told.
    assert_eq!(tamper::tampered_files(&root, &[THREAD]).unwrap().len(), 1);
    // Later commits do not hide it, with or without the cache.
    std::fs::write(root.join("topics/later.md"), "# Later\n").unwrap();
    git(&root, &["add", "topics/later.md"]);
    git(&root, &["commit", "-qm", "a later note"]);
    assert_eq!(tamper::verify(&root).unwrap(), found);
    std::fs::remove_file(root.join(VERIFIED_CACHE)).unwrap();
    assert_eq!(tamper::verify(&root).unwrap(), found);
}

#[test]
fn a_tampering_in_the_working_tree_is_refused_by_a_write_and_never_committed() {
    let (_dir, root) = fixture();
    let head = git(&root, &["rev-parse", "HEAD"]);
    std::fs::write(root.join(THREAD), thread_file(&["m1", "m3"])).unwrap();
    let err = append(&root, "m4").unwrap_err();
    assert_eq!(err.code, Code::Tampered, "{err}");
    assert_eq!(std::fs::read(root.join(THREAD)).unwrap(), thread_file(&["m1", "m3"]));
    assert_eq!(git(&root, &["rev-parse", "HEAD"]), head);
    assert_eq!(one(tamper::verify(&root).unwrap()).2, Breach::Removed);
}

#[test]
fn the_cache_is_used_and_dropped_when_history_is_rewritten() {
    let (_dir, root) = fixture();
    append(&root, "m4").unwrap();
    assert_eq!(tamper::verify(&root).unwrap(), vec![]);
    let cached = std::fs::read_to_string(root.join(VERIFIED_CACHE)).unwrap();
    assert_eq!(cached, git(&root, &["rev-parse", "HEAD"]));

    change_one_byte(&root);
    git(&root, &["commit", "-qam", "tidy the archive"]);
    assert_eq!(one(tamper::verify(&root).unwrap()).1.as_deref(), Some("chat/t/m2"));
    let advanced = std::fs::read_to_string(root.join(VERIFIED_CACHE)).unwrap();
    assert!(advanced.starts_with(&git(&root, &["rev-parse", "HEAD"])), "{advanced}");
    assert!(advanced.contains("chat/t/m2"), "the finding is cached with its commit: {advanced}");

    // A cache naming the head is trusted: the walk stops there.
    std::fs::write(root.join(VERIFIED_CACHE), git(&root, &["rev-parse", "HEAD"])).unwrap();
    assert_eq!(tamper::verify(&root).unwrap(), vec![]);

    // History rewritten: the cached commit is no longer an ancestor of the
    // head, so everything is walked again.
    git(&root, &["commit", "-q", "--amend", "-m", "reworded"]);
    assert_eq!(one(tamper::verify(&root).unwrap()).1.as_deref(), Some("chat/t/m2"));

    // A cache naming no commit is ignored.
    std::fs::write(root.join(VERIFIED_CACHE), "not a commit\n").unwrap();
    assert_eq!(one(tamper::verify(&root).unwrap()).1.as_deref(), Some("chat/t/m2"));
}

#[test]
fn a_workspace_without_history_verifies_empty() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(tamper::verify(dir.path()).unwrap(), vec![]);
    let (_dir, root) = fixture();
    std::fs::write(root.join("scriptorium.toml"), "[memory]\nhistory = \"off\"\n").unwrap();
    change_one_byte(&root);
    assert_eq!(tamper::verify(&root).unwrap(), vec![]);
    assert!(tamper::tampered_files(&root, &[THREAD]).unwrap().is_empty());
}

/// 10,000 commits of appends over 100 archive files (made with `git
/// fast-import`): the first check walks them all, the next reads the cache.
/// Run with `--ignored --nocapture` to see the times.
#[test]
#[ignore = "a measurement: builds a history of 10,000 commits"]
#[allow(clippy::print_stderr)]
fn ten_thousand_commits_verify_in_reasonable_time() {
    use std::io::Write;
    use std::time::Instant;

    let (_dir, root) = fixture();
    let branch = git(&root, &["symbolic-ref", "HEAD"]);
    let head = git(&root, &["rev-parse", "HEAD"]);
    let mut files: Vec<Vec<u8>> = vec![v2::write_file(&[]); 100];
    let mut stream = Vec::new();
    for n in 0..10_000usize {
        let k = n % 100;
        let id =
            scriptorium_source_archive::SourceId::new("chat", &format!("t{k}"), &format!("m{n}")).unwrap();
        let record = scriptorium_source_archive::SourceRecord::new(
            id,
            scriptorium_source_archive::Role::User,
            "2026-08-09T10:11:12Z",
            None,
            false,
            format!("record number {n}, a sentence of ordinary length to make the frame realistic"),
        )
        .unwrap();
        v2::write_frame(&record, &mut files[k]);
        let msg = format!("append m{n}");
        write!(stream, "commit {}\ncommitter A <a@b> {n} +0000\ndata {}\n{msg}\n", branch.trim(), msg.len())
            .unwrap();
        if n == 0 {
            writeln!(stream, "from {}", head.trim()).unwrap();
        }
        write!(stream, "M 100644 inline sources/chat/_v2/t{k}.md\ndata {}\n", files[k].len()).unwrap();
        stream.extend_from_slice(&files[k]);
        stream.push(b'\n');
    }
    let mut child = Command::new("git")
        .arg("-C")
        .arg(&root)
        .args(["fast-import", "--quiet"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&stream).unwrap();
    assert!(child.wait().unwrap().success());
    git(&root, &["reset", "-q", "--hard"]);

    let start = Instant::now();
    assert_eq!(tamper::verify(&root).unwrap(), vec![]);
    let full = start.elapsed();
    let start = Instant::now();
    assert_eq!(tamper::verify(&root).unwrap(), vec![]);
    let cached = start.elapsed();
    eprintln!("10,000 commits: full walk {full:?}, with the cache {cached:?}");
    assert!(cached < full, "the cache did not shorten the walk");
}
