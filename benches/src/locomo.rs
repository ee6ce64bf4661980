//! The LoCoMo development set (`data/locomo/locomo-dev.json`) as the
//! benchmarks and `locomo-memory` use it: its conversations imported into a
//! session store and cut into writer batches, its evidence parsed, and what
//! the offline writer makes of one conversation measured.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use scriptorium_bm25_index::search::{Bm25, Filters};
use scriptorium_bm25_index::segment::Kind;
use scriptorium_bm25_index::tokenize::TokenizerConfig;
use scriptorium_bm25_index::workspace;
use scriptorium_scheduler::import::evidence::dia_ids;
use scriptorium_scheduler::import::{import, read, Format, Transcript};
use scriptorium_scheduler::pending::{cut, suffix, tips_head_first, DEFAULT_THRESHOLD};
use scriptorium_scheduler::{Batch, BatchWriter, SqliteStore};
use scriptorium_source_archive::archive::Archive;
use scriptorium_source_archive::{pct, SourceRecord};
use scriptorium_topic_markdown::quote;
use scriptorium_topic_markdown::validate::{check, ArchiveResolver};
use scriptorium_writer::input::Turn;

pub mod hygiene;
pub mod recall;

use recall::RecallMeasured;

/// The vendored development split.
pub fn data_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/locomo/locomo-dev.json")
}

/// Every conversation of the development split, as the importer reads it.
pub fn transcripts() -> Vec<Transcript> {
    read(Format::Locomo, &data_path()).expect("the LoCoMo dev data is vendored in data/locomo/")
}

/// One writer batch: its session and its records.
pub type Records = (String, Vec<SourceRecord>);

/// The batches of `transcripts`, imported into a fresh in-memory store and
/// cut at the default threshold (16,000 `o200k_base` tokens), in order.
pub fn batches(transcripts: &[Transcript]) -> Vec<Records> {
    let store = SqliteStore::in_memory().expect("an in-memory store opens");
    import(&store, transcripts).expect("the LoCoMo dev data imports");
    let mut out = Vec::new();
    for t in transcripts {
        let tip = tips_head_first(&store, &t.session).expect("the session has a tip").remove(0);
        let ids = suffix(&store, &t.session, &tip, "bench", None).expect("the session reads back");
        let mut at = 0;
        while at < ids.len() {
            let c = cut(&store, &t.session, &ids[at..], DEFAULT_THRESHOLD, true)
                .expect("the batch cuts")
                .expect("a non-empty rest makes a batch");
            at += c.ids.len();
            out.push((t.session.clone(), c.records));
        }
    }
    out
}

/// `t` written by the offline writer into a fresh workspace of its own,
/// with its sample id (`conv-26`).
pub fn written_offline(t: &Transcript) -> (String, tempfile::TempDir) {
    let sample = t.session.strip_prefix("locomo/").unwrap_or(&t.session).to_owned();
    let dir = tempfile::tempdir().expect("a temporary folder");
    scriptorium_transaction::layout::ensure(dir.path()).expect("a fresh workspace");
    for b in batches(std::slice::from_ref(t)) {
        write_batch(&mut scriptorium_writer::Offline::default(), dir.path(), &b);
    }
    (sample, dir)
}

/// Whether `--json` was asked for: the one flag the `locomo-*` programs
/// take (anything else ends the program with its usage, exit 2).
#[allow(clippy::print_stderr)]
pub fn json_flag(program: &str) -> bool {
    let mut json = false;
    for a in std::env::args().skip(1) {
        if a == "--json" {
            json = true;
        } else {
            eprintln!("usage: {program} [--json] (unknown argument {a:?})");
            std::process::exit(2);
        }
    }
    json
}

/// Writes one batch into the workspace at `root` with `writer`.
pub fn write_batch(writer: &mut dyn BatchWriter, root: &Path, (session, records): &Records) {
    let lines: Vec<String> = records.iter().map(|r| Turn::of_record(r).line).collect();
    let batch = Batch {
        root,
        session,
        records,
        lines: &lines,
        tokens: 0,
        lock_timeout: Duration::from_secs(5),
        archive: true,
    };
    writer.write_batch(&batch).expect("the batch is written");
}

/// One question: its text and the dia_ids of its evidence.
#[derive(Debug, Clone)]
pub struct Question {
    /// What is asked.
    pub text: String,
    /// Evidence dia_ids (never empty).
    pub evidence: Vec<String>,
}

/// The questions of every sample, by sample id; questions without usable
/// evidence are left out.
pub fn questions() -> BTreeMap<String, Vec<Question>> {
    let text = std::fs::read_to_string(data_path()).expect("the LoCoMo dev data reads");
    let samples: serde_json::Value = serde_json::from_str(&text).expect("the LoCoMo dev data is JSON");
    let mut out = BTreeMap::new();
    for s in samples.as_array().into_iter().flatten() {
        let id = s["sample_id"].as_str().unwrap_or("").to_owned();
        let qs: &mut Vec<Question> = out.entry(id).or_default();
        for q in s["qa"].as_array().into_iter().flatten() {
            let evidence = dia_ids(q["evidence"].as_array().into_iter().flatten().filter_map(|e| e.as_str()));
            if !evidence.is_empty() {
                qs.push(Question { text: q["question"].as_str().unwrap_or("").to_owned(), evidence });
            }
        }
    }
    out
}

/// The ranks recall is measured at.
pub const KS: [usize; 3] = [1, 5, 10];

