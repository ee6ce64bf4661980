//! `MemoryBackend`: the contract between memory and an agent runtime, the
//! shipped [`LocalMemoryBackend`], the [`DisabledBackend`] of
//! `memory.backend = "none"`, and the process-wide [`get_backend`] /
//! [`set_backend`].

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use serde_json::Value;

use scriptorium_scheduler::dream::{Report, Unchanged};
use scriptorium_scheduler::store::SESSIONS_DB;
use scriptorium_scheduler::watch::Reorganize;
use scriptorium_scheduler::{BatchWriter, Code, Scheduler, SessionStore, SqliteStore, WriteFailure};
use scriptorium_writer::input::Turn;
use scriptorium_writer::Offline;

use crate::error::Error;
use crate::fence::Fenced;
use crate::search::Answer;
use crate::sessions::Recorded;
use crate::snapshot::Snapshot;
use crate::status::Status;
use crate::tools::args::SearchArgs;
use crate::tools::{self, Caller};
use scriptorium_scheduler::import::Transcript;
use scriptorium_source_archive::Code as ErrorCode;

/// The contract between memory and an agent runtime. One verb per action;
/// every hook but [`MemoryBackend::name`] has a default that does nothing,
/// so a backend implements only what it offers.
///
/// ```
/// use scriptorium::backend::{MemoryBackend, LocalMemoryBackend};
/// let dir = tempfile::tempdir().unwrap();
/// let memory = LocalMemoryBackend::new(dir.path());
/// assert_eq!(memory.name(), "local");
/// // Nothing remembered yet: no system prompt, no recall, nothing owed.
/// assert!(memory.system_prompt().unwrap().is_empty());
/// assert!(memory.recall("what did Ada say?").unwrap().is_empty());
/// assert_eq!(memory.write("no-such-session", false).map(|f| f.code.as_str()), Some("NOT_FOUND"));
/// ```
pub trait MemoryBackend: Send + Sync {
    /// The backend's name (`local`, `none`, …).
    fn name(&self) -> &str;

    /// What the model gets every session: the self (persona and identity,
    /// under `memory.self.budget` tokens) and `core.md`, fenced (empty when
    /// there is nothing to say).
    ///
    /// ```
    /// use scriptorium::backend::{MemoryBackend, LocalMemoryBackend};
    /// let dir = tempfile::tempdir().unwrap();
    /// std::fs::write(dir.path().join("core.md"), "# Core\n\nAda leads the budget review.\n").unwrap();
    /// let prompt = LocalMemoryBackend::new(dir.path()).system_prompt().unwrap();
    /// assert!(prompt.as_str().starts_with("<memory-context>\n"));
    /// assert!(prompt.as_str().contains("Ada leads the budget review."));
    /// ```
    fn system_prompt(&self) -> Result<Fenced, Error> {
        Ok(Fenced::default())
    }

    /// What the model gets for one message: the fenced top 5 blocks and
    /// records (empty when nothing matches).
    ///
    /// ```
    /// use scriptorium::backend::{MemoryBackend, LocalMemoryBackend};
    /// let dir = tempfile::tempdir().unwrap();
    /// let memory = LocalMemoryBackend::new(dir.path());
    /// // An empty workspace recalls nothing: no fence at all.
    /// assert_eq!(memory.recall("the budget").unwrap().as_str(), "");
    /// ```
    fn recall(&self, _message: &str) -> Result<Fenced, Error> {
        Ok(Fenced::default())
    }

    /// `memory_search`, typed: the hits for `args`, best first.
    ///
    /// ```
    /// use scriptorium::backend::{MemoryBackend, DisabledBackend};
    /// use scriptorium::tools::args::SearchArgs;
    /// let args = SearchArgs { query: "budget".into(), ..SearchArgs::default() };
    /// let e = DisabledBackend.search(&args).unwrap_err();
    /// assert_eq!(e.code.as_str(), "MEMORY_DISABLED");
    /// ```
    fn search(&self, _args: &SearchArgs) -> Result<Answer, Error> {
        Err(Error::new(ErrorCode::MemoryDisabled, "this memory backend has no search"))
    }

