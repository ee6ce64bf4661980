//! `log`, `show` and `undo`: reading the workspace's history, and undoing
//! one commit's topic changes as a new transaction.

use scriptorium::archive::json;
use scriptorium::snapshot;
use scriptorium::transaction::history::read::{self, LogEntry, LogFilter, Shown};
use scriptorium::transaction::history::undo;
use scriptorium::transaction::{self, observe::Provenance, Base, Patch, Tier};

use super::Ctx;
use crate::report::{self, shown, Exit, Outcome};

/// The first line a person reads of a commit.
fn summary(e: &LogEntry) -> String {
    format!("{} {} {} {}", &e.commit[..e.commit.len().min(12)], e.time, shown(&e.writer), shown(&e.message))
}

/// The commits, newest first, one per line.
pub(super) fn log(ctx: &Ctx, path: Option<String>, session: Option<String>, as_json: bool) -> Outcome {
    snapshot::require(&ctx.root)?;
    let entries = read::log(&ctx.root, &LogFilter { path, session })?;
    if entries.is_empty() {
        return Ok(Exit::Success);
    }
    // One write: a history of thousands of commits is one block of lines.
    let lines: Vec<String> =
        entries.iter().map(|e| if as_json { json::to_line(e) } else { summary(e) }).collect();
    report::line(&lines.join("\n"))
}

/// What one commit changed.
pub(super) fn show(ctx: &Ctx, rev: &str, as_json: bool) -> Outcome {
    snapshot::require(&ctx.root)?;
    let s = read::show(&ctx.root, rev)?;
    if as_json {
        return report::json_line(&s);
    }
    report::line(&shown_text(&s))
}

fn shown_text(s: &Shown) -> String {
    let e = &s.entry;
    let mut out = format!("commit {}\n", e.commit);
    if !e.revision.is_empty() {
        out.push_str(&format!("revision {}\n", e.revision));
    }
    out.push_str(&format!("writer {} (tier {})", shown(&e.writer), shown(&e.tier)));
    if let Some(session) = &e.session {
        out.push_str(&format!(", session {}", shown(session)));
    }
    if !e.turns.is_empty() {
        out.push_str(&format!(", turns {}", shown(&e.turns.join(","))));
    }
    out.push_str(&format!("\ntime {}\n\n    {}\n", e.time, shown(&e.message)));
    let groups: [(&str, &[String]); 5] = [
        ("added", &s.blocks.added),
        ("changed", &s.blocks.changed),
        ("removed", &s.blocks.removed),
        ("source", &s.sources),
        ("path", &s.paths),
    ];
    for (word, items) in groups {
        if !items.is_empty() {
            out.push('\n');
        }
        for item in items {
            out.push_str(&format!("{word:<8}{}\n", shown(item)));
        }
    }
    out.pop();
    out
}

/// What `undo --json` prints.
#[derive(serde::Serialize)]
struct Undone {
    /// The commit made (`null` when nothing was written).
    commit: Option<String>,
    /// The workspace revision after it.
    revision: String,
    /// The blocks given back their state from before the commit undone.
    reverted: Vec<String>,
}

/// Undoes the topic changes of the commit `rev` names, as one `undo`
/// transaction at the owner tier.
pub(super) fn undo(ctx: &Ctx, rev: &str, force: bool, timeout_ms: u64, as_json: bool) -> Outcome {
    let root = &ctx.root;
    snapshot::require(root)?;
    let mut w = super::writer(root, timeout_ms)?;
    // Read under the lock: the base revision is the one the plan was made on.
    let base = transaction::revision::compute(root)?.hex;
    let plan = undo::plan(root, rev, force)?;
    let short = &plan.commit[..12];
    let mut made: Option<String> = None;
    let mut changed = false;
    let mut revision = base.clone();
    if !plan.edits.is_empty() {
        let message = match read::show(root, &plan.commit) {
            Ok(s) => format!("undo {short}: {}", s.entry.message),
            Err(_) => format!("undo {short}"),
        };
        let patch = Patch { base_revision: base, message, sources: Vec::new(), edits: plan.edits };
        let c = w.commit_as(&patch, Tier::Owner, Base::Check, &Provenance::by("undo"))?;
        report::warn(&c.warnings);
        changed = !c.changed.is_empty();
        if changed {
            made = read::log(root, &LogFilter::default())?.into_iter().next().map(|e| e.commit);
        }
        revision = c.revision;
    }
    let reverted = if changed { plan.reverted } else { Vec::new() };
    if as_json {
        return report::json_line(&Undone { commit: made, revision, reverted });
    }
    if reverted.is_empty() {
        return report::line(&format!(
            "nothing to undo in {short}: it changed no topic block that is not already as before it"
        ));
    }
    let mut text = format!("undid {short}: {} block(s) back as before it", reverted.len());
    for r in &reverted {
        text.push_str(&format!("\n  {}", shown(r)));
    }
    report::line(&text)
}
