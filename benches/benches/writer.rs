//! The writer on the LoCoMo dev data (`data/locomo/`): every
//! conversation imported into a session store and cut into batches at the
//! default threshold (16,000 `o200k_base` tokens), then
//!
//! * the offline writer's wall time per batch — the whole write: reading the
//!   topic files it adds to, the edits, and the transaction (validation,
//!   fsynced install, index refresh, derived views) — against the peer in
//!   the same run: the archive writer on the same batches in a twin
//!   workspace, i.e. the transaction with the records alone, no topics;
//! * the tokens the OpenAI-compatible path sends per batch in its first call
//!   (system prompt, the batch's writer-input lines, the tool definitions:
//!   the request body as sent, counted in `o200k_base`);
//! * criterion: the offline writer's plan (the edits, no transaction) of the
//!   first batch.
//!
//! Under `cargo bench -- --test` (CI): the first conversation only.
#![allow(clippy::print_stdout)]

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use scriptorium_benches::locomo::{self, Records};
use scriptorium_benches::percentiles;
use scriptorium_scheduler::write::ArchiveWriter;
use scriptorium_scheduler::BatchWriter;
use scriptorium_writer::agent::{observation, tool_specs, WRITE_PROMPT};
use scriptorium_writer::input::{Input, Turn};
use scriptorium_writer::{offline, Message, Offline, OpenAiCompatible};

fn batches(test: bool) -> Vec<Records> {
    let mut transcripts = locomo::transcripts();
    if test {
        transcripts.truncate(1);
    }
    locomo::batches(&transcripts)
}

fn write_all(writer: &mut dyn BatchWriter, batches: &[Records]) -> Vec<Duration> {
    let dir = tempfile::tempdir().unwrap();
    scriptorium_transaction::layout::ensure(dir.path()).unwrap();
    let mut times = Vec::new();
    for b in batches {
        let started = Instant::now();
        locomo::write_batch(writer, dir.path(), b);
        times.push(started.elapsed());
    }
    times
}

fn bench(c: &mut Criterion) {
    let test = std::env::args().any(|a| a == "--test");
    let batches = batches(test);
    let turns: usize = batches.iter().map(|b| b.1.len()).sum();
    let ours = write_all(&mut Offline::default(), &batches);
    let peer = write_all(&mut ArchiveWriter, &batches);
    let (o50, o99) = percentiles(ours.clone());
    let (p50, p99) = percentiles(peer.clone());
    println!("batches: {} ({turns} turns)", batches.len());
    println!(
        "offline writer per batch: p50 {o50:.1} ms, p99 {o99:.1} ms, total {:.2} s",
        ours.iter().sum::<Duration>().as_secs_f64()
    );
    println!(
        "archive writer (peer) per batch: p50 {p50:.1} ms, p99 {p99:.1} ms, total {:.2} s",
        peer.iter().sum::<Duration>().as_secs_f64()
    );
    println!("ratio offline / archive (p50): {:.2}", o50 / p50);

    let client =
        OpenAiCompatible::new("http://127.0.0.1:9/v1", "any-model", None, Duration::from_secs(1)).unwrap();
    let tools = tool_specs(true);
    let bpe = tiktoken_rs::o200k_base_singleton();
    let mut sent: Vec<usize> = Vec::new();
    let mut records_only: Vec<usize> = Vec::new();
    for (session, records) in &batches {
        let turns: Vec<Turn> = records.iter().map(Turn::of_record).collect();
        let user = observation(session, &turns);
        let body = client
            .request_body(&[Message::text("system", WRITE_PROMPT), Message::text("user", user)], &tools);
        sent.push(bpe.count_ordinary(&body.to_string()));
        records_only.push(turns.iter().map(|t| bpe.count_ordinary(&format!("{}\n", t.line))).sum());
    }
    let mean = |v: &[usize]| v.iter().sum::<usize>() as f64 / v.len().max(1) as f64;
    println!(
        "OpenAI-compatible first call per batch: mean {:.0} tokens (records {:.0}, prompt and tools {:.0}), max {}",
        mean(&sent),
        mean(&records_only),
        mean(&sent) - mean(&records_only),
        sent.iter().max().copied().unwrap_or(0)
    );

    let dir = tempfile::tempdir().unwrap();
    scriptorium_transaction::layout::ensure(dir.path()).unwrap();
    let first: Vec<Turn> = batches[0].1.iter().map(Turn::of_record).collect();
    let input = Input {
        root: dir.path(),
        origin: batches[0].0.clone(),
        turns: first,
        archive: Vec::new(),
        lock_timeout: Duration::from_secs(5),
    };
    c.bench_function("writer/offline_plan_first_batch", |b| {
        b.iter(|| {
            offline::plan(input.root, &input.turns, &offline::Known::default(), Default::default())
                .unwrap()
                .edits
                .len()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