    /// Runs a `memory_*` tool for `caller`.
    ///
    /// ```
    /// use scriptorium::backend::{MemoryBackend, LocalMemoryBackend};
    /// use scriptorium::tools::Caller;
    /// use scriptorium::transaction::Tier;
    /// let dir = tempfile::tempdir().unwrap();
    /// let memory = LocalMemoryBackend::new(dir.path());
    /// let caller = Caller { tier: Tier::Paired, interactive: false };
    /// let e = memory.call_tool("memory_promote", &serde_json::json!({"source_ids": []}), &caller).unwrap_err();
    /// assert_eq!(e.code.as_str(), "PERMISSION_DENIED");
    /// ```
    fn call_tool(&self, _name: &str, _args: &Value, _caller: &Caller) -> Result<Value, Error> {
        Err(Error::new(ErrorCode::MemoryDisabled, "this memory backend has no tools"))
    }

    /// Records turns the harness — never the model — says were said (with
    /// their trusted speaker fields), each node id once: a node whose id
    /// its session already has is skipped. Creates the workspace when
    /// missing.
    ///
    /// ```
    /// use scriptorium::backend::{MemoryBackend, LocalMemoryBackend};
    /// use scriptorium::scheduler::import::Transcript;
    /// use scriptorium::scheduler::node::{Node, NodeKind, NodeRole};
    /// let dir = tempfile::tempdir().unwrap();
    /// let turn = Node {
    ///     id: "m1".into(), parent: None, role: NodeRole::User, kind: NodeKind::Turn,
    ///     timestamp: "2026-02-01T09:00:00Z".into(), content: "I chair the review.".into(),
    ///     speaker_id: Some("u-ada".into()), speaker_display: Some("Ada".into()),
    ///     provider: "slack".into(), thread: "room-1".into(), pending: false,
    /// };
    /// let t = Transcript { session: "room-1".into(), nodes: vec![turn], head: None, lenient_parents: false, continues: false };
    /// let memory = LocalMemoryBackend::new(dir.path());
    /// assert_eq!(memory.record(std::slice::from_ref(&t)).unwrap().added, 1);
    /// assert_eq!(memory.record(&[t]).unwrap().skipped, 1);
    /// ```
    fn record(&self, _transcripts: &[Transcript]) -> Result<Recorded, Error> {
        Err(Error::new(ErrorCode::MemoryDisabled, "this memory backend records nothing"))
    }

    /// Writes what `session` owes (forced: everything pending): `None` when
    /// nothing is owed any more, or why not and whether a later call could.
    ///
    /// ```
    /// use scriptorium::backend::{MemoryBackend, DisabledBackend};
    /// // A disabled backend never writes and never fails.
    /// assert!(DisabledBackend.write("any-session", true).is_none());
    /// ```
    fn write(&self, _session: &str, _force: bool) -> Option<WriteFailure> {
        None
    }

    /// Text worth keeping from turns a compactor is about to drop; stores
    /// nothing.
    ///
    /// ```
    /// use scriptorium::backend::{MemoryBackend, DisabledBackend};
    /// assert_eq!(DisabledBackend.extract_before_discard(&[]), None);
    /// ```
    fn extract_before_discard(&self, _turns: &[Turn]) -> Option<String> {
        None
    }

    /// The dream pass (what the nightly pass runs): what it selected, what
    /// it changed and, when it changed nothing, why. A backend without one
    /// selects nothing.
    ///
    /// ```
    /// use scriptorium::backend::{MemoryBackend, LocalMemoryBackend};
    /// let dir = tempfile::tempdir().unwrap();
    /// // Without a model, the pass is the offline hygiene; an empty
    /// // workspace has nothing to select and nothing to change.
    /// let report = LocalMemoryBackend::new(dir.path()).reorganize().unwrap();
    /// assert!(report.selected.is_empty() && report.changed.is_empty());
    /// assert_eq!(report.reason.map(|r| r.as_str()), Some("nothing selected"));
    /// ```
    fn reorganize(&self) -> Result<Report, WriteFailure> {
        Ok(Report { reason: Some(Unchanged::NothingSelected), ..Report::default() })
    }

