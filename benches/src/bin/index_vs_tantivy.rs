//! `index-vs-tantivy [--scales 1,10,100] [--synthetic N] [--json]`: our
//! BM25 index against tantivy on LoCoMo's dialogue turns replicated S
//! times (and, with `--synthetic`, the generated corpus of N documents), in
//! the shipped and the same-work configurations
//! (`scriptorium_benches::peer_index`). A table on stdout; with `--json`,
//! one JSON object with every figure on stdout and the table on stderr.
//!
//! The hidden subcommand `first-answer --engine ours|tantivy --setup S
//! --dir D --query Q` is the fresh process whose first answer is timed: it
//! prints the microseconds from before opening the index to the answer.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use scriptorium_benches::peer_index::collection::Collection;
use scriptorium_benches::peer_index::first_answer::{self, SUBCOMMAND};
use scriptorium_benches::peer_index::{measure_collection, Plan};

const USAGE: &str = "usage: index-vs-tantivy [--scales 1,10,100] [--synthetic N] [--json]";

/// What the command line asks for.
struct Args {
    scales: Vec<usize>,
    synthetic: Option<usize>,
    json: bool,
}

fn fail(why: &str) -> ! {
    eprintln!("{why}\n{USAGE}");
    std::process::exit(2)
}

fn numbers(v: Option<String>, flag: &str) -> Vec<usize> {
    let v = v.unwrap_or_else(|| fail(&format!("{flag} needs a value")));
    let parsed: Option<Vec<usize>> =
        v.split(',').map(|s| s.trim().replace('_', "").parse().ok().filter(|&n| n > 0)).collect();
    parsed.unwrap_or_else(|| fail(&format!("{flag}: {v:?} is not a list of positive whole numbers")))
}

fn parse(args: impl Iterator<Item = String>) -> Args {
    let mut out = Args { scales: vec![1, 10], synthetic: None, json: false };
    let mut args = args.peekable();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--scales" => out.scales = numbers(args.next(), "--scales"),
            "--synthetic" => {
                let n = match args.peek() {
                    Some(v) if !v.starts_with("--") => numbers(args.next(), "--synthetic"),
                    _ => vec![1_000_000],
                };
                out.synthetic = n.first().copied();
            }
            "--json" => out.json = true,
            other => fail(&format!("unknown argument {other:?}")),
        }
    }
    out
}

fn main() {
    let mut raw = std::env::args().skip(1).peekable();
    if raw.peek().map(String::as_str) == Some(SUBCOMMAND) {
        let rest: Vec<String> = raw.skip(1).collect();
        match first_answer::child(&rest) {
            Ok(us) => println!("{us:.1}"),
            Err(why) => fail(&why),
        }
        return;
    }
    let args = parse(raw);
    let plan = Plan {
        rounds: 5,
        first_answers: 9,
        builds: 3,
        exe: std::env::current_exe().expect("the program knows its path"),
    };
    let mut corpora: Vec<Box<dyn Fn() -> Collection>> = args
        .scales
        .iter()
        .map(|&s| Box::new(move || Collection::locomo(s)) as Box<dyn Fn() -> Collection>)
        .collect();
    if let Some(n) = args.synthetic {
        corpora.push(Box::new(move || Collection::synthetic(n)));
    }
    let mut reports = Vec::new();
    for make in corpora {
        let c = make();
        let dir = tempfile::Builder::new().prefix("index-vs-tantivy").tempdir().expect("a temporary folder");
        eprintln!("measuring {} ({} documents) …", c.name, c.len());
        let r = measure_collection(&c, dir.path(), &plan);
        if args.json {
            eprint!("{}", r.table());
        } else {
            print!("{}", r.table());
        }
        reports.push(r.to_json());
    }
    if args.json {
        let machine = serde_json::json!({
            "cores": std::thread::available_parallelism().map_or(1, |n| n.get()),
            "os": std::env::consts::OS,
        });
        let out = serde_json::json!({
            "machine": machine, "k": scriptorium_benches::peer_index::K,
            "rounds": plan.rounds, "first_answer_runs": plan.first_answers, "builds": plan.builds,
            "corpora": reports,
        });
        println!("{out}");
    }
}
