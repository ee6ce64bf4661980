//! The figures of a run: a table for people, one JSON object for tools.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::first_answer::{FirstAnswer, Run};
use super::measure::{Agreement, Latency};
use super::ours::Sections;
use super::Setup;
use crate::page_cache::page_size;

/// One configuration on one corpus.
#[derive(Debug, Clone)]
pub struct SetupReport {
    /// The configuration.
    pub setup: Setup,
    /// Our build (and file write), wall seconds.
    pub build_seconds: f64,
    /// Our bytes by section group.
    pub sections: Sections,
    /// Our warm top-5 latency.
    pub ours: Latency,
    /// Tantivy's, measured interleaved with ours.
    pub tantivy: Latency,
    /// How far the answers agree.
    pub agreement: Agreement,
    /// Our first answer in a fresh process.
    pub ours_first: FirstAnswer,
    /// Tantivy's.
    pub tantivy_first: FirstAnswer,
}

/// One corpus.
#[derive(Debug, Clone)]
pub struct CorpusReport {
    /// `locomo x10`, `synthetic 1000000`.
    pub name: String,
    /// Documents indexed.
    pub documents: usize,
    /// Questions asked.
    pub queries: usize,
    /// Tantivy's build (index, commit, merge into one segment), seconds.
    pub tantivy_build_seconds: f64,
    /// Of which the forced merge.
    pub tantivy_merge_seconds: f64,
    /// Segments before the forced merge.
    pub tantivy_segments_before_merge: usize,
    /// Tantivy's segment files' bytes by extension.
    pub tantivy_bytes: BTreeMap<String, u64>,
    /// Both configurations.
    pub setups: Vec<SetupReport>,
}

/// Tantivy's bytes grouped as ours are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PeerGroups {
    /// `.idx`, `.term` and `.pos`.
    pub postings_dictionary: u64,
    /// `.store`.
    pub stored: u64,
    /// `.fieldnorm` and `.fast`.
    pub columns: u64,
    /// Everything else.
    pub other: u64,
}

impl CorpusReport {
    /// Tantivy's bytes in our groups.
    pub fn peer_groups(&self) -> PeerGroups {
        let mut g = PeerGroups::default();
        for (ext, &n) in &self.tantivy_bytes {
            match ext.as_str() {
                "idx" | "term" | "pos" => g.postings_dictionary += n,
                "store" => g.stored += n,
                "fieldnorm" | "fast" => g.columns += n,
                _ => g.other += n,
            }
        }
        g
    }

    fn docs_per_s(&self, seconds: f64) -> f64 {
        self.documents as f64 / seconds.max(f64::MIN_POSITIVE)
    }

    /// Every figure as one JSON object.
    pub fn to_json(&self) -> Value {
        let g = self.peer_groups();
        let tantivy_rate = self.docs_per_s(self.tantivy_build_seconds);
        let setups: serde_json::Map<String, Value> = self
            .setups
            .iter()
            .map(|s| {
                let rate = self.docs_per_s(s.build_seconds);
                let sec = s.sections;
                let v = json!({
                    "build": {"seconds": s.build_seconds, "docs_per_s": rate, "ratio_ours_over_tantivy": rate / tantivy_rate},
                    "bytes": {
                        "postings_dictionary": sec.postings_dictionary, "columns": sec.columns,
                        "stored": sec.stored, "other": sec.other, "total": sec.total(),
                        "postings_dictionary_ratio": ratio(sec.postings_dictionary as f64, g.postings_dictionary as f64),
                        "stored_ratio": ratio(sec.stored as f64, g.stored as f64),
                    },
                    "latency_us": {
                        "ours": {"p50": s.ours.p50, "p99": s.ours.p99},
                        "tantivy": {"p50": s.tantivy.p50, "p99": s.tantivy.p99},
                        "ratio_p50": ratio(s.ours.p50, s.tantivy.p50), "ratio_p99": ratio(s.ours.p99, s.tantivy.p99),
                    },
                    "agreement": {"top1": s.agreement.top1, "top5": s.agreement.top5, "questions": s.agreement.questions},
                    "first_answer": {
                        "ours": first_json(&s.ours_first), "tantivy": first_json(&s.tantivy_first),
                        "ratio_cold": ratio(s.ours_first.cold.answer_us, s.tantivy_first.cold.answer_us),
                        "ratio_warm": ratio(s.ours_first.warm.answer_us, s.tantivy_first.warm.answer_us),
                    },
                });
                (s.setup.name().to_owned(), v)
            })
            .collect();
        json!({
            "corpus": self.name, "documents": self.documents, "queries": self.queries,
            "tantivy": {
                "build": {
                    "seconds": self.tantivy_build_seconds, "merge_seconds": self.tantivy_merge_seconds,
                    "segments_before_merge": self.tantivy_segments_before_merge, "docs_per_s": tantivy_rate,
                },
                "bytes": {
                    "by_extension": self.tantivy_bytes, "postings_dictionary": g.postings_dictionary,
                    "stored": g.stored, "columns": g.columns, "other": g.other,
                    "total": g.postings_dictionary + g.stored + g.columns + g.other,
                },
            },
            "setups": setups,
        })
    }

