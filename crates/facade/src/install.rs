//! Registering Scriptorium in a coding agent's own settings, and taking it
//! out again: its hooks (`scriptorium hook <agent> --workspace …` on the
//! agent's session events) and its memory tools (the `scriptorium mcp`
//! server).
//!
//! | agent, scope | hooks | MCP server |
//! |---|---|---|
//! | Claude Code, user | `~/.claude/settings.json` | `~/.claude.json` |
//! | Claude Code, project | `.claude/settings.json` | `.mcp.json` |
//! | Codex, user | `~/.codex/hooks.json` (`$CODEX_HOME`) | `config.toml` beside it, by hand |
//! | Codex, project | `.codex/hooks.json` | `.codex/config.toml`, by hand |
//!
//! Every file is edited as text ([`jsontext`]): only our entries change,
//! every other byte is kept, a second install changes nothing, and an
//! uninstall gives back the file as it was before the install (what
//! `docs/install.md` tells in full). Every file is read and every change
//! worked out before the first one is written, so a refusal writes
//! nothing.

mod codex_config;
mod files;
mod jsontext;
mod settings;
mod shell;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use crate::hooks::Harness;
use crate::Error;

/// The suffix of a backup, beside the file: `settings.json.scriptorium-backup`.
pub const BACKUP_SUFFIX: &str = ".scriptorium-backup";

/// Whose settings: the person's (in the home folder) or the project's
/// (under the current folder).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The person's own settings.
    User,
    /// The settings of the project in the current folder.
    Project,
}

/// Where the agents' folders are.
#[derive(Debug, Clone)]
pub struct Places {
    /// The home folder (`$HOME`).
    pub home: PathBuf,
    /// The current folder: the project.
    pub cwd: PathBuf,
    /// `$CODEX_HOME`, Codex's folder when set (default `~/.codex`).
    pub codex_home: Option<PathBuf>,
}

/// What the hooks and the MCP server run.
#[derive(Debug, Clone)]
pub struct Wiring {
    /// The `scriptorium` binary, as an absolute path.
    pub exe: PathBuf,
    /// The workspace, as an absolute path.
    pub workspace: PathBuf,
}

/// What happened to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// It did not exist and was written.
    Created,
    /// It was rewritten (a backup of it kept).
    Updated,
    /// It held nothing but our entries and was removed.
    Removed,
    /// Nothing in it needed to change.
    Unchanged,
}

/// One file install or uninstall looked at.
#[derive(Debug, Clone, Serialize)]
pub struct FileChange {
    /// The file.
    pub path: String,
    /// Whether its bytes changed (or it was created or removed).
    pub changed: bool,
    /// The backup of its old bytes, when it was rewritten.
    pub backup: Option<String>,
    /// What happened to it.
    #[serde(skip)]
    pub action: Action,
}

/// A change the person makes by hand (in a file install does not edit).
#[derive(Debug, Clone, Serialize)]
pub struct Manual {
    /// The file.
    pub path: String,
    /// `add` the lines, `replace` the table they open with them, `set`
    /// the key under the table, or `remove` the table.
    pub action: &'static str,
    /// The lines (for `remove`, the table's header).
    pub lines: Vec<String>,
}

/// What install or uninstall did.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Each file, in the order they were handled.
    pub files: Vec<FileChange>,
    /// What is left to do by hand (Codex's `config.toml`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub manual: Vec<Manual>,
}

/// The files of `harness` for `scope`: the hooks file, then the MCP file.
pub fn paths(harness: Harness, scope: Scope, places: &Places) -> (PathBuf, PathBuf) {
    match (harness, scope) {
        (Harness::ClaudeCode, Scope::User) => {
            (places.home.join(".claude/settings.json"), places.home.join(".claude.json"))
        }
        (Harness::ClaudeCode, Scope::Project) => {
            (places.cwd.join(".claude/settings.json"), places.cwd.join(".mcp.json"))
        }
        (Harness::Codex, _) => {
            let dir = match (scope, &places.codex_home) {
                (Scope::User, Some(home)) => home.clone(),
                (Scope::User, None) => places.home.join(".codex"),
                (Scope::Project, _) => places.cwd.join(".codex"),
            };
            (dir.join("hooks.json"), dir.join("config.toml"))
        }
    }
}

/// A path as UTF-8 text (settings are JSON strings), or the refusal.
fn text_of<'a>(path: &'a Path, what: &str) -> Result<&'a str, Error> {
    path.to_str().ok_or_else(|| {
        Error::invalid(format!("the {what} path {} is not UTF-8 text", path.display()))
            .at(path.display().to_string())
    })
}

