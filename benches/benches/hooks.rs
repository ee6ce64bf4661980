//! Coding-agent hooks: `scriptorium hook claude-code --workspace W` as
//! Claude Code runs it, on a workspace of 1,000,000 archived records and
//! 100,000 topic blocks (`scriptorium_benches::workspace_gen`), against
//! `cat` spawned the same way with the same stdin (the floor of any hook
//! command: a process start, reading stdin, printing).
//!
//! Every figure is one process, timed from spawn to exit: the event (a
//! real-shaped Claude Code hook event, `scriptorium_benches::claude_code`)
//! is written to its stdin, which is closed, its stdout is read to the end
//! and it is waited for. Ours and `cat` are called in turn, call for call.
//!
//! * `UserPromptSubmit`, warm: a different prompt each call, 4–12 words of
//!   the generator's vocabulary (so every prompt matches); the answer must
//!   be `hookSpecificOutput.additionalContext` holding the fenced recall,
//!   with the save nudge first (the session has 12 unwritten user turns).
//! * `UserPromptSubmit`, cold: before each call (and before each `cat`) the
//!   page cache is emptied of every file under the workspace (index,
//!   archive, topics, `.scriptorium/*`) and of the binary, with
//!   `posix_fadvise(POSIX_FADV_DONTNEED)` (`scriptorium_benches::page_cache`);
//!   `mincore` over a mapping of the index files shows what is still
//!   resident before the call and what the call read.
//! * `Stop`: the transcript gains one round (a prompt, a tool call, its
//!   result, an answer) before each call; the hook records it and starts
//!   its background write (which writes only at the threshold).
//! * `PreCompact`, backlog new: the transcript gains a backlog of
//!   `SCRIPTORIUM_BENCH_BACKLOG` real turns (default 5,000, with as many
//!   tool lines) before each call; the hook reads and records them, then
//!   starts a forced write of all of them.
//! * `PreCompact`, backlog recorded: the same backlog is recorded first
//!   (`scriptorium session import` of a second transcript file of the same
//!   session, untimed), then the transcript gains one round: the hook
//!   records one round and starts a forced write of the whole backlog.
//!
//! * `UserPromptSubmit` during a forced write: while each `PreCompact`'s
//!   write runs, a prompt every 250 ms (at most 20 a write), the nudge
//!   optional (it goes once the write covers the session).
//!
//! Background writes are waited for (no `hook write` process of this
//! workspace alive) after every `Stop` and `PreCompact` call, untimed, so
//! that they weigh on no other figure; how long the forced ones took is
//! printed.
//! Then criterion's means of warm `UserPromptSubmit` calls, ours and `cat`.
//!
//! The binary: `SCRIPTORIUM_BIN`, or the one built beside the bench
//! (`cargo xtask bench` builds it first). Environment:
//! `SCRIPTORIUM_BENCH_RECORDS` (default 1,000,000), `SCRIPTORIUM_BENCH_BLOCKS`
//! (100,000), `SCRIPTORIUM_BENCH_CALLS` (warm and `Stop` calls, 200),
//! `SCRIPTORIUM_BENCH_COLD_CALLS` (50), `SCRIPTORIUM_BENCH_COMPACTS` (per
//! `PreCompact` variant, 10), `SCRIPTORIUM_BENCH_BACKLOG` (5,000),
//! `SCRIPTORIUM_BENCH_DIR` (where the workspace is generated; default the
//! system temporary folder), `SCRIPTORIUM_BENCH_KEEP=1` to keep it. Under
//! `cargo bench -- --test` (CI): 2,000 records, 200 blocks, a few calls of
//! each kind and a backlog of 100 turns, everything still checked.
#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};
use scriptorium_benches::claude_code::{self, Conversation};
use scriptorium_benches::page_cache::{self, Residency};
use scriptorium_benches::workspace_gen::{Spec, Workspace};
use scriptorium_benches::{env_usize, percentiles, Rng};
use serde_json::{json, Value};

