//! Configuration (FORMAT.md §9), lowest precedence first: built-in
//! defaults, the user file `$XDG_CONFIG_HOME/scriptorium/config.toml` (else
//! `~/.config/scriptorium/config.toml`), the workspace's `scriptorium.toml`,
//! environment variables `SCRIPTORIUM_*`, flags.
//!
//! ```toml
//! [memory]
//! backend = "local"            # or "none": memory is off, every verb refuses
//!
//! [memory.writer]
//! model = "offline"            # or a model name at model_url
//! model_url = "http://127.0.0.1:11434/v1"
//! api_key_env = "SCRIPTORIUM_API_KEY"
//! threshold = 16000            # tokens per batch
//! idle_secs = 600              # the watcher's quiet time
//! nightly_hour = 3             # the nightly pass, local hour 0-23
//!
//! [memory.hooks]               # the coding-agent hooks
//! max_context_chars = 8000     # the most context one hook answer injects
//! write_deadline_secs = 60     # how long a hook's background write waits for the lock
//!
//! [memory.nudge]
//! every_user_turns = 10        # the save nudge after this many unwritten user turns; 0: off
//!
//! [memory.embeddings]          # for memory_search's embedding and hybrid methods
//! url = "http://127.0.0.1:11434/v1"
//! model = "nomic-embed-text"
//! api_key_env = "SCRIPTORIUM_API_KEY"
//! ```
//!
//! `memory.history` (`"git"`, the default, or `"off"`) and
//! `memory.history_author` (`"Name <email>"`, the identity of the history's
//! commits) are, like `memory.core_budget`, read by the transaction layer
//! from the workspace's `scriptorium.toml` only.
//!
//! `memory.core_budget` (the `core.md` token budget) is a property of the
//! workspace, read by the transaction layer from the workspace's
//! `scriptorium.toml` only, so that every process writing a workspace
//! renders the same `core.md`; in the user file it is refused.
//!
//! Where memory text and an API key are sent is the user's choice alone: a
//! workspace is shared, cloned and synced, so its `scriptorium.toml` may not
//! set an endpoint or the variable a key is read from ([`USER_ONLY`]); such
//! a key there is refused, naming where it belongs.

use scriptorium_transaction::layout::CONFIG_FILE;
use std::path::{Path, PathBuf};

/// The workspace used when neither `--workspace` nor
/// `SCRIPTORIUM_WORKSPACE` names one: `$XDG_DATA_HOME/scriptorium/workspace`,
/// else `~/.local/share/scriptorium/workspace`.
pub fn default_workspace() -> PathBuf {
    let base = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."));
    base.join("scriptorium/workspace")
}

/// The user configuration file.
pub fn user_file() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .map(|b| b.join("scriptorium/config.toml"))
}

/// The keys only the user file, the environment or flags may set, with
/// where each belongs instead: they name where memory text and an API key
/// are sent, which a shared workspace must never choose.
pub const USER_ONLY: [(&str, &str); 4] = [
    ("memory.writer.model_url", "the user file, SCRIPTORIUM_MODEL_URL or --model-url"),
    ("memory.writer.api_key_env", "the user file"),
    ("memory.embeddings.url", "the user file or SCRIPTORIUM_EMBEDDING_URL"),
    ("memory.embeddings.api_key_env", "the user file"),
];

/// Refuses a [`USER_ONLY`] key read from a workspace's file.
fn user_only(key: &str, in_workspace: bool) -> Result<(), String> {
    match USER_ONLY.iter().find(|(k, _)| *k == key) {
        Some((k, instead)) if in_workspace => {
            let file = user_file().map_or_else(
                || "$XDG_CONFIG_HOME/scriptorium/config.toml".to_owned(),
                |p| p.display().to_string(),
            );
            Err(format!(
                "{k} names where memory text or an API key is sent, which a workspace's {CONFIG_FILE} may not choose (a shared or cloned workspace would send them where it likes); set it in {instead} (the user file is {file})"
            ))
        }
        _ => Ok(()),
    }
}

