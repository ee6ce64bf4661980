//! Codex's `config.toml`, read and never written: no TOML editor that
//! keeps every other byte is among this workspace's dependencies, so the
//! MCP server table (and a feature flag turned off) is told to the person
//! as the lines to write, and only when the file does not already say it.

use std::path::Path;

use super::settings::SERVER_NAME;
use super::Manual;

/// The file as TOML: an empty table when it is missing, `None` when it
/// cannot be read or parsed (then nothing is known about it).
fn table(path: &Path) -> Option<toml::Table> {
    match std::fs::read_to_string(path) {
        Ok(text) => text.parse().ok(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(toml::Table::new()),
        Err(_) => None,
    }
}

/// `s` as a TOML basic string (JSON's escapes are TOML's, and DEL, which
/// TOML wants escaped, is).
fn toml_string(s: &str) -> String {
    serde_json::to_string(s).expect("serializing a string cannot fail").replace('\u{7f}', "\\u007f")
}

/// Our server table, if the file has one: `mcp_servers.scriptorium`.
fn server(table: &toml::Table) -> Option<&toml::Table> {
    table.get("mcp_servers")?.as_table()?.get(SERVER_NAME)?.as_table()
}

/// What to write by hand after installing: the server table when the
/// file lacks it or has another one, and `hooks = true` when the file
/// turns Codex's hooks off.
pub(crate) fn install_steps(path: &Path, exe: &str, workspace: &str) -> Vec<Manual> {
    let lines = vec![
        format!("[mcp_servers.{SERVER_NAME}]"),
        format!("command = {}", toml_string(exe)),
        format!("args = [\"mcp\", \"--workspace\", {}]", toml_string(workspace)),
    ];
    let path_text = path.display().to_string();
    let Some(table) = table(path) else {
        return vec![Manual { path: path_text, action: "add", lines }];
    };
    let mut steps = Vec::new();
    match server(&table) {
        None => steps.push(Manual { path: path_text.clone(), action: "add", lines }),
        Some(s) => {
            let args: Vec<&str> = s
                .get("args")
                .and_then(|a| a.as_array())
                .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
                .unwrap_or_default();
            let same = s.get("command").and_then(|c| c.as_str()) == Some(exe)
                && args == ["mcp", "--workspace", workspace];
            if !same {
                steps.push(Manual { path: path_text.clone(), action: "replace", lines });
            }
        }
    }
    let features = table.get("features").and_then(|f| f.as_table());
    for key in ["hooks", "codex_hooks"] {
        if features.and_then(|f| f.get(key)).and_then(|v| v.as_bool()) == Some(false) {
            steps.push(Manual {
                path: path_text.clone(),
                action: "set",
                lines: vec!["[features]".to_owned(), format!("{key} = true")],
            });
        }
    }
    steps
}

/// What to take out by hand after uninstalling: our server table, when
/// the file has one whose `args` start with `"mcp"`.
pub(crate) fn uninstall_steps(path: &Path) -> Vec<Manual> {
    let ours = table(path).as_ref().and_then(server).is_some_and(|s| {
        s.get("args").and_then(|a| a.as_array()).and_then(|a| a.first()).and_then(|v| v.as_str())
            == Some("mcp")
    });
    if !ours {
        return Vec::new();
    }
    vec![Manual {
        path: path.display().to_string(),
        action: "remove",
        lines: vec![format!("[mcp_servers.{SERVER_NAME}]")],
    }]
}
