//! Observers of installed transactions: told once per transaction that
//! changed something, with its revision, paths, tier and provenance; never
//! after they are unregistered.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use scriptorium_testkit::{ada_record, block, fixture, patch, revision};
use scriptorium_transaction::observe::{self, Installed, Observer, Provenance};
use scriptorium_transaction::{Base, Committer, Edit, Tier};

/// One call: revision before and after, paths, tier, provenance.
type Call = (String, String, Vec<String>, Tier, Provenance);

/// What an observer saw of one workspace (tests run side by side in one
/// process, and observers are process-wide).
struct Seen {
    root: PathBuf,
    calls: Mutex<Vec<Call>>,
}

impl Observer for Seen {
    fn installed(&self, t: &Installed<'_>) {
        if t.root == self.root {
            let call = (
                t.revision_before.to_owned(),
                t.revision.to_owned(),
                t.changed.to_vec(),
                t.tier,
                t.provenance.clone(),
            );
            self.calls.lock().unwrap().push(call);
        }
    }
}

fn seen(root: &Path) -> Arc<Seen> {
    Arc::new(Seen { root: root.to_owned(), calls: Mutex::new(Vec::new()) })
}

#[test]
fn an_installed_transaction_is_told_once_with_its_provenance() {
    let (_dir, root) = fixture();
    let s = seen(&root);
    let registration = observe::register(s.clone());
    let before = revision(&root);
    let mut w = Committer::open(&root, Duration::from_secs(5)).unwrap();
    let change = patch(
        &before,
        vec![ada_record("m9", "the venue is the library")],
        vec![Edit::Append { path: "topics/a.md".into(), content: block(9, "m9", "Venue: library.", 0) }],
    );
    let by = Provenance::of_turns("offline", "s1", vec!["m9".into()]);
    let done = w.commit_as(&change, Tier::Owner, Base::Check, &by).unwrap();
    assert_eq!(
        s.calls.lock().unwrap().as_slice(),
        [(before, done.revision.clone(), done.changed.clone(), Tier::Owner, by)]
    );
    // A transaction that changes nothing is not one to tell.
    let same = patch(&done.revision, vec![ada_record("m9", "the venue is the library")], Vec::new());
    w.commit(&same, Tier::Owner, Base::Check).unwrap();
    assert_eq!(s.calls.lock().unwrap().len(), 1);
    // An unnamed caller is `external`; unregistered, nothing more is told.
    let third = patch(&done.revision, vec![ada_record("m10", "and lunch is at noon")], Vec::new());
    w.commit(&third, Tier::Owner, Base::Check).unwrap();
    assert_eq!(s.calls.lock().unwrap()[1].4, Provenance::by("external"));
    drop(registration);
    let fourth = patch(&revision(&root), vec![ada_record("m11", "bring a coat")], Vec::new());
    w.commit(&fourth, Tier::Owner, Base::Check).unwrap();
    assert_eq!(s.calls.lock().unwrap().len(), 2);
}
