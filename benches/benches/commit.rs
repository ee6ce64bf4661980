//! Commit latency: one one-block patch, durably committed and searchable,
//! in workspaces of 1,000, 10,000 and 100,000 blocks over 1,000,000
//! archived records (`scriptorium_benches::workspace_gen`), against SQLite
//! FTS5 inserting and committing one note into tables of the same sizes
//! (`benches/peers/commit_latency.py --serve`, when `python3` is there).
//!
//! One commit = `Committer::open` (lock, recovery) + `commit` of a patch that
//! appends one block citing an archived record to one topic file, with the
//! base revision checked, + drop: staging, incremental validation, the
//! fsynced install with its intent record and history line, the search
//! index refresh and the derived views. The patch is built outside the
//! timed part. Per size, after three untimed commits, our commits and the
//! peer's WAL-mode commits are made in turn (so that the disk's mood weighs
//! on both alike), then the peer's DELETE-mode and WAL-mode commits alone
//! (the summary's peer figures), then criterion's mean of ours from ten more
//! commits. Then, every workspace kept, the figures of ours: rounds of one
//! commit per size, then rounds of one `scriptorium update` of a one-block
//! patch per size, timed from process start to exit (what an agent waits
//! for; the binary beside the bench, or `SCRIPTORIUM_BIN`), so that a
//! machine that slows down or speeds up during the run weighs on every size
//! alike; p50/p99 over `SCRIPTORIUM_BENCH_COMMITS` (default 100) each are
//! printed as `latency …` lines, and the summary ends with the ratios
//! p50(largest)/p50(smallest).
//!
//! Environment: `SCRIPTORIUM_BENCH_RECORDS` (default 1,000,000),
//! `SCRIPTORIUM_BENCH_BLOCKS` (default `1000,10000,100000`, ascending),
//! `SCRIPTORIUM_BENCH_COMMITS` (default 100), `SCRIPTORIUM_BENCH_DIR` (where
//! the workspaces are generated; default the system temporary folder),
//! `SCRIPTORIUM_BENCH_PEER=0` to skip the peer. Under `cargo bench --
//! --test` (CI) one workspace of 200 blocks over 2,000 records, three
//! commits, and the peer at the same sizes.
#![allow(clippy::print_stdout)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};
use scriptorium_benches::workspace_gen::{Spec, Workspace};
use scriptorium_benches::{env_usize, percentiles};
use scriptorium_transaction::Edit;

const WARM_UP_COMMITS: usize = 3;

struct Plan {
    records: usize,
    blocks: Vec<usize>,
    commits: usize,
}

fn plan() -> Plan {
    let test = std::env::args().any(|a| a == "--test");
    let blocks = match std::env::var("SCRIPTORIUM_BENCH_BLOCKS") {
        Ok(list) => list.split(',').filter_map(|s| s.trim().replace('_', "").parse().ok()).collect(),
        Err(_) if test => vec![200],
        Err(_) => vec![1_000, 10_000, 100_000],
    };
    Plan {
        records: env_usize("SCRIPTORIUM_BENCH_RECORDS").unwrap_or(if test { 2_000 } else { 1_000_000 }),
        blocks,
        commits: env_usize("SCRIPTORIUM_BENCH_COMMITS").unwrap_or(if test { 3 } else { 100 }).max(1),
    }
}

fn label(n: usize) -> String {
    match n {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        n if n >= 1_000 && n % 1_000 == 0 => format!("{}k", n / 1_000),
        n => n.to_string(),
    }
}

/// One timed commit; the patch is made before the clock starts.
fn timed_commit(ws: &mut Workspace) -> Duration {
    let patch = ws.append_patch();
    let started = Instant::now();
    let c = ws.commit(&patch).expect("the commit succeeds");
    let elapsed = started.elapsed();
    std::hint::black_box(c);
    elapsed
}

