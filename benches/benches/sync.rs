//! Sync through a git remote: two machines sharing a bare repository
//! (`scriptorium_benches::sync_pair`), the commit benchmark's workspace
//! generated once on machine A, synced (its whole history pushed), then
//! copied with `cp -a` to machine B. None of that is timed.
//!
//! Each round (batches of 20 records to one archive thread and 5 blocks to
//! one topic file, committed through the writer, untimed):
//!
//! * **(c) push**: A commits a batch and syncs (fetch, nothing to merge,
//!   push);
//! * **(a) fast-forward**: B syncs (fetch, the remote's files installed,
//!   the head moved);
//! * **(b) merge**: A and B each commit a batch to the same archive thread
//!   (merged frame by frame) and to the same topic file (merged block by
//!   block); B syncs (a push, printed as `push before merge`),
//!   then A syncs (fetch, three-way merge of both files, validation,
//!   install, the merge commit, push), and B syncs again (a fast-forward to
//!   the merge commit, printed as `fast-forward to a merge`).
//!
//! Every sync is timed whole (wall time, p50 and p99 over the rounds), and
//! what it moved is measured as the growth of the receiving repository's
//! `objects/` folder (bytes of every file under it: loose zlib objects or
//! packs, as git left them): the bare remote's for a push, the syncing
//! machine's for a fetch (for a merge that includes the merge's own new
//! objects).
//!
//! Then one **phase profile** of each kind (and the size of the thin pack
//! `git pack-objects` makes of a batch's commit, what goes over the wire): the same syncs with the git
//! transfer done first by the bench (`git fetch` / `git push` with the
//! arguments the sync uses), timed alone, so the sync that follows only
//! merges and installs (its own fetch then moves nothing); plus a fetch
//! that moves nothing and `revision::compute`, each timed alone.
//!
//! Environment: `SCRIPTORIUM_BENCH_SYNC_RECORDS` (default 1,000,000),
//! `SCRIPTORIUM_BENCH_SYNC_BLOCKS` (default 100,000),
//! `SCRIPTORIUM_BENCH_SYNC_ROUNDS` (default 20),
//! `SCRIPTORIUM_BENCH_SYNC_HISTORY` (default 0: transactions added to the
//! history before the first sync, one record or one block each, to see
//! what a long history costs a sync), `SCRIPTORIUM_BENCH_DIR`.
//! Under `cargo bench -- --test` (CI): 200 blocks over 2,000 records, two
//! rounds.
#![allow(clippy::print_stdout)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use scriptorium_benches::sync_pair::{git, timed_sync, tree_bytes, Pair, REMOTE};
use scriptorium_benches::workspace_gen::Spec;
use scriptorium_benches::{env_usize, percentiles};

struct Plan {
    records: usize,
    blocks: usize,
    rounds: usize,
    /// Transactions added to the history before the first sync.
    history: usize,
}

fn plan() -> Plan {
    let test = std::env::args().any(|a| a == "--test");
    Plan {
        records: env_usize("SCRIPTORIUM_BENCH_SYNC_RECORDS").unwrap_or(if test { 2_000 } else { 1_000_000 }),
        blocks: env_usize("SCRIPTORIUM_BENCH_SYNC_BLOCKS").unwrap_or(if test { 200 } else { 100_000 }),
        rounds: env_usize("SCRIPTORIUM_BENCH_SYNC_ROUNDS").unwrap_or(if test { 2 } else { 20 }).max(1),
        history: env_usize("SCRIPTORIUM_BENCH_SYNC_HISTORY").unwrap_or(0),
    }
}

/// The samples of one kind of sync: wall times and bytes moved.
#[derive(Default)]
struct Samples {
    times: Vec<Duration>,
    bytes: Vec<u64>,
}

impl Samples {
    fn report(&self, what: &str) {
        if self.times.is_empty() {
            return;
        }
        let (p50, p99) = percentiles(self.times.clone());
        let mut bytes = self.bytes.clone();
        bytes.sort_unstable();
        println!(
            "{what}: p50 {p50:.1} ms, p99 {p99:.1} ms over {} syncs; bytes moved p50 {}, min {}, max {}",
            self.times.len(),
            bytes[bytes.len() / 2],
            bytes[0],
            bytes[bytes.len() - 1]
        );
    }
}

