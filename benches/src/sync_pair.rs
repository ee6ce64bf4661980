//! Two machines sharing a bare git remote, for the sync benchmark: the
//! generated workspace (`workspace_gen`) on machine A, pushed once to a
//! bare repository, then copied whole (`cp -a`, its `.git` included) to
//! machine B, so both start synced without building the archive twice.
//!
//! A batch is what one writing session adds: [`BATCH_RECORDS`] records
//! appended to one archive thread and [`BATCH_BLOCKS`] blocks appended to
//! one topic file, each block citing one of the batch's records, committed
//! as one transaction through the writer.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use scriptorium_source_archive::SourceId;
use scriptorium_transaction::disk::Faults;
use scriptorium_transaction::sync::{self, Synced};
use scriptorium_transaction::{Base, Committer, Edit, Patch, Tier};

use crate::workspace_gen::{record_id, Spec, Workspace, LOCK_TIMEOUT, RECORDS_PER_THREAD};
use crate::{Rng, WORDS};

/// Records a batch appends to one thread.
pub const BATCH_RECORDS: usize = 20;
/// Blocks a batch appends to one topic file.
pub const BATCH_BLOCKS: usize = 5;
/// The remote's name on both machines.
pub const REMOTE: &str = "origin";

type Fallible<T> = Result<T, Box<dyn std::error::Error>>;

/// One machine: a workspace whose repository has the remote [`REMOTE`].
#[derive(Debug)]
pub struct Machine {
    /// The workspace's root.
    pub root: PathBuf,
    /// 0 for A, 1 for B: keeps the two machines' ids apart.
    which: usize,
    /// Batches committed so far.
    batches: usize,
    rng: Rng,
}

/// The two machines, the bare remote and what the workspace holds.
#[derive(Debug)]
pub struct Pair {
    /// Machine A (the one the workspace was generated on).
    pub a: Machine,
    /// Machine B (a copy of A after its first sync).
    pub b: Machine,
    /// The bare repository both push to.
    pub remote: PathBuf,
    /// Every topic file, workspace-relative.
    pub topic_files: Vec<String>,
    /// Records in the generated archive.
    pub records: usize,
    /// How long the setup's steps took: generation (with the extra
    /// history), first sync, copy.
    pub setup: [Duration; 3],
}

