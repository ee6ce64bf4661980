//! Every setting in force, with its value and where it came from (what
//! `scriptorium config show` prints). Secrets are never shown: an API key
//! is `"***"` when its variable is set, and a URL's credentials are
//! redacted.

use serde::Serialize;
use serde_json::Value;

use super::{Config, Origin};

/// One resolved setting.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Setting {
    /// Its configuration key (`memory.writer.threshold`); a setting read
    /// from the environment is listed under its key too.
    pub key: String,
    /// Its value (`null` when unset).
    pub value: Value,
    /// Where the value came from.
    pub source: Origin,
}

/// What a secret is shown as.
const HIDDEN: &str = "***";

impl Config {
    /// Every setting, in key order within each table, as `config show`
    /// lists them.
    pub fn settings(&self) -> Vec<Setting> {
        let url = |u: &Option<String>| match u {
            Some(u) => Value::from(scriptorium_writer::openai::redact_url(u)),
            None => Value::Null,
        };
        let opt = |v: Option<Value>| v.unwrap_or(Value::Null);
        let threshold = self.threshold.unwrap_or(scriptorium_scheduler::pending::DEFAULT_THRESHOLD);
        let values: Vec<(&str, Value)> = vec![
            ("memory.backend", Value::from(self.backend.as_str())),
            ("memory.core_budget", Value::from(self.core_budget)),
            ("memory.history", Value::from(if self.history { "git" } else { "off" })),
            ("memory.history_author", Value::from(self.history_author.as_str())),
            ("memory.writer.model", opt(self.model.as_deref().map(Value::from))),
            ("memory.writer.model_url", url(&self.model_url)),
            ("memory.writer.api_key_env", Value::from(self.api_key_env.as_str())),
            ("memory.writer.threshold", Value::from(threshold)),
            ("memory.writer.idle_secs", Value::from(self.idle_secs.unwrap_or(super::DEFAULT_IDLE_SECS))),
            (
                "memory.writer.nightly_hour",
                Value::from(
                    self.nightly_hour.map_or(scriptorium_scheduler::clock::NIGHTLY_HOUR, |h| h as i8),
                ),
            ),
            ("memory.embeddings.url", url(&self.embedding_url)),
            ("memory.embeddings.model", opt(self.embedding_model.as_deref().map(Value::from))),
            ("memory.embeddings.api_key_env", Value::from(self.embedding_key_env.as_str())),
            ("memory.hooks.max_context_chars", Value::from(self.max_context_chars)),
            ("memory.hooks.write_deadline_secs", Value::from(self.write_deadline_secs)),
            ("memory.nudge.every_user_turns", Value::from(self.nudge_every_user_turns)),
            ("memory.reflection.every_steps", Value::from(self.reflection_every_steps)),
            ("memory.dream.max_conversations", Value::from(self.dream_max_conversations)),
            ("memory.dream.max_bytes", Value::from(self.dream_max_bytes)),
            ("memory.self.budget", Value::from(self.self_budget)),
            ("memory.self.edit_notice", Value::from(self.self_edit_notice)),
            ("memory.people.max_entries", Value::from(self.people_max_entries)),
            ("memory.people.max_entry_chars", Value::from(self.people_max_entry_chars)),
        ];
        let mut out: Vec<Setting> = values
            .into_iter()
            .map(|(key, value)| Setting { key: key.to_owned(), value, source: self.origin(key) })
            .collect();
        // The keys themselves, never their values: present only when set.
        for (key, var) in [
            ("memory.writer.api_key", &self.api_key_env),
            ("memory.embeddings.api_key", &self.embedding_key_env),
        ] {
            if std::env::var_os(var).is_some_and(|v| !v.is_empty()) {
                out.push(Setting { key: key.to_owned(), value: Value::from(HIDDEN), source: Origin::Env });
            }
        }
        out
    }
}
