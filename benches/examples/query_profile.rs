//! Runs the benchmark questions against a generated index in a loop
//! (`query_profile DOCS FILTER` with FILTER none|speaker|date|path): a
//! target for a profiler.
#![allow(clippy::print_stdout)]

use scriptorium_benches::corpus;
use scriptorium_bm25_index::search::{Bm25, Filters, View};
use scriptorium_bm25_index::segment::{build, Segment};
use scriptorium_bm25_index::tokenize::TokenizerConfig;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let filter = args.next().unwrap_or_else(|| "none".into());
    let docs = corpus::docs(n);
    let units = corpus::units(&docs);
    let config = TokenizerConfig::default();
    let view = View::new(Segment::open_vec(build(units, config, None), config).expect("opens"), None)
        .expect("a base");
    let f = match filter.as_str() {
        "speaker" => {
            Filters { speaker: Some(scriptorium_bm25_index::speaker::id_key("42")), ..Filters::default() }
        }
        "date" => {
            // SPAN days (default 11, 1 % of the corpus).
            let span: i32 = std::env::var("SPAN").ok().and_then(|s| s.parse().ok()).unwrap_or(11);
            Filters {
                day_from: Some(corpus::FIRST_DAY + 500),
                day_to: Some(corpus::FIRST_DAY + 499 + span),
                ..Filters::default()
            }
        }
        "path" => Filters { path_prefix: Some("sources/bench/_v2/t000".into()), ..Filters::default() },
        _ => Filters::default(),
    };
    let queries = corpus::queries(1000);
    let t = std::time::Instant::now();
    let mut hits = 0;
    for _ in 0..5 {
        for q in &queries {
            hits += view.search(q, &f, 5, Bm25::default()).expect("intact").len();
        }
    }
    println!("{filter}: {hits} hits, {:.1} µs per query", t.elapsed().as_secs_f64() * 1e6 / 5000.0);
}