    /// The human table.
    pub fn table(&self) -> String {
        let g = self.peer_groups();
        let mut out = format!(
            "\n== {}: {} documents, {} questions ==\ntantivy build {:.2} s ({:.0} docs/s; {} segments, merged in {:.2} s); bytes: postings+dictionary {}, stored {}, columns {}, other {}\n",
            self.name, self.documents, self.queries, self.tantivy_build_seconds,
            self.docs_per_s(self.tantivy_build_seconds), self.tantivy_segments_before_merge,
            self.tantivy_merge_seconds, g.postings_dictionary, g.stored, g.columns, g.other
        );
        out.push_str(&format!("tantivy files: {:?}\n", self.tantivy_bytes));
        for s in &self.setups {
            out.push_str(&self.setup_lines(s, g));
        }
        out
    }

    fn setup_lines(&self, s: &SetupReport, g: PeerGroups) -> String {
        let rate = self.docs_per_s(s.build_seconds);
        let sec = s.sections;
        let (o, t) = (&s.ours_first, &s.tantivy_first);
        format!(
            "[{}] build ours {:.2} s ({:.0} docs/s, x{:.2} tantivy's rate)\n\
             [{}] bytes ours: postings+dictionary {} ({:.2} of tantivy's), columns {}, stored {} ({:.2} of tantivy's), other {}, total {}\n\
             [{}] top-5 latency µs: ours p50 {:.1} p99 {:.1} | tantivy p50 {:.1} p99 {:.1} | ours/tantivy p50 {:.2} p99 {:.2}\n\
             [{}] agreement over {} questions: top-1 {:.1} %, top-5 {:.1} %\n\
             [{}] first answer (median of {}): cold ours {} | tantivy {} | ratio {:.2}\n\
             [{}]                               warm ours {} | tantivy {} | ratio {:.2}\n",
            s.setup.name(), s.build_seconds, rate, rate / self.docs_per_s(self.tantivy_build_seconds),
            s.setup.name(), sec.postings_dictionary, ratio(sec.postings_dictionary as f64, g.postings_dictionary as f64),
            sec.columns, sec.stored, ratio(sec.stored as f64, g.stored as f64), sec.other, sec.total(),
            s.setup.name(), s.ours.p50, s.ours.p99, s.tantivy.p50, s.tantivy.p99,
            ratio(s.ours.p50, s.tantivy.p50), ratio(s.ours.p99, s.tantivy.p99),
            s.setup.name(), s.agreement.questions, s.agreement.top1 * 100.0, s.agreement.top5 * 100.0,
            s.setup.name(), o.runs, run_text(&o.cold, o.index_pages), run_text(&t.cold, t.index_pages),
            ratio(o.cold.answer_us, t.cold.answer_us),
            s.setup.name(), run_text(&o.warm, o.index_pages), run_text(&t.warm, t.index_pages),
            ratio(o.warm.answer_us, t.warm.answer_us),
        )
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    a / b.max(f64::MIN_POSITIVE)
}

fn run_text(r: &Run, of: u64) -> String {
    format!(
        "{:.0} µs (process {:.1} ms, {} of {} pages resident: {:?})",
        r.answer_us, r.process_ms, r.pages, of, r.parts
    )
}

fn first_json(f: &FirstAnswer) -> Value {
    let run = |r: &Run| {
        json!({"answer_us": r.answer_us, "process_ms": r.process_ms, "resident_pages": r.pages,
               "resident_bytes": r.pages * page_size(), "resident_bytes_by_part": r.parts})
    };
    json!({"cold": run(&f.cold), "warm": run(&f.warm), "index_pages": f.index_pages, "runs": f.runs})
}