    /// The revision, counts and writer status.
    ///
    /// ```
    /// use scriptorium::backend::{MemoryBackend, DisabledBackend};
    /// assert_eq!(DisabledBackend.status().unwrap_err().code.as_str(), "MEMORY_DISABLED");
    /// ```
    fn status(&self) -> Result<Status, Error> {
        Err(Error::new(ErrorCode::MemoryDisabled, "this memory backend has no status"))
    }
}

/// The shipped backend: a workspace folder on this machine.
pub struct LocalMemoryBackend {
    root: PathBuf,
    writer: Mutex<Box<dyn BatchWriter + Send>>,
    reorganizer: Mutex<Option<Box<dyn Reorganize + Send>>>,
}

impl std::fmt::Debug for LocalMemoryBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalMemoryBackend").field("root", &self.root).finish_non_exhaustive()
    }
}

impl LocalMemoryBackend {
    /// A backend over the workspace at `root`, writing with the offline
    /// writer and the default people-card limits.
    pub fn new(root: &Path) -> LocalMemoryBackend {
        // A change of the self it makes is told at the next hook answer.
        crate::hooks::notices::register();
        LocalMemoryBackend {
            root: root.to_owned(),
            writer: Mutex::new(Box::new(Offline::default())),
            reorganizer: Mutex::new(None),
        }
    }

    /// Runs `pass` as the dream pass (a model-driven writer's, say:
    /// `Chosen::dream` behind the scheduler's `Reorganize`). Without one,
    /// `reorganize` runs the offline pass (the hygiene, and a report of what
    /// a model would be given) with the configured caps.
    pub fn with_reorganizer(mut self, pass: Box<dyn Reorganize + Send>) -> LocalMemoryBackend {
        self.reorganizer = Mutex::new(Some(pass));
        self
    }

    /// Writes with `writer` instead (a model-driven one, say).
    pub fn with_writer(mut self, writer: Box<dyn BatchWriter + Send>) -> LocalMemoryBackend {
        self.writer = Mutex::new(writer);
        self
    }

    /// The workspace folder.
    pub fn root(&self) -> &Path {
        &self.root
    }
}

impl MemoryBackend for LocalMemoryBackend {
    fn name(&self) -> &str {
        "local"
    }

    fn system_prompt(&self) -> Result<Fenced, Error> {
        let config = crate::config::Config::load(&self.root)?;
        crate::recall::system_prompt(&self.root, config.self_budget)
    }

    fn recall(&self, message: &str) -> Result<Fenced, Error> {
        if !self.root.is_dir() {
            return Ok(Fenced::default());
        }
        crate::recall::recall(&self.root, message).map(|(f, _)| f).map_err(Error::from)
    }

    fn search(&self, args: &SearchArgs) -> Result<Answer, Error> {
        let config = crate::config::Config::load(&self.root)?;
        if config.disabled() {
            return Err(Error::disabled());
        }
        crate::snapshot::require(&self.root)?;
        tools::search(&self.root, args, &config)
    }

    fn call_tool(&self, name: &str, args: &Value, caller: &Caller) -> Result<Value, Error> {
        tools::call_tool(&self.root, name, args, caller)
    }

    fn record(&self, transcripts: &[Transcript]) -> Result<Recorded, Error> {
        crate::sessions::record(&self.root, transcripts)
    }

