//! Notices of changes of the self: left only where hooks run and while
//! wanted, taken once, kept few.

use super::*;

fn notice(revision_digit: char, writer: &str, changed: &[&str]) -> Notice {
    Notice {
        time: "2026-08-01T10:00:00Z".into(),
        revision: revision_digit.to_string().repeat(64),
        writer: writer.into(),
        changed: changed.iter().map(|p| (*p).to_owned()).collect(),
    }
}

/// A workspace folder with `.scriptorium/` (and its hooks' folder when
/// `hooks`).
fn workspace(hooks: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let sub = if hooks { ".scriptorium/hooks" } else { ".scriptorium" };
    std::fs::create_dir_all(dir.path().join(sub)).unwrap();
    dir
}

#[test]
fn a_notice_is_told_once() {
    let dir = workspace(true);
    let root = dir.path();
    let config = Config::default();
    assert_eq!(take(root, &config), None, "nothing waits");
    leave(root, &notice('a', "update", &["topics/self/persona.md"])).unwrap();
    leave(root, &notice('b', "model:m", &["topics/self/identity.md", "topics/self/persona.md"])).unwrap();
    let told = take(root, &config).unwrap();
    let a = "a".repeat(64);
    let b = "b".repeat(64);
    assert_eq!(
        told,
        format!("scriptorium memory: the self changed: topics/self/persona.md changed (update, revision {a}); topics/self/identity.md, topics/self/persona.md changed (model:m, revision {b})")
    );
    assert_eq!(take(root, &config), None, "told once");
}

#[test]
fn nothing_is_left_without_hooks_or_when_the_notice_is_off() {
    let dir = workspace(false);
    leave(dir.path(), &notice('a', "update", &["topics/self/persona.md"])).unwrap();
    assert!(!dir.path().join(DIR).exists(), "no hooks ran here");
    let dir = workspace(true);
    std::fs::write(dir.path().join("scriptorium.toml"), "[memory.self]\nedit_notice = false\n").unwrap();
    leave(dir.path(), &notice('a', "update", &["topics/self/persona.md"])).unwrap();
    assert!(!dir.path().join(DIR).exists(), "the person turned it off");
    // Notices left before it was turned off are dropped untold.
    let dir = workspace(true);
    leave(dir.path(), &notice('a', "update", &["topics/self/persona.md"])).unwrap();
    let mut off = Config::default();
    off.self_edit_notice = false;
    assert_eq!(take(dir.path(), &off), None);
    assert_eq!(take(dir.path(), &Config::default()), None, "dropped, not kept");
}

#[test]
fn few_are_kept_and_what_is_not_a_notice_tells_nothing() {
    let dir = workspace(true);
    let root = dir.path();
    for k in 0..KEPT + 5 {
        let digit = char::from_digit((k % 10) as u32, 10).unwrap();
        leave(root, &notice(digit, &format!("w{k}"), &["topics/self/persona.md"])).unwrap();
    }
    assert_eq!(names(root).len(), KEPT);
    // Planted files: another path, a bad revision, not JSON.
    std::fs::write(
        root.join(DIR).join("0-x.json"),
        serde_json::to_vec(&notice('c', "x", &["topics/a.md"])).unwrap(),
    )
    .unwrap();
    std::fs::write(root.join(DIR).join("0-y.json"), b"{not json").unwrap();
    let told = take(root, &Config::default()).unwrap();
    assert!(told.contains("(w5, revision 5555"), "the oldest kept is the sixth: {told}");
    assert!(told.ends_with(&format!("and {} more change(s)", KEPT - SHOWN)), "{told}");
    assert!(!told.contains("topics/a.md"), "{told}");
    assert!(names(root).is_empty(), "every file is taken");
}

#[cfg(unix)]
#[test]
fn a_linked_folder_is_never_written_through_or_read() {
    let dir = workspace(true);
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), dir.path().join(DIR)).unwrap();
    assert!(leave(dir.path(), &notice('a', "update", &["topics/self/persona.md"])).is_err());
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    std::fs::write(
        elsewhere.path().join("1-a.json"),
        serde_json::to_vec(&notice('a', "u", &["topics/self/persona.md"])).unwrap(),
    )
    .unwrap();
    assert_eq!(take(dir.path(), &Config::default()), None);
    assert!(elsewhere.path().join("1-a.json").exists());
}
