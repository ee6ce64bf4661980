//! Archive benchmarks: v2 parse throughput against memchr line scanning
//! (the physical reference) over the same ≥100 MB archive, and batch append
//! of 100 records to a 10 MB archive file.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use scriptorium_benches::{archive, record, Rng};
use scriptorium_source_archive::{append, v2};

fn parse_throughput(c: &mut Criterion) {
    let (bytes, frames, lines) = archive(100 << 20, "bench");
    let mut g = c.benchmark_group("archive_parse_100MB");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.sample_size(10);
    g.bench_function("scriptorium_v2_parse", |b| {
        b.iter(|| {
            let parsed = v2::parse_prefix(black_box(&bytes), None);
            assert!(parsed.error.is_none());
            assert_eq!(parsed.frames.len(), frames);
            parsed.frames.len()
        })
    });
    g.bench_function("memchr_line_scan", |b| {
        b.iter(|| {
            let n = memchr::memchr_iter(b'\n', black_box(&bytes)).count();
            assert_eq!(n, lines);
            n
        })
    });
    g.finish();
}

fn append_batch(c: &mut Criterion) {
    let (base, frames, _) = archive(10 << 20, "big");
    let ws = tempfile::tempdir().expect("temp dir");
    let path = ws.path().join("sources/openprogram/_v2/big.md");
    std::fs::create_dir_all(path.parent().expect("has a parent")).expect("mkdir");
    let mut rng = Rng::new(7);
    let batch: Vec<_> = (0..100).map(|k| record(&mut rng, "big", frames + k)).collect();
    let mut g = c.benchmark_group("archive_append");
    g.sample_size(20);
    g.bench_function("append_100_records_to_10MB_file", |b| {
        b.iter_batched(
            || std::fs::write(&path, &base).expect("reset the archive"),
            |()| {
                let report = append::append(ws.path(), black_box(&batch)).expect("append");
                assert_eq!(report.appended, 100);
                report
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, parse_throughput, append_batch);
criterion_main!(benches);