    fn write(&self, session: &str, force: bool) -> Option<WriteFailure> {
        let ws = match scriptorium_transaction::layout::ensure(&self.root) {
            Ok(i) => i.id,
            Err(e) => return Some(e.into()),
        };
        let store = match SqliteStore::open(&self.root.join(SESSIONS_DB)) {
            Ok(s) => s,
            Err(e) => return Some(e.into()),
        };
        match store.session(session) {
            Ok(Some(_)) => {}
            Ok(None) => return Some(WriteFailure::new(Code::NotFound, format!("no session {session:?}"))),
            Err(e) => return Some(e.into()),
        }
        let config = match crate::config::Config::load(&self.root) {
            Ok(c) => c,
            Err(e) => return Some(WriteFailure::new(Code::InvalidArgument, Error::from(e).message)),
        };
        let mut sch = Scheduler::new(&store, &self.root, &ws);
        sch.every_steps = config.reflection_every_steps;
        if let Some(t) = config.threshold {
            sch.threshold = t;
        }
        let mut writer = match self.writer.lock() {
            Ok(w) => w,
            Err(p) => p.into_inner(),
        };
        sch.write(writer.as_mut(), session, force).err()
    }

    fn extract_before_discard(&self, turns: &[Turn]) -> Option<String> {
        scriptorium_writer::extract::extract_before_discard(turns)
    }

    fn reorganize(&self) -> Result<Report, WriteFailure> {
        let mut pass = match self.reorganizer.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if let Some(p) = pass.as_mut() {
            return p.reorganize();
        }
        let config = crate::config::Config::load(&self.root).map_err(|e| {
            WriteFailure::new(
                Code::InvalidArgument,
                format!("{}: configuration: {}", e.path.display(), e.message),
            )
        })?;
        let options =
            crate::writers::dream_options(&config, scriptorium_transaction::lock::INTERACTIVE_TIMEOUT);
        scriptorium_writer::dream::run(&self.root, &options, None)
    }

    fn status(&self) -> Result<Status, Error> {
        Status::of(&Snapshot::open(&self.root, scriptorium_transaction::lock::INTERACTIVE_TIMEOUT)?)
    }
}

/// `memory.backend = "none"`: no system prompt, no recall, no writes; every
/// tool refuses with `MEMORY_DISABLED`.
#[derive(Debug, Clone, Copy, Default)]
pub struct DisabledBackend;

impl MemoryBackend for DisabledBackend {
    fn name(&self) -> &str {
        "none"
    }

    fn search(&self, _args: &SearchArgs) -> Result<Answer, Error> {
        Err(Error::disabled())
    }
}

/// The backend the configuration names for the workspace at `root` (the
/// user file, the workspace's `scriptorium.toml`, the environment): a
/// [`DisabledBackend`] for `memory.backend = "none"`, else a
/// [`LocalMemoryBackend`] writing with the offline writer, people cards
/// within the configured limits (give it a model writer with
/// [`LocalMemoryBackend::with_writer`] yourself). Nothing is created or
/// written.
///
/// ```
/// use scriptorium::backend::{open_configured, MemoryBackend};
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("scriptorium.toml"), "[memory]\nbackend = \"none\"\n").unwrap();
/// let memory = open_configured(dir.path()).unwrap();
/// assert_eq!(memory.name(), "none");
/// assert!(memory.recall("anything").unwrap().is_empty());
/// ```
pub fn open_configured(root: &Path) -> Result<Arc<dyn MemoryBackend>, crate::config::ConfigError> {
    let config = crate::config::Config::load(root)?;
    if config.disabled() {
        return Ok(Arc::new(DisabledBackend));
    }
    let offline = Offline::new(crate::writers::people_limits(&config));
    Ok(Arc::new(LocalMemoryBackend::new(root).with_writer(Box::new(offline))))
}

static BACKEND: RwLock<Option<Arc<dyn MemoryBackend>>> = RwLock::new(None);

/// The process-wide backend: what [`set_backend`] last set, else a
/// [`DisabledBackend`] (nothing is remembered until a runtime says where).
pub fn get_backend() -> Arc<dyn MemoryBackend> {
    let guard = match BACKEND.read() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    guard.clone().unwrap_or_else(|| Arc::new(DisabledBackend))
}

/// Replaces the process-wide backend (thread-safe); returns the previous
/// one, if any was set.
pub fn set_backend(backend: Arc<dyn MemoryBackend>) -> Option<Arc<dyn MemoryBackend>> {
    let mut guard = match BACKEND.write() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    guard.replace(backend)
}
