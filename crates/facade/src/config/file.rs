//! Reading the settings from the configuration files and the environment,
//! each remembered with where it came from.

use std::path::{Path, PathBuf};

use scriptorium_transaction::layout::CONFIG_FILE;

use super::{http_url, read_file, user_only, whole, Config, ConfigError, Origin};

/// The tables of `[memory]` and their keys; `memory.backend`,
/// `memory.core_budget`, `memory.history` and `memory.history_author` are
/// plain keys.
const TABLES: [(&str, &[&str]); 8] = [
    ("writer", &["model", "model_url", "api_key_env", "threshold", "idle_secs", "nightly_hour"]),
    ("embeddings", &["url", "model", "api_key_env"]),
    ("hooks", &["max_context_chars", "write_deadline_secs"]),
    ("nudge", &["every_user_turns"]),
    ("reflection", &["every_steps"]),
    ("dream", &["max_conversations", "max_bytes"]),
    ("self", &["budget", "edit_notice"]),
    ("people", &["max_entries", "max_entry_chars"]),
];

/// The plain keys of `[memory]`.
const PLAIN: [&str; 4] = ["backend", "core_budget", "history", "history_author"];

impl Config {
    pub(super) fn merge_file(&mut self, path: &Path, in_workspace: bool) -> Result<(), ConfigError> {
        let Some(text) = read_file(path)? else { return Ok(()) };
        let bad = |message: String| ConfigError { path: path.to_owned(), message };
        let v: toml::Table = text.parse().map_err(|e: toml::de::Error| bad(e.message().to_owned()))?;
        if let Some(k) = v.keys().find(|k| *k != "memory") {
            return Err(bad(format!("unknown key {k} (settings live under [memory])")));
        }
        match v.get("memory") {
            None => Ok(()),
            Some(toml::Value::Table(memory)) => self.merge_memory(memory, in_workspace).map_err(bad),
            Some(_) => Err(bad("[memory] must be a table".to_owned())),
        }
    }

    /// The `[memory]` table of a file. The error is what is wrong with it.
    fn merge_memory(&mut self, memory: &toml::Table, in_workspace: bool) -> Result<(), String> {
        let origin = if in_workspace { Origin::Workspace } else { Origin::User };
        for (k, v) in memory {
            if PLAIN.contains(&k.as_str()) {
                self.merge_plain(k, v, in_workspace)?;
                continue;
            }
            let Some((_, keys)) = TABLES.iter().find(|(t, _)| t == k) else {
                return Err(format!("unknown key memory.{k}"));
            };
            let table = v.as_table().ok_or_else(|| format!("[memory.{k}] must be a table"))?;
            for (sub, value) in table {
                if !keys.contains(&sub.as_str()) {
                    return Err(format!("unknown key memory.{k}.{sub}"));
                }
                let key = format!("memory.{k}.{sub}");
                user_only(&key, in_workspace)?;
                self.set(&key, value)?;
                self.origins.insert(key, origin);
            }
        }
        Ok(())
    }

    /// `memory.backend`, or a key the transaction layer reads from the
    /// workspace's file only (checked here, shown by `config show`).
    fn merge_plain(&mut self, key: &str, v: &toml::Value, in_workspace: bool) -> Result<(), String> {
        let origin = if in_workspace { Origin::Workspace } else { Origin::User };
        match key {
            "backend" => match v.as_str() {
                Some(s @ ("local" | "none")) => self.backend = s.to_owned(),
                _ => return Err(format!("memory.backend must be \"local\" or \"none\", not {v}")),
            },
            "core_budget" => {
                if !in_workspace {
                    return Err(format!(
                        "memory.core_budget belongs in the workspace's {CONFIG_FILE}, so every process renders the same core.md"
                    ));
                }
                self.core_budget = scriptorium_transaction::layout::budget_of(v)?;
            }
            _ => {
                if !in_workspace {
                    return Err(format!(
                        "memory.{key} belongs in the workspace's {CONFIG_FILE}: the history is the workspace's"
                    ));
                }
                if key == "history" {
                    self.history = scriptorium_transaction::history::enabled_of(v)?;
                } else {
                    let (name, email) = scriptorium_transaction::history::author_of(v)?;
                    self.history_author = format!("{name} <{email}>");
                }
            }
        }
        self.origins.insert(format!("memory.{key}"), origin);
        Ok(())
    }

