//! The session verbs: `session import`, `write`, `watch`, and the writer
//! part of `status`.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use scriptorium::archive::json;
use scriptorium::scheduler::{
    self,
    import::{self, Format},
    store::SESSIONS_DB,
    watch::{Event, EventSink, Reorganize, Watcher},
    Scheduler, SessionStore, SqliteStore, WriteFailure,
};
use scriptorium::transaction;
use scriptorium::writer::backfill;
use scriptorium::writers::Chosen;

use crate::{fail_tx, print_line};

/// A scheduler error as the CLI prints it.
fn fail(e: &scheduler::Error) -> ExitCode {
    let mut obj = serde_json::json!({"code": e.code.as_str(), "message": e.message});
    if let Some(p) = &e.path {
        obj["path"] = p.clone().into();
    }
    if let Some(l) = e.line {
        obj["line"] = l.into();
    }
    let _ = writeln!(io::stderr().lock(), "{}", json::to_line(&serde_json::json!({ "error": obj })));
    ExitCode::from(1)
}

/// A write failure: the error object with `retryable`.
pub(crate) fn fail_write(f: &WriteFailure) -> ExitCode {
    let obj = serde_json::json!({"code": f.code.as_str(), "message": f.reason, "retryable": f.retryable});
    let _ = writeln!(io::stderr().lock(), "{}", json::to_line(&serde_json::json!({ "error": obj })));
    ExitCode::from(1)
}

/// The workspace's id, creating the layout when needed.
fn workspace_id(root: &Path) -> Result<String, ExitCode> {
    transaction::layout::ensure(root).map(|i| i.id).map_err(|e| fail_tx(&e))
}

fn open_store(root: &Path) -> Result<SqliteStore, ExitCode> {
    SqliteStore::open(&root.join(SESSIONS_DB)).map_err(|e| fail(&e))
}

pub(crate) fn run_import(root: PathBuf, format: String, files: Vec<PathBuf>, as_json: bool) -> ExitCode {
    let Some(format) = Format::parse(&format) else {
        return fail(&scheduler::Error::invalid(format!(
            "--format {format:?} is not jsonl, openai, claude-code or locomo"
        )));
    };
    // Read every file before adding anything: a bad file refuses the whole call.
    let reading = crate::progress::Progress::new("reading files", !as_json);
    let mut transcripts = Vec::new();
    for (i, f) in files.iter().enumerate() {
        reading.set(i, files.len());
        match import::read(format, f) {
            Ok(t) => transcripts.extend(t),
            Err(e) => return fail(&e),
        }
    }
    drop(reading);
    let _ws = match workspace_id(&root) {
        Ok(id) => id,
        Err(c) => return c,
    };
    let store = match open_store(&root) {
        Ok(s) => s,
        Err(c) => return c,
    };
    // One call, so the whole import is checked together (twin names across
    // files and sessions) and added in one store transaction.
    let total = match import::import(&store, &transcripts) {
        Ok(t) => t,
        Err(e) => return fail(&e),
    };
    tracing::info!(sessions = total.sessions, nodes = total.nodes, new = total.new_nodes, "imported");
    if as_json {
        print_line(&json::to_line(&total))
    } else {
        print_line(&format!(
            "{} sessions, {} nodes read, {} new",
            total.sessions, total.nodes, total.new_nodes
        ))
    }
}

/// Which model writes: `--model`, `--model-url`, `--model-name` (FORMAT §8).
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct ModelArgs {
    /// `offline` (the extractive baseline, the default when nothing is
    /// configured) or the name of the model at --model-url.
    #[arg(long)]
    pub(crate) model: Option<String>,
    /// An OpenAI-compatible chat-completions base URL (e.g.
    /// http://127.0.0.1:11434/v1); default $SCRIPTORIUM_MODEL_URL.
    #[arg(long)]
    pub(crate) model_url: Option<String>,
    /// The model's name at --model-url; default $SCRIPTORIUM_MODEL_NAME.
    #[arg(long)]
    pub(crate) model_name: Option<String>,
    /// Seconds one model call may take.
    #[arg(long, default_value_t = 120)]
    pub(crate) model_timeout_secs: u64,
}

impl ModelArgs {
    /// The flags as the library takes them.
    pub(crate) fn flags(&self) -> scriptorium::writers::WriterFlags {
        scriptorium::writers::WriterFlags {
            model: self.model.clone(),
            model_url: self.model_url.clone(),
            model_name: self.model_name.clone(),
            model_timeout_secs: self.model_timeout_secs,
        }
    }
}

