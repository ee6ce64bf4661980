//! `check` (the whole workspace, recovering an interrupted install first)
//! and `topic check` (named topic files).

use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use scriptorium::archive::json;
use scriptorium::snapshot;
use scriptorium::topics::diag::Diagnostic;
use scriptorium::topics::validate::only_named;
use scriptorium::{transaction, Code, Error};

use super::Ctx;
use crate::report::{shown, Exit, Outcome};

/// Validates the whole workspace: one diagnostic per line, then a summary.
pub(super) fn check(ctx: &Ctx, as_json: bool, timeout_ms: u64) -> Outcome {
    let root = &ctx.root;
    snapshot::require(root)?;
    // A workspace this process cannot write is checked as it is on disk,
    // under the shared lock; otherwise the write lock completes an
    // interrupted install first.
    let shared = transaction::lock::acquire_shared(root, Duration::from_millis(timeout_ms))?;
    let (w, _shared) = match shared.held().not_writable() {
        Some(why) => {
            super::warn_read_only(&scriptorium::status::ReadOnly {
                reason: why.to_owned(),
                interrupted_install: transaction::install::pending(root),
            });
            (None, Some(shared))
        }
        None => {
            drop(shared);
            (Some(super::writer(root, timeout_ms)?), None)
        }
    };
    let recovered = match w.as_ref().map(|w| &w.recovered) {
        Some(transaction::install::Recovered::Nothing) => "nothing",
        Some(transaction::install::Recovered::RolledForward) => "rolled_forward",
        Some(transaction::install::Recovered::Discarded) => "discarded",
        None if transaction::install::pending(root) => "not_completed",
        None => "nothing",
    };
    let checkup = snapshot::checkup(root)?;
    let damaged = damaged_archive_files(&checkup.archive);
    let tampered = tampered_archive_files(root)?;
    let conflicts = open_conflicts(root)?;
    let revision = transaction::revision::compute(root)?.hex;
    drop(w);
    let mut out = BufWriter::new(io::stdout().lock());
    print_diagnostics(&mut out, &checkup.diagnostics, as_json)?;
    for d in &damaged {
        let line = if as_json {
            json::to_line(d)
        } else {
            format!(
                "{}: byte {}: {}",
                shown(d["path"].as_str().unwrap_or("")),
                d["offset"],
                shown(d["message"].as_str().unwrap_or(""))
            )
        };
        writeln!(out, "{line}")?;
    }
    for t in &tampered {
        let line = if as_json {
            json::to_line(t)
        } else {
            format!(
                "{}: TAMPERED {}: {}",
                shown(t["path"].as_str().unwrap_or("")),
                shown(t["source_id"].as_str().unwrap_or("-")),
                shown(t["message"].as_str().unwrap_or(""))
            )
        };
        writeln!(out, "{line}")?;
    }
    for c in &conflicts {
        let line = if as_json {
            json::to_line(c)
        } else {
            format!(
                "{}: {} {}: {}",
                shown(c["path"].as_str().unwrap_or("")),
                c["code"].as_str().unwrap_or(""),
                shown(c["id"].as_str().unwrap_or("")),
                shown(c["message"].as_str().unwrap_or(""))
            )
        };
        writeln!(out, "{line}")?;
    }
    let errors = checkup.diagnostics.len() + damaged.len() + tampered.len() + conflicts.len();
    let ok = errors == 0;
    let summary = if as_json {
        json::to_line(&json!({"ok": ok, "errors": errors, "revision": revision, "recovered": recovered}))
    } else {
        format!("{errors} error(s); revision {revision}; recovery: {recovered}")
    };
    writeln!(out, "{summary}")?;
    out.flush()?;
    Ok(if ok { Exit::Success } else { Exit::Findings })
}

/// An archive file that does not parse to its end: only its valid prefix
/// is read, and nothing is ever appended to it.
fn damaged_archive_files(archive: &scriptorium::archive::archive::Archive) -> Vec<Value> {
    archive
        .problems()
        .iter()
        .map(|p| {
            json!({"code": "VALIDATION_FAILED", "path": p.path, "offset": p.diagnostic.offset,
                "line": p.diagnostic.line,
                "message": format!("the archive file does not parse to its end: {}", p.diagnostic.reason)})
        })
        .collect()
}

