//! `cargo xtask eval locomo --data FILE [--json]`: retrieval quality on
//! LoCoMo through the real archive and index.
//!
//! Every turn of every conversation is archived as a v2 source record
//! (provider `locomo`, thread = sample id, message = dia_id, speaker = the
//! turn's speaker as a trusted display-only identity, timestamp = its
//! session's date; an image turn's caption is appended to its text as
//! `[shares <caption>]`, as the person in the chat saw it). The workspace is
//! indexed, and every question is asked against its own conversation (a
//! path-prefix filter on its thread file). recall@k of a question is the
//! fraction of its evidence dia_ids among the top k records; the figures
//! are means over questions, overall and per category.

use std::collections::{BTreeMap, HashSet};

use anyhow::{bail, Context, Result};
use scriptorium_bm25_index::search::{Bm25, Filters, View};
use scriptorium_bm25_index::segment::Kind;
use scriptorium_bm25_index::tokenize::TokenizerConfig;
use scriptorium_bm25_index::workspace;
use scriptorium_scheduler::import::evidence::dia_ids;
use scriptorium_scheduler::import::locomo_time;
use scriptorium_source_archive::{append, input, pct, SourceId};
use serde_json::Value;

/// What `eval` is asked to do.
#[derive(Debug)]
pub(crate) struct Options {
    pub(crate) data: std::path::PathBuf,
    pub(crate) json: bool,
    pub(crate) bm25: Bm25,
    pub(crate) config: TokenizerConfig,
    pub(crate) captions: bool,
}

impl Options {
    pub(crate) fn parse(args: &[String]) -> Result<Options> {
        let mut o = Options {
            data: Default::default(),
            json: false,
            bm25: Bm25::default(),
            config: TokenizerConfig::default(),
            captions: true,
        };
        let mut it = args.iter();
        let mut data = None;
        while let Some(a) = it.next() {
            let mut value = |name: &str| it.next().with_context(|| format!("{name} needs a value")).cloned();
            match a.as_str() {
                "--data" => data = Some(value("--data")?),
                "--json" => o.json = true,
                "--k1" => o.bm25.k1 = value("--k1")?.parse().context("--k1 takes a number")?,
                "--b" => o.bm25.b = value("--b")?.parse().context("--b takes a number")?,
                "--no-stem" => o.config.stem = false,
                "--no-stop-words" => o.config.stop_words = false,
                "--no-captions" => o.captions = false,
                other => bail!("unknown argument {other:?}"),
            }
        }
        o.data = data.context("--data FILE is required (e.g. data/locomo/locomo-dev.json)")?.into();
        Ok(o)
    }
}

/// The dia_ids of a question's `evidence` list.
fn evidence(v: &Value) -> Vec<String> {
    dia_ids(v.as_array().into_iter().flatten().filter_map(Value::as_str))
}

#[derive(Default, Clone, Copy)]
struct Tally {
    questions: usize,
    at: [f64; 3],
}

const KS: [usize; 3] = [1, 5, 10];

/// The JSON lines of one sample's turns, and its id.
fn sample_lines(s: &Value, captions: bool) -> Result<(&str, Vec<String>)> {
    let id = s["sample_id"].as_str().context("a sample without sample_id")?;
    let conv = s["conversation"].as_object().context("a sample without conversation")?;
    let mut lines = Vec::new();
    for n in 1.. {
        let Some(session) = conv.get(&format!("session_{n}")) else { break };
        let date = conv.get(&format!("session_{n}_date_time")).and_then(Value::as_str).unwrap_or("");
        let ts = locomo_time(date).with_context(|| format!("{id} session {n}: bad date {date:?}"))?;
        for t in session.as_array().into_iter().flatten() {
            let mut content = t["text"].as_str().unwrap_or("").to_owned();
            if let (true, Some(c)) = (captions, t["blip_caption"].as_str()) {
                content.push_str(&format!(" [shares {c}]"));
            }
            if content.is_empty() {
                continue;
            }
            lines.push(
                serde_json::json!({"provider": "locomo", "thread": id, "message": t["dia_id"],
                    "role": "user", "timestamp": ts, "speaker_display": t["speaker"], "content": content})
                .to_string(),
            );
        }
    }
    Ok((id, lines))
}

/// Archives every turn of every sample under `root`; returns how many.
fn archive(root: &std::path::Path, samples: &[Value], captions: bool) -> Result<usize> {
    let mut turns = 0usize;
    for s in samples {
        let (id, lines) = sample_lines(s, captions)?;
        turns += lines.len();
        let records =
            input::read_records(lines.join("\n").as_bytes()).map_err(|e| anyhow::anyhow!("{id}: {e}"))?;
        append::append(root, &records).map_err(|e| anyhow::anyhow!("{id}: {e}"))?;
    }
    Ok(turns)
}

/// The recall figures, overall and per category.
#[derive(Default)]
struct Scores {
    overall: Tally,
    by_cat: BTreeMap<i64, Tally>,
    /// Questions without usable evidence.
    skipped: usize,
}

impl Scores {
    /// Counts one question of `cat` whose evidence is `want` and whose
    /// ranked hits are `got`.
    fn add(&mut self, cat: i64, want: &[String], got: &[String]) {
        for t in [&mut self.overall, self.by_cat.entry(cat).or_default()] {
            t.questions += 1;
            for (k, slot) in KS.iter().zip(t.at.iter_mut()) {
                let top: HashSet<&str> = got.iter().take(*k).map(String::as_str).collect();
                let found = want.iter().filter(|w| top.contains(w.as_str())).count();
                *slot += found as f64 / want.len() as f64;
            }
        }
    }
}