static CONFIG: std::sync::OnceLock<scriptorium::config::Config> = std::sync::OnceLock::new();

/// Records the loaded configuration for the verbs.
pub(crate) fn set_config(c: scriptorium::config::Config) {
    let _ = CONFIG.set(c);
}

pub(crate) fn config() -> scriptorium::config::Config {
    CONFIG.get().cloned().unwrap_or_default()
}

/// Picks the writer from the flags and the configuration
/// ([`scriptorium::writers::choose`]).
pub(crate) fn choose(a: &ModelArgs) -> Result<Chosen, WriteFailure> {
    scriptorium::writers::choose(&a.flags(), &config())
}

pub(crate) struct WriteOptions {
    pub(crate) root: PathBuf,
    pub(crate) session: Option<String>,
    pub(crate) force: bool,
    pub(crate) json: bool,
    pub(crate) threshold: Option<usize>,
    pub(crate) timeout_ms: u64,
    pub(crate) model: ModelArgs,
}

pub(crate) fn run_write(o: WriteOptions) -> ExitCode {
    if let Err(r) = crate::workspace::require(&o.root) {
        return crate::refuse(&r);
    }
    let ws = match workspace_id(&o.root) {
        Ok(id) => id,
        Err(c) => return c,
    };
    let store = match SqliteStore::open(&o.root.join(SESSIONS_DB)) {
        Ok(s) => s,
        Err(e) => return fail_write(&WriteFailure::from(e)),
    };
    let mut chosen = match choose(&o.model) {
        Ok(c) => c,
        Err(f) => return fail_write(&f),
    };
    if let Err(code) = crate::migrate_core(&o.root) {
        return code;
    }
    let w = chosen.batch_writer();
    let mut sch = Scheduler::new(&store, &o.root, &ws);
    sch.threshold = o.threshold.or(config().threshold).unwrap_or(scheduler::pending::DEFAULT_THRESHOLD);
    sch.lock_timeout = Duration::from_millis(o.timeout_ms);
    let result = match &o.session {
        Some(s) => match store.session(s) {
            Ok(Some(_)) => sch.write(w, s, o.force),
            Ok(None) => {
                return fail_write(&WriteFailure::new(scheduler::Code::NotFound, format!("no session {s:?}")))
            }
            Err(e) => return fail_write(&WriteFailure::from(e)),
        },
        None => sch.write_all(w, o.force),
    };
    match result {
        Ok(r) => {
            let (_, checked, _) = match crate::whole_workspace_diagnostics(&o.root) {
                Ok(x) => x,
                Err(code) => return code,
            };
            let core = match scriptorium::core_report(&o.root, &checked) {
                Ok(c) => c,
                Err(e) => return fail_tx(&e),
            };
            let v = serde_json::json!({
                "turns": r.turns,
                "batches": r.batches,
                "revision": r.revision,
                "changed": r.changed,
                "writer": w.name(),
                "core": core,
            });
            if o.json {
                print_line(&json::to_line(&v))
            } else if r.turns == 0 {
                print_line("nothing owed")
            } else {
                print_line(&format!(
                    "{} turns in {} batches; revision {}; core.md {} tokens, {} block(s) left out",
                    r.turns,
                    r.batches,
                    r.revision.unwrap_or_default(),
                    core.tokens,
                    core.omitted.len()
                ))
            }
        }
        Err(f) => fail_write(&f),
    }
}

/// Prints events as they come.
struct Print {
    json: bool,
}

impl EventSink for Print {
    fn emit(&mut self, e: &Event) {
        let line = if self.json {
            json::to_line(e)
        } else {
            let mut s = format!("{} {}", e.time, e.event);
            if let Some(id) = &e.session {
                s.push_str(&format!(" session {id:?}"));
            }
            if e.ok {
                s.push_str(&format!(" ok: {} turns, {} batches", e.turns, e.batches));
            } else {
                s.push_str(&format!(
                    " failed: {} {}{}",
                    e.code.as_deref().unwrap_or(""),
                    e.reason.as_deref().unwrap_or(""),
                    e.retry_at.as_deref().map(|t| format!(" (again after {t})")).unwrap_or_default()
                ));
            }
            s
        };
        let _ = writeln!(io::stdout().lock(), "{line}");
    }
}

