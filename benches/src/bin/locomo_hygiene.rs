//! `locomo-hygiene [--json]`: the dream pass's offline hygiene on the LoCoMo
//! development set (`data/locomo/locomo-dev.json`): how many blocks it
//! merges, and evidence recall@5 of search over records and blocks before
//! and after it.
//!
//! Each conversation gets its own fresh workspace, written by the offline
//! writer as `locomo-memory` writes it; the hygiene runs on it as written,
//! then again after every block was written a second time under
//! `topics/twins/` (`scriptorium_benches::locomo::hygiene`).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use scriptorium_benches::locomo;
use scriptorium_benches::locomo::hygiene::{self, Pass};

fn main() {
    let json = locomo::json_flag("locomo-hygiene");
    let questions = locomo::questions();
    let (mut written, mut doubled) = (Pass::default(), Pass::default());
    let mut rows = Vec::new();
    for t in locomo::transcripts() {
        let (sample, dir) = locomo::written_offline(&t);
        let qs = questions.get(&sample).map_or(&[][..], Vec::as_slice);
        let as_written = hygiene::pass(dir.path(), qs);
        hygiene::write_twins(dir.path());
        let twice = hygiene::pass(dir.path(), qs);
        written.add(&as_written);
        doubled.add(&twice);
        rows.push((sample, as_written, twice));
    }
    rows.push(("all".to_owned(), written, doubled));
    let pct = |sum: f64, p: &Pass| 100.0 * sum / p.questions.max(1) as f64;
    if json {
        let row = |p: &Pass| {
            serde_json::json!({"blocks_before": p.blocks_before, "merged": p.merged, "blocks_after": p.blocks_after,
                "questions": p.questions, "recall_at_5_before": pct(p.recall_before, p),
                "recall_at_5_after": pct(p.recall_after, p)})
        };
        let out: Vec<serde_json::Value> = rows
            .iter()
            .map(|(name, w, d)| serde_json::json!({"conversation": name, "as_written": row(w), "every_block_twice": row(d)}))
            .collect();
        println!("{}", serde_json::Value::Array(out));
        return;
    }
    println!("{:<10} {:>33}   {:>33}", "", "as written", "every block twice");
    println!(
        "{:<10} {:>7} {:>7} {:>8} {:>8}   {:>7} {:>7} {:>8} {:>8}",
        "conv", "blocks", "merged", "R@5 bef", "R@5 aft", "blocks", "merged", "R@5 bef", "R@5 aft"
    );
    for (name, w, d) in &rows {
        println!(
            "{name:<10} {:>7} {:>7} {:>8.1} {:>8.1}   {:>7} {:>7} {:>8.1} {:>8.1}",
            w.blocks_before,
            w.merged,
            pct(w.recall_before, w),
            pct(w.recall_after, w),
            d.blocks_before,
            d.merged,
            pct(d.recall_before, d),
            pct(d.recall_after, d)
        );
    }
}