/// One `scriptorium update` of a one-block patch, from process start to
/// exit; the patch is made before the clock starts.
fn timed_update(ws: &mut Workspace, bin: &Path) -> Duration {
    let patch = ws.append_patch();
    let edits: Vec<serde_json::Value> = patch
        .edits
        .iter()
        .map(|e| match e {
            Edit::Append { path, content } => {
                serde_json::json!({"op": "append", "path": path, "content": content})
            }
            _ => unreachable!("the bench appends"),
        })
        .collect();
    let json =
        serde_json::json!({"base_revision": patch.base_revision, "message": patch.message, "edits": edits})
            .to_string();
    let root = ws.root.to_str().expect("a UTF-8 path").to_owned();
    let started = Instant::now();
    let mut child = Command::new(bin)
        .args(["update", "--workspace", &root, "--patch", "-", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    child.stdin.take().expect("a pipe").write_all(json.as_bytes()).expect("the patch is sent");
    let out = child.wait_with_output().expect("the update ends");
    let elapsed = started.elapsed();
    assert!(out.status.success(), "update failed: {}", String::from_utf8_lossy(&out.stderr));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).expect("update prints JSON");
    ws.set_revision(answer["revision"].as_str().expect("a revision").to_owned());
    elapsed
}

struct Row {
    blocks: usize,
    ours: (f64, f64),
    cli: (f64, f64),
    wal: Option<(f64, f64)>,
    delete: Option<(f64, f64)>,
}

/// One size's workspace, kept for the rounds, with the peer's figures.
struct Sized {
    blocks: usize,
    name: String,
    ws: Workspace,
    wal: Option<(f64, f64)>,
    delete: Option<(f64, f64)>,
    _dir: tempfile::TempDir,
}

/// The SQLite FTS5 peer, a Python process answering one JSON line per
/// command (see `benches/peers/commit_latency.py`).
struct Peer {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Peer {
    /// Starts the peer, which writes its source rows while we generate.
    fn start(records: usize, dir: &Path) -> Option<Peer> {
        if std::env::var("SCRIPTORIUM_BENCH_PEER").is_ok_and(|v| v == "0") {
            println!("peer: skipped (SCRIPTORIUM_BENCH_PEER=0)");
            return None;
        }
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/peers/commit_latency.py");
        let spawned = Command::new("python3")
            .arg(script)
            .arg("--dir")
            .arg(dir)
            .args(["--sources", &records.to_string(), "--serve"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn();
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                println!("peer: skipped (cannot run python3: {e})");
                return None;
            }
        };
        let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            println!("peer: skipped (no pipes)");
            return None;
        };
        Some(Peer { child, input, output: BufReader::new(output) })
    }

    fn read(&mut self) -> Option<serde_json::Value> {
        let mut line = String::new();
        match self.output.read_line(&mut line) {
            Ok(n) if n > 0 => {}
            _ => {
                println!("peer: it stopped answering");
                return None;
            }
        }
        let v: serde_json::Value = serde_json::from_str(&line).ok()?;
        if let Some(e) = v.get("error") {
            println!("peer: error {e}");
            return None;
        }
        Some(v)
    }

    fn ask(&mut self, command: &str) -> Option<serde_json::Value> {
        writeln!(self.input, "{command}").ok()?;
        self.input.flush().ok()?;
        self.read()
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = writeln!(self.input, "quit");
        let _ = self.input.flush();
        let _ = self.child.wait();
    }
}

/// Asks the peer for something; stops using it when it fails.
fn ask(peer: &mut Option<Peer>, command: &str) -> Option<serde_json::Value> {
    let answer = peer.as_mut()?.ask(command);
    if answer.is_none() {
        *peer = None;
    }
    answer
}

fn peer_commit(peer: &mut Option<Peer>) -> Option<Duration> {
    let ms = ask(peer, "commit")?["ms"].as_f64()?;
    Some(Duration::from_secs_f64(ms / 1e3))
}

/// p50 and p99 in milliseconds.
type Percentiles = (f64, f64);

fn show(what: &str, times: &[Duration]) -> Option<(f64, f64)> {
    if times.is_empty() {
        return None;
    }
    let mean = times.iter().sum::<Duration>().as_secs_f64() * 1e3 / times.len() as f64;
    let (p50, p99) = percentiles(times.to_vec());
    println!(
        "latency {what}: p50 {p50:.2} ms, p99 {p99:.2} ms, mean {mean:.2} ms over {} commits",
        times.len()
    );
    Some((p50, p99))
}

/// Generates the workspace of one size, printing what it holds and how
/// long each part took.
fn generate(base: &Path, records: usize, blocks: usize, name: &str) -> (Workspace, tempfile::TempDir) {
    let dir = tempfile::Builder::new().prefix("scriptorium-commit-").tempdir_in(base).expect("a folder");
    let spec = Spec { records, blocks, seed: 0x5eed_c0de };
    let started = Instant::now();
    let ws = Workspace::generate(&dir.path().join("ws"), spec).expect("the workspace is generated");
    let t = ws.timings;
    println!(
        "workspace {name}: {} topic files ({:.1} MB), {:.0} MB of archive; generated in {:.1} s (sources {:.1} s, topics {:.1} s, sync {:.1} s, index {:.1} s, first commit {:.2} s)",
        ws.topic_files.len(),
        ws.topic_bytes as f64 / 1e6,
        ws.source_bytes as f64 / 1e6,
        started.elapsed().as_secs_f64(),
        t.sources.as_secs_f64(),
        t.topics.as_secs_f64(),
        t.sync.as_secs_f64(),
        t.index.as_secs_f64(),
        t.first_commit.as_secs_f64(),
    );
    (ws, dir)
}

/// Reads the peer's first line (its source rows are written); drops the
/// peer when it does not come.
fn await_peer(peer: &mut Option<Peer>) {
    let Some(p) = peer.as_mut() else { return };
    match p.read() {
        Some(ready) => println!(
            "peer: sqlite {} ready, {} source rows written in {:.1} s",
            ready["sqlite"].as_str().unwrap_or("?"),
            ready["sources"],
            ready["sources_s"].as_f64().unwrap_or(f64::NAN)
        ),
        None => *peer = None,
    }
}

/// Ours and the peer's WAL commits in turn (the same disk for both), then
/// the peer alone in DELETE and WAL mode; prints them and returns the
/// peer's (WAL, DELETE) figures alone.
fn against_peer(
    ws: &mut Workspace,
    peer: &mut Option<Peer>,
    blocks: usize,
    commits: usize,
    name: &str,
) -> (Option<Percentiles>, Option<Percentiles>) {
    let peer_ready = ask(peer, &format!("fill {blocks}")).is_some() && ask(peer, "mode wal").is_some();
    let mut ours_in_turn = Vec::with_capacity(commits);
    let mut in_turn = Vec::with_capacity(commits);
    for _ in 0..commits {
        ours_in_turn.push(timed_commit(ws));
        if peer_ready {
            if let Some(d) = peer_commit(peer) {
                in_turn.push(d);
            }
        }
    }
    // Then the peer alone, right after: in turn with ours, its fsync
    // also waits for the file system to write back what our commit left
    // unsynced (the caches), which is not its own cost.
    let mut alone = |mode: &str| -> Vec<Duration> {
        if peer_ready && ask(peer, &format!("mode {mode}")).is_some() {
            (0..commits).map_while(|_| peer_commit(peer)).collect()
        } else {
            Vec::new()
        }
    };
    let delete = alone("delete");
    let wal = alone("wal");
    show(&format!("ours {name}, in turn with the peer"), &ours_in_turn);
    show(&format!("sqlite fts5 {name}, journal wal, synchronous full, in turn with ours"), &in_turn);
    let wal = show(&format!("sqlite fts5 {name}, journal wal, synchronous full, alone"), &wal);
    let delete = show(&format!("sqlite fts5 {name}, journal delete, synchronous full, alone"), &delete);
    (wal, delete)
}

/// Criterion's mean of our one-block commits in `ws`.
fn criterion_mean(c: &mut Criterion, ws: &mut Workspace, name: &str) {
    let mut g = c.benchmark_group(format!("commit_{name}"));
    g.sample_size(10);
    g.sampling_mode(SamplingMode::Flat);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(5));
    g.bench_function("ours_one_block", |b| b.iter_custom(|iters| (0..iters).map(|_| timed_commit(ws)).sum()));
    g.finish();
}

