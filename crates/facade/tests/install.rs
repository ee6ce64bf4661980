//! `scriptorium install|uninstall claude-code|codex` through the binary,
//! with `HOME` and the current folder set to temporary folders: every
//! other setting kept byte for byte, a second install changing nothing,
//! uninstall giving back the exact bytes, refusals writing nothing; and
//! the plugin folders under `integrations/`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use scriptorium::install::Harness;
use serde_json::{json, Value};

/// A home folder, a project folder (the current folder) and a workspace
/// path with a space and a quote in it.
struct Env {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    workspace: PathBuf,
}

fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = dir.path().join("project");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let workspace = dir.path().join("my memory/it's here");
    Env { home, project, workspace, _dir: dir }
}

impl Env {
    /// Runs the binary in the project folder with `HOME` set.
    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_scriptorium"))
            .args(args)
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .env_remove("USERPROFILE")
            .env_remove("CODEX_HOME")
            .env_remove("SCRIPTORIUM_WORKSPACE")
            .env_remove("SCRIPTORIUM_BACKEND")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .output()
            .unwrap()
    }

    /// Runs `args --json` (plus `--workspace` for install) and returns the
    /// report, asserting success.
    fn ok(&self, args: &[&str]) -> Value {
        let mut all: Vec<&str> = args.to_vec();
        all.push("--json");
        let ws = self.workspace.to_str().unwrap();
        if args[0] == "install" {
            all.extend(["--workspace", ws]);
        }
        let out = self.run(&all);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        serde_json::from_str(&text).unwrap()
    }

    fn settings(&self) -> PathBuf {
        self.home.join(".claude/settings.json")
    }

    fn claude_json(&self) -> PathBuf {
        self.home.join(".claude.json")
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

fn parse(path: &Path) -> Value {
    serde_json::from_str(&read(path)).unwrap()
}

/// The file entries of a report, as `(path, changed, backup)`.
fn files(report: &Value) -> Vec<(String, bool, Option<String>)> {
    report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_owned(),
                f["changed"].as_bool().unwrap(),
                f["backup"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

fn backup(path: &Path) -> PathBuf {
    PathBuf::from(format!("{}{}", path.display(), scriptorium::install::BACKUP_SUFFIX))
}

/// Whether a hook command is one install wrote for `harness`.
fn is_ours(command: &str, harness: &str) -> bool {
    command.contains(&format!("' hook {harness} --workspace '"))
}

/// `settings` without our hooks (and the containers they alone filled).
fn without_ours(mut settings: Value, harness: &str) -> Value {
    let Some(hooks) = settings.get_mut("hooks").and_then(Value::as_object_mut) else { return settings };
    for groups in hooks.values_mut() {
        let list = groups.as_array_mut().unwrap();
        list.retain(|g| {
            !g["hooks"]
                .as_array()
                .unwrap()
                .iter()
                .any(|h| is_ours(h["command"].as_str().unwrap_or(""), harness))
        });
    }
    hooks.retain(|_, groups| !groups.as_array().unwrap().is_empty());
    if hooks.is_empty() {
        settings.as_object_mut().unwrap().remove("hooks");
    }
    settings
}

/// Asserts that every line of `old` is in `new`, in order, as it was or
/// with a comma added (the line before an appended entry).
fn assert_lines_kept(old: &str, new: &str) {
    let mut new_lines = new.lines();
    for line in old.lines() {
        let with_comma = format!("{line},");
        assert!(
            new_lines.any(|n| n == line || n == with_comma),
            "line {line:?} of the old file is missing or changed in:\n{new}"
        );
    }
}

/// A Claude Code settings file with hooks of its own in several events,
/// two-space indentation and non-ASCII text.
const SETTINGS: &str = r#"{
  "model": "opus",
  "permissions": {
    "allow": ["Bash(cargo test:*)"]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "~/bin/check-bash.sh"
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "notify-send 'Claude a fini — « terminé »'"
          }
        ]
      }
    ]
  },
  "env": {"GREETING": "grüß dich ✓"}
}
"#;