const SESSION: &str = "5f0c2d7e-8a41-4c55-9b1e-2f7f0a9d3c11";
/// Rounds recorded before the prompts: 12 user turns, so the nudge is due.
const SEED_ROUNDS: usize = 12;
/// Untimed calls before the warm figures.
const WARM_UP: usize = 5;
/// The most `UserPromptSubmit` calls during one forced write.
const DURING_PER_WRITE: usize = 20;
/// The pause between them.
const DURING_EVERY: Duration = Duration::from_millis(250);

struct Plan {
    records: usize,
    blocks: usize,
    calls: usize,
    cold: usize,
    compacts: usize,
    backlog: usize,
}

fn plan() -> Plan {
    let test = std::env::args().any(|a| a == "--test");
    let pick =
        |name: &str, full: usize, tiny: usize| env_usize(name).unwrap_or(if test { tiny } else { full });
    Plan {
        records: pick("SCRIPTORIUM_BENCH_RECORDS", 1_000_000, 2_000),
        blocks: pick("SCRIPTORIUM_BENCH_BLOCKS", 100_000, 200),
        calls: pick("SCRIPTORIUM_BENCH_CALLS", 200, 4).max(1),
        cold: pick("SCRIPTORIUM_BENCH_COLD_CALLS", 50, 2).max(1),
        compacts: pick("SCRIPTORIUM_BENCH_COMPACTS", 10, 1).max(1),
        backlog: pick("SCRIPTORIUM_BENCH_BACKLOG", 5_000, 100).max(2),
    }
}

fn label(n: usize) -> String {
    match n {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        n if n >= 1_000 && n % 1_000 == 0 => format!("{}k", n / 1_000),
        n => n.to_string(),
    }
}

/// `name` on the `PATH`.
fn on_path(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").expect("a PATH");
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .expect("the program is on the PATH")
}

/// The processes measured, spawned alike.
struct Runner {
    bin: PathBuf,
    cat: PathBuf,
    ws: PathBuf,
}

impl Runner {
    /// One process given `input` on stdin, from spawn to exit (stdout
    /// read to its end).
    fn timed(mut cmd: Command, input: &[u8]) -> (Duration, Output) {
        use std::io::Write;
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let started = Instant::now();
        let mut child = cmd.spawn().expect("the program runs");
        child.stdin.take().expect("a pipe").write_all(input).expect("the event is sent");
        let out = child.wait_with_output().expect("the program ends");
        (started.elapsed(), out)
    }

    fn hook(&self, input: &[u8]) -> (Duration, Output) {
        let mut cmd = Command::new(&self.bin);
        cmd.args(["hook", "claude-code", "--workspace"]).arg(&self.ws);
        Runner::timed(cmd, input)
    }

    fn cat(&self, input: &[u8]) -> Duration {
        let (d, out) = Runner::timed(Command::new(&self.cat), input);
        assert!(out.status.success() && out.stdout == input, "cat prints its stdin");
        d
    }

    /// Runs `scriptorium ARGS --workspace W`, which must succeed; its
    /// stdout as JSON when it prints any.
    fn verb(&self, args: &[&str]) -> Value {
        let out =
            Command::new(&self.bin).args(args).arg("--workspace").arg(&self.ws).output().expect("it runs");
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
    }

