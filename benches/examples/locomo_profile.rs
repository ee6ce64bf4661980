//! Asks every LoCoMo question of our index of the replicated turns in a
//! loop (`locomo_profile SCALE SETUP ROUNDS`, SETUP shipped|same-work): a
//! target for a profiler. Prints the median and 99th percentile of a
//! question, and a digest of every answer (documents and the bits of their
//! scores) that tells whether two builds of the engine rank alike.
#![allow(clippy::print_stdout)]

use std::hash::{Hash, Hasher};
use std::time::Instant;

use scriptorium_benches::peer_index::collection::Collection;
use scriptorium_benches::peer_index::{ours, Setup};

fn main() {
    let mut args = std::env::args().skip(1);
    let scale: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(100);
    let setup = args.next().and_then(|s| Setup::parse(&s)).unwrap_or(Setup::SameWork);
    let rounds: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(5).max(1);
    let c = Collection::locomo(scale);
    let dir = std::env::temp_dir().join(format!("scriptorium-locomo-profile-{}", std::process::id()));
    let built = ours::build_into(&dir, &c, setup);
    let mut digest = std::collections::hash_map::DefaultHasher::new();
    for q in &c.queries {
        for h in ours::search(&built.view, q, setup) {
            (h.doc, h.score.to_bits()).hash(&mut digest);
        }
    }
    let mut times = Vec::with_capacity(rounds * c.queries.len());
    for _ in 0..rounds {
        for q in &c.queries {
            let t = Instant::now();
            std::hint::black_box(ours::search(&built.view, q, setup));
            times.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    times.sort_by(f64::total_cmp);
    let at = |p: f64| times[((times.len() - 1) as f64 * p) as usize];
    println!(
        "{} {}: p50 {:.1} µs, p99 {:.1} µs, mean {:.1} µs, answers digest {:016x}",
        c.name,
        setup.name(),
        at(0.5),
        at(0.99),
        times.iter().sum::<f64>() / times.len() as f64,
        digest.finish()
    );
    drop(built);
    std::fs::remove_dir_all(&dir).expect("the scratch folder is removed");
}