/// What the writer made of one workspace, and how well search over it
/// finds the evidence.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    /// Turns archived.
    pub turns: usize,
    /// Blocks in topic files.
    pub blocks: usize,
    /// Topic files.
    pub files: usize,
    /// Normalised quotations (or not-verbatim paragraphs) found in more
    /// than one topic file.
    pub repeated: usize,
    /// Questions asked.
    pub questions: usize,
    /// Sum over questions of the share of evidence found at each of [`KS`].
    pub recall: [f64; 3],
    /// Per-turn recall before folding: the top five hits.
    pub unfolded: RecallMeasured,
    /// Per-turn recall as `scriptorium recall` shows it.
    pub folded: RecallMeasured,
}

impl Measured {
    /// Adds `other` to `self`.
    pub fn add(&mut self, other: &Measured) {
        self.turns += other.turns;
        self.blocks += other.blocks;
        self.files += other.files;
        self.repeated += other.repeated;
        self.questions += other.questions;
        for (a, b) in self.recall.iter_mut().zip(other.recall) {
            *a += b;
        }
        self.unfolded.add(&other.unfolded);
        self.folded.add(&other.folded);
    }
}

/// The dia_id of a source id's text form (its message, decoded).
pub fn dia_id(source: &str) -> String {
    let message = source.rsplit('/').next().unwrap_or("");
    pct::decode_canonical(message.as_bytes()).unwrap_or_else(|_| message.to_owned())
}

/// What a paragraph says: its quotations (`“…”`), or, with none, the text
/// after its first `: `; each normalised and lowercased.
fn said(block: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = block;
    while let Some(open) = rest.find('“') {
        let after = &rest[open + '“'.len_utf8()..];
        let Some(close) = after.find('”') else { break };
        out.push(quote::normalise(&after[..close]).to_lowercase());
        rest = &after[close + '”'.len_utf8()..];
    }
    if out.is_empty() {
        if let Some((_, words)) = block.split_once(": ") {
            let words = words.split("[^").next().unwrap_or(words);
            out.push(quote::normalise(words).to_lowercase());
        }
    }
    out
}

/// Measures the workspace at `root` (its archive, topics and index) against
/// `questions`: search over records and blocks, no filter.
pub fn measure(root: &Path, questions: &[Question]) -> Measured {
    let archive = Archive::scan(root).expect("the archive scans");
    let (topics, bad) = scriptorium_transaction::views::load_topics(root).expect("the topics load");
    assert!(bad.is_empty(), "{bad:?}");
    let checked = check(&topics, &ArchiveResolver::new(&archive));
    let mut m = Measured {
        turns: archive.v2_records().count(),
        files: topics.len(),
        blocks: checked.blocks.len(),
        questions: questions.len(),
        ..Measured::default()
    };
    let mut files_of: HashMap<String, BTreeSet<&str>> = HashMap::new();
    for t in &topics {
        for b in &t.file.blocks {
            for s in said(&t.file.block_text(b)) {
                files_of.entry(s).or_default().insert(&t.path);
            }
        }
    }
    m.repeated = files_of.values().filter(|f| f.len() > 1).count();
    let cites: HashMap<(&str, &str), Vec<String>> = checked
        .blocks
        .iter()
        .filter_map(|b| {
            let id = b.id.as_deref()?;
            Some(((b.path.as_str(), id), b.sources.iter().map(|s| dia_id(s)).collect()))
        })
        .collect();
    let content: HashMap<String, &str> =
        archive.v2_records().map(|r| (r.id().to_string(), r.content())).collect();
    let view = workspace::open(root, TokenizerConfig::default()).expect("the index opens").view;
    for q in questions {
        let hits = view.search(&q.text, &Filters::default(), 10, Bm25::default()).expect("search runs");
        // Per hit, the evidence turns it shows, in hit order.
        let mut shown: Vec<Vec<String>> = Vec::new();
        let mut unfolded: Vec<(String, Vec<String>)> = Vec::new();
        for h in &hits {
            let s = view.stored(h).expect("the hit is stored");
            shown.push(match s.kind {
                Kind::Source => vec![dia_id(s.key)],
                Kind::Topic => cites.get(&(s.path, s.anchor)).cloned().unwrap_or_default(),
            });
            if unfolded.len() < scriptorium::recall::RECALL_LIMIT {
                let text = match s.kind {
                    Kind::Source => content.get(s.key).copied().unwrap_or("").to_owned(),
                    Kind::Topic => workspace::reread(root, &view, h).expect("the block reads back").indexed,
                };
                unfolded.push((text, shown.last().cloned().unwrap_or_default()));
            }
        }
        m.unfolded.add(&RecallMeasured::of(&unfolded, &q.evidence));
        let lines = scriptorium::recall::recall_lines(root, &q.text).expect("recall runs");
        let lines: Vec<(String, Vec<String>)> =
            lines.iter().map(|l| recall::folded(l, &cites, dia_id)).collect();
        m.folded.add(&RecallMeasured::of(&lines, &q.evidence));
        for (k, slot) in KS.iter().zip(m.recall.iter_mut()) {
            let top: HashSet<&str> = shown.iter().take(*k).flatten().map(String::as_str).collect();
            let found = q.evidence.iter().filter(|w| top.contains(w.as_str())).count();
            *slot += found as f64 / q.evidence.len() as f64;
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_paragraph_says() {
        assert_eq!(said("Ada [id 1] said: “I like  Tea.” “Yes”[^e-1] ^p-1"), ["i like tea.", "yes"]);
        assert_eq!(said("Bo said (not verbatim): a (b) c[^e-2] ^t-2"), ["a (b) c"]);
        assert_eq!(dia_id("locomo/conv-26/D1%3A3"), "D1:3");
    }
}