/// The figures the ratios come from: every size's commits, and then its
/// updates, made round by round, one per size, so that a machine that
/// slows down or speeds up during the run weighs on every size alike.
fn rounds(sized: &mut [Sized], commits: usize, bin: &Path) -> Vec<Row> {
    let mut ours: Vec<Vec<Duration>> = vec![Vec::with_capacity(commits); sized.len()];
    for _ in 0..commits {
        for (k, s) in sized.iter_mut().enumerate() {
            ours[k].push(timed_commit(&mut s.ws));
        }
    }
    let mut cli: Vec<Vec<Duration>> = vec![Vec::with_capacity(commits); sized.len()];
    for _ in 0..commits {
        for (k, s) in sized.iter_mut().enumerate() {
            cli[k].push(timed_update(&mut s.ws, bin));
        }
    }
    let mut rows = Vec::new();
    for (k, s) in sized.iter().enumerate() {
        let ours = show(&format!("ours {}, sizes in turn", s.name), &ours[k]).expect("commits were made");
        let cli =
            show(&format!("scriptorium update {}, process start to exit, sizes in turn", s.name), &cli[k])
                .expect("updates were made");
        rows.push(Row { blocks: s.blocks, ours, cli, wal: s.wal, delete: s.delete });
    }
    rows
}

