//! The BM25 index against tantivy, in one run, on the same generated
//! corpus (`scriptorium_benches::corpus`) at 10,000, 100,000 and 1,000,000
//! records: top-5 query latency (criterion means, plus p50/p99 over 1,000
//! questions printed as `latency …` lines), filtered queries, build
//! throughput on all cores, cold open of the memory-mapped file, refresh
//! after one changed file against a full build, and index bytes per
//! document.
//!
//! Under `cargo bench -- --test` (CI) only the 10,000-record corpus runs;
//! `SCRIPTORIUM_INDEX_SIZES=100000,1000000` picks the sizes.
#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use scriptorium_benches::corpus::{self, units, Doc};
use scriptorium_bm25_index::delta::{refresh, Change};
use scriptorium_bm25_index::search::{Bm25, Filters, View};
use scriptorium_bm25_index::segment::{build, MappedFile, Segment};
use scriptorium_bm25_index::speaker::id_key;
use scriptorium_bm25_index::tokenize::TokenizerConfig;
use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::{IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED, STRING};
use tantivy::{doc, Index, IndexReader};

const K: usize = 5;

struct Tantivy {
    index: Index,
    reader: IndexReader,
    parser: QueryParser,
}

fn tantivy_build(docs: &[Doc]) -> Tantivy {
    let mut schema = Schema::builder();
    let indexing =
        TextFieldIndexing::default().set_tokenizer("en_stem").set_index_option(IndexRecordOption::WithFreqs);
    let text = schema.add_text_field("text", TextOptions::default().set_indexing_options(indexing));
    let speaker = schema.add_text_field("speaker", STRING);
    let day = schema.add_i64_field("day", INDEXED | FAST);
    let schema = schema.build();
    let index = Index::create_in_ram(schema);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut writer = index.writer_with_num_threads(threads, 1 << 30).expect("a tantivy writer");
    for d in docs {
        writer
            .add_document(
                doc!(text => d.text.as_str(), speaker => d.speaker.as_str(), day => i64::from(d.day)),
            )
            .expect("tantivy accepts the document");
    }
    writer.commit().expect("tantivy commits");
    writer.wait_merging_threads().expect("tantivy merges");
    let reader = index.reader().expect("a tantivy reader");
    // Disjunctive (the default), like ours: any matching term makes a candidate.
    let parser = QueryParser::for_index(&index, vec![text]);
    Tantivy { index, reader, parser }
}

fn tantivy_query(t: &Tantivy, q: &str) -> usize {
    let searcher = t.reader.searcher();
    // Queries are plain words; strip what the query language would read as syntax.
    let clean: String = q.chars().map(|c| if c.is_alphanumeric() { c } else { ' ' }).collect();
    let query = t.parser.parse_query(&clean).expect("a parsable query");
    searcher.search(&query, &TopDocs::with_limit(K).order_by_score()).expect("tantivy searches").len()
}

fn percentiles(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort();
    let at = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize].as_secs_f64() * 1e6;
    (at(0.5), at(0.99))
}

fn latency(label: &str, queries: &[String], mut run: impl FnMut(&str) -> usize) -> (f64, f64) {
    for q in queries {
        black_box(run(q));
    }
    let mut times = Vec::with_capacity(queries.len() * 3);
    for _ in 0..3 {
        for q in queries {
            let t = Instant::now();
            black_box(run(q));
            times.push(t.elapsed());
        }
    }
    let (p50, p99) = percentiles(times);
    println!("latency {label}: p50 {p50:.1} µs, p99 {p99:.1} µs over {} queries", queries.len() * 3);
    (p50, p99)
}

fn sizes() -> Vec<usize> {
    if let Ok(list) = std::env::var("SCRIPTORIUM_INDEX_SIZES") {
        return list.split(',').filter_map(|s| s.trim().parse().ok()).collect();
    }
    if std::env::args().any(|a| a == "--test") {
        vec![10_000]
    } else {
        vec![10_000, 100_000, 1_000_000]
    }
}

fn label(n: usize) -> String {
    match n {
        1_000_000 => "1M".into(),
        n => format!("{}k", n / 1000),
    }
}

/// The filtered queries: by speaker, by 1% of the dates, by path prefix.
struct Filtered {
    speaker: Filters,
    date: Filters,
    path: Filters,
}

impl Filtered {
    fn new() -> Filtered {
        Filtered {
            speaker: Filters { speaker: Some(id_key("42")), ..Filters::default() },
            date: Filters {
                day_from: Some(corpus::FIRST_DAY + 500),
                day_to: Some(corpus::FIRST_DAY + 510),
                ..Filters::default()
            },
            path: Filters { path_prefix: Some("sources/bench/_v2/t000".into()), ..Filters::default() },
        }
    }

    /// Each filter under a printed name and a criterion name.
    fn each(&self) -> [(&'static str, &'static str, &Filters); 3] {
        [
            ("speaker", "speaker", &self.speaker),
            ("date 1%", "date_1pct", &self.date),
            ("path prefix", "path_prefix", &self.path),
        ]
    }
}

