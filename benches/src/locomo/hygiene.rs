//! The dream pass's offline hygiene on the LoCoMo development set: how many
//! blocks it merges, and evidence recall@5 of search over records and
//! blocks before and after it (the measure of `locomo-memory`: a record hit
//! shows its own turn, a block hit the turns it cites, in hit order, each
//! evidence turn counted once).
//!
//! Two workspaces per conversation are measured: *as written* (the offline
//! writer's blocks, which say each sentence once per speaker), and *every
//! block twice* (each topic file copied under `topics/twins/`, every block
//! under a new id citing the same records: the duplicates a model or an
//! editor could leave), which the hygiene should bring back to what was
//! written.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

use scriptorium_bm25_index::search::{Bm25, Filters};
use scriptorium_bm25_index::segment::Kind;
use scriptorium_bm25_index::tokenize::TokenizerConfig;
use scriptorium_bm25_index::workspace;
use scriptorium_source_archive::archive::Archive;
use scriptorium_topic_markdown::validate::{check, ArchiveResolver};
use scriptorium_transaction::{Base, Committer, Edit, Patch, Tier};
use scriptorium_writer::dream::hygiene;

use super::{dia_id, Question};

/// Where the copies of every block go.
pub const TWINS: &str = "topics/twins/";

/// One hygiene pass on one workspace.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Pass {
    /// Blocks before.
    pub blocks_before: usize,
    /// Blocks the hygiene removed into a twin.
    pub merged: usize,
    /// Blocks after.
    pub blocks_after: usize,
    /// Questions asked.
    pub questions: usize,
    /// Sum over questions of the share of evidence in the top 5, before.
    pub recall_before: f64,
    /// The same after.
    pub recall_after: f64,
}

impl Pass {
    /// Adds `other` to `self`.
    pub fn add(&mut self, other: &Pass) {
        self.blocks_before += other.blocks_before;
        self.merged += other.merged;
        self.blocks_after += other.blocks_after;
        self.questions += other.questions;
        self.recall_before += other.recall_before;
        self.recall_after += other.recall_after;
    }
}

/// Blocks of the workspace at `root`, and the sum over `questions` of the
/// share of their evidence among the turns the top 5 hits show.
pub fn recall_at_5(root: &Path, questions: &[Question]) -> (usize, f64) {
    let archive = Archive::scan(root).expect("the archive scans");
    let (topics, bad) = scriptorium_transaction::views::load_topics(root).expect("the topics load");
    assert!(bad.is_empty(), "{bad:?}");
    let checked = check(&topics, &ArchiveResolver::new(&archive));
    let cites: HashMap<(&str, &str), Vec<String>> = checked
        .blocks
        .iter()
        .filter_map(|b| {
            Some(((b.path.as_str(), b.id.as_deref()?), b.sources.iter().map(|s| dia_id(s)).collect()))
        })
        .collect();
    let view = workspace::open(root, TokenizerConfig::default()).expect("the index opens").view;
    let mut sum = 0.0;
    for q in questions {
        let hits = view.search(&q.text, &Filters::default(), 5, Bm25::default()).expect("search runs");
        let mut shown: HashSet<String> = HashSet::new();
        for h in &hits {
            let s = view.stored(h).expect("the hit is stored");
            match s.kind {
                Kind::Source => {
                    shown.insert(dia_id(s.key));
                }
                Kind::Topic => shown.extend(cites.get(&(s.path, s.anchor)).cloned().unwrap_or_default()),
            }
        }
        sum += q.evidence.iter().filter(|e| shown.contains(*e)).count() as f64 / q.evidence.len() as f64;
    }
    (checked.blocks.len(), sum)
}

/// Runs the hygiene on the workspace at `root`, measuring recall@5 before
/// and after.
pub fn pass(root: &Path, questions: &[Question]) -> Pass {
    let (blocks_before, recall_before) = recall_at_5(root, questions);
    let done = hygiene::run(root, Duration::from_secs(60)).expect("the hygiene runs");
    let (blocks_after, recall_after) = recall_at_5(root, questions);
    Pass {
        blocks_before,
        merged: done.merged,
        blocks_after,
        questions: questions.len(),
        recall_before,
        recall_after,
    }
}

/// Copies every topic file of the workspace at `root` under [`TWINS`], each
/// block under the id `<id>-twin`, its evidence links one folder deeper,
/// as one transaction.
pub fn write_twins(root: &Path) {
    let (topics, _) = scriptorium_transaction::views::load_topics(root).expect("the topics load");
    let mut edits = Vec::new();
    for t in topics.iter().filter(|t| !t.path.starts_with(TWINS)) {
        let f = &t.file;
        let ends: HashSet<usize> = f.blocks.iter().filter(|b| b.id.is_some()).map(|b| b.last_line).collect();
        let defs: HashSet<usize> = f.definitions.iter().map(|d| d.line).collect();
        let mut text = String::new();
        for k in 0..f.lines().len() {
            let line = f.line(k);
            if ends.contains(&k) {
                // The id ends the line: `^id` becomes `^id-twin`.
                text.push_str(line);
                text.push_str("-twin");
            } else if defs.contains(&k) {
                text.push_str(&line.replace("](../", "](../../"));
            } else {
                text.push_str(line);
            }
            text.push('\n');
        }
        let path = format!("{TWINS}{}", t.path.trim_start_matches("topics/"));
        edits.push(Edit::Create { path, content: text });
    }
    let patch = Patch {
        base_revision: String::new(),
        message: "every block twice".into(),
        sources: Vec::new(),
        edits,
    };
    Committer::open(root, Duration::from_secs(60))
        .expect("the workspace opens")
        .commit(&patch, Tier::Owner, Base::Any)
        .expect("the twins validate");
}
