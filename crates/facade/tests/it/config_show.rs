//! `config show`: every setting with its value and where it came from
//! (default, user, workspace, env, flag), secrets never printed.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// Runs the binary with a clean environment of its own: `XDG_CONFIG_HOME`
/// at `home`, no `SCRIPTORIUM_*` of the caller's, plus `env`.
fn run(args: &[&str], home: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_scriptorium"));
    cmd.args(args).env("XDG_CONFIG_HOME", home).stdin(Stdio::null());
    for (k, _) in std::env::vars() {
        if k.starts_with("SCRIPTORIUM_") {
            cmd.env_remove(k);
        }
    }
    cmd.envs(env.iter().copied());
    cmd.output().unwrap()
}

/// The settings `config show --json` prints, by key: (value, source).
fn settings(out: &Output) -> Vec<(String, Value, String)> {
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["settings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            assert_eq!(s.as_object().unwrap().len(), 3, "{s}");
            (
                s["key"].as_str().unwrap().to_owned(),
                s["value"].clone(),
                s["source"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn get<'a>(all: &'a [(String, Value, String)], key: &str) -> (&'a Value, &'a str) {
    let (_, v, s) = all.iter().find(|(k, _, _)| k == key).unwrap_or_else(|| panic!("{key} missing"));
    (v, s.as_str())
}

fn user_file(home: &Path, text: &str) {
    std::fs::create_dir_all(home.join("scriptorium")).unwrap();
    std::fs::write(home.join("scriptorium/config.toml"), text).unwrap();
}

#[test]
fn defaults_are_listed_with_their_source_and_nothing_is_created() {
    let home = tempfile::tempdir().unwrap();
    let ws = home.path().join("ws");
    let w = ws.to_str().unwrap();
    let all = settings(&run(&["config", "show", "--workspace", w, "--json"], home.path(), &[]));
    assert_eq!(get(&all, "workspace"), (&Value::from(w), "flag"));
    assert_eq!(get(&all, "memory.writer.threshold"), (&Value::from(16000), "default"));
    assert_eq!(get(&all, "memory.reflection.every_steps"), (&Value::from(25), "default"));
    assert_eq!(get(&all, "memory.dream.max_conversations"), (&Value::from(10), "default"));
    assert_eq!(get(&all, "memory.self.budget"), (&Value::from(500), "default"));
    assert_eq!(get(&all, "memory.self.edit_notice"), (&Value::from(true), "default"));
    assert_eq!(get(&all, "memory.core_budget"), (&Value::from(2000), "default"));
    assert_eq!(get(&all, "memory.writer.model"), (&Value::Null, "default"));
    let keys: Vec<&str> = all.iter().map(|(k, _, _)| k.as_str()).collect();
    assert!(!keys.contains(&"memory.writer.api_key"), "no key is set: {keys:?}");
    let mut unique = keys.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), keys.len(), "each key once");
    assert!(!ws.exists(), "showing the configuration creates nothing");
}

#[test]
fn each_setting_names_the_layer_it_came_from() {
    let home = tempfile::tempdir().unwrap();
    user_file(
        home.path(),
        "[memory.writer]\nthreshold = 900\nmodel = \"from-user\"\n[memory.self]\nbudget = 300\n",
    );
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("scriptorium.toml"),
        "[memory]\ncore_budget = 1500\n[memory.self]\nbudget = 200\nedit_notice = false\n[memory.people]\nmax_entries = 7\n",
    )
    .unwrap();
    let w = ws.path().to_str().unwrap();
    let env = [("SCRIPTORIUM_MODEL_URL", "http://127.0.0.1:9/v1"), ("SCRIPTORIUM_WORKSPACE", w)];
    let all = settings(&run(&["config", "show", "--json"], home.path(), &env));
    assert_eq!(get(&all, "workspace"), (&Value::from(w), "env"));
    assert_eq!(get(&all, "memory.writer.threshold"), (&Value::from(900), "user"));
    assert_eq!(get(&all, "memory.writer.model"), (&Value::from("from-user"), "user"));
    // The workspace's file wins over the user's.
    assert_eq!(get(&all, "memory.self.budget"), (&Value::from(200), "workspace"));
    assert_eq!(get(&all, "memory.self.edit_notice"), (&Value::from(false), "workspace"));
    assert_eq!(get(&all, "memory.people.max_entries"), (&Value::from(7), "workspace"));
    assert_eq!(get(&all, "memory.core_budget"), (&Value::from(1500), "workspace"));
    // A setting from the environment is listed under its key.
    assert_eq!(get(&all, "memory.writer.model_url"), (&Value::from("http://127.0.0.1:9/v1"), "env"));
    // A flag wins over everything.
    let all = settings(&run(
        &["config", "show", "--workspace", w, "--json", "--model-name", "from-flag"],
        home.path(),
        &env,
    ));
    assert_eq!(get(&all, "memory.writer.model"), (&Value::from("from-flag"), "flag"));
    assert_eq!(get(&all, "workspace"), (&Value::from(w), "flag"));
}

