//! `forced-write [--turns N] [--seed S] [--dir DIR] [--json]`: how the time
//! of each batch of a long forced write grows with the workspace.
//!
//! Generates `N` LoCoMo-shaped turns (default 50,000;
//! `scriptorium_benches::forced_write::conversations`: two speakers per
//! conversation, dated sessions, utterances drawn from the vendored
//! `data/locomo/` development set, seeded), imports them into the session
//! store of an empty workspace as `scriptorium session import --format
//! locomo` does, and writes them all as `scriptorium write --force` does
//! with the offline writer, timing every batch: the writer's plan, the
//! commit, and the whole batch (the scheduler's steps included). The
//! workspace is a temporary folder, or `DIR` (which must be empty or
//! missing, and is kept, with the generated transcript beside it as
//! `DIR.locomo.json`).
//!
//! Prints the batches, the turns, the mean time of each tenth of the
//! batches (in order) and the ratio of the last tenth to the first: a
//! write whose cost per batch does not grow with the workspace has a ratio
//! near 1. `--turns 2000` runs in seconds.
//!
//! Run: `cargo run --release -p scriptorium-benches --bin forced-write -- [--turns N] [--json]`.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::PathBuf;

use scriptorium_benches::forced_write::{ratio, run, tenths, BatchTime, Curve};

const USAGE: &str = "usage: forced-write [--turns N] [--seed S] [--dir DIR] [--json]";

fn usage(why: &str) -> ! {
    eprintln!("{USAGE} ({why})");
    std::process::exit(2);
}

fn main() {
    let (mut turns, mut seed, mut dir, mut json) = (50_000usize, 0x10c0_u64, None::<PathBuf>, false);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |what: &str| args.next().unwrap_or_else(|| usage(&format!("{what} needs a value")));
        match a.as_str() {
            "--turns" => {
                turns =
                    value("--turns").replace('_', "").parse().unwrap_or_else(|_| usage("--turns is a count"))
            }
            "--seed" => seed = value("--seed").parse().unwrap_or_else(|_| usage("--seed is a number")),
            "--dir" => dir = Some(PathBuf::from(value("--dir"))),
            "--json" => json = true,
            other => usage(&format!("unknown argument {other:?}")),
        }
    }
    if turns == 0 {
        usage("--turns must be at least 1");
    }
    let temp = tempfile::tempdir().expect("a temporary folder");
    let root = match dir {
        Some(d) => {
            if std::fs::read_dir(&d).is_ok_and(|mut e| e.next().is_some()) {
                eprintln!("{} is not empty", d.display());
                std::process::exit(1);
            }
            std::fs::create_dir_all(&d).expect("the workspace folder");
            d
        }
        None => {
            let d = temp.path().join("workspace");
            std::fs::create_dir(&d).expect("the workspace folder");
            d
        }
    };
    let curve = run(&root, turns, seed).unwrap_or_else(|e| {
        eprintln!("the forced write failed: {e}");
        std::process::exit(1);
    });
    print(&curve, json);
}

fn print(curve: &Curve, json: bool) {
    type Pick = fn(&BatchTime) -> std::time::Duration;
    let parts: [(&str, Pick); 3] = [("commit", |b| b.commit), ("plan", |b| b.plan), ("batch", |b| b.whole)];
    let series: Vec<(&str, Vec<f64>)> = parts.iter().map(|(n, f)| (*n, tenths(&curve.batches, f))).collect();
    if json {
        let mut v = serde_json::json!({
            "turns": curve.turns,
            "batches": curve.batches.len(),
            "total_s": curve.total.as_secs_f64(),
        });
        for (name, t) in &series {
            v[*name] = serde_json::json!({"tenths_ms": t, "ratio": ratio(t)});
        }
        println!("{v}");
        return;
    }
    println!(
        "{} turns in {} batches, {:.1} s in all",
        curve.turns,
        curve.batches.len(),
        curve.total.as_secs_f64()
    );
    println!("mean ms per batch, by tenth of the batches (in order):");
    for (name, t) in &series {
        let cells: Vec<String> = t.iter().map(|x| format!("{x:>7.1}")).collect();
        println!("{name:<7}{}   last/first {:.2}", cells.join(""), ratio(t));
    }
}