/// The settings, merged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// `memory.backend`: `local` or `none`.
    pub backend: String,
    /// `memory.writer.model`.
    pub model: Option<String>,
    /// `memory.writer.model_url`.
    pub model_url: Option<String>,
    /// `memory.writer.api_key_env`: the variable the API key is read from.
    pub api_key_env: String,
    /// `memory.writer.threshold`.
    pub threshold: Option<usize>,
    /// `memory.writer.idle_secs`.
    pub idle_secs: Option<u64>,
    /// `memory.writer.nightly_hour`: the local hour of the nightly pass.
    pub nightly_hour: Option<u8>,
    /// `memory.embeddings.url`.
    pub embedding_url: Option<String>,
    /// `memory.embeddings.model`.
    pub embedding_model: Option<String>,
    /// `memory.embeddings.api_key_env`.
    pub embedding_key_env: String,
    /// `memory.hooks.max_context_chars`: the most a hook answer injects, in
    /// UTF-16 code units (how the agents count).
    pub max_context_chars: usize,
    /// `memory.hooks.write_deadline_secs`: how long a hook's background
    /// write waits for the write lock.
    pub write_deadline_secs: u64,
    /// `memory.nudge.every_user_turns`: the save nudge is due after this
    /// many user turns of a session no write has covered (0: never).
    pub nudge_every_user_turns: usize,
}

/// The default of `memory.hooks.max_context_chars`: under Claude Code's
/// 10,000.
pub const DEFAULT_MAX_CONTEXT_CHARS: usize = 8000;
/// The default of `memory.hooks.write_deadline_secs`.
pub const DEFAULT_WRITE_DEADLINE_SECS: u64 = 60;
/// The default of `memory.nudge.every_user_turns`.
pub const DEFAULT_NUDGE_EVERY_USER_TURNS: usize = 10;

impl Default for Config {
    fn default() -> Config {
        Config {
            backend: "local".to_owned(),
            model: None,
            model_url: None,
            api_key_env: "SCRIPTORIUM_API_KEY".to_owned(),
            threshold: None,
            idle_secs: None,
            nightly_hour: None,
            embedding_url: None,
            embedding_model: None,
            embedding_key_env: "SCRIPTORIUM_API_KEY".to_owned(),
            max_context_chars: DEFAULT_MAX_CONTEXT_CHARS,
            write_deadline_secs: DEFAULT_WRITE_DEADLINE_SECS,
            nudge_every_user_turns: DEFAULT_NUDGE_EVERY_USER_TURNS,
        }
    }
}

/// A configuration file that does not parse, or holds a bad value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong.
    pub message: String,
}

impl Config {
    /// Defaults, then the user file, the workspace file, the environment.
    pub fn load(workspace: &Path) -> Result<Config, ConfigError> {
        let mut c = Config::default();
        if let Some(f) = user_file() {
            c.merge_file(&f, false)?;
        }
        c.merge_file(&workspace.join(CONFIG_FILE), true)?;
        c.merge_env()?;
        Ok(c)
    }

    /// Whether memory is off (`memory.backend = "none"`).
    pub fn disabled(&self) -> bool {
        self.backend == "none"
    }

