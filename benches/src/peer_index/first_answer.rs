//! The first answer of a fresh process: a child (this program's hidden
//! `first-answer` subcommand) opens an index from disk, answers one top-5
//! question with the hits' stored fields, and prints the microseconds from
//! just before opening to the answer. Cold runs evict the index's files
//! from the page cache first and check that none of their pages remain;
//! what is resident afterwards is what the run read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::page_cache::{evict_tree, files_under, page_size, resident};

use super::{ours, peer, Setup};

/// The subcommand's name.
pub const SUBCOMMAND: &str = "first-answer";

/// Which engine a child opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// Our segment file.
    Ours,
    /// The tantivy index.
    Tantivy,
}

impl Engine {
    /// `ours` or `tantivy`.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Ours => "ours",
            Engine::Tantivy => "tantivy",
        }
    }

    fn parse(s: &str) -> Option<Engine> {
        [Engine::Ours, Engine::Tantivy].into_iter().find(|e| e.name() == s)
    }
}

/// The child: `first-answer --engine E --dir D --setup S --query Q` (the
/// arguments after the subcommand). Returns the microseconds from before
/// opening to the answer, or the usage.
pub fn child(args: &[String]) -> Result<f64, String> {
    let get = |flag: &str| {
        let at = args.iter().position(|a| a == flag).ok_or_else(|| format!("{flag} is missing"))?;
        args.get(at + 1).cloned().ok_or_else(|| format!("{flag} needs a value"))
    };
    let engine = get("--engine")?;
    let engine = Engine::parse(&engine).ok_or_else(|| format!("unknown engine {engine:?}"))?;
    let setup = get("--setup")?;
    let setup = Setup::parse(&setup).ok_or_else(|| format!("unknown setup {setup:?}"))?;
    let dir = PathBuf::from(get("--dir")?);
    let query = get("--query")?;
    let started = Instant::now();
    let bytes = match engine {
        Engine::Ours => ours::answer(&ours::open(&dir, setup), &dir, &query, setup),
        Engine::Tantivy => peer::open(&dir).answer(&query),
    };
    let elapsed = started.elapsed().as_secs_f64() * 1e6;
    std::hint::black_box(bytes);
    Ok(elapsed)
}

/// One child run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Run {
    /// Open to answer inside the child, microseconds.
    pub answer_us: f64,
    /// The child process from spawn to exit, milliseconds.
    pub process_ms: f64,
    /// Pages of the index resident after the run.
    pub pages: u64,
    /// Bytes of the index resident after the run, by part: our section
    /// groups, tantivy's file extensions.
    pub parts: BTreeMap<String, u64>,
}

/// Medians over several questions, cold and warm.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FirstAnswer {
    /// Evicted before each run.
    pub cold: Run,
    /// Run again right after, nothing evicted.
    pub warm: Run,
    /// Pages of the index's files.
    pub index_pages: u64,
    /// Runs per figure.
    pub runs: usize,
}

fn run(exe: &Path, engine: Engine, dir: &Path, setup: Setup, query: &str, files: &[PathBuf]) -> Run {
    let started = Instant::now();
    let out = Command::new(exe)
        .args([SUBCOMMAND, "--engine", engine.name(), "--setup", setup.name(), "--query", query, "--dir"])
        .arg(dir)
        .output()
        .expect("the child runs");
    let process_ms = started.elapsed().as_secs_f64() * 1e3;
    assert!(out.status.success(), "the child failed: {}", String::from_utf8_lossy(&out.stderr));
    let answer_us =
        String::from_utf8_lossy(&out.stdout).trim().parse().expect("the child prints microseconds");
    let pages = resident(files).expect("residency is measured").resident;
    Run { answer_us, process_ms, pages, parts: parts(engine, dir, files) }
}

/// The index's resident bytes by part.
fn parts(engine: Engine, dir: &Path, files: &[PathBuf]) -> BTreeMap<String, u64> {
    match engine {
        Engine::Ours => {
            let s = ours::resident(&dir.join(ours::FILE));
            [
                ("postings_dictionary", s.postings_dictionary),
                ("columns", s.columns),
                ("stored", s.stored),
                ("other", s.other),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect()
        }
        Engine::Tantivy => {
            let mut out = BTreeMap::new();
            for f in files {
                let ext =
                    f.extension().map_or_else(|| "other".to_owned(), |e| e.to_string_lossy().into_owned());
                let pages = resident(std::slice::from_ref(f)).expect("residency is measured").resident;
                if pages > 0 {
                    *out.entry(ext).or_insert(0) += pages * page_size();
                }
            }
            out
        }
    }
}

/// Drops `dir`'s files from the page cache and checks that none of their
/// pages remain (three tries, then the bench stops: a cold figure that is
/// not cold would be wrong).
fn evict_all(dir: &Path, files: &[PathBuf]) {
    for _ in 0..3 {
        evict_tree(dir).expect("the index files are evicted");
        if resident(files).expect("residency is measured").resident == 0 {
            return;
        }
    }
    panic!("pages of {} stay in the page cache after eviction", dir.display());
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// The first answer of `engine` on the index in `dir`, one cold and one
/// warm run per question of `questions`, through the program `exe`.
pub fn measure(exe: &Path, engine: Engine, dir: &Path, setup: Setup, questions: &[&str]) -> FirstAnswer {
    let files = files_under(dir).expect("the index folder lists");
    let index_pages = resident(&files).expect("residency is measured").pages;
    let (mut cold, mut warm) = (Vec::new(), Vec::new());
    for q in questions {
        evict_all(dir, &files);
        cold.push(run(exe, engine, dir, setup, q, &files));
        warm.push(run(exe, engine, dir, setup, q, &files));
    }
    let summary = |runs: &[Run]| Run {
        answer_us: median(runs.iter().map(|r| r.answer_us).collect()),
        process_ms: median(runs.iter().map(|r| r.process_ms).collect()),
        pages: median(runs.iter().map(|r| r.pages as f64).collect()) as u64,
        parts: runs
            .iter()
            .flat_map(|r| r.parts.keys())
            .map(|k| {
                (
                    k.clone(),
                    median(runs.iter().map(|r| r.parts.get(k).copied().unwrap_or(0) as f64).collect()) as u64,
                )
            })
            .collect(),
    };
    FirstAnswer { cold: summary(&cold), warm: summary(&warm), index_pages, runs: questions.len() }
}
