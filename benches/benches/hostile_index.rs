//! Indexing cost is linear in the bytes of any input. One archived record
//! is indexed (`segment::build` of one unit holding one document, the same
//! call a refresh makes under the write lock) with bodies chosen to hurt:
//!
//! * **against prose** (about 1 MiB each, reported per MiB): ordinary prose
//!   (the peer), one word of 1,048,576 `y`s, 10⁶ one-letter words, 10⁶
//!   lines, and 16,384 distinct words exactly at the tokenizer's length cap;
//!   each is printed as `ratio <body>: … × prose` (asked: within 3×);
//! * **doubling**, for every Unicode general category: a body of 128 KiB
//!   and one of 256 KiB drawn from the category's code points (a seeded
//!   generator; one in eight characters a space in the `+spaces` variant,
//!   none in the other, so letters make huge words), printed as
//!   `doubling <category>: … ×` (asked: at most 2.5×).
//!
//! Each figure is the fastest of several runs. Under `cargo bench -- --test`
//! (CI) every body is built once and the sizes are a sixteenth.
#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use scriptorium_benches::categories::CATEGORIES;
use scriptorium_benches::{record, Rng};
use scriptorium_bm25_index::segment::{build, Document, Kind, Stamp, Unit};
use scriptorium_bm25_index::tokenize::{TokenizerConfig, MAX_WORD_CHARS};

const MIB: usize = 1 << 20;

fn test_mode() -> bool {
    std::env::args().any(|a| a == "--test")
}

/// One unit holding one record whose text is `body`.
fn unit(body: &str) -> Vec<Unit> {
    vec![Unit {
        kind: Kind::Source,
        path: "sources/chat/_v2/hostile.md".to_owned(),
        stamp: Stamp::default(),
        deps: Vec::new(),
        docs: vec![Document {
            anchor: "source-0badf00d".to_owned(),
            key: "chat/hostile/m1".to_owned(),
            day: Some(20_000),
            pending: false,
            speakers: vec!["7391".to_owned()],
            text: format!("Ada (7391) {body}"),
            payload: String::new(),
        }],
    }]
}

/// The fastest of `runs` builds of `body`.
fn time_build(body: &str, runs: usize) -> Duration {
    let config = TokenizerConfig::default();
    (0..runs)
        .map(|_| {
            let units = unit(body);
            let started = Instant::now();
            black_box(build(units, config, None));
            started.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn prose(bytes: usize) -> String {
    let mut rng = Rng::new(0x9e05e);
    let mut out = String::with_capacity(bytes + 512);
    let mut n = 0;
    while out.len() < bytes {
        out.push_str(record(&mut rng, "prose", n).content());
        out.push(' ');
        n += 1;
    }
    out
}

/// The hostile bodies of about `bytes` bytes, with their names.
fn hostile(bytes: usize) -> Vec<(&'static str, String)> {
    let count = bytes / 2;
    let letters: Vec<char> = ('a'..='z').collect();
    let one_letter: String = (0..count).flat_map(|k| [letters[k % 26], ' ']).collect();
    let lines: String = (0..count).flat_map(|k| [letters[k % 26], '\n']).collect();
    let mut rng = Rng::new(0xca9);
    let mut at_cap = String::with_capacity(bytes + MAX_WORD_CHARS);
    while at_cap.len() < bytes {
        at_cap.extend((0..MAX_WORD_CHARS).map(|_| letters[rng.range(0, 26)]));
        at_cap.push(' ');
    }
    vec![
        ("one huge word", "y".repeat(bytes)),
        ("one-letter words", one_letter),
        ("lines", lines),
        ("words at the cap", at_cap),
    ]
}

/// A body of about `bytes` bytes drawn from `points` (invalid scalar values
/// skipped), with a space every eighth character when `spaces`.
fn drawn(points: &[u32], bytes: usize, spaces: bool, seed: u64) -> String {
    let chars: Vec<char> = points.iter().filter_map(|&p| char::from_u32(p)).collect();
    let mut rng = Rng::new(seed);
    let mut out = String::with_capacity(bytes + 8);
    while out.len() < bytes {
        if spaces && rng.range(0, 8) == 0 {
            out.push(' ');
        } else {
            out.push(chars[rng.range(0, chars.len())]);
        }
    }
    out
}

fn against_prose(c: &mut Criterion, size: usize, runs: usize) {
    let peer = prose(size);
    let per_mib = |body: &str, t: Duration| t.as_secs_f64() * MIB as f64 / body.len() as f64;
    let peer_time = per_mib(&peer, time_build(&peer, runs));
    println!("per MiB prose: {:.1} ms", peer_time * 1e3);
    let mut group = c.benchmark_group("hostile_index");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(peer.len() as u64));
    group.bench_function("prose", |b| b.iter(|| build(unit(&peer), TokenizerConfig::default(), None)));
    for (name, body) in hostile(size) {
        let t = per_mib(&body, time_build(&body, runs));
        println!("ratio {name}: {:.1} ms per MiB, {:.2} × prose", t * 1e3, t / peer_time);
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function(name, |b| b.iter(|| build(unit(&body), TokenizerConfig::default(), None)));
    }
    group.finish();
}

fn doubling(size: usize, runs: usize) {
    let mut worst = (0.0f64, String::new());
    for (k, (category, points)) in CATEGORIES.iter().enumerate() {
        for spaces in [false, true] {
            let seed = 0x5eed + k as u64;
            let small = drawn(points, size, spaces, seed);
            let large = drawn(points, 2 * size, spaces, seed);
            let (ts, tl) = (time_build(&small, runs), time_build(&large, runs));
            let ratio = tl.as_secs_f64() / ts.as_secs_f64().max(1e-9);
            let name = format!("{category}{}", if spaces { "+spaces" } else { "" });
            println!(
                "doubling {name}: {:.2} ms → {:.2} ms, {ratio:.2} ×",
                ts.as_secs_f64() * 1e3,
                tl.as_secs_f64() * 1e3
            );
            if ratio > worst.0 {
                worst = (ratio, name);
            }
        }
    }
    println!("doubling worst: {} at {:.2} ×", worst.1, worst.0);
}

fn hostile_index(c: &mut Criterion) {
    let (size, runs) = if test_mode() { (MIB / 16, 1) } else { (MIB, 5) };
    against_prose(c, size, runs);
    doubling(size / 8, runs);
}

criterion_group!(benches, hostile_index);
criterion_main!(benches);
