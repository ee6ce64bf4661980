//! The dream pass's offline hygiene on the LoCoMo development set, every
//! conversation in its own workspace written by the offline writer: as
//! written it merges nothing and recall@5 stays; with every block written
//! twice it merges each copy, the workspace checks, and recall@5 comes back
//! to what it was as written, never lower than with the copies.

use std::time::Duration;

use scriptorium_benches::locomo::{self, hygiene};
use scriptorium_writer::dream::hygiene as pass;

#[test]
fn hygiene_on_locomo_merges_the_copies_and_recall_at_5_does_not_drop() {
    let questions = locomo::questions();
    for t in locomo::transcripts() {
        let (sample, dir) = locomo::written_offline(&t);
        let root = dir.path();
        let qs = &questions[&sample];
        let written = hygiene::pass(root, qs);
        assert_eq!((written.merged, written.blocks_after), (0, written.blocks_before), "{sample}");
        assert_eq!(written.recall_after, written.recall_before, "{sample}");
        hygiene::write_twins(root);
        let twice = hygiene::pass(root, qs);
        assert_eq!(twice.blocks_before, 2 * written.blocks_before, "{sample}");
        assert_eq!(
            (twice.merged, twice.blocks_after),
            (written.blocks_before, written.blocks_before),
            "{sample}"
        );
        assert!(twice.recall_after >= twice.recall_before, "{sample}: {twice:?}");
        assert!((twice.recall_after - written.recall_before).abs() < 1e-9, "{sample}: {twice:?} {written:?}");
        let c = scriptorium_transaction::snapshot::checkup(root).unwrap();
        assert!(c.diagnostics.is_empty(), "{sample}: {:?}", c.diagnostics);
        assert_eq!(
            pass::run(root, Duration::from_secs(60)).unwrap(),
            pass::Done::default(),
            "{sample}: once"
        );
    }
}