/// `git` with `args`, which must succeed.
pub fn git(dir: &Path, args: &[&str]) -> Fallible<String> {
    let out = Command::new("git").arg("-C").arg(dir).args(args).env("LC_ALL", "C").output()?;
    if !out.status.success() {
        return Err(format!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Syncs `root` with [`REMOTE`], timed.
pub fn timed_sync(root: &Path) -> Fallible<(Duration, Synced)> {
    let options = sync::Options { remote: REMOTE.to_owned(), ..sync::Options::default() };
    let started = Instant::now();
    let done = sync::sync(root, &options, &Faults::default())?;
    Ok((started.elapsed(), done))
}

/// Bytes of every file under `dir` (a repository's `objects/`).
pub fn tree_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    let mut total = 0;
    for e in entries.flatten() {
        let Ok(meta) = e.metadata() else { continue };
        total += if meta.is_dir() { tree_bytes(&e.path()) } else { meta.len() };
    }
    total
}

impl Pair {
    /// Generates the workspace of `spec` under `base`/a, adds `history`
    /// transactions to its history (`long_history::extend`), makes the bare
    /// remote, syncs A once (its whole history pushed) and copies A to
    /// `base`/b.
    pub fn build(base: &Path, spec: Spec, history: usize) -> Fallible<Pair> {
        let started = Instant::now();
        let ws = Workspace::generate(&base.join("a"), spec)?;
        if history > 0 {
            crate::long_history::extend(&ws, history)?;
        }
        let generated = started.elapsed();
        let remote = base.join("remote.git");
        std::fs::create_dir_all(&remote)?;
        git(&remote, &["init", "--quiet", "--bare", "--initial-branch=main"])?;
        let url = remote.to_str().ok_or("the remote's path is not UTF-8")?;
        sync::transport::add_remote(&ws.root, REMOTE, url)?;
        // A git gc that git starts on its own after the first sync (a long
        // history leaves thousands of loose objects) runs before the copy,
        // not detached under it.
        git(&ws.root, &["config", "gc.autoDetach", "false"])?;
        let started = Instant::now();
        let (_, first) = timed_sync(&ws.root)?;
        if !first.pushed {
            return Err(format!("the first sync did not push: {first:?}").into());
        }
        let first_sync = started.elapsed();
        let started = Instant::now();
        let status = Command::new("cp").arg("-a").arg(&ws.root).arg(base.join("b")).status()?;
        if !status.success() {
            return Err("cp -a failed".into());
        }
        let copied = started.elapsed();
        for root in [&ws.root, &base.join("b")] {
            git(root, &["config", "--unset", "gc.autoDetach"])?;
        }
        let machine = |root: PathBuf, which: usize| Machine {
            root,
            which,
            batches: 0,
            rng: Rng::new(0x5c_0000 + which as u64),
        };
        Ok(Pair {
            a: machine(ws.root.clone(), 0),
            b: machine(base.join("b"), 1),
            remote,
            topic_files: ws.topic_files.clone(),
            records: spec.records,
            setup: [generated, first_sync, copied],
        })
    }

    /// Commits one batch on machine A (`on_b`: B) into archive thread
    /// `thread` and topic file number `file`.
    pub fn batch(&mut self, on_b: bool, thread: usize, file: usize) -> Fallible<()> {
        let threads = self.records.div_ceil(RECORDS_PER_THREAD);
        let path = self.topic_files[file % self.topic_files.len()].clone();
        let m = if on_b { &mut self.b } else { &mut self.a };
        let patch = m.batch_patch(thread % threads, &path)?;
        let mut w = Committer::open(&m.root, LOCK_TIMEOUT)?;
        let c = w.commit(&patch, Tier::Owner, Base::Check)?;
        if !c.warnings.is_empty() {
            return Err(format!("the batch left warnings: {:?}", c.warnings).into());
        }
        Ok(())
    }
}

impl Machine {
    /// The next batch: records appended to `thread`, blocks to the topic
    /// file `path`, on the current revision.
    fn batch_patch(&mut self, thread: usize, path: &str) -> Fallible<Patch> {
        let k = self.batches;
        self.batches += 1;
        let thread_name = record_id(thread * RECORDS_PER_THREAD).thread().to_owned();
        // Message numbers no generated record uses: 0x4000_0000 per machine.
        let first = 0x4000_0000 * (self.which + 1) + k * BATCH_RECORDS;
        let sources: Vec<_> =
            (0..BATCH_RECORDS).map(|i| crate::record(&mut self.rng, &thread_name, first + i)).collect();
        let mut content = String::new();
        for j in 0..BATCH_BLOCKS {
            let label = 0xe0_0000_0000_u64 + ((self.which as u64) << 32) + (k * BATCH_BLOCKS + j) as u64;
            let cited = sources[self.rng.range(0, sources.len())].id().clone();
            content.push_str(&format!(
                "\n{}.[^e-{label:010x}] ^s{}b{k}x{j}\n\n{}",
                self.words(),
                ["a", "b"][self.which],
                definition(label, &cited, path)
            ));
        }
        Ok(Patch {
            base_revision: scriptorium_transaction::revision::compute(&self.root)?.hex,
            message: format!("bench: batch {k} of machine {}", ["A", "B"][self.which]),
            sources,
            edits: vec![Edit::Append { path: path.to_owned(), content }],
        })
    }

    fn words(&mut self) -> String {
        let n = self.rng.range(8, 40);
        (0..n).map(|_| WORDS[self.rng.range(0, WORDS.len())]).collect::<Vec<_>>().join(" ")
    }

    /// Bytes under this machine's `.git/objects`.
    pub fn object_bytes(&self) -> u64 {
        tree_bytes(&self.root.join(".git/objects"))
    }
}

/// One evidence definition line citing record `id` from topic file `path`.
fn definition(label: u64, id: &SourceId, path: &str) -> String {
    format!(
        "[^e-{label:010x}]: Time: `2026-11-30T12:00:00Z`; Sources: [{}]({}{}#{})\n",
        id.text(),
        "../".repeat(path.matches('/').count()),
        id.v2_path(),
        id.anchor()
    )
}
