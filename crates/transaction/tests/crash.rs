//! Crashes and I/O errors at every write call of an install: the
//! workspace is always the old revision or the new one.

use std::time::Duration;

use scriptorium_testkit::{assert_views_rebuilt, big_change, fixture, revision, tree};
use scriptorium_transaction::disk::{Faults, Mode};
use scriptorium_transaction::install::{self, Recovered};
use scriptorium_transaction::{Base, Committer, Tier};

const WAIT: Duration = Duration::from_secs(5);

type Tree = std::collections::BTreeMap<String, Vec<u8>>;

/// The old and new trees, and the number of write calls a clean commit makes.
fn reference() -> (Tree, Tree, String, String, usize) {
    let (_dir, root) = fixture();
    let old_rev = revision(&root);
    let old = tree(&root);
    let faults = Faults::new(Mode::Off);
    let mut w = Committer::open_with(&root, WAIT, &faults).unwrap();
    let c = w.commit(&big_change(&old_rev), Tier::Owner, Base::Check).unwrap();
    let calls = faults.calls();
    drop(w);
    assert_eq!(revision(&root), c.revision);
    (old, tree(&root), old_rev, c.revision, calls)
}

#[test]
fn a_crash_after_any_write_call_leaves_the_old_or_the_new_revision() {
    let (old, new, old_rev, new_rev, calls) = reference();
    assert!(calls > 10, "the install makes {calls} write calls");
    let mut outcomes = [0usize; 2];
    for i in 0..=calls {
        let (_dir, root) = fixture();
        assert_eq!(revision(&root), old_rev);
        let faults = Faults::new(Mode::CrashAfter(i));
        let result = {
            let mut w = Committer::open_with(&root, WAIT, &faults).unwrap();
            w.commit(&big_change(&old_rev), Tier::Owner, Base::Check)
        };
        // Reopen: recovery runs first.
        let w = Committer::open(&root, WAIT).unwrap();
        let after_intent = w.recovered;
        drop(w);
        let rev = revision(&root);
        let now = tree(&root);
        if rev == new_rev {
            assert_eq!(now, new, "crash after call {i}");
            outcomes[1] += 1;
        } else {
            assert_eq!(rev, old_rev, "crash after call {i}: neither revision");
            assert_eq!(now, old, "crash after call {i}");
            assert!(result.is_err(), "crash after call {i}: success reported but the old revision survived");
            outcomes[0] += 1;
        }
        if result.is_ok() {
            assert_eq!(rev, new_rev, "an acknowledged commit must survive (call {i})");
        }
        // Recovery twice is recovery once.
        let again = Committer::open(&root, WAIT).unwrap();
        assert_eq!(
            again.recovered,
            Recovered::Nothing,
            "crash after call {i} (first recovery: {after_intent:?})"
        );
        drop(again);
        assert_eq!(revision(&root), rev);
        assert!(!install::pending(&root));
        let leftovers: Vec<_> = std::fs::read_dir(root.join(".scriptorium/tmp"))
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with("tx-"))
            .collect();
        assert!(leftovers.is_empty(), "crash after call {i}: staging left behind");
        // Views torn or left behind by the crash were rebuilt on opening.
        assert_views_rebuilt(&root);
    }
    assert!(outcomes[0] > 0 && outcomes[1] > 0, "{outcomes:?}");
}

#[test]
fn a_crash_during_recovery_converges_to_the_new_revision() {
    let (_, new, old_rev, new_rev, calls) = reference();
    // Find crash points that leave an intent to roll forward.
    let mut exercised = 0;
    for i in 0..=calls {
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
        // Count the calls a clean recovery makes from here, on a copy.
        for j in 0..40 {
            let recovery_faults = Faults::new(Mode::CrashAfter(j));
            let _ = Committer::open_with(&root, WAIT, &recovery_faults);
            if !install::pending(&root) {
                break;
            }
        }
        let w = Committer::open(&root, WAIT).unwrap();
        drop(w);
        assert_eq!(revision(&root), new_rev, "crash after call {i}, then crashes in recovery");
        assert_eq!(tree(&root), new);
    }
    assert!(exercised > 3, "only {exercised} crash points left an intent");
}

#[test]
fn an_io_error_at_any_call_is_reported_and_leaves_old_or_new() {
    let (old, new, old_rev, new_rev, calls) = reference();
    for mode in (0..calls).flat_map(|i| [Mode::FailOnce(i), Mode::FailFrom(i)]) {
        let (_dir, root) = fixture();
        let faults = Faults::new(mode);
        let result = {
            let mut w = Committer::open_with(&root, WAIT, &faults).unwrap();
            w.commit(&big_change(&old_rev), Tier::Owner, Base::Check)
        };
        match result {
            // A failure after the install (the index, the views) leaves the
            // change installed and says so.
            Ok(c) => {
                assert_eq!(c.revision, new_rev, "{mode:?}");
                assert!(!c.warnings.is_empty(), "{mode:?}: a failed call without a warning");
            }
            Err(e) => assert_eq!(e.code, scriptorium_transaction::Code::Io, "{mode:?}: {e}"),
        }
        drop(Committer::open(&root, WAIT).unwrap());
        let rev = revision(&root);
        assert!(rev == old_rev || rev == new_rev, "{mode:?}");
        assert_views_rebuilt(&root);
        assert_eq!(tree(&root), if rev == new_rev { new.clone() } else { old.clone() }, "{mode:?}");
    }
}

#[test]
fn a_torn_intent_is_discarded_and_staging_removed() {
    let (_dir, root) = fixture();
    let old_rev = revision(&root);
    let old = tree(&root);
    std::fs::create_dir_all(root.join(".scriptorium/tmp/tx-dead")).unwrap();
    std::fs::write(root.join(".scriptorium/tmp/tx-dead/0"), b"staged").unwrap();
    std::fs::write(root.join(install::INTENT), b"{\"tx\":\"dead\",\"entries\":[{\"path\":\"topics/a.md\"")
        .unwrap();
    let w = Committer::open(&root, WAIT).unwrap();
    assert_eq!(w.recovered, Recovered::Discarded);
    drop(w);
    assert_eq!(revision(&root), old_rev);
    assert_eq!(tree(&root), old);
    assert!(!root.join(".scriptorium/tmp/tx-dead").exists());
}

#[test]
fn an_intent_naming_a_path_outside_the_workspace_is_never_followed() {
    let (_dir, root) = fixture();
    let body = r#"{"tx":"evil","entries":[{"path":"../outside.md","sha256":null}],"history":"{}"}"#;
    let sum: String = {
        use sha2::Digest;
        sha2::Sha256::digest(body.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
    };
    let outside = root.parent().unwrap().join("outside.md");
    std::fs::write(&outside, b"keep me").unwrap();
    std::fs::write(root.join(install::INTENT), format!("{body}\nsha256 {sum}\n")).unwrap();
    let w = Committer::open(&root, WAIT).unwrap();
    assert_eq!(w.recovered, Recovered::Discarded);
    assert_eq!(std::fs::read(&outside).unwrap(), b"keep me");
}
