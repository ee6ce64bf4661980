//! Top-5 queries of our BM25 index and of tantivy on LoCoMo's dialogue
//! turns (`scriptorium_benches::peer_index`): both engines built on disk
//! from the same documents and searched through memory maps, with every
//! LoCoMo question in turn, in the shipped and the same-work
//! configurations. The `index-vs-tantivy` program prints the wider
//! comparison (build, bytes, p50/p99, agreement, first answers).
//!
//! LoCoMo ×1 by default; `SCRIPTORIUM_LOCOMO_SCALES=1,10,100` picks the
//! scales. Under `cargo bench -- --test` (CI) only the first 20 questions
//! are asked.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use scriptorium_benches::peer_index::collection::Collection;
use scriptorium_benches::peer_index::{ours, peer, Setup};

fn scales() -> Vec<usize> {
    std::env::var("SCRIPTORIUM_LOCOMO_SCALES")
        .ok()
        .map(|list| list.split(',').filter_map(|s| s.trim().parse().ok()).filter(|&s| s > 0).collect())
        .unwrap_or_else(|| vec![1])
}

fn locomo_index(c: &mut Criterion) {
    let testing = std::env::args().any(|a| a == "--test");
    for scale in scales() {
        let mut corpus = Collection::locomo(scale);
        if testing {
            corpus.queries.truncate(20);
        }
        let queries = &corpus.queries;
        let dir = tempfile::tempdir().expect("a temporary folder");
        let tv = peer::build_into(&dir.path().join("tantivy"), &corpus.docs(), &corpus.feed);
        for setup in Setup::ALL {
            let built = ours::build_into(&dir.path().join(setup.name()), &corpus, setup);
            let mut g = c.benchmark_group(format!("locomo_x{scale}_{}", setup.name()));
            g.throughput(Throughput::Elements(1));
            let mut k = 0;
            g.bench_function("ours_top5", |b| {
                b.iter(|| {
                    k = (k + 1) % queries.len();
                    ours::search(&built.view, black_box(&queries[k]), setup).len()
                })
            });
            g.bench_function("tantivy_top5", |b| {
                b.iter(|| {
                    k = (k + 1) % queries.len();
                    tv.peer.search(black_box(&queries[k])).len()
                })
            });
            g.finish();
        }
    }
}

criterion_group!(benches, locomo_index);
criterion_main!(benches);
