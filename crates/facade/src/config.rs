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
//!
//! [memory.reflection]
//! every_steps = 25             # a write after this many agent steps of a session; 0: off
//!
//! [memory.dream]               # what the dream pass (`sleep`) selects at most
//! max_conversations = 10
//! max_bytes = 262144           # of unreflected turns, UTF-8
//!
//! [memory.self]                # topics/self/persona.md and identity.md
//! budget = 500                 # tokens shown at the top of every prompt
//! edit_notice = true           # tell the person when a transaction changes them
//!
//! [memory.people]              # limits of each people card
//! max_entries = 200            # paragraphs
//! max_entry_chars = 2000       # characters of one paragraph
//! ```
//!
//! Every setting is remembered with where it came from ([`Origin`]);
//! `config show` lists them ([`Config::settings`]).
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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use scriptorium_transaction::layout::CONFIG_FILE;

mod file;
mod show;

pub use show::Setting;

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
    /// `memory.reflection.every_steps`: a session's write is due after
    /// this many agent steps since its last write (0: never).
    pub reflection_every_steps: usize,
    /// `memory.dream.max_conversations`: the most conversations one dream
    /// pass selects by itself.
    pub dream_max_conversations: usize,
    /// `memory.dream.max_bytes`: the most bytes of unreflected turns one
    /// dream pass selects by itself.
    pub dream_max_bytes: u64,
    /// `memory.self.budget`: the tokens of the self (persona and identity)
    /// at the top of every prompt.
    pub self_budget: usize,
    /// `memory.self.edit_notice`: whether a transaction that changes the
    /// self is told to the person.
    pub self_edit_notice: bool,
    /// `memory.people.max_entries`: the most paragraphs of one people card.
    pub people_max_entries: usize,
    /// `memory.people.max_entry_chars`: the most characters of one people
    /// card's paragraph.
    pub people_max_entry_chars: usize,
    /// `memory.core_budget`, as the workspace's file sets it (read by the
    /// transaction layer; here to be shown).
    pub core_budget: usize,
    /// `memory.history`: whether transactions are committed to git (read
    /// by the transaction layer; here to be shown).
    pub history: bool,
    /// `memory.history_author` as `Name <email>` (read by the transaction
    /// layer; here to be shown).
    pub history_author: String,
    /// Where each setting not at its default came from, by key.
    origins: BTreeMap<String, Origin>,
}

/// Where a setting's value came from, lowest precedence first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// Built in.
    Default,
    /// The user file.
    User,
    /// The workspace's `scriptorium.toml`.
    Workspace,
    /// An environment variable.
    Env,
    /// A command-line flag.
    Flag,
}

impl Origin {
    /// Its name in `config show`.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Default => "default",
            Origin::User => "user",
            Origin::Workspace => "workspace",
            Origin::Env => "env",
            Origin::Flag => "flag",
        }
    }
}

/// The default of `memory.hooks.max_context_chars`: under Claude Code's
/// 10,000.
pub const DEFAULT_MAX_CONTEXT_CHARS: usize = 8000;
/// The default of `memory.hooks.write_deadline_secs`.
pub const DEFAULT_WRITE_DEADLINE_SECS: u64 = 60;
/// The default of `memory.nudge.every_user_turns`.
pub const DEFAULT_NUDGE_EVERY_USER_TURNS: usize = 10;
/// The default of `memory.writer.idle_secs`: the watcher's quiet time.
pub const DEFAULT_IDLE_SECS: u64 = 600;
/// The default of `memory.reflection.every_steps`.
pub const DEFAULT_REFLECTION_EVERY_STEPS: usize = 25;
/// The default of `memory.dream.max_conversations`.
pub const DEFAULT_DREAM_MAX_CONVERSATIONS: usize = 10;
/// The default of `memory.dream.max_bytes`.
pub const DEFAULT_DREAM_MAX_BYTES: u64 = 256 * 1024;
/// The default of `memory.self.budget`.
pub const DEFAULT_SELF_BUDGET: usize = 500;
/// The default of `memory.people.max_entries`.
pub const DEFAULT_PEOPLE_MAX_ENTRIES: usize = 200;
/// The default of `memory.people.max_entry_chars`.
pub const DEFAULT_PEOPLE_MAX_ENTRY_CHARS: usize = 2000;

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
            reflection_every_steps: DEFAULT_REFLECTION_EVERY_STEPS,
            dream_max_conversations: DEFAULT_DREAM_MAX_CONVERSATIONS,
            dream_max_bytes: DEFAULT_DREAM_MAX_BYTES,
            self_budget: DEFAULT_SELF_BUDGET,
            self_edit_notice: true,
            people_max_entries: DEFAULT_PEOPLE_MAX_ENTRIES,
            people_max_entry_chars: DEFAULT_PEOPLE_MAX_ENTRY_CHARS,
            core_budget: scriptorium_topic_markdown::views::CORE_BUDGET,
            history: scriptorium_transaction::history::Settings::default().enabled,
            history_author: {
                let s = scriptorium_transaction::history::Settings::default();
                format!("{} <{}>", s.name, s.email)
            },
            origins: BTreeMap::new(),
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

    /// Where `key`'s value came from.
    pub fn origin(&self, key: &str) -> Origin {
        self.origins.get(key).copied().unwrap_or(Origin::Default)
    }

    /// Records that a flag set `key` (the caller sets the value).
    pub fn flagged(&mut self, key: &str) {
        self.origins.insert(key.to_owned(), Origin::Flag);
    }

    /// Whether memory is off (`memory.backend = "none"`).
    pub fn disabled(&self) -> bool {
        self.backend == "none"
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
