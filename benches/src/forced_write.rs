//! A long forced write, measured batch by batch (the `forced-write` tool).
//!
//! [`conversations`] makes LoCoMo-shaped conversations from the vendored
//! development set (`data/locomo/locomo-dev.json`): two speakers each, named
//! anew per conversation, and sessions with dates that move forward; each
//! session's utterances are those of a LoCoMo session drawn at random (no
//! session twice in one conversation), with the original speakers' names
//! replaced by the new ones, new `dia_id`s, and the image captions kept.
//! The draw is seeded, so every run writes the same bytes.
//!
//! [`run`] puts them into an empty workspace as `scriptorium session import
//! --format locomo` does (the file read by the importer, the speakers
//! trusted from its platform fields), then writes everything as
//! `scriptorium write --force` does with the offline writer: the
//! scheduler cuts the batches at the default threshold and hands each to
//! the offline writer. Each batch's time is taken in three parts: the
//! writer's plan (lock, recovery, what the workspace holds, the edits),
//! its commit (the transaction: validation, install, index, views), and
//! the whole batch (from the end of the previous one: the scheduler's
//! cut, claim and mark included).

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use scriptorium_scheduler::import::{import, read, Format};
use scriptorium_scheduler::pending::DEFAULT_THRESHOLD;
use scriptorium_scheduler::store::SESSIONS_DB;
use scriptorium_scheduler::{Batch, BatchWriter, Scheduler, SqliteStore, WriteFailure, Written};
use scriptorium_writer::input::Input;
use scriptorium_writer::offline;

use crate::Rng;

/// One LoCoMo session as a template: who spoke (the first speaker or the
/// second), what was said, and an image caption.
#[derive(Debug, Clone)]
struct Utterance {
    second: bool,
    text: String,
    caption: Option<String>,
}

/// A template session and its speakers' names.
#[derive(Debug, Clone)]
struct Template {
    names: [String; 2],
    turns: Vec<Utterance>,
}

fn templates() -> Vec<Template> {
    let text = std::fs::read_to_string(crate::locomo::data_path()).expect("the LoCoMo dev data reads");
    let samples: Value = serde_json::from_str(&text).expect("the LoCoMo dev data is JSON");
    let mut out = Vec::new();
    for s in samples.as_array().into_iter().flatten() {
        let conv = &s["conversation"];
        let names = [0, 1].map(|k| conv[["speaker_a", "speaker_b"][k]].as_str().unwrap_or("").to_owned());
        let Some(obj) = conv.as_object() else { continue };
        for (key, turns) in obj {
            let Some(turns) = turns.as_array().filter(|_| key.starts_with("session_")) else { continue };
            let turns: Vec<Utterance> = turns
                .iter()
                .map(|t| Utterance {
                    second: t["speaker"].as_str() == Some(names[1].as_str()),
                    text: t["text"].as_str().unwrap_or("").to_owned(),
                    caption: t["blip_caption"].as_str().map(str::to_owned),
                })
                .collect();
            if !turns.is_empty() {
                out.push(Template { names: names.clone(), turns });
            }
        }
    }
    // The JSON object's key order is not the file's: sort for a stable draw.
    out.sort_by(|a, b| (&a.names, &a.turns[0].text).cmp(&(&b.names, &b.turns[0].text)));
    out
}

const FIRST: [&str; 24] = [
    "Ada", "Bo", "Caroline", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jon", "Kemal", "Lena",
    "Mateo", "Nadia", "Oskar", "Priya", "Quinn", "Rosa", "Sven", "Tara", "Umar", "Vera", "Wen", "Yara",
];
const LAST: [&str; 23] = [
    "Abe", "Berg", "Costa", "Diaz", "Egan", "Fox", "Gray", "Holm", "Ito", "Jensen", "Khan", "Lund", "Moss",
    "Novak", "Ortiz", "Park", "Reyes", "Silva", "Tan", "Ueda", "Voss", "West", "Zhou",
];

