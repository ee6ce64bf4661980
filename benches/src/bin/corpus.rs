//! Writes the benchmark search corpus for the peer scripts in
//! `benches/peers/`: `corpus DOCS QUERIES OUT_DIR` writes `docs.jsonl`
//! (`{"path","anchor","speaker","day","text"}` per line) and
//! `queries.jsonl` (`{"text"}` per line).
#![allow(clippy::print_stderr)]

use std::io::Write;

use scriptorium_benches::corpus;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(n), Some(q), Some(out)) = (args.first(), args.get(1), args.get(2)) else {
        eprintln!("usage: corpus DOCS QUERIES OUT_DIR");
        std::process::exit(2);
    };
    let (n, q): (usize, usize) = match (n.parse(), q.parse()) {
        (Ok(n), Ok(q)) => (n, q),
        _ => {
            eprintln!("DOCS and QUERIES are counts");
            std::process::exit(2);
        }
    };
    let out = std::path::Path::new(out);
    std::fs::create_dir_all(out)?;
    let mut w = std::io::BufWriter::new(std::fs::File::create(out.join("docs.jsonl"))?);
    for d in corpus::docs(n) {
        let line = serde_json::json!({"path": d.path, "anchor": d.anchor, "speaker": d.speaker, "day": d.day, "text": d.text});
        writeln!(w, "{line}")?;
    }
    w.flush()?;
    let mut w = std::io::BufWriter::new(std::fs::File::create(out.join("queries.jsonl"))?);
    for t in corpus::queries(q) {
        writeln!(w, "{}", serde_json::json!({ "text": t }))?;
    }
    w.flush()
}