const CLAUDE_JSON: &str = r#"{
  "numStartups": 42,
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "gh-mcp",
      "args": []
    }
  },
  "projects": {
    "/src/x": {"allowedTools": []}
  }
}"#;

/// The workspace as the hook command quotes it: in single quotes, each
/// quote written `'\''`.
fn quoted(p: &Path) -> String {
    format!("'{}'", p.to_str().unwrap().replace('\'', r"'\''"))
}

#[test]
fn claude_code_user_install_keeps_everything_else_and_uninstall_restores_it() {
    let e = env();
    write(&e.settings(), SETTINGS);
    write(&e.claude_json(), CLAUDE_JSON);
    let report = e.ok(&["install", "claude-code"]);
    let settings_backup = backup(&e.settings()).display().to_string();
    let claude_backup = backup(&e.claude_json()).display().to_string();
    assert_eq!(
        files(&report),
        [
            (e.settings().display().to_string(), true, Some(settings_backup.clone())),
            (e.claude_json().display().to_string(), true, Some(claude_backup.clone())),
        ]
    );
    assert_eq!(read(Path::new(&settings_backup)), SETTINGS);
    assert_eq!(read(Path::new(&claude_backup)), CLAUDE_JSON);

    // Our hooks: one group per event, last in it, naming the binary and the
    // workspace by absolute paths in single quotes.
    let installed = parse(&e.settings());
    let command = format!(
        "{} hook claude-code --workspace {}",
        quoted(Path::new(env!("CARGO_BIN_EXE_scriptorium"))),
        quoted(&e.workspace)
    );
    for &(event, timeout) in Harness::ClaudeCode.events() {
        let groups = installed["hooks"][event].as_array().unwrap();
        assert_eq!(
            groups.last().unwrap(),
            &json!({"hooks": [{"type": "command", "command": command, "timeout": timeout}]}),
            "{event}"
        );
    }
    // Everything else is as it was.
    let original: Value = serde_json::from_str(SETTINGS).unwrap();
    assert_eq!(without_ours(installed, "claude-code"), original);
    assert_lines_kept(SETTINGS, &read(&e.settings()));
    let mut claude = parse(&e.claude_json());
    assert_eq!(
        claude["mcpServers"]["scriptorium"],
        json!({"type": "stdio", "command": env!("CARGO_BIN_EXE_scriptorium"),
               "args": ["mcp", "--workspace", e.workspace.to_str().unwrap()]})
    );
    claude["mcpServers"].as_object_mut().unwrap().remove("scriptorium");
    assert_eq!(claude, serde_json::from_str::<Value>(CLAUDE_JSON).unwrap());
    assert_lines_kept(CLAUDE_JSON, &read(&e.claude_json()));

    // Again: no byte changes and no backup is written.
    let (settings_now, claude_now) = (read(&e.settings()), read(&e.claude_json()));
    std::fs::remove_file(&settings_backup).unwrap();
    let again = e.ok(&["install", "claude-code"]);
    assert!(files(&again).iter().all(|(_, changed, backup)| !changed && backup.is_none()), "{again}");
    assert_eq!(read(&e.settings()), settings_now);
    assert_eq!(read(&e.claude_json()), claude_now);
    assert!(!Path::new(&settings_backup).exists());

    // Uninstall gives back the exact bytes; a second one changes nothing.
    let removed = e.ok(&["uninstall", "claude-code"]);
    assert!(files(&removed).iter().all(|(_, changed, _)| *changed), "{removed}");
    assert_eq!(read(&e.settings()), SETTINGS);
    assert_eq!(read(&e.claude_json()), CLAUDE_JSON);
    let nothing = e.ok(&["uninstall", "claude-code"]);
    assert!(files(&nothing).iter().all(|(_, changed, _)| !changed), "{nothing}");
    assert!(!e.project.join(".claude").exists() && !e.project.join(".mcp.json").exists());
}

