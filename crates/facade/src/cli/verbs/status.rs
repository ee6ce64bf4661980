//! `status`, `render` (every derived view rebuilt) and `index build`.

use scriptorium::index::{self, tokenize::TokenizerConfig};
use scriptorium::snapshot;

use super::Ctx;
use crate::report::{self, Outcome};

/// The revision, counts, index, `core.md` and writer of the workspace.
pub(super) fn status(ctx: &Ctx, as_json: bool) -> Outcome {
    let snapshot = super::snapshot(&ctx.root)?;
    let s = scriptorium::status::Status::of(&snapshot)?;
    let v = serde_json::to_value(&s).expect("a status serializes");
    if as_json {
        return report::json_line(&v);
    }
    let hooks = match &s.hooks.last_error {
        Some(e) => format!("\nhooks last failed at {}: {} ({})", e.time, e.code, e.event),
        None => String::new(),
    };
    let conflicts = match s.conflicts {
        0 => String::new(),
        n => format!(", open sync conflicts {n} (see check)"),
    };
    report::line(&format!(
        "revision {}\ntopic files {}, blocks {} ({} pending), diagnostics {}{conflicts}\nsource records {} ({} pending)\ncore.md {} tokens, {} block(s) left out\nindex {}\npending turns {}\nwriter {}\n{}{}",
        s.revision,
        s.topic_files,
        s.blocks,
        s.pending_blocks,
        s.diagnostics,
        s.source_records,
        s.pending_sources,
        s.core.tokens,
        s.core.omitted.len(),
        v["index"],
        v["pending_turns"],
        v["writer"],
        health(&s.health),
        hooks
    ))
}

/// The health lines of the text status: the streak and, while it lasts,
/// the failure, its fingerprint and what to do.
fn health(h: &scriptorium::health::Health) -> String {
    let success = match &h.last_success {
        Some(t) => format!("last success {t}"),
        None => "no successful write yet".to_owned(),
    };
    match (&h.last_failure, &h.fingerprint) {
        (Some(f), Some(fp)) if h.failure_streak > 0 => format!(
            "health: {} failed write(s) in a row; {success}\n  latest failure {} {}: {}\n  fingerprint {fp}\n  what to do: {}",
            h.failure_streak,
            f.time,
            f.code,
            one_line(&f.reason),
            h.remediation.as_deref().unwrap_or("")
        ),
        _ => format!("health: ok; {success}"),
    }
}

/// Rebuilds every derived view and says what was built.
pub(super) fn render(ctx: &Ctx, as_json: bool, budget: Option<usize>, timeout_ms: u64) -> Outcome {
    snapshot::require(&ctx.root)?;
    let mut w = super::writer(&ctx.root, timeout_ms)?;
    if let Some(b) = budget {
        w.budget = b;
    }
    let derived = w.rebuild_derived()?;
    report::warn(&derived.warnings);
    let r = &derived.views;
    if as_json {
        let mut out = serde_json::to_value(r).expect("a report serializes");
        if let Some(note) = &derived.hand_written_core {
            out["hand_written_core"] = note.clone().into();
        }
        if !derived.warnings.is_empty() {
            out["warnings"] = derived.warnings.clone().into();
        }
        return report::json_line(&out);
    }
    report::line(&format!(
        "core.md: {} tokens, {} block(s) left out; timeline: {} day file(s); recent events: {}; relations: {} nodes, {} edges{}",
        r.core.tokens,
        r.core.omitted.len(),
        r.timeline_files,
        r.events,
        r.relations.nodes,
        r.relations.edges,
        derived.hand_written_core.as_ref().map(|n| format!("; hand-written core.md: {n}")).unwrap_or_default()
    ))
}

/// Builds the search index from every file.
pub(super) fn index_build(ctx: &Ctx, as_json: bool) -> Outcome {
    snapshot::require(&ctx.root)?;
    let bar = crate::progress::Progress::new("reading files", !as_json);
    let mut progress = |done: usize, total: usize| bar.set(done, total);
    let opened = index::workspace::build_with_progress(&ctx.root, TokenizerConfig::default(), &mut progress)?;
    drop(bar);
    let r = &opened.report;
    if as_json {
        report::json_line(r)
    } else {
        report::line(&format!(
            "indexed {} documents from {} files ({} bytes)",
            r.documents, r.files_read, r.base_bytes
        ))
    }
}

/// `text` on one line: control characters written as `\u{…}`, cut after
/// 500 characters.
fn one_line(text: &str) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == 500 {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}
