//! Writes a benchmark workspace for measuring the CLI end to end:
//! `workspace BLOCKS RECORDS DIR` generates `BLOCKS` blocks over `RECORDS`
//! archived records into the empty or missing folder `DIR`
//! (`scriptorium_benches::workspace_gen`: the archive and topic files
//! written directly, the index built, one commit made).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::Path;

use scriptorium_benches::workspace_gen::{Spec, Workspace};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(blocks), Some(records), Some(dir)) = (args.first(), args.get(1), args.get(2)) else {
        eprintln!("usage: workspace BLOCKS RECORDS DIR");
        std::process::exit(2);
    };
    let (Ok(blocks), Ok(records)) = (blocks.replace('_', "").parse(), records.replace('_', "").parse())
    else {
        eprintln!("BLOCKS and RECORDS are counts");
        std::process::exit(2);
    };
    let dir = Path::new(dir);
    if std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some()) {
        eprintln!("{} is not empty", dir.display());
        std::process::exit(1);
    }
    match Workspace::generate(dir, Spec { records, blocks, seed: 0x009a_1ace }) {
        Ok(ws) => println!(
            "{}: {blocks} blocks in {} topic files, {records} records ({} bytes of archive)",
            ws.root.display(),
            ws.topic_files.len(),
            ws.source_bytes
        ),
        Err(e) => {
            eprintln!("cannot generate the workspace: {e}");
            std::process::exit(1);
        }
    }
}
