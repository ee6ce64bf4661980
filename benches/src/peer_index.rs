//! Our BM25 index against tantivy on real text: LoCoMo's dialogue turns
//! (replicated to scale) and the generated corpus, in two configurations,
//! measured in one process: build throughput on all cores, bytes by part,
//! warm top-5 latency interleaved question by question, agreement of the
//! answers, and the first answer of a fresh process, cold and warm.
//! `index-vs-tantivy` prints it; the `locomo_index` criterion bench shares
//! the corpus and both engines' code.

use std::path::Path;

use scriptorium_bm25_index::search::Bm25;
use scriptorium_bm25_index::tokenize::TokenizerConfig;

pub mod collection;
pub mod first_answer;
pub mod measure;
pub mod ours;
pub mod peer;
pub mod report;

use collection::Collection;
use first_answer::{Engine, FirstAnswer};
use measure::{Agreement, Latency};
use report::{CorpusReport, SetupReport};

/// Answers per question.
pub const K: usize = 5;

/// How each engine is configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setup {
    /// Ours as it ships (stemming, stop words, k1 0.9, b 0.3); tantivy
    /// with `en_stem` and its default BM25.
    Shipped,
    /// Both doing the same work: ours stemming without stop words, k1 1.2,
    /// b 0.75 (tantivy's defaults); tantivy as in [`Setup::Shipped`].
    SameWork,
}

impl Setup {
    /// Both configurations.
    pub const ALL: [Setup; 2] = [Setup::Shipped, Setup::SameWork];

    /// `shipped` or `same-work`.
    pub fn name(self) -> &'static str {
        match self {
            Setup::Shipped => "shipped",
            Setup::SameWork => "same-work",
        }
    }

    /// The setup of that name.
    pub fn parse(s: &str) -> Option<Setup> {
        Setup::ALL.into_iter().find(|x| x.name() == s)
    }

    /// Our tokenizer.
    pub fn tokenizer(self) -> TokenizerConfig {
        match self {
            Setup::Shipped => TokenizerConfig::default(),
            Setup::SameWork => TokenizerConfig { stem: true, stop_words: false },
        }
    }

    /// Our BM25 parameters.
    pub fn bm25(self) -> Bm25 {
        match self {
            Setup::Shipped => Bm25::default(),
            Setup::SameWork => Bm25 { k1: 1.2, b: 0.75 },
        }
    }
}

/// What a run measures besides the corpora.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Passes over the questions after the warm-up pass.
    pub rounds: usize,
    /// Questions (and so runs) per first-answer figure.
    pub first_answers: usize,
    /// Builds per engine and configuration; the median time is reported.
    pub builds: usize,
    /// The program that answers as a child (this program).
    pub exe: std::path::PathBuf,
}

/// Builds both engines' indexes of `c` under `dir` and measures them.
pub fn measure_collection(c: &Collection, dir: &Path, plan: &Plan) -> CorpusReport {
    let tantivy_dir = dir.join("tantivy");
    let docs = c.docs();
    let (tv, tv_seconds) =
        repeat(plan.builds, &tantivy_dir, |d| peer::build_into(d, &docs, &c.feed), |b| b.seconds);
    drop(docs);
    let mut setups: Vec<SetupReport> =
        Setup::ALL.iter().map(|&s| warm(c, &dir_of(dir, s), &tv.peer, s, plan)).collect();
    let tantivy_bytes = tv.peer.bytes(&tantivy_dir);
    // Nothing of the indexes may stay mapped here: a mapped page cannot be
    // evicted, and the children's cold runs would find it.
    drop(tv.peer);
    let questions: Vec<&str> = spread(&c.queries, plan.first_answers);
    for s in &mut setups {
        let ours_dir = dir_of(dir, s.setup);
        s.ours_first = first_answer::measure(&plan.exe, Engine::Ours, &ours_dir, s.setup, &questions);
        s.tantivy_first =
            first_answer::measure(&plan.exe, Engine::Tantivy, &tantivy_dir, s.setup, &questions);
        std::fs::remove_dir_all(&ours_dir).expect("the index folder is removed");
    }
    CorpusReport {
        name: c.name.clone(),
        documents: c.len(),
        queries: c.queries.len(),
        tantivy_build_seconds: tv_seconds,
        tantivy_merge_seconds: tv.merge_seconds,
        tantivy_segments_before_merge: tv.segments_before_merge,
        tantivy_bytes,
        setups,
    }
}

/// The last of `n` builds into a fresh `dir` and the median of their times.
fn repeat<B>(n: usize, dir: &Path, build: impl Fn(&Path) -> B, seconds: impl Fn(&B) -> f64) -> (B, f64) {
    let mut times = Vec::with_capacity(n);
    let mut last = None;
    for _ in 0..n.max(1) {
        drop(last.take());
        if dir.exists() {
            std::fs::remove_dir_all(dir).expect("the old index is removed");
        }
        let b = build(dir);
        times.push(seconds(&b));
        last = Some(b);
    }
    times.sort_by(f64::total_cmp);
    (last.expect("one build at least"), times[times.len() / 2])
}

fn dir_of(dir: &Path, setup: Setup) -> std::path::PathBuf {
    dir.join(format!("ours-{}", setup.name()))
}

/// Our index of `c` built with `setup` into `dir`, its bytes, and warm
/// latency and agreement against `tv` (first answers are measured later,
/// once nothing is mapped).
fn warm(c: &Collection, dir: &Path, tv: &peer::Peer, setup: Setup, plan: &Plan) -> SetupReport {
    let (built, build_seconds) = repeat(plan.builds, dir, |d| ours::build_into(d, c, setup), |b| b.seconds);
    let bytes = std::fs::read(&built.path).expect("the index file reads");
    let sections = ours::sections(&bytes);
    drop(bytes);
    let (ours, tantivy): (Latency, Latency) = measure::interleaved(
        &c.queries,
        plan.rounds,
        |q| ours::search(&built.view, q, setup),
        |q| tv.search(q),
    );
    let numbers = tv.numbers();
    let agreement: Agreement = measure::agreement(c.queries.iter().map(|q| {
        let a = ours::search(&built.view, q, setup).iter().map(|h| c.identity[h.doc as usize]).collect();
        let b = tv
            .search(q)
            .iter()
            .map(|(_, at)| c.identity[numbers.first(at.doc_id).expect("every document has ord") as usize])
            .collect();
        (a, b)
    }));
    SetupReport {
        setup,
        build_seconds,
        sections,
        ours,
        tantivy,
        agreement,
        ours_first: FirstAnswer::default(),
        tantivy_first: FirstAnswer::default(),
    }
}

/// `n` questions spread evenly over `all`.
fn spread(all: &[String], n: usize) -> Vec<&str> {
    let n = n.min(all.len()).max(1);
    (0..n).filter_map(|k| all.get(k * all.len() / n).map(String::as_str)).collect()
}
