//! `remote add`, `sync` and `resolve`: one memory on many machines through
//! a git remote, and closing the conflicts a merge found.

use std::time::Duration;

use scriptorium::transaction::sync::{self, resolve, transport};
use scriptorium::transaction::{self, Code};

use super::Ctx;
use crate::report::{self, shown, Outcome};

/// What `remote add --json` prints.
#[derive(serde::Serialize)]
struct Added<'a> {
    remote: &'a str,
    url: &'a str,
}

/// Adds a remote to the workspace's repository, creating the workspace
/// (and its repository) when missing.
pub(super) fn remote_add(ctx: &Ctx, name: &str, url: &str, as_json: bool) -> Outcome {
    let root = &ctx.root;
    transport::check_remote_name(name)?;
    if let Err(e) = std::fs::create_dir_all(root) {
        return Err(report::refusal(Code::Io, format!("cannot create {}: {e}", root.display()), Some(root)));
    }
    transaction::layout::ensure(root)?;
    if !transaction::history::enabled(root)? {
        return Err(report::refusal(
            Code::InvalidArgument,
            "a remote needs the workspace's history, and scriptorium.toml sets memory.history = \"off\"",
            None,
        ));
    }
    transaction::history::Writer::open(root)?;
    transport::add_remote(root, name, url)?;
    if as_json {
        return report::json_line(&Added { remote: name, url });
    }
    report::line(&format!(
        "added remote {} at {}; run `scriptorium sync --remote {}`",
        shown(name),
        shown(url),
        shown(name)
    ))
}

/// Fetches, merges, validates, commits and pushes.
pub(super) fn sync(ctx: &Ctx, remote: Option<String>, timeout_ms: u64, as_json: bool) -> Outcome {
    let options = sync::Options {
        remote: remote.unwrap_or_else(|| sync::DEFAULT_REMOTE.to_owned()),
        lock_timeout: Duration::from_millis(timeout_ms),
        ..sync::Options::default()
    };
    let done = sync::sync(&ctx.root, &options, &transaction::disk::Faults::default())?;
    report::warn(&done.warnings);
    if !done.skipped.is_empty() {
        report::warn(&[format!(
            "left out {} file(s) the remote holds that a workspace may not: {}",
            done.skipped.len(),
            done.skipped.iter().map(|s| shown(s)).collect::<Vec<_>>().join(", ")
        )]);
    }
    if as_json {
        return report::json_line(&done);
    }
    let what = match done.outcome {
        "up_to_date" => "already up to date".to_owned(),
        "pushed" => "pushed this machine's commits".to_owned(),
        "fast_forward" => format!("fast-forwarded ({} files)", done.changed.len()),
        _ => format!("merged ({} files)", done.changed.len()),
    };
    let pushed = if done.pushed && done.outcome != "pushed" { ", pushed" } else { "" };
    let mut out = format!("sync with {}/{}: {what}{pushed}", shown(&done.remote), shown(&done.branch));
    if !done.conflicts.is_empty() {
        out.push_str(&format!(
            "\n{} conflict(s), this machine's version kept; see `scriptorium check`:",
            done.conflicts.len()
        ));
        for c in &done.conflicts {
            out.push_str(&format!("\n  {}", shown(c)));
        }
    }
    report::line(&out)
}

/// Closes one open conflict.
pub(super) fn resolve(ctx: &Ctx, name: &str, take: &str, timeout_ms: u64, as_json: bool) -> Outcome {
    let Some(take) = resolve::Take::parse(take) else {
        return Err(report::refusal(
            Code::InvalidArgument,
            format!("--take must be ours, theirs or both, not {}", shown(take)),
            None,
        ));
    };
    scriptorium::snapshot::require(&ctx.root)?;
    let done = resolve::resolve(&ctx.root, name, take, Duration::from_millis(timeout_ms))?;
    report::warn(&done.warnings);
    if as_json {
        return report::json_line(&done);
    }
    let files = if done.changed.is_empty() { "no file changed".to_owned() } else { done.changed.join(", ") };
    report::line(&format!("resolved {} ({}): {}", shown(&done.id), shown(&done.path), shown(&files)))
}
