//! `locomo-memory [--json]`: what the offline writer makes of the LoCoMo
//! development set (`data/locomo/locomo-dev.json`), and how well search
//! over records and blocks finds each question's evidence.
//!
//! Each conversation gets its own fresh workspace: it is imported into an
//! in-memory session store, cut into batches at the default threshold, and
//! every batch is written by the offline writer. Then, per conversation and
//! in total: turns, blocks, blocks per turn, the normalised quotations that
//! stand in more than one topic file, and evidence recall@1/5/10 of search
//! over records and blocks (no kind filter): a record hit shows its own
//! turn, a block hit the turns it cites, in hit order, each evidence turn
//! counted once.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use scriptorium_benches::locomo::{self, Measured};
use scriptorium_writer::Offline;

fn main() {
    let mut json = false;
    for a in std::env::args().skip(1) {
        match a.as_str() {
            "--json" => json = true,
            other => {
                eprintln!("usage: locomo-memory [--json] (unknown argument {other:?})");
                std::process::exit(2);
            }
        }
    }
    let questions = locomo::questions();
    let mut total = Measured::default();
    let mut rows = Vec::new();
    for t in locomo::transcripts() {
        let sample = t.session.strip_prefix("locomo/").unwrap_or(&t.session).to_owned();
        let dir = tempfile::tempdir().expect("a temporary folder");
        scriptorium_transaction::layout::ensure(dir.path()).expect("a fresh workspace");
        for b in locomo::batches(std::slice::from_ref(&t)) {
            locomo::write_batch(&mut Offline, dir.path(), &b);
        }
        let m = locomo::measure(dir.path(), questions.get(&sample).map_or(&[], Vec::as_slice));
        total.add(&m);
        rows.push((sample, m));
    }
    rows.push(("all".to_owned(), total));
    let pct = |m: &Measured, k: usize| 100.0 * m.recall[k] / m.questions.max(1) as f64;
    let share = |m: &Measured| 100.0 * m.blocks as f64 / m.turns.max(1) as f64;
    if json {
        let out: Vec<serde_json::Value> = rows
            .iter()
            .map(|(name, m)| {
                serde_json::json!({"conversation": name, "turns": m.turns, "blocks": m.blocks,
                    "blocks_per_turn_pct": share(m), "topic_files": m.files,
                    "repeated_across_files": m.repeated, "questions": m.questions,
                    "recall_at_1": pct(m, 0), "recall_at_5": pct(m, 1), "recall_at_10": pct(m, 2)})
            })
            .collect();
        println!("{}", serde_json::Value::Array(out));
        return;
    }
    println!(
        "{:<10} {:>6} {:>7} {:>8} {:>6} {:>9} {:>9} {:>6} {:>6} {:>6}",
        "conv", "turns", "blocks", "blocks%", "files", "repeated", "questions", "R@1", "R@5", "R@10"
    );
    for (name, m) in &rows {
        println!(
            "{name:<10} {:>6} {:>7} {:>7.1}% {:>6} {:>9} {:>9} {:>6.1} {:>6.1} {:>6.1}",
            m.turns,
            m.blocks,
            share(m),
            m.files,
            m.repeated,
            m.questions,
            pct(m, 0),
            pct(m, 1),
            pct(m, 2)
        );
    }
}