/// The nightly pass: the chosen writer's reorganize.
struct Nightly<'a> {
    root: &'a Path,
    writer: &'a mut Chosen,
}

impl Reorganize for Nightly<'_> {
    fn reorganize(&mut self) -> Result<Vec<String>, WriteFailure> {
        self.writer.reorganize(self.root, scheduler::write::BACKGROUND_LOCK_TIMEOUT)
    }
}

pub(crate) fn run_watch(
    root: PathBuf,
    idle_secs: Option<u64>,
    once: bool,
    as_json: bool,
    model: &ModelArgs,
) -> ExitCode {
    if let Err(r) = crate::workspace::require(&root) {
        return crate::refuse(&r);
    }
    let mut chosen = match choose(model) {
        Ok(c) => c,
        Err(f) => return fail_write(&f),
    };
    let ws = match workspace_id(&root) {
        Ok(id) => id,
        Err(c) => return c,
    };
    let store = match open_store(&root) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let sch = Scheduler::new(&store, &root, &ws);
    let idle_secs = idle_secs.or(config().idle_secs).unwrap_or(600);
    let mut watcher = Watcher::new(&sch, i64::try_from(idle_secs).unwrap_or(i64::MAX));
    if let Some(h) = config().nightly_hour {
        watcher = watcher.with_nightly_hour(h);
    }
    let mut sink = Print { json: as_json };
    if once {
        return match watcher.poll(chosen.batch_writer(), &mut sink) {
            Ok(p) => {
                if as_json {
                    print_line(&json::to_line(&p))
                } else {
                    print_line(&format!(
                        "handled {}, deferred {}, failed {}",
                        p.handled.len(),
                        p.deferred.len(),
                        p.failed.len()
                    ))
                }
            }
            Err(e) => fail(&e),
        };
    }
    let every = Duration::from_secs(idle_secs.clamp(1, 60) / 2 + 1);
    let next = watcher.next_nightly();
    let _ = writeln!(io::stderr().lock(), "watching {} (nightly pass at {next})", root.display());
    loop {
        if let Err(e) = watcher.poll(chosen.batch_writer(), &mut sink) {
            let _ = writeln!(io::stderr().lock(), "poll failed: {e}");
        }
        let mut hook = Nightly { root: &root, writer: &mut chosen };
        watcher.nightly_if_due(&mut hook, &mut sink);
        std::thread::sleep(every);
    }
}

pub(crate) fn run_sleep(root: PathBuf, model: &ModelArgs, as_json: bool) -> ExitCode {
    if let Err(r) = crate::workspace::require(&root) {
        return crate::refuse(&r);
    }
    let mut chosen = match choose(model) {
        Ok(c) => c,
        Err(f) => return fail_write(&f),
    };
    match chosen.reorganize(&root, transaction::lock::INTERACTIVE_TIMEOUT) {
        Ok(changed) => {
            if as_json {
                print_line(&json::to_line(&serde_json::json!({ "changed": changed })))
            } else if changed.is_empty() {
                print_line("nothing changed")
            } else {
                print_line(&changed.join("\n"))
            }
        }
        Err(f) => fail_write(&f),
    }
}

pub(crate) fn run_backfill(root: PathBuf, batch: usize, model: &ModelArgs, as_json: bool) -> ExitCode {
    if let Err(r) = crate::workspace::require(&root) {
        return crate::refuse(&r);
    }
    if batch == 0 {
        return fail(&scheduler::Error::invalid("--batch must be at least 1"));
    }
    let mut chosen = match choose(model) {
        Ok(c) => c,
        Err(f) => return fail_write(&f),
    };
    let bar = crate::progress::Progress::new("backfill: records", !as_json);
    let mut progress = |done: usize, total: usize| bar.set(done, total);
    let result = backfill::backfill(
        &root,
        chosen.input_writer(),
        batch,
        transaction::lock::INTERACTIVE_TIMEOUT,
        &mut progress,
    );
    drop(bar);
    match result {
        Ok(r) => {
            if as_json {
                print_line(&json::to_line(&r))
            } else {
                print_line(&format!(
                    "{} records in {} batches; {} files changed",
                    r.records,
                    r.batches,
                    r.changed.len()
                ))
            }
        }
        Err(f) => fail_write(&f),
    }
}
