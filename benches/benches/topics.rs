//! Topic benchmarks: parse and validate a workspace of 10,000 topic files
//! (100,000 blocks) citing 1,000,000 archived records, and the same at a
//! tenth of the blocks for the scaling; render every derived view.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use scriptorium_benches::topic_workspace;
use scriptorium_topic_markdown::validate::{check, Loaded};
use scriptorium_topic_markdown::views::{render, CORE_BUDGET};

fn parse_and_check(
    files: &[(String, String)],
    resolver: &dyn scriptorium_topic_markdown::validate::SourceResolver,
) -> usize {
    let loaded: Vec<Loaded> = files.iter().map(|(p, t)| Loaded::parse(p, t)).collect();
    let checked = check(&loaded, resolver);
    assert!(checked.diagnostics.is_empty(), "{:?}", &checked.diagnostics[..checked.diagnostics.len().min(3)]);
    checked.blocks.len()
}

fn topics(c: &mut Criterion) {
    let mut g = c.benchmark_group("topics");
    g.sample_size(10);
    for (files, label) in [(1_000usize, "10k_blocks"), (10_000, "100k_blocks")] {
        let (ws, resolver) = topic_workspace(files, 10, 1_000_000);
        let bytes: usize = ws.iter().map(|(_, t)| t.len()).sum();
        g.throughput(Throughput::Elements((files * 10) as u64));
        g.bench_function(format!("parse_and_validate_{label}_1M_records"), |b| {
            b.iter(|| {
                let n = parse_and_check(black_box(&ws), &resolver);
                assert_eq!(n, files * 10);
                n
            })
        });
        let loaded: Vec<Loaded> = ws.iter().map(|(p, t)| Loaded::parse(p, t)).collect();
        let checked = check(&loaded, &resolver);
        g.bench_function(format!("render_all_views_{label}"), |b| {
            b.iter(|| {
                let r = render(black_box(&loaded), &checked, CORE_BUDGET);
                assert!(r.report.events > 0 && r.report.events < files * 10);
                r.report.events
            })
        });
        let _ = bytes;
    }
    g.finish();
}

criterion_group!(benches, topics);
criterion_main!(benches);
