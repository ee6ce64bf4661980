//! Builds the index of the generated corpus once (`build_profile DOCS`),
//! printing the time: a target for a profiler.
#![allow(clippy::print_stdout)]

use scriptorium_benches::corpus;
use scriptorium_bm25_index::segment::{build, Document, Kind, Stamp, Unit};
use scriptorium_bm25_index::tokenize::TokenizerConfig;

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let docs = corpus::docs(n);
    let mut units: Vec<Unit> = Vec::new();
    for d in &docs {
        if units.last().is_none_or(|u| u.path != d.path) {
            units.push(Unit {
                kind: Kind::Source,
                path: d.path.clone(),
                stamp: Stamp::default(),
                deps: Vec::new(),
                docs: Vec::new(),
            });
        }
        units.last_mut().expect("pushed").docs.push(Document {
            anchor: d.anchor.clone(),
            key: String::new(),
            day: Some(d.day),
            pending: false,
            speakers: vec![d.speaker.clone()],
            text: d.text.clone(),
            payload: String::new(),
        });
    }
    let t = std::time::Instant::now();
    let bytes = build(units, TokenizerConfig::default(), None);
    println!("{n} documents: {:.2} s, {} bytes", t.elapsed().as_secs_f64(), bytes.len());
}
