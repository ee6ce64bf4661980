//! A realistic workspace on disk, written directly (not through commits),
//! for the commit-latency benchmark and its profile.
//!
//! * `records` source records (the archive generator's bodies, speakers,
//!   CRLF, U+2028, 2 % pending) in threads of [`RECORDS_PER_THREAD`], one
//!   v2 file a thread (`sources/openprogram/_v2/t00042.md`), written with the
//!   archive's own writer so the bytes are valid;
//! * `blocks` blocks in topic files of [`BLOCKS_PER_FILE`] (the first file
//!   is `topics/core.md`, the rest `topics/gNNN/fNNNNN.md`, kinds person,
//!   project and theme in turn), every block citing one archived record with
//!   its own evidence footnote, and every fourth block linking to a block of
//!   the previous file. A file's citations come from [`THREADS_PER_FILE`]
//!   threads, as a topic's facts come from a few conversations.
//!
//! Then the search index is built once and one commit is made through the
//! writer, so that the revision cache, the topics cache and the derived
//! views exist, as in a workspace in use. Everything is seeded: the same
//! spec writes the same bytes.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use scriptorium_bm25_index::tokenize::TokenizerConfig;
use scriptorium_source_archive::{v2, SourceId};
use scriptorium_transaction::{Base, Committed, Committer, Edit, Patch, Tier};

use crate::{record, Rng, WORDS};

/// Records per v2 thread file.
pub const RECORDS_PER_THREAD: usize = 1_000;
/// Blocks per topic file.
pub const BLOCKS_PER_FILE: usize = 100;
/// Archive threads a topic file cites.
pub const THREADS_PER_FILE: usize = 4;
/// The provider of every generated record.
pub const PROVIDER: &str = "openprogram";
/// How long a writer waits for the lock.
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(60);

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    /// Source records.
    pub records: usize,
    /// Topic blocks.
    pub blocks: usize,
    /// The seed of everything random.
    pub seed: u64,
}

/// How long each step of the generation took.
#[derive(Debug, Clone, Copy, Default)]
pub struct GenTimings {
    /// Writing the archive files.
    pub sources: Duration,
    /// Writing the topic files.
    pub topics: Duration,
    /// Flushing every file written to the disk.
    pub sync: Duration,
    /// Building the search index.
    pub index: Duration,
    /// The first commit (revision cache, topics cache and views from nothing).
    pub first_commit: Duration,
}

/// A generated workspace, ready for commits.
#[derive(Debug)]
pub struct Workspace {
    /// Its root.
    pub root: PathBuf,
    /// What it holds.
    pub spec: Spec,
    /// Every topic file, workspace-relative (the first is `topics/core.md`).
    pub topic_files: Vec<String>,
    /// The archive threads each topic file cites.
    file_threads: Vec<Vec<usize>>,
    /// The current revision (kept up to date by [`Workspace::commit`]).
    pub revision: String,
    /// Bytes of the archive files.
    pub source_bytes: u64,
    /// Bytes of the topic files as generated.
    pub topic_bytes: u64,
    /// How long the generation took.
    pub timings: GenTimings,
    appended: u64,
    rng: Rng,
}

type Fallible<T> = Result<T, Box<dyn std::error::Error>>;

fn thread_name(t: usize) -> String {
    format!("t{t:05}")
}

fn message_name(n: usize) -> String {
    format!("msg_{n:08x}")
}

fn threads_of(records: usize) -> usize {
    records.div_ceil(RECORDS_PER_THREAD)
}

/// The id of record number `n`.
pub fn record_id(n: usize) -> SourceId {
    SourceId::new(PROVIDER, &thread_name(n / RECORDS_PER_THREAD), &message_name(n))
        .expect("generated ids are valid")
}

/// Path of topic file `f`, workspace-relative.
fn topic_path(f: usize) -> String {
    if f == 0 {
        "topics/core.md".to_owned()
    } else {
        format!("topics/g{:03}/f{f:05}.md", f / 100)
    }
}