/// The speaker name number `n` (distinct for the first 552 numbers).
fn name(n: usize) -> String {
    format!("{} {}", FIRST[n % FIRST.len()], LAST[(n / FIRST.len()) % LAST.len()])
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// A date moving forward: year, month (0-based), day (1-based).
#[derive(Debug, Clone, Copy)]
struct Day(i32, usize, u32);

impl Day {
    fn plus(self, mut days: u32) -> Day {
        let Day(mut y, mut m, mut d) = self;
        loop {
            let len = match m {
                1 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
                1 => 28,
                3 | 5 | 8 | 10 => 30,
                _ => 31,
            };
            if d + days <= len {
                return Day(y, m, d + days);
            }
            days -= len - d + 1;
            d = 1;
            m += 1;
            if m == 12 {
                m = 0;
                y += 1;
            }
        }
    }

    /// As LoCoMo writes a session's date: `1:56 pm on 8 May, 2023`.
    fn locomo(self, minute_of_day: usize) -> String {
        let (h, m) = (minute_of_day / 60, minute_of_day % 60);
        let (h12, half) = match h {
            0 => (12, "am"),
            1..=11 => (h, "am"),
            12 => (12, "pm"),
            _ => (h - 12, "pm"),
        };
        format!("{h12}:{m:02} {half} on {} {}, {}", self.2, MONTHS[self.1], self.0)
    }
}

/// LoCoMo samples (the importer's `locomo` format) holding `turns` turns
/// in all, drawn with `seed`: conversations of 19 to 32 sessions, as in
/// LoCoMo, the last one cut short to make the count exact.
pub fn conversations(turns: usize, seed: u64) -> Value {
    let pool = templates();
    assert!(pool.len() >= 32, "the LoCoMo dev data has enough sessions to draw from");
    let mut rng = Rng::new(seed);
    let mut samples = Vec::new();
    let mut left = turns;
    while left > 0 {
        let k = samples.len();
        let names = [name(2 * k), name(2 * k + 1)];
        let mut order: Vec<usize> = (0..pool.len()).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.range(0, i + 1));
        }
        let mut conv = serde_json::Map::new();
        conv.insert("speaker_a".into(), json!(names[0]));
        conv.insert("speaker_b".into(), json!(names[1]));
        let mut day = Day(2022, 0, 1).plus(rng.range(0, 365) as u32);
        for (n, &t) in order.iter().take(rng.range(19, 33)).enumerate() {
            if left == 0 {
                break;
            }
            let template = &pool[t];
            let renamed = |text: &str| {
                let text = text.replace(&template.names[0], &names[0]);
                text.replace(&template.names[1], &names[1])
            };
            let session: Vec<Value> = template
                .turns
                .iter()
                .take(left)
                .enumerate()
                .map(|(i, u)| {
                    let mut turn = json!({
                        "speaker": names[usize::from(u.second)],
                        "dia_id": format!("D{}:{}", n + 1, i + 1),
                        "text": renamed(&u.text),
                    });
                    if let Some(c) = &u.caption {
                        turn["blip_caption"] = json!(c);
                    }
                    turn
                })
                .collect();
            left -= session.len();
            conv.insert(
                format!("session_{}_date_time", n + 1),
                json!(day.locomo(rng.range(8 * 60, 22 * 60))),
            );
            conv.insert(format!("session_{}", n + 1), Value::Array(session));
            day = day.plus(rng.range(1, 15) as u32);
        }
        samples.push(json!({"sample_id": format!("gen-{k:05}"), "conversation": conv}));
    }
    Value::Array(samples)
}

/// The time of one batch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatchTime {
    /// Turns in it.
    pub turns: usize,
    /// The offline writer's plan: lock, recovery, reading what the
    /// workspace holds, choosing the edits.
    pub plan: Duration,
    /// The transaction's commit.
    pub commit: Duration,
    /// The whole batch, from the end of the one before (or the start of
    /// the write): the scheduler's own steps included.
    pub whole: Duration,
}

/// The offline writer, timed.
struct Timed {
    last: Instant,
    times: Vec<BatchTime>,
}

impl BatchWriter for Timed {
    fn name(&self) -> &str {
        offline::NAME
    }

    fn write_batch(&mut self, batch: &Batch<'_>) -> Result<Written, WriteFailure> {
        let start = Instant::now();
        let prepared = offline::prepare(&Input::of_batch(batch), Default::default())?;
        let planned = Instant::now();
        let written = prepared.commit()?;
        let end = Instant::now();
        self.times.push(BatchTime {
            turns: batch.records.len(),
            plan: planned - start,
            commit: end - planned,
            whole: end - self.last,
        });
        self.last = end;
        Ok(written)
    }
}

