//! Builds the index of the generated corpus once (`build_profile DOCS`),
//! printing the time: a target for a profiler.
#![allow(clippy::print_stdout)]

use scriptorium_benches::corpus;
use scriptorium_bm25_index::segment::build;
use scriptorium_bm25_index::tokenize::TokenizerConfig;

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let docs = corpus::docs(n);
    let units = corpus::units(&docs);
    let t = std::time::Instant::now();
    let bytes = build(units, TokenizerConfig::default(), None);
    println!("{n} documents: {:.2} s, {} bytes", t.elapsed().as_secs_f64(), bytes.len());
}
