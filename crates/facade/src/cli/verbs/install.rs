//! `scriptorium install|uninstall claude-code|codex`: the hooks and the
//! memory tools registered in a coding agent's settings, and taken out
//! again (`docs/install.md`).

use std::path::PathBuf;

use scriptorium::install::{self, Action, Harness, Places, Report, Scope, Wiring};
use scriptorium::{Code, Error};

use super::Ctx;
use crate::args::{HarnessArg, ScopeArg};
use crate::report::{self, shown, Outcome};

/// The library's harness for the flag.
fn harness(arg: HarnessArg) -> Harness {
    match arg {
        HarnessArg::ClaudeCode => Harness::ClaudeCode,
        HarnessArg::Codex => Harness::Codex,
    }
}

/// The library's scope for the flag.
fn scope(arg: ScopeArg) -> Scope {
    match arg {
        ScopeArg::User => Scope::User,
        ScopeArg::Project => Scope::Project,
    }
}

/// The home folder, the current folder and `$CODEX_HOME`. No home folder
/// (`HOME`, or `USERPROFILE` on Windows) is `INVALID_ARGUMENT` for the
/// user scope only.
fn places(scope: Scope) -> Result<Places, Error> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let cwd = std::env::current_dir()
        .map_err(|e| Error::new(Code::Io, format!("cannot read the current folder: {e}")))?;
    let home = match var("HOME").or_else(|| var("USERPROFILE")) {
        Some(home) => home,
        None if scope == Scope::Project => PathBuf::new(),
        None => return Err(Error::invalid("the home folder is unknown: HOME is not set")),
    };
    let codex_home = var("CODEX_HOME").map(|h| cwd.join(h));
    Ok(Places { home, cwd, codex_home })
}

/// This binary and the workspace, both absolute: the workspace the
/// command line names (`--workspace`, `SCRIPTORIUM_WORKSPACE`, the
/// default) made absolute against the current folder.
fn wiring(ctx: &Ctx) -> Result<Wiring, Error> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::new(Code::Io, format!("cannot tell where this scriptorium binary is: {e}")))?;
    let workspace = std::path::absolute(&ctx.root).map_err(|e| {
        Error::invalid(format!("cannot make the workspace {} absolute: {e}", ctx.root.display()))
            .at(ctx.root.display().to_string())
    })?;
    Ok(Wiring { exe, workspace })
}

/// `scriptorium install HARNESS [--scope user|project] [--json]`.
pub(super) fn install(ctx: &Ctx, harness_arg: HarnessArg, scope_arg: ScopeArg, json: bool) -> Outcome {
    let (h, s) = (harness(harness_arg), scope(scope_arg));
    let report = install::install(h, s, &places(s)?, &wiring(ctx)?)?;
    if h == Harness::Codex && report.files.iter().any(|f| f.changed) {
        report::note("Codex runs a new or changed hook only once you trust it: open /hooks in Codex and trust the scriptorium hooks");
    }
    print(&report, json)
}

/// `scriptorium uninstall HARNESS [--scope user|project] [--json]`.
pub(super) fn uninstall(_ctx: &Ctx, harness_arg: HarnessArg, scope_arg: ScopeArg, json: bool) -> Outcome {
    let s = scope(scope_arg);
    let report = install::uninstall(harness(harness_arg), s, &places(s)?)?;
    print(&report, json)
}

/// `{"files":[…],"manual":[…]}`, or one line per file and the changes to
/// make by hand.
fn print(report: &Report, json: bool) -> Outcome {
    if json {
        return report::json_line(report);
    }
    let mut out = Vec::new();
    for f in &report.files {
        let path = shown(&f.path);
        out.push(match (f.action, &f.backup) {
            (Action::Updated, Some(b)) => format!("updated {path} (backup {})", shown(b)),
            (Action::Updated, None) => format!("updated {path}"),
            (Action::Created, _) => format!("created {path}"),
            (Action::Removed, _) => format!("removed {path}"),
            (Action::Unchanged, _) => format!("unchanged {path}"),
        });
    }
    for m in &report.manual {
        let path = shown(&m.path);
        let header = match m.action {
            "add" => format!("add to {path} (install does not edit it):"),
            "replace" => {
                format!("replace the {} table in {path} (install does not edit it) with:", m.lines[0])
            }
            "set" => format!("set in {path} (install does not edit it):"),
            _ => format!("remove the {} table from {path} (uninstall does not edit it)", m.lines[0]),
        };
        out.push(header);
        if m.action != "remove" {
            out.extend(m.lines.iter().map(|l| format!("  {}", shown(l))));
        }
    }
    report::line(&out.join("\n"))
}