/// Syncs `root`, checks the outcome, records the time and the growth of
/// `receiving` (an `objects/` folder).
fn measured(root: &Path, receiving: &Path, outcome: &str, into: &mut Samples) {
    let before = tree_bytes(receiving);
    let (took, done) = timed_sync(root).expect("the sync");
    assert_eq!(done.outcome, outcome, "{done:?}");
    assert!(done.conflicts.is_empty(), "unexpected conflicts: {done:?}");
    into.times.push(took);
    into.bytes.push(tree_bytes(receiving).saturating_sub(before));
}

#[derive(Default)]
struct All {
    push: Samples,
    fast_forward: Samples,
    push_before_merge: Samples,
    merge: Samples,
    merge_pushed: Vec<u64>,
    fast_forward_merge: Samples,
    /// The local commits of the batches, for scale.
    batches: Vec<Duration>,
}

/// Commits a batch on A (`on_b`: B), timed into `all`.
fn batch(pair: &mut Pair, on_b: bool, thread: usize, file: usize, all: &mut All) {
    let started = Instant::now();
    pair.batch(on_b, thread, file).expect("a batch");
    all.batches.push(started.elapsed());
}

/// One round of the three kinds (see the module documentation).
fn round(pair: &mut Pair, k: usize, all: &mut All) {
    let remote_objects = pair.remote.join("objects");
    let (a_objects, b_objects) = (pair.a.root.join(".git/objects"), pair.b.root.join(".git/objects"));
    batch(pair, false, 7 * k + 1, 13 * k + 1, all);
    measured(&pair.a.root, &remote_objects, "pushed", &mut all.push);
    measured(&pair.b.root, &b_objects, "fast_forward", &mut all.fast_forward);

    let (thread, file) = (7 * k + 3, 13 * k + 5);
    batch(pair, false, thread, file, all);
    batch(pair, true, thread, file, all);
    measured(&pair.b.root, &remote_objects, "pushed", &mut all.push_before_merge);
    let pushed_before = tree_bytes(&remote_objects);
    measured(&pair.a.root, &a_objects, "merged", &mut all.merge);
    all.merge_pushed.push(tree_bytes(&remote_objects).saturating_sub(pushed_before));
    measured(&pair.b.root, &b_objects, "fast_forward", &mut all.fast_forward_merge);
}

/// Runs `f` once; how long it took, in ms.
fn ms<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let started = Instant::now();
    let out = f();
    (started.elapsed().as_secs_f64() * 1e3, out)
}

fn fetch(root: &Path) {
    let refspec = format!("+refs/heads/*:refs/remotes/{REMOTE}/*");
    git(root, &["fetch", "--quiet", "--no-tags", "--prune", "--no-write-fetch-head", REMOTE, &refspec])
        .expect("git fetch");
}

fn push(root: &Path) {
    git(root, &["push", "--porcelain", "--quiet", REMOTE, "HEAD:refs/heads/main"]).expect("git push");
}

fn sync_rest(root: &Path, outcome: &str) -> f64 {
    let (t, done) = ms(|| timed_sync(root).expect("the sync"));
    assert_eq!(done.1.outcome, outcome, "{:?}", done.1);
    t
}