/// Builds both indexes of `docs` and prints their build times and our size.
fn build_both(docs: &[Doc], config: TokenizerConfig, name: &str) -> (Vec<u8>, Tantivy) {
    let started = Instant::now();
    let bytes = build(units(docs), config, None);
    let ours_build = started.elapsed();
    let started = Instant::now();
    let tv = tantivy_build(docs);
    let tantivy_build_time = started.elapsed();
    let segs = tv.index.searchable_segments().map_or(0, |s| s.len());
    println!(
        "build {name}: ours {:.2} s, tantivy {:.2} s ({segs} segments); ours {} bytes, {:.0} bytes/document",
        ours_build.as_secs_f64(),
        tantivy_build_time.as_secs_f64(),
        bytes.len(),
        bytes.len() as f64 / docs.len() as f64
    );
    (bytes, tv)
}

/// Our top-5 for `q` under `f`: how many hits.
fn ours(view: &View, q: &str, f: &Filters) -> usize {
    view.search(q, f, K, Bm25::default()).expect("an intact index").len()
}

/// The printed p50/p99 latencies, ours against tantivy and ours filtered.
fn print_latencies(view: &View, tv: &Tantivy, queries: &[String], filtered: &Filtered, name: &str) {
    let none = Filters::default();
    let (o50, o99) = latency(&format!("ours {name}"), queries, |q| ours(view, q, &none));
    let (t50, t99) = latency(&format!("tantivy {name}"), queries, |q| tantivy_query(tv, q));
    println!(
        "latency ratio {name}: ours/tantivy p50 {:.2}, p99 {:.2}",
        o50 / t50.max(f64::MIN_POSITIVE),
        o99 / t99.max(f64::MIN_POSITIVE)
    );
    for (what, _, f) in filtered.each() {
        latency(&format!("ours {name} filtered by {what}"), queries, |q| ours(view, q, f));
    }
}

/// Criterion's query means: ours, tantivy's, ours filtered.
fn bench_queries(
    c: &mut Criterion,
    (view, tv): (&View, &Tantivy),
    queries: &[String],
    filtered: &Filtered,
    name: &str,
) {
    let none = Filters::default();
    let mut g = c.benchmark_group(format!("index_query_{name}"));
    g.throughput(Throughput::Elements(1));
    let mut k = 0;
    g.bench_function("ours_top5", |b| {
        b.iter(|| {
            k = (k + 1) % queries.len();
            ours(view, black_box(&queries[k]), &none)
        })
    });
    g.bench_function("tantivy_top5", |b| {
        b.iter(|| {
            k = (k + 1) % queries.len();
            tantivy_query(tv, black_box(&queries[k]))
        })
    });
    for (_, what, f) in filtered.each() {
        g.bench_function(format!("ours_top5_filtered_{what}"), |b| {
            b.iter(|| {
                k = (k + 1) % queries.len();
                ours(view, black_box(&queries[k]), f)
            })
        });
    }
    g.finish();
}

/// Build throughput, ours against tantivy's.
fn bench_build(c: &mut Criterion, docs: &[Doc], config: TokenizerConfig, name: &str) {
    let n = docs.len();
    let mut g = c.benchmark_group(format!("index_build_{name}"));
    g.sample_size(10);
    g.throughput(Throughput::Elements(n as u64));
    let us = units(docs);
    g.bench_with_input(BenchmarkId::new("ours", n), &us, |b, us| {
        b.iter(|| build(us.clone(), config, None).len())
    });
    g.bench_with_input(BenchmarkId::new("tantivy", n), docs, |b, docs| {
        b.iter(|| tantivy_build(docs).index.searchable_segments().map_or(0, |s| s.len()))
    });
    g.finish();
}

/// Cold open: map the file and open it, as a fresh process does.
fn bench_open(c: &mut Criterion, bytes: &[u8], config: TokenizerConfig, name: &str) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let file = dir.path().join("base.idx");
    std::fs::write(&file, bytes).expect("the index is written");
    let mut g = c.benchmark_group(format!("index_open_{name}"));
    g.bench_function("ours_map_and_open", |b| {
        b.iter(|| {
            let f = std::fs::File::open(&file).expect("the file opens");
            let map = MappedFile::map(&f).expect("the file maps");
            let seg = Segment::open(Arc::new(map), config).expect("it opens");
            View::new(seg, None).expect("a base").len()
        })
    });
    g.finish();
}

/// Refresh after one changed file (1,000 records) against a full build.
fn bench_refresh(c: &mut Criterion, view: &View, docs: &[Doc], name: &str) {
    let mut changed = units(&docs[..corpus::PER_THREAD.min(docs.len())]);
    for d in &mut changed[0].docs {
        d.text.push_str(" edited");
    }
    let change = changed.remove(0);
    let mut g = c.benchmark_group(format!("index_refresh_{name}"));
    g.sample_size(10);
    g.bench_function("ours_refresh_one_file", |b| {
        b.iter(|| refresh(view, vec![Change::Put(change.clone())]).expect("refreshes"))
    });
    g.finish();
}

fn index(c: &mut Criterion) {
    let queries = corpus::queries(1_000);
    let config = TokenizerConfig::default();
    let filtered = Filtered::new();
    for n in sizes() {
        let docs = corpus::docs(n);
        let name = label(n);
        let (bytes, tv) = build_both(&docs, config, &name);
        let view = View::new(Segment::open_vec(bytes.clone(), config).expect("a built index opens"), None)
            .expect("a base");
        print_latencies(&view, &tv, &queries, &filtered, &name);
        bench_queries(c, (&view, &tv), &queries, &filtered, &name);
        bench_build(c, &docs, config, &name);
        bench_open(c, &bytes, config, &name);
        bench_refresh(c, &view, &docs, &name);
    }
}

criterion_group!(benches, index);
criterion_main!(benches);