/// The `[[…]]` target of topic file `f` (relative to `topics/`, no `.md`).
fn wiki_target(f: usize) -> String {
    topic_path(f).trim_start_matches("topics/").trim_end_matches(".md").to_owned()
}

/// `../` up to the workspace root from topic file `path`.
fn up_to_root(path: &str) -> String {
    "../".repeat(path.matches('/').count())
}

fn block_id(f: usize, b: usize) -> String {
    format!("b{f:05}x{b:02}")
}

/// A few words of block text.
fn words(rng: &mut Rng, lo: usize, hi: usize) -> String {
    let n = rng.range(lo, hi);
    let mut s = String::new();
    for k in 0..n {
        if k > 0 {
            s.push(' ');
        }
        s.push_str(WORDS[rng.range(0, WORDS.len())]);
    }
    s
}

/// One evidence definition line citing record `n` from topic file `path`.
fn definition(label: u64, time: &str, n: usize, path: &str) -> String {
    let id = record_id(n);
    format!(
        "[^e-{label:010x}]: Time: `{time}`; Sources: [{}]({}{}#{})\n",
        id.text(),
        up_to_root(path),
        id.v2_path(),
        id.anchor()
    )
}

fn random_time(rng: &mut Rng, year: u32) -> String {
    format!(
        "{year}-{:02}-{:02}T{:02}:{:02}:00Z",
        rng.range(1, 13),
        rng.range(1, 29),
        rng.range(0, 24),
        rng.range(0, 60)
    )
}

/// A record of one of `threads` (of a workspace of `records` records).
fn cited_record(rng: &mut Rng, threads: &[usize], records: usize) -> usize {
    let t = threads[rng.range(0, threads.len())];
    let first = t * RECORDS_PER_THREAD;
    let last = ((t + 1) * RECORDS_PER_THREAD).min(records);
    rng.range(first, last)
}

/// Topic file `f` of `files` holding `blocks` blocks.
fn topic_file(f: usize, blocks: usize, threads: &[usize], records: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed ^ (0x7091c_u64 << 20) ^ (f as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let path = topic_path(f);
    let kind = if f == 0 { "core" } else { ["person", "project", "theme"][f % 3] };
    let mut s = format!("---\ndescription: Generated topic {f}.\nkind: {kind}\n---\n# Topic {f}\n\n");
    let mut defs = String::new();
    for b in 0..blocks {
        let label = (f * BLOCKS_PER_FILE + b) as u64;
        let link = if b % 4 == 0 && f > 0 {
            format!(" See [[{}#^{}]].", wiki_target(f - 1), block_id(f - 1, b))
        } else {
            String::new()
        };
        s.push_str(&format!("{}.{link}[^e-{label:010x}] ^{}\n\n", words(&mut rng, 8, 40), block_id(f, b)));
        let time = random_time(&mut rng, 2025);
        defs.push_str(&definition(label, &time, cited_record(&mut rng, threads, records), &path));
    }
    s.push_str(&defs);
    s
}

fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<fs::File> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    let mut f = fs::File::create(path)?;
    f.write_all(bytes)?;
    Ok(f)
}