#[cfg(unix)]
#[test]
fn the_hook_command_is_one_argument_per_path_for_the_shell() {
    let e = env();
    e.ok(&["install", "claude-code"]);
    let command =
        parse(&e.settings())["hooks"]["Stop"][0]["hooks"][0]["command"].as_str().unwrap().to_owned();
    // The shell splits the command (without running it) into its words.
    let out = Command::new("sh")
        .args(["-c", "eval \"set -- $1\"; printf '%s\\n' \"$@\"", "sh", &command])
        .output()
        .unwrap();
    let words = String::from_utf8(out.stdout).unwrap();
    let expected = format!(
        "{}\nhook\nclaude-code\n--workspace\n{}\n",
        env!("CARGO_BIN_EXE_scriptorium"),
        e.workspace.display()
    );
    assert_eq!(words, expected);
}

#[test]
fn project_scope_writes_under_the_current_folder_and_uninstall_removes_what_it_created() {
    let e = env();
    let report = e.ok(&["install", "claude-code", "--scope", "project"]);
    let settings = e.project.join(".claude/settings.json");
    let mcp = e.project.join(".mcp.json");
    assert_eq!(
        files(&report),
        [(settings.display().to_string(), true, None), (mcp.display().to_string(), true, None)]
    );
    assert!(read(&settings).ends_with("}\n") && read(&settings).starts_with("{\n  \"hooks\": {\n"));
    assert_eq!(parse(&mcp)["mcpServers"]["scriptorium"]["args"][0], "mcp");
    assert!(std::fs::read_dir(&e.home).unwrap().next().is_none(), "nothing in the home folder");
    e.ok(&["uninstall", "claude-code", "--scope", "project"]);
    assert!(!settings.exists() && !mcp.exists(), "files holding only ours are removed");
    let human = e.run(&["uninstall", "claude-code", "--scope", "project"]);
    assert_eq!(
        String::from_utf8(human.stdout).unwrap(),
        format!("unchanged {}\nunchanged {}\n", settings.display(), mcp.display())
    );
}

#[test]
fn indentation_final_newline_and_unicode_are_kept() {
    for original in [
        "{\n    \"theme\": \"dark\",\n    \"hooks\": {\n        \"SessionStart\": [\n            {\n                \"matcher\": \"startup\",\n                \"hooks\": [{\"type\": \"command\", \"command\": \"echo été\"}]\n            }\n        ]\n    }\n}",
        "{\n\t\"note\": \"日本語 \\u00e9 \\ud83d\\ude00\",\n\t\"n\": 1.50\n}\n",
        "{\"compact\":true}",
        "{}",
    ] {
        let e = env();
        write(&e.settings(), original);
        e.ok(&["install", "claude-code"]);
        let installed = read(&e.settings());
        assert_eq!(installed.ends_with('\n'), original.ends_with('\n'), "{installed}");
        if original.contains("\n    \"") {
            assert!(installed.contains("\n            \"SessionEnd\": [") || installed.contains("\n        \"SessionEnd\": ["));
            assert!(!installed.contains("\n  \"") && !installed.contains('\t'), "four spaces: {installed}");
        }
        if original.contains('\t') {
            assert!(installed.contains("\n\t\"hooks\": {\n\t\t\"SessionStart\""), "tabs: {installed}");
        }
        if original.contains('\n') {
            assert_lines_kept(original, &installed);
        }
        e.ok(&["uninstall", "claude-code"]);
        if original == "{}" {
            assert!(!e.settings().exists(), "a file left holding nothing is removed");
        } else {
            assert_eq!(read(&e.settings()), original);
        }
    }
}