    fn merge_file(&mut self, path: &Path, in_workspace: bool) -> Result<(), ConfigError> {
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

    /// The `[memory]` table of a file: `backend`, `core_budget` (checked
    /// only: the transaction layer reads it), `[memory.embeddings]` and
    /// `[memory.writer]`. The error is what is wrong with it.
    fn merge_memory(&mut self, memory: &toml::Table, in_workspace: bool) -> Result<(), String> {
        if let Some(b) = memory.get("backend") {
            match b.as_str() {
                Some(s @ ("local" | "none")) => self.backend = s.to_owned(),
                _ => return Err(format!("memory.backend must be \"local\" or \"none\", not {b}")),
            }
        }
        for k in memory.keys() {
            if !matches!(
                k.as_str(),
                "backend"
                    | "writer"
                    | "embeddings"
                    | "core_budget"
                    | "hooks"
                    | "nudge"
                    | "history"
                    | "history_author"
            ) {
                return Err(format!("unknown key memory.{k}"));
            }
        }
        if let Some(b) = memory.get("core_budget") {
            if !in_workspace {
                return Err(format!(
                    "memory.core_budget belongs in the workspace's {CONFIG_FILE}, so every process renders the same core.md"
                ));
            }
            scriptorium_transaction::layout::budget_of(b)?;
        }
        for key in ["history", "history_author"] {
            let Some(v) = memory.get(key) else { continue };
            if !in_workspace {
                return Err(format!(
                    "memory.{key} belongs in the workspace's {CONFIG_FILE}: the history is the workspace's"
                ));
            }
            match key {
                "history" => scriptorium_transaction::history::enabled_of(v).map(drop)?,
                _ => scriptorium_transaction::history::author_of(v).map(drop)?,
            }
        }
        if let Some(e) = memory.get("embeddings") {
            let e = e.as_table().ok_or_else(|| "[memory.embeddings] must be a table".to_owned())?;
            self.merge_embeddings(e, in_workspace)?;
        }
        if let Some(w) = memory.get("writer") {
            let w = w.as_table().ok_or_else(|| "[memory.writer] must be a table".to_owned())?;
            self.merge_writer(w, in_workspace)?;
        }
        if let Some(h) = memory.get("hooks") {
            let h = h.as_table().ok_or_else(|| "[memory.hooks] must be a table".to_owned())?;
            for (k, v) in h {
                match k.as_str() {
                    "max_context_chars" => {
                        self.max_context_chars = whole(v, "memory.hooks.max_context_chars")?
                    }
                    "write_deadline_secs" => {
                        self.write_deadline_secs = whole(v, "memory.hooks.write_deadline_secs")? as u64
                    }
                    _ => return Err(format!("unknown key memory.hooks.{k}")),
                }
            }
        }
        if let Some(n) = memory.get("nudge") {
            let n = n.as_table().ok_or_else(|| "[memory.nudge] must be a table".to_owned())?;
            for (k, v) in n {
                match k.as_str() {
                    "every_user_turns" => {
                        self.nudge_every_user_turns = whole(v, "memory.nudge.every_user_turns")?
                    }
                    _ => return Err(format!("unknown key memory.nudge.{k}")),
                }
            }
        }
        Ok(())
    }

    /// The `[memory.embeddings]` table of a file.
    fn merge_embeddings(&mut self, e: &toml::Table, in_workspace: bool) -> Result<(), String> {
        for (k, v) in e {
            if !matches!(k.as_str(), "url" | "model" | "api_key_env") {
                return Err(format!("unknown key memory.embeddings.{k}"));
            }
            user_only(&format!("memory.embeddings.{k}"), in_workspace)?;
            let Some(v) = v.as_str() else {
                return Err(format!("memory.embeddings.{k} must be a string, not {v}"));
            };
            match k.as_str() {
                "url" => self.embedding_url = Some(http_url(v, "memory.embeddings.url")?),
                "model" => self.embedding_model = Some(v.to_owned()),
                "api_key_env" => self.embedding_key_env = v.to_owned(),
                _ => return Err(format!("unknown key memory.embeddings.{k}")),
            }
        }
        Ok(())
    }

    /// The `[memory.writer]` table of a file.
    fn merge_writer(&mut self, w: &toml::Table, in_workspace: bool) -> Result<(), String> {
        for k in w.keys() {
            if !matches!(
                k.as_str(),
                "model" | "model_url" | "api_key_env" | "threshold" | "idle_secs" | "nightly_hour"
            ) {
                return Err(format!("unknown key memory.writer.{k}"));
            }
            user_only(&format!("memory.writer.{k}"), in_workspace)?;
        }
        let string = |k: &str| -> Result<Option<String>, String> {
            match w.get(k) {
                None => Ok(None),
                Some(toml::Value::String(s)) => Ok(Some(s.clone())),
                Some(other) => Err(format!("memory.writer.{k} must be a string, not {other}")),
            }
        };
        let number = |k: &str| -> Result<Option<u64>, String> {
            match w.get(k) {
                None => Ok(None),
                Some(toml::Value::Integer(n)) if *n >= 0 => Ok(Some(*n as u64)),
                Some(other) => Err(format!("memory.writer.{k} must be a whole number, not {other}")),
            }
        };
        if let Some(m) = string("model")? {
            self.model = Some(m);
        }
        if let Some(u) = string("model_url")? {
            self.model_url = Some(http_url(&u, "memory.writer.model_url")?);
        }
        if let Some(k) = string("api_key_env")? {
            self.api_key_env = k;
        }
        if let Some(t) = number("threshold")? {
            self.threshold = Some(t as usize);
        }
        if let Some(i) = number("idle_secs")? {
            self.idle_secs = Some(i);
        }
        if let Some(h) = number("nightly_hour")? {
            if h > 23 {
                return Err(format!("memory.writer.nightly_hour must be from 0 to 23, not {h}"));
            }
            self.nightly_hour = Some(h as u8);
        }
        Ok(())
    }

    fn merge_env(&mut self) -> Result<(), ConfigError> {
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
        }
        if let Some(m) = env("SCRIPTORIUM_MODEL_NAME") {
            self.model = Some(m);
        }
        if let Some(u) = env("SCRIPTORIUM_MODEL_URL") {
            self.model_url =
                Some(http_url(&u, "SCRIPTORIUM_MODEL_URL").map_err(|m| bad("SCRIPTORIUM_MODEL_URL", m))?);
        }
        if let Some(u) = env("SCRIPTORIUM_EMBEDDING_URL") {
            self.embedding_url = Some(
                http_url(&u, "SCRIPTORIUM_EMBEDDING_URL").map_err(|m| bad("SCRIPTORIUM_EMBEDDING_URL", m))?,
            );
        }
        if let Some(m) = env("SCRIPTORIUM_EMBEDDING_MODEL") {
            self.embedding_model = Some(m);
        }
        Ok(())
    }