/// Bytes of the thin pack git makes of what `root` has and the remote
/// branch lacks: what a push of it sends.
fn thin_pack(root: &Path) -> usize {
    use std::io::Write;
    let mut child = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["pack-objects", "--revs", "--thin", "--stdout", "-q"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("git pack-objects");
    let revs = format!("HEAD\n^refs/remotes/{REMOTE}/main\n");
    child.stdin.take().expect("its input").write_all(revs.as_bytes()).expect("the revisions");
    let out = child.wait_with_output().expect("git pack-objects");
    assert!(out.status.success(), "git pack-objects failed");
    out.stdout.len()
}

/// The phase profile (see the module documentation).
fn profile(pair: &mut Pair, k: usize) {
    pair.batch(false, 7 * k + 1, 13 * k + 1).expect("A's batch");
    println!("profile push: the thin pack of the batch's commit is {} bytes", thin_pack(&pair.a.root));
    let (git_push, ()) = ms(|| push(&pair.a.root));
    let rest = sync_rest(&pair.a.root, "up_to_date");
    println!("profile push: git push {git_push:.1} ms, then the sync without transfer {rest:.1} ms");

    let (git_fetch, ()) = ms(|| fetch(&pair.b.root));
    let rest = sync_rest(&pair.b.root, "fast_forward");
    println!(
        "profile fast-forward: git fetch {git_fetch:.1} ms, then the sync without transfer {rest:.1} ms"
    );

    let (thread, file) = (7 * k + 3, 13 * k + 5);
    pair.batch(false, thread, file).expect("A's batch");
    pair.batch(true, thread, file).expect("B's batch");
    sync_rest(&pair.b.root, "pushed");
    let (git_fetch, ()) = ms(|| fetch(&pair.a.root));
    let (merged, (_, done)) = ms(|| timed_sync(&pair.a.root).expect("the sync"));
    assert_eq!(done.outcome, "merged", "{done:?}");
    println!(
        "profile merge: git fetch {git_fetch:.1} ms, then the sync without fetch (merge, validation, install, commit, push) {merged:.1} ms"
    );
    let (git_fetch, ()) = ms(|| fetch(&pair.b.root));
    let rest = sync_rest(&pair.b.root, "fast_forward");
    println!("profile fast-forward to a merge: git fetch {git_fetch:.1} ms, then {rest:.1} ms");

    let (noop, ()) = ms(|| fetch(&pair.a.root));
    let (rev, _) = ms(|| scriptorium_transaction::revision::compute(&pair.a.root).expect("the revision"));
    let (up, _) = ms(|| sync_rest(&pair.a.root, "up_to_date"));
    println!(
        "profile parts: git fetch moving nothing {noop:.1} ms; revision::compute {rev:.1} ms; a whole sync with nothing to do {up:.1} ms"
    );
}

fn report_all(all: &All) {
    all.push.report("(c) push after a local batch");
    all.fast_forward.report("(a) fast-forward to the other machine's batch");
    all.merge.report("(b) merge of both machines' batches (fetch, merge, install, push)");
    let mut pushed = all.merge_pushed.clone();
    pushed.sort_unstable();
    println!("(b) merge: bytes pushed to the remote p50 {}", pushed[pushed.len() / 2]);
    all.push_before_merge.report("push before merge");
    all.fast_forward_merge.report("fast-forward to a merge");
    let (p50, p99) = percentiles(all.batches.clone());
    println!(
        "for scale, the local commit of a batch through the writer: p50 {p50:.1} ms, p99 {p99:.1} ms over {}",
        all.batches.len()
    );
}

fn main() {
    let plan = plan();
    let base = std::env::var_os("SCRIPTORIUM_BENCH_DIR").map_or_else(std::env::temp_dir, Into::into);
    let dir = tempfile::Builder::new().prefix("scriptorium-sync-").tempdir_in(&base).expect("a folder");
    let spec = Spec { records: plan.records, blocks: plan.blocks, seed: 0x5eed_c0de };
    let mut pair = Pair::build(dir.path(), spec, plan.history).expect("two machines");
    let [generated, first, copied] = pair.setup.map(|d| d.as_secs_f64());
    println!(
        "workspace {} blocks ({} topic files), {} records, {} extra commits of history: generated in {generated:.1} s; first sync (the whole history pushed) {first:.1} s; copied to B in {copied:.1} s",
        plan.blocks,
        pair.topic_files.len(),
        plan.records,
        plan.history
    );
    println!(
        "repositories: A .git/objects {} bytes, remote objects {} bytes",
        pair.a.object_bytes(),
        tree_bytes(&pair.remote.join("objects"))
    );
    // One round unmeasured: caches and the page cache warm on both sides.
    round(&mut pair, 0, &mut All::default());
    let mut all = All::default();
    for k in 1..=plan.rounds {
        round(&mut pair, k, &mut all);
    }
    report_all(&all);
    profile(&mut pair, plan.rounds + 1);
}
