//! The memory palace: the whole self-contained HTML page of a workspace of
//! 10,000 blocks over 100,000 archived records
//! (`scriptorium_benches::workspace_gen`), against `serde_json` writing the
//! same records and topic files to one JSON string.
//!
//! Timed (ours): `scriptorium::palace::generate` — scan and parse the
//! archive, load and check every topic file, resolve every citation, embed
//! the cited and pending records, count the rest, render `core.md` and
//! `relations.json`, read the git history and the blocks its commits
//! touched, serialize, escape, hash the script
//! and style into the page. Writing the file is the CLI's part (measured
//! end to end in `docs/benchmarks.md`).
//!
//! The peer: every record of the archive (as its FORMAT.md §5 view) and
//! the text of every topic file, already in memory, serialized with
//! `serde_json::to_string` — what a JSON dump of the same memory costs
//! with nothing read, checked or resolved.
//!
//! Environment: `SCRIPTORIUM_BENCH_RECORDS` (default 100,000),
//! `SCRIPTORIUM_BENCH_BLOCKS` (default 10,000; the first of a list),
//! `SCRIPTORIUM_BENCH_DIR` (where the workspace is generated; default the
//! system temporary folder). Under `cargo bench -- --test` (CI) 200 blocks
//! over 2,000 records.
#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion};
use scriptorium_benches::workspace_gen::{Spec, Workspace};
use scriptorium_source_archive::archive::Archive;
use scriptorium_source_archive::json::RecordView;

fn env_usize(name: &str) -> Option<usize> {
    std::env::var(name)
        .ok()
        .and_then(|v| v.split(',').next().and_then(|first| first.trim().replace('_', "").parse().ok()))
}

fn palace(c: &mut Criterion) {
    let test = std::env::args().any(|a| a == "--test");
    let records = env_usize("SCRIPTORIUM_BENCH_RECORDS").unwrap_or(if test { 2_000 } else { 100_000 });
    let blocks = env_usize("SCRIPTORIUM_BENCH_BLOCKS").unwrap_or(if test { 200 } else { 10_000 });
    let base = std::env::var_os("SCRIPTORIUM_BENCH_DIR").map_or_else(std::env::temp_dir, Into::into);
    let dir = tempfile::tempdir_in(base).expect("a temporary folder");
    let started = Instant::now();
    let ws = Workspace::generate(dir.path(), Spec { records, blocks, seed: 0x009a_1ace })
        .expect("the workspace is generated");
    println!(
        "palace workspace: {blocks} blocks in {} topic files, {records} records ({} MB of archive), generated in {:.1} s",
        ws.topic_files.len(),
        ws.source_bytes / 1_000_000,
        started.elapsed().as_secs_f64()
    );

    // One run outside criterion, for the figures a person reads.
    let started = Instant::now();
    let html = scriptorium::palace::generate(&ws.root).expect("the palace is generated");
    let once = started.elapsed();
    let data = scriptorium::palace::export(&ws.root).expect("the data is exported");
    let d: serde_json::Value = serde_json::from_str(&data).expect("the data is JSON");
    assert_eq!(
        d["counts"]["blocks"].as_u64(),
        Some(blocks as u64 + 1),
        "the generator's one commit adds a block"
    );
    assert_eq!(d["counts"]["records"].as_u64(), Some(records as u64));
    println!(
        "palace: {} bytes ({:.1} MB) of HTML, {} records embedded of {records}, first run {:.2} s",
        html.len(),
        html.len() as f64 / 1e6,
        d["counts"]["records_embedded"],
        once.as_secs_f64()
    );
    drop(d);
    drop(data);

    // The peer's input, loaded once.
    let archive = Archive::scan(&ws.root).expect("the archive is scanned");
    let views: Vec<RecordView> = archive.v2_records().map(RecordView::of_record).collect();
    let topics: Vec<(String, String)> = ws
        .topic_files
        .iter()
        .map(|p| (p.clone(), std::fs::read_to_string(ws.root.join(p)).expect("a topic file")))
        .collect();
    let started = Instant::now();
    let dump = serde_json::to_string(&(&views, &topics)).expect("serializes");
    println!(
        "peer (serde_json of every record and topic file): {} bytes ({:.1} MB), {:.3} s",
        dump.len(),
        dump.len() as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );

    let mut g = c.benchmark_group("palace");
    g.sample_size(10);
    let label = format!("{}_blocks_{}_records", blocks, records);
    g.bench_function(format!("generate_{label}"), |b| {
        b.iter(|| {
            let html = scriptorium::palace::generate(black_box(&ws.root)).expect("generated");
            assert!(html.len() > records * 20, "the page holds the workspace");
            html.len()
        })
    });
    g.bench_function(format!("peer_serde_json_{label}"), |b| {
        b.iter(|| {
            let s = serde_json::to_string(&(black_box(&views), black_box(&topics))).expect("serializes");
            assert!(s.len() > records * 100);
            s.len()
        })
    });
    g.finish();
}

criterion_group!(benches, palace);
criterion_main!(benches);