/// What [`run`] measured.
#[derive(Debug, Clone)]
pub struct Curve {
    /// Turns imported and written.
    pub turns: usize,
    /// Each batch, in order.
    pub batches: Vec<BatchTime>,
    /// The whole forced write.
    pub total: Duration,
}

/// Generates `turns` turns ([`conversations`], seed `seed`) into the empty
/// workspace folder `root` and writes them with a forced write, timing
/// every batch. The transcript file is written next to `root`, as
/// `root` + `.locomo.json`.
pub fn run(root: &Path, turns: usize, seed: u64) -> Result<Curve, String> {
    let ws = scriptorium_transaction::layout::ensure(root).map_err(|e| e.to_string())?.id;
    let file = root.with_extension("locomo.json");
    std::fs::write(&file, conversations(turns, seed).to_string()).map_err(|e| e.to_string())?;
    let transcripts = read(Format::Locomo, &file).map_err(|e| e.to_string())?;
    let store = SqliteStore::open(&root.join(SESSIONS_DB)).map_err(|e| e.to_string())?;
    let imported = import(&store, &transcripts).map_err(|e| e.to_string())?;
    let mut sch = Scheduler::new(&store, root, &ws);
    sch.threshold = DEFAULT_THRESHOLD;
    sch.lock_timeout = Duration::from_secs(5);
    let start = Instant::now();
    let mut timed = Timed { last: start, times: Vec::new() };
    let report = sch.write_all(&mut timed, true).map_err(|f| f.reason)?;
    let total = start.elapsed();
    if report.turns != imported.nodes {
        return Err(format!("{} turns imported, {} written", imported.nodes, report.turns));
    }
    Ok(Curve { turns: report.turns, batches: timed.times, total })
}

/// The means per tenth of the batches (in order; with fewer than ten
/// batches, one per batch) of the time `of` picks, in milliseconds.
pub fn tenths(batches: &[BatchTime], of: impl Fn(&BatchTime) -> Duration) -> Vec<f64> {
    let parts = batches.len().min(10);
    (0..parts)
        .map(|k| {
            let part = &batches[k * batches.len() / parts..(k + 1) * batches.len() / parts];
            part.iter().map(|b| of(b).as_secs_f64() * 1e3).sum::<f64>() / part.len() as f64
        })
        .collect()
}

/// The last tenth's mean over the first's.
pub fn ratio(tenths: &[f64]) -> f64 {
    match (tenths.first(), tenths.last()) {
        (Some(first), Some(last)) if *first > 0.0 => last / first,
        _ => f64::NAN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_move_forward_as_locomo_writes_them() {
        assert_eq!(Day(2023, 1, 27).plus(3).locomo(13 * 60 + 56), "1:56 pm on 2 March, 2023");
        assert_eq!(Day(2024, 1, 28).plus(1).locomo(9), "12:09 am on 29 February, 2024");
        assert_eq!(Day(2023, 11, 31).plus(1).locomo(12 * 60), "12:00 pm on 1 January, 2024");
    }

    #[test]
    fn the_draw_is_exact_and_seeded() {
        let a = conversations(1_000, 7);
        assert_eq!(a, conversations(1_000, 7));
        let dir = tempfile::tempdir().expect("a temporary folder");
        let file = dir.path().join("t.json");
        std::fs::write(&file, a.to_string()).expect("written");
        let t = read(Format::Locomo, &file).expect("the importer reads it");
        assert_eq!(t.iter().map(|t| t.nodes.len()).sum::<usize>(), 1_000);
        assert!(t.len() >= 2, "more than one conversation");
        let speakers: std::collections::BTreeSet<_> =
            t[0].nodes.iter().filter_map(|n| n.speaker_display.clone()).collect();
        assert_eq!(speakers.len(), 2);
    }

    #[test]
    fn a_small_forced_write_is_measured_batch_by_batch() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let root = dir.path().join("ws");
        std::fs::create_dir(&root).expect("the workspace folder");
        let curve = run(&root, 1_500, 1).expect("the forced write runs");
        assert_eq!(curve.turns, 1_500);
        assert!(curve.batches.len() > 1, "{} batches", curve.batches.len());
        assert_eq!(curve.batches.iter().map(|b| b.turns).sum::<usize>(), 1_500);
        let t = tenths(&curve.batches, |b| b.commit);
        assert_eq!(t.len(), curve.batches.len().min(10));
        assert!(ratio(&t).is_finite());
    }
}
