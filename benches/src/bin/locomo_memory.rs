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
//! counted once. Then per-turn recall for each question, unfolded (the top
//! five hits, as recall showed them before folding) and folded (as
//! `scriptorium recall` shows it): lines shown, the share of lines that
//! repeat an earlier line's text, and evidence recall of the lines
//! themselves (`scriptorium_benches::locomo::recall`).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use scriptorium_benches::locomo::recall::RecallMeasured;
use scriptorium_benches::locomo::{self, Measured};

fn main() {
    let json = locomo::json_flag("locomo-memory");
    let questions = locomo::questions();
    let mut total = Measured::default();
    let mut rows = Vec::new();
    for t in locomo::transcripts() {
        let (sample, dir) = locomo::written_offline(&t);
        let m = locomo::measure(dir.path(), questions.get(&sample).map_or(&[], Vec::as_slice));
        total.add(&m);
        rows.push((sample, m));
    }
    rows.push(("all".to_owned(), total));
    let pct = |m: &Measured, k: usize| 100.0 * m.recall[k] / m.questions.max(1) as f64;
    let share = |m: &Measured| 100.0 * m.blocks as f64 / m.turns.max(1) as f64;
    let repeat = |r: &RecallMeasured| 100.0 * r.repeats as f64 / r.lines.max(1) as f64;
    let shared = |r: &RecallMeasured| 100.0 * r.shared as f64 / r.lines.max(1) as f64;
    let found = |m: &Measured, r: &RecallMeasured| 100.0 * r.found / m.questions.max(1) as f64;
    if json {
        let out: Vec<serde_json::Value> = rows
            .iter()
            .map(|(name, m)| {
                serde_json::json!({"conversation": name, "turns": m.turns, "blocks": m.blocks,
                    "blocks_per_turn_pct": share(m), "topic_files": m.files,
                    "repeated_across_files": m.repeated, "questions": m.questions,
                    "recall_at_1": pct(m, 0), "recall_at_5": pct(m, 1), "recall_at_10": pct(m, 2),
                    "recall_lines": {"unfolded": {"lines": m.unfolded.lines, "repeat_pct": repeat(&m.unfolded),
                        "shared_sentence_pct": shared(&m.unfolded),
                        "evidence_recall": found(m, &m.unfolded)},
                    "folded": {"lines": m.folded.lines, "repeat_pct": repeat(&m.folded),
                        "shared_sentence_pct": shared(&m.folded),
                        "evidence_recall": found(m, &m.folded)}}})
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
    println!();
    println!(
        "{:<10} {:>7} {:>8} {:>8} {:>8} {:>7} {:>8} {:>8} {:>8}",
        "recall", "lines", "repeat%", "shared%", "evidence", "lines", "repeat%", "shared%", "evidence"
    );
    println!("{:<10} {:>33} {:>33}", "", "unfolded (top 5 hits)", "folded (recall)");
    for (name, m) in &rows {
        let (u, f) = (&m.unfolded, &m.folded);
        println!(
            "{name:<10} {:>7} {:>7.1}% {:>7.1}% {:>8.1} {:>7} {:>7.1}% {:>7.1}% {:>8.1}",
            u.lines,
            repeat(u),
            shared(u),
            found(m, u),
            f.lines,
            repeat(f),
            shared(f),
            found(m, f)
        );
    }
}