    /// The embedding endpoint, when both its URL and model are set.
    pub fn embedder(
        &self,
    ) -> Option<Result<scriptorium_writer::embed::Embedder, scriptorium_writer::model::ModelError>> {
        let (url, model) = (self.embedding_url.as_deref()?, self.embedding_model.as_deref()?);
        let key = std::env::var(&self.embedding_key_env).ok().filter(|v| !v.is_empty());
        Some(scriptorium_writer::embed::Embedder::new(url, model, key, std::time::Duration::from_secs(60)))
    }

    /// The API key, read from the configured variable.
    pub fn api_key(&self) -> Option<String> {
        std::env::var(&self.api_key_env).ok().filter(|v| !v.is_empty())
    }
}

/// A whole number setting, or why not.
fn whole(v: &toml::Value, key: &str) -> Result<usize, String> {
    match v {
        toml::Value::Integer(n) if *n >= 0 => {
            usize::try_from(*n).map_err(|_| format!("{key} is too large: {n}"))
        }
        other => Err(format!("{key} must be a whole number, not {other}")),
    }
}

/// The text of a configuration file; `None` when there is none (the file
/// or a folder on its way is missing). Only regular files are read: a FIFO
/// or a device would block or never end.
fn read_file(path: &Path) -> Result<Option<String>, ConfigError> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => {
            return Err(ConfigError { path: path.to_owned(), message: "is not a regular file".to_owned() })
        }
        Err(e) if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory) => {
            return Ok(None)
        }
        _ => {}
    }
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory) => {
            Ok(None)
        }
        Err(e) => Err(ConfigError { path: path.to_owned(), message: format!("cannot read: {e}") }),
    }
}

/// `url` when it is an `http://` or `https://` URL with a host; else why
/// not, naming `what` (credentials in it are not repeated).
fn http_url(url: &str, what: &str) -> Result<String, String> {
    let rest = url.strip_prefix("http://").or_else(|| url.strip_prefix("https://"));
    match rest {
        Some(r) if !r.is_empty() && !r.starts_with('/') => Ok(url.to_owned()),
        _ => Err(format!(
            "{what} must be an http:// or https:// URL, not {:?}",
            scriptorium_writer::openai::redact_url(url)
        )),
    }
}
