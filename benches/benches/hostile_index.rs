//! Indexing cost is linear in the bytes of any input. One archived record
//! is indexed (`segment::build` of one unit holding one document, the same
//! call a refresh makes under the write lock) with bodies chosen to hurt:
//!
//! * **against prose** (about 1 MiB each, reported per MiB): ordinary prose
//!   (the peer), one word of 1,048,576 `y`s, 10⁶ one-letter words, 10⁶
//!   lines, 16,384 distinct words exactly at the tokenizer's length cap,
//!   116,508 distinct random 8-letter words, a
//!   letter under a run of combining marks, a run of regional indicators, a
//!   run of emoji joined by ZWJ, and one Hangul word; each is printed as
//!   `ratio <body>: … × prose` (asked: within 3×), and each is also built
//!   at twice its size, printed as `doubling <body>: … ×`;
//! * **doubling**, for every Unicode general category: a body of 256 KiB
//!   and one of 512 KiB drawn from the category's code points (a seeded
//!   generator; one in eight characters a space in the `+spaces` variant,
//!   none in the other, so letters make huge words), printed as
//!   `doubling <category>: … ×` (asked: at most 2.5×).
//!
//! Each body is also given to tantivy (one stored document, its English
//! stemming tokenizer, one thread) in the same run, as a peer.
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
            span: None,
            time: None,
            aliases: String::new(),
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

/// The peer: tantivy indexing `body` as one stored document with its
/// English stemming tokenizer, one thread, the fastest of `runs`.
fn time_tantivy(body: &str, runs: usize) -> Duration {
    use tantivy::schema::{IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
    let mut schema = Schema::builder();
    let indexing =
        TextFieldIndexing::default().set_tokenizer("en_stem").set_index_option(IndexRecordOption::WithFreqs);
    let text =
        schema.add_text_field("text", TextOptions::default().set_indexing_options(indexing).set_stored());
    let schema = schema.build();
    (0..runs)
        .map(|_| {
            let index = tantivy::Index::create_in_ram(schema.clone());
            let mut writer = index.writer_with_num_threads(1, 200 << 20).expect("a tantivy writer");
            let started = Instant::now();
            writer.add_document(tantivy::doc!(text => body)).expect("tantivy accepts the document");
            writer.commit().expect("tantivy commits");
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
    let mut distinct = String::with_capacity(bytes + 9);
    while distinct.len() < bytes {
        distinct.extend((0..8).map(|_| letters[rng.range(0, 26)]));
        distinct.push(' ');
    }
    let repeat = |unit: &str| unit.repeat(bytes / unit.len());
    vec![
        ("one huge word", "y".repeat(bytes)),
        ("one-letter words", one_letter),
        ("lines", lines),
        ("words at the cap", at_cap),
        ("distinct 8-letter words", distinct),
        ("combining marks on one letter", format!("a{}", repeat("\u{301}"))),
        ("regional indicators", repeat("\u{1F1EB}\u{1F1F7}")),
        ("emoji joined by ZWJ", repeat("\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}")),
        ("one Hangul word", repeat("\u{AC00}")),
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
    let tantivy = per_mib(&peer, time_tantivy(&peer, runs.min(3)));
    println!("per MiB prose: {:.1} ms; tantivy {:.1} ms", peer_time * 1e3, tantivy * 1e3);
    let mut group = c.benchmark_group("hostile_index");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(peer.len() as u64));
    group.bench_function("prose", |b| b.iter(|| build(unit(&peer), TokenizerConfig::default(), None)));
    for ((name, body), (_, double)) in hostile(size).into_iter().zip(hostile(2 * size)) {
        let once = time_build(&body, runs);
        let t = per_mib(&body, once);
        let tantivy = per_mib(&body, time_tantivy(&body, runs.min(3)));
        println!(
            "ratio {name}: {:.1} ms per MiB, {:.2} × prose; tantivy {:.1} ms per MiB (ours {:.2} × tantivy)",
            t * 1e3,
            t / peer_time,
            tantivy * 1e3,
            t / tantivy
        );
        let ratio = time_build(&double, runs).as_secs_f64() / once.as_secs_f64().max(1e-9);
        println!("doubling {name}: {ratio:.2} ×");
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
    let (size, runs) = if test_mode() { (MIB / 16, 1) } else { (MIB, 9) };
    against_prose(c, size, runs);
    doubling(size / 4, runs);
}

criterion_group!(benches, hostile_index);
criterion_main!(benches);