/// The dia_ids of the top 10 records for `question`, in rank order.
fn top_ids(view: &View, question: &str, filters: &Filters, bm25: Bm25) -> Result<Vec<String>> {
    let hits = view.search(question, filters, 10, bm25).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut got = Vec::new();
    for h in &hits {
        let stored = view.stored(h).map_err(|e| anyhow::anyhow!("{e}"))?;
        let message = stored.key.rsplit('/').next().unwrap_or("");
        got.push(pct::decode_canonical(message.as_bytes()).unwrap_or_default());
    }
    Ok(got)
}

/// Asks every question against its own conversation.
fn score(view: &View, samples: &[Value], bm25: Bm25) -> Result<Scores> {
    let mut scores = Scores::default();
    for s in samples {
        let id = s["sample_id"].as_str().unwrap_or("");
        let path = SourceId::new("locomo", id, "x").map_err(|e| anyhow::anyhow!("{e}"))?.v2_path();
        let filters = Filters { kind: Some(Kind::Source), path_prefix: Some(path), ..Filters::default() };
        for q in s["qa"].as_array().into_iter().flatten() {
            let want = evidence(&q["evidence"]);
            if want.is_empty() {
                scores.skipped += 1;
                continue;
            }
            let got = top_ids(view, q["question"].as_str().unwrap_or(""), &filters, bm25)?;
            scores.add(q["category"].as_i64().unwrap_or(0), &want, &got);
        }
    }
    Ok(scores)
}

/// Recall@`KS[k]` of `t`, in percent.
fn recall(t: &Tally, k: usize) -> f64 {
    100.0 * t.at[k] / t.questions.max(1) as f64
}

/// The table: what was run, then recall per category and overall.
fn table(out: &mut dyn std::io::Write, o: &Options, scores: &Scores, head: (usize, usize, f64, f64)) {
    let (conversations, turns, build_ms, query_ms) = head;
    let Scores { overall, by_cat, skipped } = scores;
    let config = format!(
        "tokenizer {}, k1 {}, b {}, captions {}",
        o.config,
        o.bm25.k1,
        o.bm25.b,
        if o.captions { "on" } else { "off" }
    );
    let _ = writeln!(out, "LoCoMo: {conversations} conversations, {turns} turns, {} questions ({skipped} without usable evidence skipped)", overall.questions);
    let _ = writeln!(out, "{config}; index build {build_ms:.0} ms, all questions {query_ms:.0} ms");
    let _ = writeln!(out, "{:<16} {:>9} {:>8} {:>8} {:>8}", "category", "questions", "R@1", "R@5", "R@10");
    let names = [
        (1, "1 multi-hop"),
        (2, "2 temporal"),
        (3, "3 open-domain"),
        (4, "4 single-hop"),
        (5, "5 adversarial"),
    ];
    for (cat, t) in by_cat {
        let name = names.iter().find(|n| n.0 == *cat).map_or_else(|| cat.to_string(), |n| n.1.to_owned());
        let _ = writeln!(
            out,
            "{name:<16} {:>9} {:>8.1} {:>8.1} {:>8.1}",
            t.questions,
            recall(t, 0),
            recall(t, 1),
            recall(t, 2)
        );
    }
    let _ = writeln!(
        out,
        "{:<16} {:>9} {:>8.1} {:>8.1} {:>8.1}",
        "overall",
        overall.questions,
        recall(overall, 0),
        recall(overall, 1),
        recall(overall, 2)
    );
}

pub(crate) fn locomo(o: &Options) -> Result<()> {
    let text =
        std::fs::read_to_string(&o.data).with_context(|| format!("cannot read {}", o.data.display()))?;
    let samples: Vec<Value> = serde_json::from_str(&text).context("the data is not a LoCoMo JSON list")?;
    let ws = tempfile::tempdir()?;
    let root = ws.path();
    let turns = archive(root, &samples, o.captions)?;
    let started = std::time::Instant::now();
    let opened = workspace::build(root, o.config).map_err(|e| anyhow::anyhow!("{e}"))?;
    let build_ms = started.elapsed().as_secs_f64() * 1e3;
    let started = std::time::Instant::now();
    let scores = score(&opened.view, &samples, o.bm25)?;
    let query_ms = started.elapsed().as_secs_f64() * 1e3;
    if !o.json || std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        let out: &mut dyn std::io::Write =
            if o.json { &mut std::io::stderr() } else { &mut std::io::stdout() };
        table(out, o, &scores, (samples.len(), turns, build_ms, query_ms));
    }
    if o.json {
        let overall = &scores.overall;
        println!(
            "{}",
            serde_json::json!({"recall_at_1": recall(overall, 0), "recall_at_5": recall(overall, 1),
                "recall_at_10": recall(overall, 2), "questions": overall.questions})
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Parsing LoCoMo's evidence (its dates: `scriptorium_scheduler::import::locomo_time`).
    use super::*;

    #[test]
    fn evidence_ids() {
        let ev = serde_json::json!(["D8:6; D9:17", "D:11:26", "D", "D1:3"]);
        assert_eq!(evidence(&ev), ["D11:26", "D1:3", "D8:6", "D9:17"]);
    }
}