    /// Waits until no background write of this workspace runs (no `hook
    /// write` process naming it, read from `/proc`); how long it took.
    fn wait_for_writers(&self) -> Duration {
        let started = Instant::now();
        let root = self.ws.to_str().expect("a UTF-8 path");
        while writer_alive(root) {
            assert!(
                started.elapsed() < Duration::from_secs(1800),
                "a background write still runs after 30 min"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        started.elapsed()
    }
}

/// Whether a `scriptorium --workspace ROOT hook write …` process is alive.
fn writer_alive(root: &str) -> bool {
    let Ok(procs) = std::fs::read_dir("/proc") else { return false };
    procs.flatten().any(|p| {
        let Ok(cmdline) = std::fs::read(p.path().join("cmdline")) else { return false };
        let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        let has = |a: &str, b: &str| args.windows(2).any(|w| w[0] == a.as_bytes() && w[1] == b.as_bytes());
        has("--workspace", root) && has("hook", "write")
    })
}

/// A hook that must print nothing (`Stop`, `PreCompact`): exit 0, no
/// output at all (a failure would print a `systemMessage`).
fn check_silent(out: &Output, what: &str) {
    assert!(out.status.success(), "{what}: a hook always exits 0");
    assert!(
        out.stdout.is_empty() && out.stderr.is_empty(),
        "{what}: printed {} / {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A `UserPromptSubmit` answer: exactly `{"hookSpecificOutput":
/// {"hookEventName","additionalContext"}}`, the context fenced, the nudge
/// first (when `nudged`), then recalled lines. Its length in characters.
fn check_context(out: &Output, nudged: bool) -> usize {
    assert!(out.status.success() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::str::from_utf8(&out.stdout).expect("UTF-8");
    assert_eq!(text.lines().count(), 1, "one line: {text}");
    let v: Value = serde_json::from_str(text).expect("JSON");
    let keys: Vec<&String> = v.as_object().expect("an object").keys().collect();
    assert_eq!(keys, ["hookSpecificOutput"], "only the context, no systemMessage: {v}");
    let specific = &v["hookSpecificOutput"];
    assert_eq!(specific.as_object().map(|o| o.len()), Some(2), "{v}");
    assert_eq!(specific["hookEventName"], "UserPromptSubmit");
    let context = specific["additionalContext"].as_str().expect("a context");
    assert!(
        context.starts_with("<memory-context>\n") && context.ends_with("\n</memory-context>"),
        "{context}"
    );
    // After the opening tag and the system note: the lines, then the closing tag.
    let inside: Vec<&str> = context.lines().skip(2).collect();
    let nudge = inside.first().is_some_and(|l| l.starts_with("[Save nudge: "));
    assert!(nudge || !nudged, "the nudge first: {context}");
    assert!(inside.len() >= 2 + usize::from(nudge), "at least one recalled line: {context}");
    context.chars().count()
}

/// Our calls and `cat`'s, one figure each.
#[derive(Default)]
struct Timed {
    ours: Vec<Duration>,
    cat: Vec<Duration>,
}

fn prompt_event(rng: &mut Rng, transcript: &Path) -> Vec<u8> {
    let prompt = claude_code::prompt(rng);
    claude_code::event("UserPromptSubmit", SESSION, transcript, json!({ "prompt": prompt }))
}

/// Warm `UserPromptSubmit` calls, in turn with `cat`; the mean context
/// length.
fn warm(r: &Runner, transcript: &Path, calls: usize, rng: &mut Rng) -> (Timed, f64) {
    for _ in 0..WARM_UP {
        check_context(&r.hook(&prompt_event(rng, transcript)).1, true);
        r.cat(b"warm-up");
    }
    let mut t = Timed::default();
    let mut chars = 0;
    for _ in 0..calls {
        let input = prompt_event(rng, transcript);
        let (d, out) = r.hook(&input);
        chars += check_context(&out, true);
        t.ours.push(d);
        t.cat.push(r.cat(&input));
    }
    (t, chars as f64 / calls as f64)
}

/// What stayed in the page cache of the index files before cold calls,
/// and what one call brought in.
#[derive(Default)]
struct Cold {
    index_before: Vec<f64>,
    workspace_before: Vec<f64>,
    index_after: Vec<f64>,
    index_pages: u64,
}

fn evict_all(r: &Runner) {
    page_cache::evict_tree(&r.ws).expect("the workspace's pages are dropped");
    page_cache::evict(&r.bin).expect("the binary's pages are dropped");
    page_cache::evict(&r.cat).expect("cat's pages are dropped");
}

/// Cold `UserPromptSubmit` calls, in turn with a cold `cat`.
fn cold(r: &Runner, transcript: &Path, calls: usize, rng: &mut Rng) -> (Timed, Cold) {
    let index_dir = r.ws.join(".scriptorium/index");
    let mut t = Timed::default();
    let mut c = Cold::default();
    for _ in 0..calls {
        let input = prompt_event(rng, transcript);
        evict_all(r);
        let index = page_cache::files_under(&index_dir).expect("the index folder");
        let before: Residency = page_cache::resident(&index).expect("mincore");
        let all = page_cache::files_under(&r.ws).expect("the workspace");
        c.workspace_before.push(page_cache::resident(&all).expect("mincore").fraction());
        let (d, out) = r.hook(&input);
        check_context(&out, true);
        t.ours.push(d);
        let after = page_cache::resident(&index).expect("mincore");
        c.index_before.push(before.fraction());
        c.index_after.push(after.fraction());
        c.index_pages = after.pages;
        evict_all(r);
        t.cat.push(r.cat(&input));
    }
    (t, c)
}

/// `Stop` calls, the transcript one round longer before each.
fn stops(r: &Runner, conv: &mut Conversation, transcript: &Path, calls: usize) -> Timed {
    let mut t = Timed::default();
    for _ in 0..calls {
        conv.append(transcript, 1).expect("the transcript grows");
        let input = claude_code::event("Stop", SESSION, transcript, json!({"stop_hook_active": false}));
        let (d, out) = r.hook(&input);
        check_silent(&out, "Stop");
        t.ours.push(d);
        r.wait_for_writers();
        t.cat.push(r.cat(&input));
    }
    t
}

/// `PreCompact` calls, and `UserPromptSubmit` calls while the forced
/// writes they start run.
#[derive(Default)]
struct Compacts {
    calls: Timed,
    /// How long each forced write ran after its hook returned.
    writes: Vec<Duration>,
    during: Timed,
}

/// `UserPromptSubmit` calls while a forced write runs, one every
/// [`DURING_EVERY`] (at most [`DURING_PER_WRITE`]); then waits for it.
fn prompts_during_write(r: &Runner, transcript: &Path, rng: &mut Rng, c: &mut Compacts) {
    let started = Instant::now();
    let root = r.ws.to_str().expect("a UTF-8 path");
    let mut n = 0;
    while n < DURING_PER_WRITE && writer_alive(root) {
        let input = prompt_event(rng, transcript);
        let (d, out) = r.hook(&input);
        // The nudge goes once the write has covered the session's turns.
        check_context(&out, false);
        c.during.ours.push(d);
        c.during.cat.push(r.cat(&input));
        n += 1;
        std::thread::sleep(DURING_EVERY);
    }
    r.wait_for_writers();
    c.writes.push(started.elapsed());
}

/// `PreCompact` calls, each after a backlog of `backlog` real turns: new
/// in the transcript (`recorded` false), or recorded beforehand from a
/// second transcript of the session.
fn compacts(
    r: &Runner,
    conv: &mut Conversation,
    transcript: &Path,
    p: &Plan,
    recorded: bool,
    rng: &mut Rng,
) -> Compacts {
    let mut c = Compacts::default();
    let rounds = p.backlog / 2;
    for k in 0..p.compacts {
        if recorded {
            let file = transcript.with_file_name(format!("backlog-{k}.jsonl"));
            let mut other = Conversation::new(SESSION, &format!("b{k}-"), 0xb4c + k as u64);
            other.append(&file, rounds).expect("the backlog is written");
            r.verb(&["session", "import", "--format", "claude-code", file.to_str().expect("UTF-8")]);
            let pending = r.verb(&["status", "--json"])["pending_turns"].as_u64().unwrap_or(0);
            assert!(pending >= 2 * rounds as u64, "the backlog is pending: {pending}");
            conv.append(transcript, 1).expect("the transcript grows");
        } else {
            conv.append(transcript, rounds).expect("the transcript grows");
        }
        let input = claude_code::event(
            "PreCompact",
            SESSION,
            transcript,
            json!({"trigger": "auto", "custom_instructions": ""}),
        );
        let (d, out) = r.hook(&input);
        check_silent(&out, "PreCompact");
        c.calls.ours.push(d);
        prompts_during_write(r, transcript, rng, &mut c);
        let status = r.verb(&["status", "--json"]);
        assert_eq!(status["pending_turns"], 0, "the forced write wrote the backlog: {status}");
        assert_eq!(status["hooks"]["last_error"], Value::Null, "{status}");
        c.calls.cat.push(r.cat(&input));
    }
    c
}

/// One line of the summary.
struct Row {
    what: &'static str,
    ours: (f64, f64, f64),
    cat: (f64, f64),
    target: Option<f64>,
}

fn stats(times: &[Duration]) -> (f64, f64, f64) {
    let (p50, p99) = percentiles(times.to_vec());
    let max = times.iter().max().copied().unwrap_or_default().as_secs_f64() * 1e3;
    (p50, p99, max)
}

fn row(what: &'static str, t: &Timed, target: Option<f64>) -> Row {
    let ours = stats(&t.ours);
    let (cat50, cat99, _) = stats(&t.cat);
    let mean = t.ours.iter().sum::<Duration>().as_secs_f64() * 1e3 / t.ours.len() as f64;
    println!(
        "latency {what}: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms, mean {mean:.2} ms over {} calls; cat p50 {cat50:.2} ms, p99 {cat99:.2} ms",
        ours.0,
        ours.1,
        ours.2,
        t.ours.len()
    );
    Row { what, ours, cat: (cat50, cat99), target }
}

fn summary(records: usize, blocks: usize, rows: &[Row]) {
    println!(
        "summary: claude-code hooks, {} records, {} blocks, process spawn to exit",
        label(records),
        label(blocks)
    );
    println!(
        "summary: | call | ours p50 / p99 (max) | cat p50 / p99 | ours/cat p50 / p99 | target p99 | met |"
    );
    for r in rows {
        let (met, target) = match r.target {
            Some(t) if r.ours.1 <= t => ("yes".to_owned(), format!("≤ {t:.0} ms")),
            Some(t) => (format!("no (+{:.1} ms)", r.ours.1 - t), format!("≤ {t:.0} ms")),
            None => ("–".to_owned(), "–".to_owned()),
        };
        println!(
            "summary: | {} | {:.2} / {:.2} ms ({:.2}) | {:.2} / {:.2} ms | {:.1} / {:.1} | {target} | {met} |",
            r.what,
            r.ours.0,
            r.ours.1,
            r.ours.2,
            r.cat.0,
            r.cat.1,
            r.ours.0 / r.cat.0.max(f64::MIN_POSITIVE),
            r.ours.1 / r.cat.1.max(f64::MIN_POSITIVE),
        );
    }
}

/// Criterion's means of warm `UserPromptSubmit` calls, ours and `cat`.
fn criterion_means(c: &mut Criterion, r: &Runner, transcript: &Path, rng: &mut Rng) {
    let inputs: Vec<Vec<u8>> = (0..64).map(|_| prompt_event(rng, transcript)).collect();
    let mut g = c.benchmark_group("user_prompt_submit");
    g.sample_size(10);
    g.sampling_mode(SamplingMode::Flat);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(5));
    let mut k = 0;
    g.bench_function("ours", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| {
                    k += 1;
                    r.hook(&inputs[k % inputs.len()]).0
                })
                .sum()
        });
    });
    g.bench_function("cat", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| r.cat(&inputs[k % inputs.len()])).sum());
    });
    g.finish();
}