impl Workspace {
    /// Writes the workspace described by `spec` into `root` (an empty or
    /// missing folder), builds its index and makes one commit.
    pub fn generate(root: &Path, spec: Spec) -> Fallible<Workspace> {
        assert!(spec.records > 0 && spec.blocks > 0, "a workspace needs records and blocks");
        fs::create_dir_all(root)?;
        scriptorium_transaction::layout::ensure(root)?;
        let mut timings = GenTimings::default();
        let mut written: Vec<fs::File> = Vec::new();

        // The archive, one thread file at a time.
        let started = Instant::now();
        let mut rng = Rng::new(spec.seed);
        let mut source_bytes = 0u64;
        for t in 0..threads_of(spec.records) {
            let thread = thread_name(t);
            let range = t * RECORDS_PER_THREAD..((t + 1) * RECORDS_PER_THREAD).min(spec.records);
            let records: Vec<_> = range.map(|n| record(&mut rng, &thread, n)).collect();
            let rel = records[0].id().v2_path();
            debug_assert!(records.iter().all(|r| r.id().v2_path() == rel));
            let bytes = v2::write_file(&records);
            source_bytes += bytes.len() as u64;
            written.push(write_new(&root.join(rel), &bytes)?);
        }
        timings.sources = started.elapsed();

        // The topic files.
        let started = Instant::now();
        let files = spec.blocks.div_ceil(BLOCKS_PER_FILE);
        let threads = threads_of(spec.records);
        let mut topic_files = Vec::with_capacity(files);
        let mut file_threads = Vec::with_capacity(files);
        let mut topic_bytes = 0u64;
        let mut pick = Rng::new(spec.seed ^ 0x7e7a);
        for f in 0..files {
            let ts: Vec<usize> = (0..THREADS_PER_FILE.min(threads)).map(|_| pick.range(0, threads)).collect();
            let blocks = BLOCKS_PER_FILE.min(spec.blocks - f * BLOCKS_PER_FILE);
            let text = topic_file(f, blocks, &ts, spec.records, spec.seed);
            let path = topic_path(f);
            topic_bytes += text.len() as u64;
            written.push(write_new(&root.join(&path), text.as_bytes())?);
            topic_files.push(path);
            file_threads.push(ts);
        }
        timings.topics = started.elapsed();

        // On the disk before anything is measured: the first fsync of a
        // commit must not pay for writing back the whole generated workspace.
        let started = Instant::now();
        for f in &written {
            f.sync_all()?;
        }
        drop(written);
        timings.sync = started.elapsed();

        let started = Instant::now();
        scriptorium_bm25_index::workspace::build(root, TokenizerConfig::default())?;
        timings.index = started.elapsed();

        let mut ws = Workspace {
            root: root.to_path_buf(),
            spec,
            topic_files,
            file_threads,
            revision: scriptorium_transaction::revision::compute(root)?.hex,
            source_bytes,
            topic_bytes,
            timings,
            appended: 0,
            rng: Rng::new(spec.seed ^ 0x00a9_9e4d),
        };
        let started = Instant::now();
        let patch = ws.append_patch();
        ws.commit(&patch)?;
        ws.timings.first_commit = started.elapsed();
        Ok(ws)
    }

    /// The next patch: one new block, citing an archived record, appended
    /// to one topic file (never `core.md`; the files are taken in a seeded
    /// random order), on the current revision.
    pub fn append_patch(&mut self) -> Patch {
        let k = self.appended;
        self.appended += 1;
        let f = if self.topic_files.len() > 1 { self.rng.range(1, self.topic_files.len()) } else { 0 };
        let path = self.topic_files[f].clone();
        let n = cited_record(&mut self.rng, &self.file_threads[f], self.spec.records);
        // Labels and ids no generated block uses.
        let label = 0xf0_0000_0000 + k;
        let time = random_time(&mut self.rng, 2026);
        let content = format!(
            "\n{}.[^e-{label:010x}] ^new{k:x}\n\n{}",
            words(&mut self.rng, 8, 40),
            definition(label, &time, n, &path)
        );
        Patch {
            base_revision: self.revision.clone(),
            message: format!("bench: append block {k}"),
            sources: Vec::new(),
            edits: vec![Edit::Append { path, content }],
        }
    }

    /// One commit as a writer makes it: open (lock, recovery), commit with
    /// the base revision checked, close. The workspace's revision follows.
    pub fn commit(&mut self, patch: &Patch) -> Fallible<Committed> {
        let mut w = Committer::open(&self.root, LOCK_TIMEOUT)?;
        let c = w.commit(patch, Tier::Owner, Base::Check)?;
        drop(w);
        if !c.warnings.is_empty() {
            return Err(format!("the commit left warnings: {:?}", c.warnings).into());
        }
        if c.changed.len() != 1 {
            return Err(format!("one file should change, not {:?}", c.changed).into());
        }
        self.revision.clone_from(&c.revision);
        Ok(c)
    }

    /// Records that `revision` is now current (after a commit made
    /// outside [`Workspace::commit`]).
    pub fn set_revision(&mut self, revision: String) {
        self.revision = revision;
    }
}
