//! What the git history adds to a transaction, in the commit benchmark's
//! workspaces (`scriptorium_benches::workspace_gen`) of 1,000 and 100,000
//! blocks.
//!
//! **The added cost.** Each round commits a one-block patch the way the
//! commit benchmark does, but with the workspace's history switched off
//! (`memory.history = "off"` in its `scriptorium.toml`, written outside the
//! timed part), then switches it on again and times exactly the history's
//! share of a transaction, as `Committer::commit` makes it:
//! `history::Writer` opened once for `commit_outside` (the head's revision
//! against the workspace's) and `check_archive_writes`, then
//! `history::commit_installed` (blobs,
//! the trees along the changed path, the commit object, `HEAD` and its
//! reflog, git's index). The rounds alternate between the sizes, so a
//! machine that slows down weighs on both alike; p50/p99 over
//! `SCRIPTORIUM_BENCH_COMMITS` (default 100) are printed as `added …`
//! lines, with the ratio p50(largest)/p50(smallest). Then whole commits with
//! the history on, for scale (`commit …` lines).
//!
//! **A long history.** A workspace of 1,000 blocks over 10,000 records
//! then `SCRIPTORIUM_BENCH_HISTORY` (default 10,000) transactions
//! (`scriptorium_benches::long_history`), and once each: the whole log, the
//! log of one topic file, `show` of the middle commit, the tamper
//! verification of every commit without and with its cache, then the same
//! through the binary (`log --json`, `log --path <archive file> --json`,
//! `show`, `check` without and with the cache), from process start to exit.
//!
//! Environment: `SCRIPTORIUM_BENCH_RECORDS` (default 1,000,000),
//! `SCRIPTORIUM_BENCH_BLOCKS` (default `1000,100000`),
//! `SCRIPTORIUM_BENCH_COMMITS`, `SCRIPTORIUM_BENCH_HISTORY`,
//! `SCRIPTORIUM_BENCH_DIR`. Under `cargo bench -- --test` (CI): 200 blocks
//! over 2,000 records, three rounds, a history of 50 transactions.
#![allow(clippy::print_stdout)]

use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use scriptorium_benches::workspace_gen::{Spec, Workspace};
use scriptorium_benches::{env_usize, percentiles};
use scriptorium_transaction::disk::{Disk, Faults};
use scriptorium_transaction::history::{self, Planned, Stamp};
use scriptorium_transaction::revision;

struct Plan {
    records: usize,
    blocks: Vec<usize>,
    rounds: usize,
    /// Transactions of the long history.
    history: usize,
}

fn plan() -> Plan {
    let test = std::env::args().any(|a| a == "--test");
    let blocks = match std::env::var("SCRIPTORIUM_BENCH_BLOCKS") {
        Ok(list) => list.split(',').filter_map(|s| s.trim().replace('_', "").parse().ok()).collect(),
        Err(_) if test => vec![200],
        Err(_) => vec![1_000, 100_000],
    };
    Plan {
        records: env_usize("SCRIPTORIUM_BENCH_RECORDS").unwrap_or(if test { 2_000 } else { 1_000_000 }),
        blocks,
        rounds: env_usize("SCRIPTORIUM_BENCH_COMMITS").unwrap_or(if test { 3 } else { 100 }).max(1),
        history: env_usize("SCRIPTORIUM_BENCH_HISTORY").unwrap_or(if test { 50 } else { 10_000 }).max(2),
    }
}

fn set_history(root: &Path, on: bool) {
    let text = if on { "[memory]\nhistory = \"git\"\n" } else { "[memory]\nhistory = \"off\"\n" };
    std::fs::write(root.join("scriptorium.toml"), text).expect("the configuration is written");
}

/// One round: a commit without history, then the history's share of it,
/// timed.
fn added_cost(ws: &mut Workspace) -> Duration {
    let before = ws.revision.clone();
    let patch = ws.append_patch();
    set_history(&ws.root, false);
    let done = ws.commit(&patch).expect("the commit is made");
    set_history(&ws.root, true);
    let sources: Vec<(String, Vec<u8>)> = done
        .changed
        .iter()
        .filter(|p| p.starts_with("sources/"))
        .map(|p| (p.clone(), std::fs::read(ws.root.join(p)).expect("an archive file")))
        .collect();
    let planned = Planned {
        summary: patch.message.clone(),
        stamp: Stamp {
            revision: done.revision.clone(),
            writer: "update".into(),
            tier: "owner".into(),
            ..Stamp::default()
        },
        paths: done.changed.clone(),
        merge: None,
    };
    let rev = revision::compute(&ws.root).expect("the revision");
    let faults = Faults::default();
    let started = Instant::now();
    // The revision the head records is the one before this round's commit.
    let repo = history::Writer::open(&ws.root).expect("the repository").expect("history is on");
    let outside = repo.commit_outside(&with_hex(rev, &before)).expect("nothing outside");
    repo.check_archive_writes(
        sources.iter().map(|(p, b)| (p.as_str(), b.as_slice())),
        history::frames::Rule::Append,
    )
    .expect("no tampering");
    drop(repo);
    history::commit_installed(&ws.root, Disk::new(&faults), &planned).expect("the commit");
    let took = started.elapsed();
    assert!(outside.commit.is_none(), "an unexpected external commit");
    took
}

/// `rev` as the revision `hex` (the tree is not read by the check).
fn with_hex(mut rev: revision::Revision, hex: &str) -> revision::Revision {
    rev.hex = hex.to_owned();
    rev
}