/// The hook command: `'<exe>' hook <harness> --workspace '<workspace>'`,
/// both paths in single quotes.
pub fn hook_command(harness: Harness, wiring: &Wiring) -> Result<String, Error> {
    let exe = text_of(&wiring.exe, "scriptorium binary")?;
    let ws = text_of(&wiring.workspace, "workspace")?;
    Ok(format!("{} hook {} --workspace {}", shell::quote(exe), harness.name(), shell::quote(ws)))
}

/// One file's planned change: read, and its new text worked out.
struct Plan {
    /// The file.
    path: PathBuf,
    /// What it holds now.
    current: files::Current,
    /// What it is to hold.
    new: String,
}

/// Reads `path` and works out its new text with `change` (a missing file
/// read as `{}` and a line feed). A refusal names the file.
fn plan(path: &Path, change: impl Fn(&str) -> Result<String, Error>) -> Result<Plan, Error> {
    let current = files::read(path)?;
    let base = current.text.clone().unwrap_or_else(|| "{}\n".to_owned());
    let new = change(&base).map_err(|e| {
        let message = format!("{} {}; nothing was written", path.display(), e.message);
        Error { message, path: Some(path.display().to_string()), ..e }
    })?;
    Ok(Plan { path: path.to_owned(), current, new })
}

/// Carries out the plans in order. On uninstall, a regular file left as
/// an empty object is removed.
fn apply(plans: Vec<Plan>, uninstall: bool) -> Result<Vec<FileChange>, Error> {
    let mut out = Vec::new();
    for p in plans {
        let path = p.path.display().to_string();
        let (action, backup) = match &p.current.text {
            None if uninstall => (Action::Unchanged, None),
            Some(old) if *old == p.new => (Action::Unchanged, None),
            Some(_) if uninstall && !p.current.link && settings::is_empty_object(&p.new) => {
                files::remove(&p.path)?;
                (Action::Removed, None)
            }
            None => (Action::Created, files::write(&p.path, &p.current, &p.new)?),
            Some(_) => (Action::Updated, files::write(&p.path, &p.current, &p.new)?),
        };
        let backup = backup.map(|b| b.display().to_string());
        out.push(FileChange { path, changed: action != Action::Unchanged, backup, action });
    }
    Ok(out)
}

/// Registers the hooks and the MCP server of `harness` in the settings of
/// `scope`, replacing what an earlier install wrote and keeping everything
/// else. For Codex the MCP server goes in `config.toml`, which is not
/// edited: [`Report::manual`] says what to write there.
pub fn install(harness: Harness, scope: Scope, places: &Places, wiring: &Wiring) -> Result<Report, Error> {
    let (hooks_path, mcp_path) = paths(harness, scope, places);
    let command = hook_command(harness, wiring)?;
    let exe = text_of(&wiring.exe, "scriptorium binary")?;
    let ws = text_of(&wiring.workspace, "workspace")?;
    let name = harness.name();
    let hooks = plan(&hooks_path, |t| settings::put_hooks(t, name, &command, harness.events()))?;
    match harness {
        Harness::ClaudeCode => {
            let server = settings::McpServer::new(exe, ws);
            let mcp = plan(&mcp_path, |t| settings::put_mcp(t, &server))?;
            Ok(Report { files: apply(vec![hooks, mcp], false)?, manual: Vec::new() })
        }
        Harness::Codex => {
            let manual = codex_config::install_steps(&mcp_path, exe, ws);
            Ok(Report { files: apply(vec![hooks], false)?, manual })
        }
    }
}

/// Takes out what [`install`] put in the settings of `scope`, and the
/// containers that leaves empty; a file left holding nothing is removed.
/// Nothing installed: nothing changes.
pub fn uninstall(harness: Harness, scope: Scope, places: &Places) -> Result<Report, Error> {
    let (hooks_path, mcp_path) = paths(harness, scope, places);
    let name = harness.name();
    let hooks = plan(&hooks_path, |t| settings::take_hooks(t, name))?;
    match harness {
        Harness::ClaudeCode => {
            let mcp = plan(&mcp_path, settings::take_mcp)?;
            Ok(Report { files: apply(vec![hooks, mcp], true)?, manual: Vec::new() })
        }
        Harness::Codex => {
            let manual = codex_config::uninstall_steps(&mcp_path);
            Ok(Report { files: apply(vec![hooks], true)?, manual })
        }
    }
}