/// An archive file whose committed frames were changed, removed or
/// reordered, in a commit of the history or in the working tree: the
/// archive is append-only (FORMAT.md §5, `TAMPERED`).
fn tampered_archive_files(root: &Path) -> Result<Vec<Value>, Error> {
    let found = transaction::history::tamper::verify(root)?;
    Ok(found
        .iter()
        .map(|t| {
            let what = match &t.source_id {
                Some(id) => format!("the committed record {id} was {}", t.breach.as_str()),
                None => format!("committed bytes were {}", t.breach.as_str()),
            };
            json!({"code": "TAMPERED", "path": t.path, "source_id": t.source_id, "breach": t.breach,
                "message": format!("{what}; the archive is append-only (git log -p -- '{}' shows its history)", t.path)})
        })
        .collect())
}

/// The open conflicts of this machine's sync merges (FORMAT.md §5,
/// `MERGE_CONFLICT` and `ARCHIVE_CONFLICT`), until `resolve` closes them.
fn open_conflicts(root: &Path) -> Result<Vec<Value>, Error> {
    let open = transaction::sync::conflicts::list(root)?;
    Ok(open
        .iter()
        .map(|c| {
            json!({"code": c.kind.code(), "path": c.path, "id": c.id, "kind": c.kind,
                "block_id": c.block_id, "source_id": c.source_id, "theirs_commit": c.theirs_commit,
                "message": c.describe()})
        })
        .collect())
}

fn print_diagnostics(out: &mut impl Write, diagnostics: &[Diagnostic], as_json: bool) -> io::Result<()> {
    for d in diagnostics {
        let line = if as_json { json::to_line(d) } else { shown(&d.to_string()) };
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// Validates topic files (all of them without `paths`): one diagnostic
/// per line, exit 1 on any.
pub(super) fn topic_check(ctx: &Ctx, paths: &[String], as_json: bool) -> Outcome {
    let root = &ctx.root;
    snapshot::require(root)?;
    let named = paths.iter().map(|p| relative_topic_path(root, p)).collect::<Result<Vec<_>, _>>()?;
    let snapshot = super::snapshot(root)?;
    let checkup = snapshot.checkup()?;
    let diagnostics = if named.is_empty() {
        checkup.diagnostics
    } else {
        let mut d: Vec<Diagnostic> =
            checkup.topics.unreadable.into_iter().filter(|d| named.contains(&d.path)).collect();
        d.extend(only_named(&checkup.checked, &named));
        snapshot::sort(&mut d);
        d
    };
    let mut out = BufWriter::new(io::stdout().lock());
    print_diagnostics(&mut out, &diagnostics, as_json)?;
    out.flush()?;
    Ok(if diagnostics.is_empty() { Exit::Success } else { Exit::Findings })
}

/// A named file as a workspace-relative path (`topics/…`), whether it was
/// given relative to the workspace or as a path on disk inside it.
fn relative_topic_path(root: &Path, named: &str) -> Result<String, Error> {
    let as_given = Path::new(named);
    let candidates = [root.join(named), as_given.to_path_buf()];
    let canon_root = root.canonicalize().map_err(|e| {
        Error::new(Code::Io, format!("cannot resolve {}: {e}", root.display())).at(root.display().to_string())
    })?;
    for c in candidates {
        let Ok(canon) = c.canonicalize() else { continue };
        let Ok(rel) = canon.strip_prefix(&canon_root) else { continue };
        let parts: Vec<String> =
            rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        let rel = parts.join("/");
        if rel.starts_with("topics/") && rel.ends_with(".md") {
            return Ok(rel);
        }
        return Err(Error::invalid(format!("{named} is not a topic file (topics/**/*.md)"))
            .at(c.display().to_string()));
    }
    Err(Error::new(Code::NotFound, format!("no topic file {named} in the workspace"))
        .at(root.join(named).display().to_string()))
}