fn report(what: &str, times: &[Duration]) -> f64 {
    let (p50, p99) = percentiles(times.to_vec());
    let mean = times.iter().sum::<Duration>().as_secs_f64() * 1e3 / times.len() as f64;
    println!("{what}: p50 {p50:.2} ms, p99 {p99:.2} ms, mean {mean:.2} ms over {} rounds", times.len());
    p50
}

fn history(c: &mut Criterion) {
    let plan = plan();
    let base = std::env::var_os("SCRIPTORIUM_BENCH_DIR").map_or_else(std::env::temp_dir, Into::into);
    let mut sized = Vec::new();
    for &blocks in &plan.blocks {
        let dir =
            tempfile::Builder::new().prefix("scriptorium-history-").tempdir_in(&base).expect("a folder");
        let spec = Spec { records: plan.records, blocks, seed: 0x5eed_c0de };
        let ws = Workspace::generate(&dir.path().join("ws"), spec).expect("a workspace");
        println!(
            "workspace {blocks} blocks, {} records: {} topic files; first commit (the whole workspace into git) {:.2} s",
            plan.records,
            ws.topic_files.len(),
            ws.timings.first_commit.as_secs_f64()
        );
        sized.push((blocks, ws, dir));
    }
    for (_, ws, _) in &mut sized {
        for _ in 0..3 {
            added_cost(ws);
        }
    }
    let mut added: Vec<Vec<Duration>> = vec![Vec::new(); sized.len()];
    for _ in 0..plan.rounds {
        for (k, (_, ws, _)) in sized.iter_mut().enumerate() {
            added[k].push(added_cost(ws));
        }
    }
    let mut p50s = Vec::new();
    for (k, (blocks, _, _)) in sized.iter().enumerate() {
        p50s.push(report(&format!("added {blocks} blocks"), &added[k]));
    }
    if let (Some(first), Some(last)) = (p50s.first(), p50s.last()) {
        println!("added ratio p50 largest/smallest: {:.2}", last / first);
    }
    let mut whole: Vec<Vec<Duration>> = vec![Vec::new(); sized.len()];
    for _ in 0..plan.rounds {
        for (k, (_, ws, _)) in sized.iter_mut().enumerate() {
            let patch = ws.append_patch();
            let started = Instant::now();
            ws.commit(&patch).expect("the commit is made");
            whole[k].push(started.elapsed());
        }
    }
    for (k, (blocks, _, _)) in sized.iter().enumerate() {
        report(&format!("commit with history {blocks} blocks"), &whole[k]);
    }
    if let Some((blocks, ws, _)) = sized.first_mut() {
        c.bench_function(&format!("history_added_{blocks}_blocks"), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| added_cost(ws)).sum())
        });
    }
    drop(sized);
    long_history(&plan, &base);
}

/// Runs `f` once, printing how long it took.
fn once<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let out = f();
    println!("{what}: {:.1} ms", started.elapsed().as_secs_f64() * 1e3);
    out
}

/// The CLI on `root`, timed from process start to exit; its stdout bytes.
fn cli(what: &str, root: &Path, args: &[&str]) -> usize {
    let bin = scriptorium_benches::cli();
    once(what, || {
        let out = std::process::Command::new(&bin)
            .args(args)
            .arg("--workspace")
            .arg(root)
            .output()
            .expect("it runs");
        assert!(
            out.status.success() || args[0] == "check",
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout.len()
    })
}

/// `log`, `show` and `check` on a history of `plan.history` transactions.
fn long_history(plan: &Plan, base: &Path) {
    let dir = tempfile::Builder::new().prefix("scriptorium-history-").tempdir_in(base).expect("a folder");
    let spec = Spec { records: 10_000.min(plan.records), blocks: 1_000, seed: 0x5eed_c0de };
    let ws = Workspace::generate(&dir.path().join("ws"), spec).expect("a workspace");
    let root = ws.root.as_path();
    let archive = once(&format!("long history: {} transactions made", plan.history), || {
        scriptorium_benches::long_history::extend(&ws, plan.history).expect("the history")
    });
    let all = once("long history: read::log, every commit", || {
        history::read::log(root, &history::read::LogFilter::default()).expect("the log")
    });
    assert!(all.len() > plan.history, "{} commits", all.len());
    let topic = ws.topic_files[1].clone();
    let filter = history::read::LogFilter { path: Some(topic.clone()), session: None };
    let some = once(&format!("long history: read::log --path {topic}"), || {
        history::read::log(root, &filter).expect("the log")
    });
    println!("long history: {} commits, {} touch {topic}", all.len(), some.len());
    let middle = format!("HEAD~{}", plan.history / 2);
    once(&format!("long history: read::show {middle}"), || history::read::show(root, &middle).expect("show"));
    let _ = std::fs::remove_dir_all(root.join(".scriptorium/history"));
    let found =
        once("long history: tamper::verify, no cache", || history::tamper::verify(root).expect("verify"));
    assert!(found.is_empty(), "{found:?}");
    once("long history: tamper::verify, cached", || history::tamper::verify(root).expect("verify"));
    cli("long history: scriptorium log --json", root, &["log", "--json"]);
    cli(
        &format!("long history: scriptorium log --path {archive} --json"),
        root,
        &["log", "--path", &archive, "--json"],
    );
    cli(&format!("long history: scriptorium show {middle} --json"), root, &["show", &middle, "--json"]);
    let _ = std::fs::remove_dir_all(root.join(".scriptorium/history"));
    cli("long history: scriptorium check, no cache", root, &["check"]);
    cli("long history: scriptorium check, cached", root, &["check"]);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).warm_up_time(Duration::from_millis(200)).measurement_time(Duration::from_secs(2));
    targets = history
}
criterion_main!(benches);
