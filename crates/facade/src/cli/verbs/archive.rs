//! `archive append` and `archive dump`.

use std::io::{self, BufWriter, Write};
use std::path::Path;

use scriptorium::archive::{append::AppendReport, input, json};
use scriptorium::{transaction, Code};

use super::Ctx;
use crate::report::{self, Exit, Outcome};

/// Archives the records on stdin as one all-or-nothing batch.
pub(super) fn append(ctx: &Ctx, timeout_ms: u64) -> Outcome {
    // Bad input is refused before the lock is taken.
    let records = input::read_records(io::stdin().lock())?;
    if records.is_empty() {
        return report::json_line(&AppendReport::default());
    }
    let root = &ctx.root;
    if let Err(e) = std::fs::create_dir_all(root) {
        return Err(report::refusal(Code::Io, format!("cannot create {}: {e}", root.display()), Some(root)));
    }
    let mut w = super::writer(root, timeout_ms)?;
    let patch = transaction::Patch {
        base_revision: String::new(),
        message: "archive append".into(),
        sources: records,
        edits: Vec::new(),
    };
    let by = transaction::observe::Provenance::by("archive");
    let c = w.commit_as(&patch, transaction::Tier::Owner, transaction::Base::Any, &by)?;
    report::warn(&c.warnings);
    report::json_line(&AppendReport { appended: c.appended, duplicates: c.duplicates, files: c.changed })
}

/// Prints every record of one archive file; a damaged tail is refused
/// after the records before it.
pub(super) fn dump(file: &Path) -> Outcome {
    let dump = scriptorium::archive::archive::dump(file)?;
    let mut out = BufWriter::new(io::stdout().lock());
    for r in &dump.records {
        writeln!(out, "{}", json::to_line(r))?;
    }
    out.flush()?;
    drop(out);
    match dump.error {
        Some(e) => Err(e.into()),
        None => Ok(Exit::Success),
    }
}