#[test]
fn another_workspace_replaces_ours() {
    let e = env();
    write(&e.settings(), SETTINGS);
    e.ok(&["install", "claude-code"]);
    let other = e.project.join("other");
    let out = e.run(&["install", "claude-code", "--workspace", other.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let text = read(&e.settings());
    assert!(text.contains(&quoted(&other)) && !text.contains("it'\\\\''s here"), "{text}");
    let stop = parse(&e.settings())["hooks"]["Stop"].as_array().unwrap().len();
    assert_eq!(stop, 2, "one group of ours, not two");
    assert_eq!(parse(&e.claude_json())["mcpServers"]["scriptorium"]["args"][2], other.to_str().unwrap());
    e.ok(&["uninstall", "claude-code"]);
    assert_eq!(read(&e.settings()), SETTINGS);
    assert!(!e.claude_json().exists());
}

#[test]
fn a_malformed_file_is_refused_with_nothing_written() {
    let e = env();
    let bad = "{\n  \"model\": \"opus\",\n}\n";
    write(&e.settings(), bad);
    let out = e.run(&["install", "claude-code"]);
    assert_eq!(out.status.code(), Some(1));
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["error"]["code"], "INVALID_ARGUMENT");
    assert_eq!(err["error"]["path"], e.settings().display().to_string());
    assert_eq!(err["error"]["line"], 3);
    assert!(err["error"]["message"].as_str().unwrap().contains("column"), "{err}");
    assert!(out.stdout.is_empty());
    assert_eq!(read(&e.settings()), bad);
    assert!(!backup(&e.settings()).exists() && !e.claude_json().exists(), "nothing written");

    // Not an object; a hooks value of the wrong shape; a foreign server entry.
    for (settings, claude, code) in [
        ("[]", CLAUDE_JSON, "INVALID_ARGUMENT"),
        ("{\"hooks\": {\"Stop\": {}}}", CLAUDE_JSON, "INVALID_ARGUMENT"),
        ("{}", "{\"mcpServers\": {\"scriptorium\": {\"command\": \"x\"}}}", "CONFLICT"),
    ] {
        write(&e.settings(), settings);
        write(&e.claude_json(), claude);
        let out = e.run(&["install", "claude-code"]);
        let err: Value = serde_json::from_slice(&out.stderr).unwrap();
        assert_eq!(err["error"]["code"], code, "{settings}");
        assert_eq!((read(&e.settings()), read(&e.claude_json())), (settings.to_owned(), claude.to_owned()));
        assert!(!backup(&e.settings()).exists());
    }
}

#[cfg(unix)]
#[test]
fn a_link_is_followed_to_its_file_and_kept() {
    let e = env();
    let real = e.project.join("dotfiles/settings.json");
    write(&real, SETTINGS);
    std::fs::create_dir_all(e.settings().parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&real, e.settings()).unwrap();
    e.ok(&["install", "claude-code"]);
    assert!(std::fs::symlink_metadata(e.settings()).unwrap().file_type().is_symlink());
    assert!(read(&real).contains("hook claude-code"));
    e.ok(&["uninstall", "claude-code"]);
    assert_eq!(read(&real), SETTINGS);
    // A link to a folder is refused.
    std::fs::remove_file(e.settings()).unwrap();
    std::os::unix::fs::symlink(&e.project, e.settings()).unwrap();
    let out = e.run(&["install", "claude-code"]);
    assert_eq!(out.status.code(), Some(1));
}

const CODEX_HOOKS: &str = r#"{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "^Bash$",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/bin/python3 ~/.codex/hooks/policy.py",
            "timeout": 30
          }
        ]
      }
    ]
  }
}
"#;