/// The summary table and the ratios p50(largest)/p50(smallest).
fn summary(records: usize, rows: &[Row]) {
    println!(
        "summary: one-block commit, {} records, fsync on, index refresh and views included",
        label(records)
    );
    println!(
        "summary: | blocks | ours p50 / p99 | `scriptorium update` p50 / p99 | FTS5 WAL p50 / p99 | FTS5 DELETE p50 / p99 | ours/WAL p50 |"
    );
    let cell = |p: Option<(f64, f64)>| p.map_or("–".to_owned(), |(a, b)| format!("{a:.2} / {b:.2} ms"));
    for r in rows {
        println!(
            "summary: | {} | {} | {} | {} | {} | {} |",
            label(r.blocks),
            cell(Some(r.ours)),
            cell(Some(r.cli)),
            cell(r.wal),
            cell(r.delete),
            r.wal.map_or("–".to_owned(), |w| format!("{:.0}×", r.ours.0 / w.0.max(f64::MIN_POSITIVE)))
        );
    }
    if let (Some(first), Some(last)) = (rows.first(), rows.last()) {
        if rows.len() > 1 {
            let mut line = format!(
                "summary: ratio {}/{} p50: ours {:.2} (p99 {:.2}), scriptorium update {:.2} (p99 {:.2})",
                label(last.blocks),
                label(first.blocks),
                last.ours.0 / first.ours.0,
                last.ours.1 / first.ours.1,
                last.cli.0 / first.cli.0,
                last.cli.1 / first.cli.1
            );
            for (j, a, b) in [("wal", first.wal, last.wal), ("delete", first.delete, last.delete)] {
                if let (Some(a), Some(b)) = (a, b) {
                    line.push_str(&format!(", FTS5 {j} {:.2}", b.0 / a.0));
                }
            }
            println!("{line}");
        }
    }
}

fn commit(c: &mut Criterion) {
    let plan = plan();
    let base = std::env::var_os("SCRIPTORIUM_BENCH_DIR").map_or_else(std::env::temp_dir, Into::into);
    std::fs::create_dir_all(&base).expect("the bench folder exists");
    let peer_dir = tempfile::Builder::new().prefix("scriptorium-fts5-").tempdir_in(&base).expect("a folder");
    let mut peer = Peer::start(plan.records, peer_dir.path());
    let bin = scriptorium_benches::cli();
    let mut sized: Vec<Sized> = Vec::new();
    for &blocks in &plan.blocks {
        let name = format!("{}_blocks_{}_records", label(blocks), label(plan.records));
        let (mut ws, dir) = generate(&base, plan.records, blocks, &name);
        for _ in 0..WARM_UP_COMMITS {
            timed_commit(&mut ws);
        }
        if sized.is_empty() {
            await_peer(&mut peer);
        }
        let (wal, delete) = against_peer(&mut ws, &mut peer, blocks, plan.commits, &name);
        criterion_mean(c, &mut ws, &name);
        sized.push(Sized { blocks, name, ws, wal, delete, _dir: dir });
    }
    drop(peer);
    let rows = rounds(&mut sized, plan.commits, &bin);
    drop(sized);
    summary(plan.records, &rows);
}

criterion_group!(benches, commit);
criterion_main!(benches);
