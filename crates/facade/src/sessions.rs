//! The session verbs: `session import`, `write`, `watch`, and the writer
//! part of `status`.

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use scriptorium::archive::json;
use scriptorium::scheduler::{
    self,
    import::{self, Format},
    status,
    store::SESSIONS_DB,
    watch::{Event, EventSink, Reorganize, Watcher},
    write::ArchiveWriter,
    BatchWriter, Scheduler, SessionStore, SqliteStore, WriteFailure,
};
use scriptorium::transaction;

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
fn fail_write(f: &WriteFailure) -> ExitCode {
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
    let progress = io::stderr().is_terminal();
    let mut transcripts = Vec::new();
    for (i, f) in files.iter().enumerate() {
        if progress {
            let _ = write!(io::stderr().lock(), "\rreading {}/{} files", i + 1, files.len());
        }
        match import::read(format, f) {
            Ok(t) => transcripts.extend(t),
            Err(e) => {
                if progress {
                    let _ = writeln!(io::stderr().lock());
                }
                return fail(&e);
            }
        }
    }
    let _ws = match workspace_id(&root) {
        Ok(id) => id,
        Err(c) => return c,
    };
    let store = match open_store(&root) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let mut total = import::Imported::default();
    for (i, t) in transcripts.iter().enumerate() {
        if progress {
            let _ = write!(
                io::stderr().lock(),
                "\rimporting session {}/{} ({} nodes so far)   ",
                i + 1,
                transcripts.len(),
                total.nodes
            );
        }
        match import::import(&store, std::slice::from_ref(t)) {
            Ok(got) => {
                total.sessions += got.sessions;
                total.nodes += got.nodes;
                total.new_nodes += got.new_nodes;
            }
            Err(e) => {
                if progress {
                    let _ = writeln!(io::stderr().lock());
                }
                return fail(&e);
            }
        }
    }
    if progress {
        let _ = writeln!(io::stderr().lock());
    }
    if as_json {
        print_line(&json::to_line(&total))
    } else {
        print_line(&format!(
            "{} sessions, {} nodes read, {} new",
            total.sessions, total.nodes, total.new_nodes
        ))
    }
}

/// The writer `write` and `watch` use.
fn writer() -> ArchiveWriter {
    ArchiveWriter
}

pub(crate) struct WriteOptions {
    pub(crate) root: PathBuf,
    pub(crate) session: Option<String>,
    pub(crate) force: bool,
    pub(crate) json: bool,
    pub(crate) threshold: usize,
    pub(crate) timeout_ms: u64,
}

pub(crate) fn run_write(o: WriteOptions) -> ExitCode {
    if let Err(r) = crate::workspace::require(&o.root) {
        return crate::refuse(&r);
    }
    let ws = match workspace_id(&o.root) {
        Ok(id) => id,
        Err(c) => return c,
    };
    let store = match open_store(&o.root) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let mut sch = Scheduler::new(&store, &o.root, &ws);
    sch.threshold = o.threshold;
    sch.lock_timeout = Duration::from_millis(o.timeout_ms);
    let mut w = writer();
    let result = match &o.session {
        Some(s) => match store.session(s) {
            Ok(Some(_)) => sch.write(&mut w, s, o.force),
            Ok(None) => {
                return fail(&scheduler::Error::new(scheduler::Code::NotFound, format!("no session {s:?}")))
            }
            Err(e) => return fail(&e),
        },
        None => sch.write_all(&mut w, o.force),
    };
    match result {
        Ok(r) => {
            let v = serde_json::json!({
                "turns": r.turns,
                "batches": r.batches,
                "revision": r.revision,
                "changed": r.changed,
                "writer": w.name(),
            });
            if o.json {
                print_line(&json::to_line(&v))
            } else if r.turns == 0 {
                print_line("nothing owed")
            } else {
                print_line(&format!(
                    "{} turns in {} batches; revision {}",
                    r.turns,
                    r.batches,
                    r.revision.unwrap_or_default()
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

/// The nightly pass until the model writers exist: rebuild the derived
/// views from topics and sources.
struct RebuildViews<'a> {
    root: &'a Path,
}

impl Reorganize for RebuildViews<'_> {
    fn reorganize(&mut self) -> Result<Vec<String>, WriteFailure> {
        let mut w = transaction::Writer::open(self.root, scheduler::write::BACKGROUND_LOCK_TIMEOUT)?;
        w.rebuild_derived()?;
        Ok(Vec::new())
    }
}

pub(crate) fn run_watch(root: PathBuf, idle_secs: u64, once: bool, as_json: bool) -> ExitCode {
    if let Err(r) = crate::workspace::require(&root) {
        return crate::refuse(&r);
    }
    let ws = match workspace_id(&root) {
        Ok(id) => id,
        Err(c) => return c,
    };
    let store = match open_store(&root) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let sch = Scheduler::new(&store, &root, &ws);
    let mut watcher = Watcher::new(&sch, i64::try_from(idle_secs).unwrap_or(i64::MAX));
    let mut sink = Print { json: as_json };
    let mut w = writer();
    if once {
        return match watcher.poll(&mut w, &mut sink) {
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
    let mut hook = RebuildViews { root: &root };
    let next = watcher.next_nightly();
    let _ = writeln!(io::stderr().lock(), "watching {} (nightly pass at {next})", root.display());
    loop {
        if let Err(e) = watcher.poll(&mut w, &mut sink) {
            let _ = writeln!(io::stderr().lock(), "poll failed: {e}");
        }
        watcher.nightly_if_due(&mut hook, &mut sink);
        std::thread::sleep(every);
    }
}

/// The writer part of `status --json`: `pending_turns` (`null`, with
/// `sessions_error`, when the session store cannot be read) and `writer`.
pub(crate) fn status_fields(root: &Path) -> serde_json::Map<String, serde_json::Value> {
    let count = || -> Result<usize, String> {
        let Some(store) = SqliteStore::open_existing(&root.join(SESSIONS_DB)).map_err(|e| e.to_string())?
        else {
            return Ok(0);
        };
        match transaction::layout::identity(root).map_err(|e| e.to_string())? {
            None => Ok(0),
            Some(ws) => scheduler::pending::pending_turns(&store, &ws.id).map_err(|e| e.to_string()),
        }
    };
    let s = status::load(root);
    let mut out = serde_json::Map::new();
    match count() {
        Ok(n) => {
            out.insert("pending_turns".into(), n.into());
        }
        Err(e) => {
            out.insert("pending_turns".into(), serde_json::Value::Null);
            out.insert("sessions_error".into(), e.into());
        }
    }
    out.insert(
        "writer".into(),
        serde_json::json!({"latest_success": s.latest_success, "latest_failure": s.latest_failure}),
    );
    out
}