#[test]
fn codex_hooks_and_the_config_lines_to_add() {
    let e = env();
    let hooks = e.home.join(".codex/hooks.json");
    let config = e.home.join(".codex/config.toml");
    write(&hooks, CODEX_HOOKS);
    write(&config, "model = \"o3\"\n");
    let report = e.ok(&["install", "codex"]);
    assert_eq!(
        files(&report),
        [(hooks.display().to_string(), true, Some(backup(&hooks).display().to_string()))]
    );
    let installed = parse(&hooks);
    let events: Vec<&str> = installed["hooks"].as_object().unwrap().keys().map(String::as_str).collect();
    let mut expected: Vec<&str> = Harness::Codex.events().iter().map(|(e, _)| *e).collect();
    expected.push("PreToolUse");
    expected.sort_unstable();
    assert_eq!(events, expected);
    let command = installed["hooks"]["Stop"][0]["hooks"][0]["command"].as_str().unwrap();
    assert!(is_ours(command, "codex") && command.ends_with(&quoted(&e.workspace)), "{command}");
    assert_eq!(without_ours(installed, "codex"), serde_json::from_str::<Value>(CODEX_HOOKS).unwrap());
    // config.toml is read, never written: the lines to add are in the report.
    assert_eq!(read(&config), "model = \"o3\"\n");
    let manual = &report["manual"][0];
    assert_eq!(manual["path"], config.display().to_string());
    assert_eq!(manual["action"], "add");
    let lines: toml::Table = manual["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
        .parse()
        .unwrap();
    assert_eq!(
        lines["mcp_servers"]["scriptorium"]["command"].as_str(),
        Some(env!("CARGO_BIN_EXE_scriptorium"))
    );
    assert_eq!(lines["mcp_servers"]["scriptorium"]["args"][2].as_str(), e.workspace.to_str());

    // Once the table is there, nothing is left to do; uninstall says to remove it.
    let table = manual["lines"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect::<Vec<_>>();
    write(&config, &format!("model = \"o3\"\n{}\n", table.join("\n")));
    let again = e.ok(&["install", "codex"]);
    assert_eq!(
        again,
        json!({"files": [{"path": hooks.display().to_string(), "changed": false, "backup": null}]})
    );
    let removed = e.ok(&["uninstall", "codex"]);
    assert_eq!(read(&hooks), CODEX_HOOKS);
    assert_eq!(removed["manual"][0]["action"], "remove");
    assert!(!e.project.join(".codex").exists());
}

#[test]
fn codex_project_scope_and_codex_home() {
    let e = env();
    e.ok(&["install", "codex", "--scope", "project"]);
    let hooks = e.project.join(".codex/hooks.json");
    assert!(is_ours(
        parse(&hooks)["hooks"]["SessionStart"][0]["hooks"][0]["command"].as_str().unwrap(),
        "codex"
    ));
    assert!(!e.home.join(".codex").exists());
    e.ok(&["uninstall", "codex", "--scope", "project"]);
    assert!(!hooks.exists());

    let codex_home = e.project.join("codex-home");
    let out = Command::new(env!("CARGO_BIN_EXE_scriptorium"))
        .args(["install", "codex", "--workspace", "/w"])
        .current_dir(&e.project)
        .env("HOME", &e.home)
        .env("CODEX_HOME", &codex_home)
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(codex_home.join("hooks.json").exists() && !e.home.join(".codex").exists());
    let human = String::from_utf8(out.stdout).unwrap();
    assert!(
        human.starts_with(&format!("created {}\nadd to ", codex_home.join("hooks.json").display())),
        "{human}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("/hooks"), "the trust step is told");
}

/// The plugin folders: manifests, hooks naming every event install
/// registers (with the same timeouts), and the MCP server.
#[test]
fn the_plugin_folders_name_every_event() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../integrations");
    for (harness, manifest) in
        [(Harness::ClaudeCode, ".claude-plugin/plugin.json"), (Harness::Codex, ".codex-plugin/plugin.json")]
    {
        let dir = root.join(harness.name());
        let plugin = parse(&dir.join(manifest));
        assert_eq!(plugin["name"], "scriptorium");
        assert!(plugin["version"].is_string() && plugin["description"].is_string());
        let hooks = parse(&dir.join("hooks/hooks.json"));
        assert_eq!(
            hooks.as_object().unwrap().len(),
            1,
            "only \"hooks\" at the top (Codex refuses other keys)"
        );
        let events = hooks["hooks"].as_object().unwrap();
        assert_eq!(events.len(), harness.events().len());
        for &(event, timeout) in harness.events() {
            assert_eq!(
                events[event],
                json!([{"hooks": [{"type": "command", "command": format!("scriptorium hook {}", harness.name()), "timeout": timeout}]}]),
                "{} {event}",
                harness.name()
            );
        }
        let mcp = parse(&dir.join(".mcp.json"));
        assert_eq!(mcp["mcpServers"]["scriptorium"]["command"], "scriptorium");
        assert_eq!(mcp["mcpServers"]["scriptorium"]["args"], json!(["mcp"]));
        assert!(dir.join("README.md").exists());
    }
}
