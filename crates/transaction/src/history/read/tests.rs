//! Tests of reading the history: naming commits (prefixes, revisions,
//! `HEAD~N`), the tree diff, and the log filters, on repositories made with
//! `git fast-import`.

use std::io::Write;
use std::path::Path;

use super::*;

/// A repository of `n` empty commits made with `git fast-import`, each
/// stamped with revision `{k:064x}` and session `s-{k % 3}`.
fn history_of(n: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(dir.path()).args(args).output();
    assert!(git(&["init", "-q"]).unwrap().status.success());
    let mut stream = String::new();
    for k in 0..n {
        let msg = format!(
            "commit {k}\n\nScriptorium-Revision: {k:064x}\nScriptorium-Writer: update\nScriptorium-Tier: owner\nScriptorium-Session: s-{}\n",
            k % 3
        );
        stream.push_str(&format!(
            "commit refs/heads/master\ncommitter T <t@example.com> {} +0200\ndata {}\n{msg}\n",
            1_700_000_000 + k,
            msg.len()
        ));
    }
    let mut child = std::process::Command::new("git")
        .arg("-C")
        .arg(dir.path())
        .args(["fast-import", "--quiet"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stream.as_bytes()).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(git(&["symbolic-ref", "HEAD", "refs/heads/master"]).unwrap().status.success());
    dir
}

fn ids(root: &Path) -> Vec<String> {
    log(root, &LogFilter::default()).unwrap().into_iter().map(|e| e.commit).collect()
}

#[test]
fn commits_are_named_by_prefix_revision_and_head_n() {
    let dir = history_of(1500);
    let root = dir.path();
    let all = ids(root);
    assert_eq!(all.len(), 1500);
    let newest = log(root, &LogFilter::default()).unwrap().remove(0);
    assert_eq!(newest.message, "commit 1499");
    assert_eq!(newest.time, "2023-11-14T22:38:19Z", "UTC, whatever the offset");
    assert_eq!(resolve(root, "HEAD").unwrap(), all[0]);
    assert_eq!(resolve(root, "HEAD~3").unwrap(), all[3]);
    assert_eq!(resolve(root, &all[7]).unwrap(), all[7]);
    assert_eq!(resolve(root, &all[7][..10].to_uppercase()).unwrap(), all[7]);
    assert_eq!(resolve(root, &format!("{:064x}", 1499 - 12)).unwrap(), all[12]);
    assert_eq!(resolve(root, "HEAD~1500").unwrap_err().code, Code::NotFound);
    assert_eq!(resolve(root, &format!("{:064x}", 9999)).unwrap_err().code, Code::NotFound);
    // Two commits whose ids start alike (1,500 ids in 65,536 four-digit
    // prefixes: a shared one is all but certain, and the ids are fixed).
    let mut seen = std::collections::HashMap::new();
    let pair = all.iter().find_map(|id| seen.insert(&id[..4], id).map(|other| (other.clone(), id.clone())));
    let (a, b) = pair.expect("two ids sharing four digits");
    let e = resolve(root, &a[..4]).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains(&a) && e.message.contains(&b), "{}", e.message);
    assert_eq!(resolve(root, "abc").unwrap_err().code, Code::InvalidArgument);
}

#[test]
fn a_session_keeps_its_commits_and_no_repository_is_an_empty_log() {
    let dir = history_of(9);
    let s1 = LogFilter { session: Some("s-1".into()), ..LogFilter::default() };
    let kept: Vec<String> = log(dir.path(), &s1).unwrap().into_iter().map(|e| e.message).collect();
    assert_eq!(kept, ["commit 7", "commit 4", "commit 1"]);
    let bare = tempfile::tempdir().unwrap();
    assert!(log(bare.path(), &LogFilter::default()).unwrap().is_empty());
    assert_eq!(resolve(bare.path(), "HEAD").unwrap_err().code, Code::NotFound);
}