#[test]
fn secrets_are_never_printed() {
    let home = tempfile::tempdir().unwrap();
    user_file(home.path(), "[memory.writer]\napi_key_env = \"MY_WRITER_KEY\"\n");
    let ws = tempfile::tempdir().unwrap();
    let w = ws.path().to_str().unwrap();
    let env = [
        ("MY_WRITER_KEY", "sk-writer-secret"),
        ("SCRIPTORIUM_API_KEY", "sk-embedding-secret"),
        ("SCRIPTORIUM_MODEL_URL", "https://alice:hunter2@models.example/v1"),
        ("SCRIPTORIUM_EMBEDDING_URL", "https://bob:swordfish@emb.example/v1"),
    ];
    for json in [true, false] {
        let mut args = vec!["config", "show", "--workspace", w];
        if json {
            args.push("--json");
        }
        let out = run(&args, home.path(), &env);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout.clone()).unwrap() + &String::from_utf8_lossy(&out.stderr);
        for secret in ["sk-writer-secret", "sk-embedding-secret", "hunter2", "swordfish", "alice", "bob"] {
            assert!(!text.contains(secret), "{secret} printed: {text}");
        }
        if json {
            let all = settings(&out);
            assert_eq!(get(&all, "memory.writer.api_key"), (&Value::from("***"), "env"));
            assert_eq!(get(&all, "memory.embeddings.api_key"), (&Value::from("***"), "env"));
            assert_eq!(get(&all, "memory.writer.api_key_env"), (&Value::from("MY_WRITER_KEY"), "user"));
        } else {
            assert!(text.contains("memory.writer.api_key "), "{text}");
            assert!(text.contains("\"***\""), "{text}");
        }
    }
}

#[test]
fn memory_off_is_shown_not_refused_and_bad_settings_are_refused_with_their_file() {
    let home = tempfile::tempdir().unwrap();
    user_file(home.path(), "[memory]\nbackend = \"none\"\n");
    let ws = tempfile::tempdir().unwrap();
    let w = ws.path().to_str().unwrap();
    let all = settings(&run(&["config", "show", "--workspace", w, "--json"], home.path(), &[]));
    assert_eq!(get(&all, "memory.backend"), (&Value::from("none"), "user"));
    for (text, needle) in [
        ("[memory.dream]\nmax_conversations = 0\n", "memory.dream.max_conversations must be at least 1"),
        ("[memory.dream]\nmax_bytes = -1\n", "memory.dream.max_bytes must be a whole number"),
        ("[memory.self]\nedit_notice = \"yes\"\n", "memory.self.edit_notice must be true or false"),
        ("[memory.self]\ncolour = 1\n", "unknown key memory.self.colour"),
        ("[memory]\nreflection = 3\n", "[memory.reflection] must be a table"),
        ("[memory.people]\nmax_entry_chars = 1.5\n", "memory.people.max_entry_chars must be a whole number"),
    ] {
        std::fs::write(ws.path().join("scriptorium.toml"), text).unwrap();
        let out = run(&["config", "show", "--workspace", w, "--json"], home.path(), &[]);
        assert_eq!(out.status.code(), Some(1), "{text}");
        let err: Value = serde_json::from_slice(&out.stderr).unwrap();
        assert_eq!(err["error"]["code"], "INVALID_ARGUMENT", "{text}");
        assert!(err["error"]["message"].as_str().unwrap().contains(needle), "{text}: {err}");
        assert!(err["error"]["path"].as_str().unwrap().ends_with("scriptorium.toml"), "{err}");
    }
}

#[test]
fn the_text_form_lists_what_the_json_form_lists() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let w = ws.path().to_str().unwrap();
    let all = settings(&run(&["config", "show", "--workspace", w, "--json"], home.path(), &[]));
    let out = run(&["config", "show", "--workspace", w], home.path(), &[]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), all.len());
    for ((key, value, source), line) in all.iter().zip(text.lines()) {
        assert!(line.starts_with(key.as_str()), "{line}");
        assert!(line.ends_with(&format!("= {value}  ({source})")), "{line}");
    }
}

#[test]
fn a_model_url_without_a_name_is_refused_without_its_password() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let w = ws.path().to_str().unwrap();
    let url = "http://user:HUNTER2@127.0.0.1:9/v1";
    for (args, env) in [
        (vec!["write", "--workspace", w, "--force"], vec![("SCRIPTORIUM_MODEL_URL", url)]),
        (vec!["write", "--workspace", w, "--force", "--model-url", url], vec![]),
    ] {
        let out = run(&args, home.path(), &env);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("INVALID_ARGUMENT") && err.contains("without a model name"), "{err}");
        assert!(!err.contains("HUNTER2") && err.contains("***@"), "{err}");
    }
}