/// Generates the workspace, printing what it holds and how long it took.
fn generate(base: &Path, p: &Plan) -> (Workspace, tempfile::TempDir) {
    let dir = tempfile::Builder::new().prefix("scriptorium-hooks-").tempdir_in(base).expect("a folder");
    let spec = Spec { records: p.records, blocks: p.blocks, seed: 0x5eed_c0de };
    let started = Instant::now();
    let ws = Workspace::generate(&dir.path().join("ws"), spec).expect("the workspace is generated");
    let t = ws.timings;
    println!(
        "workspace {}_records_{}_blocks: {} topic files ({:.1} MB), {:.0} MB of archive; generated in {:.1} s (sources {:.1} s, topics {:.1} s, sync {:.1} s, index {:.1} s, first commit {:.2} s)",
        label(p.records),
        label(p.blocks),
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
    let index: u64 = page_cache::files_under(&ws.root.join(".scriptorium/index"))
        .expect("the index folder")
        .iter()
        .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .sum();
    println!("workspace: index {:.0} MB", index as f64 / 1e6);
    (ws, dir)
}

/// The load average, to tell a busy machine from a quiet one.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(|_| "unknown".to_owned(), |s| s.trim().to_owned())
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn hooks(c: &mut Criterion) {
    let p = plan();
    let base = std::env::var_os("SCRIPTORIUM_BENCH_DIR").map_or_else(std::env::temp_dir, Into::into);
    std::fs::create_dir_all(&base).expect("the bench folder exists");
    println!("load average at the start: {}", load());
    let (ws, dir) = generate(&base, &p);
    let r = Runner { bin: scriptorium_benches::cli(), cat: on_path("cat"), ws: ws.root.clone() };
    let transcripts = dir.path().join("transcripts");
    std::fs::create_dir_all(&transcripts).expect("a folder");
    let transcript = transcripts.join(format!("{SESSION}.jsonl"));
    let mut conv = Conversation::new(SESSION, "", 0xc1a0de);
    let mut rng = Rng::new(0x9e0_4f7);

    // The session so far: 12 rounds, recorded by a Stop.
    conv.append(&transcript, SEED_ROUNDS).expect("the transcript is written");
    let input = claude_code::event("Stop", SESSION, &transcript, json!({"stop_hook_active": false}));
    check_silent(&r.hook(&input).1, "Stop");
    r.wait_for_writers();

    let (t, chars) = warm(&r, &transcript, p.calls, &mut rng);
    println!("UserPromptSubmit warm: context of {chars:.0} characters on average");
    let mut rows = vec![row("UserPromptSubmit, warm", &t, Some(50.0))];
    criterion_means(c, &r, &transcript, &mut rng);

    let (t, cold_pages) = cold(&r, &transcript, p.cold, &mut rng);
    println!(
        "UserPromptSubmit cold: resident before a call: index {:.4} % (max {:.4} %) of {} pages, whole workspace {:.4} %; after it: index {:.2} %",
        100.0 * mean(&cold_pages.index_before),
        100.0 * cold_pages.index_before.iter().copied().fold(0.0, f64::max),
        cold_pages.index_pages,
        100.0 * mean(&cold_pages.workspace_before),
        100.0 * mean(&cold_pages.index_after),
    );
    assert!(cold_pages.index_before.iter().all(|&f| f < 0.01), "the index is evicted before each cold call");
    rows.push(row("UserPromptSubmit, cold page cache", &t, Some(250.0)));

    rows.push(row("Stop, one round new", &stops(&r, &mut conv, &transcript, p.calls), Some(50.0)));
    let mut during = Timed::default();
    for (recorded, what) in
        [(false, "PreCompact, backlog new in the transcript"), (true, "PreCompact, backlog recorded")]
    {
        let mut c = compacts(&r, &mut conv, &transcript, &p, recorded, &mut rng);
        let (w50, _, wmax) = stats(&c.writes);
        println!(
            "{what}: {} turns; the forced write in the background took p50 {w50:.0} ms, max {wmax:.0} ms",
            p.backlog
        );
        rows.push(row(what, &c.calls, Some(50.0)));
        during.ours.append(&mut c.during.ours);
        during.cat.append(&mut c.during.cat);
    }
    if !during.ours.is_empty() {
        rows.push(row("UserPromptSubmit, during a forced write", &during, Some(50.0)));
    }
    println!("load average at the end: {}", load());
    summary(p.records, p.blocks, &rows);
    let status = r.verb(&["status", "--json"]);
    assert_eq!(status["hooks"]["last_error"], Value::Null, "no hook failed: {status}");
    drop(ws);
    if std::env::var("SCRIPTORIUM_BENCH_KEEP").is_ok_and(|v| v == "1") {
        println!("workspace kept: {}", dir.keep().display());
    }
}

criterion_group!(benches, hooks);
criterion_main!(benches);