    /// One setting of a table, by its full key.
    fn set(&mut self, key: &str, v: &toml::Value) -> Result<(), String> {
        let string = || match v {
            toml::Value::String(s) => Ok(s.clone()),
            other => Err(format!("{key} must be a string, not {other}")),
        };
        match key {
            "memory.writer.model" => self.model = Some(string()?),
            "memory.writer.model_url" => self.model_url = Some(http_url(&string()?, key)?),
            "memory.writer.api_key_env" => self.api_key_env = string()?,
            "memory.writer.threshold" => self.threshold = Some(whole(v, key)?),
            "memory.writer.idle_secs" => self.idle_secs = Some(whole(v, key)? as u64),
            "memory.writer.nightly_hour" => {
                let h = whole(v, key)?;
                if h > 23 {
                    return Err(format!("{key} must be from 0 to 23, not {h}"));
                }
                self.nightly_hour = Some(h as u8);
            }
            "memory.embeddings.url" => self.embedding_url = Some(http_url(&string()?, key)?),
            "memory.embeddings.model" => self.embedding_model = Some(string()?),
            "memory.embeddings.api_key_env" => self.embedding_key_env = string()?,
            "memory.hooks.max_context_chars" => self.max_context_chars = whole(v, key)?,
            "memory.hooks.write_deadline_secs" => self.write_deadline_secs = whole(v, key)? as u64,
            "memory.nudge.every_user_turns" => self.nudge_every_user_turns = whole(v, key)?,
            "memory.reflection.every_steps" => self.reflection_every_steps = whole(v, key)?,
            "memory.dream.max_conversations" => self.dream_max_conversations = at_least_one(v, key)?,
            "memory.dream.max_bytes" => self.dream_max_bytes = at_least_one(v, key)? as u64,
            "memory.self.budget" => self.self_budget = whole(v, key)?,
            "memory.self.edit_notice" => {
                self.self_edit_notice =
                    v.as_bool().ok_or_else(|| format!("{key} must be true or false, not {v}"))?
            }
            "memory.people.max_entries" => self.people_max_entries = at_least_one(v, key)?,
            "memory.people.max_entry_chars" => self.people_max_entry_chars = at_least_one(v, key)?,
            _ => return Err(format!("unknown key {key}")),
        }
        Ok(())
    }

    pub(super) fn merge_env(&mut self) -> Result<(), ConfigError> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let bad = |k: &str, message: String| ConfigError { path: PathBuf::from(format!("${k}")), message };
        if let Some(b) = env("SCRIPTORIUM_BACKEND") {
            match b.as_str() {
                "local" | "none" => self.backend = b,
                _ => {
                    return Err(bad(
                        "SCRIPTORIUM_BACKEND",
                        format!("SCRIPTORIUM_BACKEND must be \"local\" or \"none\", not {b:?}"),
                    ))
                }
            }
            self.origins.insert("memory.backend".to_owned(), Origin::Env);
        }
        if let Some(m) = env("SCRIPTORIUM_MODEL_NAME") {
            self.model = Some(m);
            self.origins.insert("memory.writer.model".to_owned(), Origin::Env);
        }
        if let Some(u) = env("SCRIPTORIUM_MODEL_URL") {
            self.model_url =
                Some(http_url(&u, "SCRIPTORIUM_MODEL_URL").map_err(|m| bad("SCRIPTORIUM_MODEL_URL", m))?);
            self.origins.insert("memory.writer.model_url".to_owned(), Origin::Env);
        }
        if let Some(u) = env("SCRIPTORIUM_EMBEDDING_URL") {
            self.embedding_url = Some(
                http_url(&u, "SCRIPTORIUM_EMBEDDING_URL").map_err(|m| bad("SCRIPTORIUM_EMBEDDING_URL", m))?,
            );
            self.origins.insert("memory.embeddings.url".to_owned(), Origin::Env);
        }
        if let Some(m) = env("SCRIPTORIUM_EMBEDDING_MODEL") {
            self.embedding_model = Some(m);
            self.origins.insert("memory.embeddings.model".to_owned(), Origin::Env);
        }
        Ok(())
    }
}

/// A whole number of at least 1, or why not.
fn at_least_one(v: &toml::Value, key: &str) -> Result<usize, String> {
    match whole(v, key)? {
        0 => Err(format!("{key} must be at least 1")),
        n => Ok(n),
    }
}
