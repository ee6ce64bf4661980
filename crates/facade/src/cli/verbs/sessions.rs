//! The session verbs: `session import`, `write`, `watch`, `sleep` and
//! `backfill`.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
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
use scriptorium::writer::dream;
use scriptorium::writers::{dream_options, Chosen};

use scriptorium::{snapshot, Error};

use super::Ctx;
use crate::args::{ModelArgs, SleepArgs};
use crate::report::{self, Outcome};

/// The workspace's id, creating the layout when needed.
fn workspace_id(root: &Path) -> Result<String, Error> {
    Ok(transaction::layout::ensure(root).map(|i| i.id)?)
}

fn open_store(root: &Path) -> Result<SqliteStore, Error> {
    Ok(SqliteStore::open(&root.join(SESSIONS_DB))?)
}

/// Records the turns read as our JSONL on stdin; prints {"added","skipped"}.
pub(super) fn append(ctx: &Ctx) -> Outcome {
    let mut text = String::new();
    io::Read::read_to_string(&mut io::stdin().lock(), &mut text).map_err(|e| {
        let why =
            if e.kind() == io::ErrorKind::InvalidData { "stdin is not UTF-8" } else { "cannot read stdin" };
        Error::invalid(format!("{why}: {e}")).at("stdin")
    })?;
    let recorded = scriptorium::sessions::append_jsonl(&ctx.root, &text)?;
    report::json_line(&recorded)
}

/// Imports transcripts into the session store.
pub(super) fn import(ctx: &Ctx, format: &str, files: &[PathBuf], as_json: bool) -> Outcome {
    let Some(format) = Format::parse(format) else {
        return Err(Error::invalid(format!(
            "--format {format:?} is not jsonl, openai, claude-code, codex or locomo"
        ))
        .into());
    };
    // Read every file before adding anything: a bad file refuses the whole call.
    let reading = crate::progress::Progress::new("reading files", !as_json);
    let mut transcripts = Vec::new();
    for (i, f) in files.iter().enumerate() {
        reading.set(i, files.len());
        transcripts.extend(import::read(format, f)?);
    }
    drop(reading);
    workspace_id(&ctx.root)?;
    let store = open_store(&ctx.root)?;
    // One call, so the whole import is checked together (twin names across
    // files and sessions) and added in one store transaction.
    let total = import::import(&store, &transcripts)?;
    tracing::info!(sessions = total.sessions, nodes = total.nodes, new = total.new_nodes, "imported");
    if as_json {
        report::json_line(&total)
    } else {
        report::line(&format!(
            "{} sessions, {} nodes read, {} new",
            total.sessions, total.nodes, total.new_nodes
        ))
    }
}

/// Picks the writer from the flags and the configuration
/// ([`scriptorium::writers::choose`]).
pub(super) fn choose(ctx: &Ctx, a: &ModelArgs) -> Result<Chosen, Error> {
    Ok(scriptorium::writers::choose(&a.flags(), &ctx.config)?)
}

/// The flags of `write`.
pub(super) struct WriteOptions {
    pub(super) session: Option<String>,
    pub(super) force: bool,
    pub(super) json: bool,
    pub(super) threshold: Option<usize>,
    pub(super) timeout_ms: u64,
    pub(super) model: ModelArgs,
}

/// Writes what the sessions owe; every failure is a write failure (with
/// `retryable`).
pub(super) fn write(ctx: &Ctx, o: &WriteOptions) -> Outcome {
    let root = &ctx.root;
    snapshot::require(root)?;
    let ws = workspace_id(root)?;
    let store = SqliteStore::open(&root.join(SESSIONS_DB)).map_err(WriteFailure::from)?;
    let mut chosen = choose(ctx, &o.model)?;
    super::migrate_core(root)?;
    let w = chosen.batch_writer();
    let mut sch = Scheduler::new(&store, root, &ws);
    sch.threshold = o.threshold.or(ctx.config.threshold).unwrap_or(scheduler::pending::DEFAULT_THRESHOLD);
    sch.every_steps = ctx.config.reflection_every_steps;
    sch.lock_timeout = Duration::from_millis(o.timeout_ms);
    let r = match &o.session {
        Some(s) => match store.session(s).map_err(WriteFailure::from)? {
            Some(_) => sch.write(w, s, o.force),
            None => Err(WriteFailure::new(scheduler::Code::NotFound, format!("no session {s:?}"))),
        },
        None => sch.write_all(w, o.force),
    }?;
    let checkup = scriptorium::snapshot::checkup(root)?;
    let core = scriptorium::core_report(root, &checkup.checked)?;
    if o.json {
        report::json_line(&serde_json::json!({
            "turns": r.turns,
            "batches": r.batches,
            "revision": r.revision,
            "changed": r.changed,
            "writer": w.name(),
            "core": core,
            "limits": r.limits,
        }))
    } else if r.turns == 0 {
        report::line("nothing owed")
    } else {
        report::line(&format!(
            "{} turns in {} batches; revision {}; core.md {} tokens, {} block(s) left out",
            r.turns,
            r.batches,
            r.revision.unwrap_or_default(),
            core.tokens,
            core.omitted.len()
        ))
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
            if e.ok && e.changed.is_some() {
                let changed = e.changed.as_ref().map_or(0, Vec::len);
                let selected = e.selected.as_ref().map_or(0, Vec::len);
                s.push_str(&format!(" ok: {selected} conversations selected, {changed} files changed"));
                if let Some(why) = &e.reason {
                    s.push_str(&format!(" ({why})"));
                }
            } else if e.ok {
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

/// The watcher's dream pass (nightly and on idle): the chosen writer's,
/// automatic, within the configured caps.
struct Nightly<'a> {
    root: &'a Path,
    writer: &'a mut Chosen,
    options: dream::Options,
}

impl Reorganize for Nightly<'_> {
    fn reorganize(&mut self) -> Result<dream::Report, WriteFailure> {
        self.writer.dream(self.root, &self.options)
    }
}

/// The idle watcher in the foreground (one poll with `once`).
pub(super) fn watch(
    ctx: &Ctx,
    idle_secs: Option<u64>,
    once: bool,
    as_json: bool,
    model: &ModelArgs,
) -> Outcome {
    let root = &ctx.root;
    snapshot::require(root)?;
    let mut chosen = choose(ctx, model)?;
    let ws = workspace_id(root)?;
    let store = open_store(root)?;
    let mut sch = Scheduler::new(&store, root, &ws);
    sch.every_steps = ctx.config.reflection_every_steps;
    if let Some(t) = ctx.config.threshold {
        sch.threshold = t;
    }
    let idle_secs = idle_secs.or(ctx.config.idle_secs).unwrap_or(scriptorium::config::DEFAULT_IDLE_SECS);
    let mut watcher = Watcher::new(&sch, i64::try_from(idle_secs).unwrap_or(i64::MAX))
        .with_self_notice(ctx.config.self_edit_notice);
    if let Some(h) = ctx.config.nightly_hour {
        watcher = watcher.with_nightly_hour(h);
    }
    let mut sink = Print { json: as_json };
    if once {
        let p = watcher.poll(chosen.batch_writer(), &mut sink)?;
        return if as_json {
            report::json_line(&p)
        } else {
            report::line(&format!(
                "handled {}, deferred {}, failed {}",
                p.handled.len(),
                p.deferred.len(),
                p.failed.len()
            ))
        };
    }
    let every = Duration::from_secs(idle_secs.clamp(1, 60) / 2 + 1);
    let next = watcher.next_nightly();
    let _ = writeln!(io::stderr().lock(), "watching {} (nightly pass at {next})", root.display());
    loop {
        if let Err(e) = watcher.poll(chosen.batch_writer(), &mut sink) {
            let _ = writeln!(io::stderr().lock(), "poll failed: {e}");
        }
        let options = dream_options(&ctx.config, scheduler::write::BACKGROUND_LOCK_TIMEOUT);
        let mut hook = Nightly { root, writer: &mut chosen, options };
        if !watcher.nightly_if_due(&mut hook, &mut sink) {
            if let Err(e) = watcher.idle_if_due(&mut hook, &mut sink) {
                let _ = writeln!(io::stderr().lock(), "idle pass failed: {e}");
            }
        }
        std::thread::sleep(every);
    }
}

/// The dream pass on demand.
pub(super) fn sleep(ctx: &Ctx, a: &SleepArgs) -> Outcome {
    snapshot::require(&ctx.root)?;
    let mut chosen = choose(ctx, &a.model)?;
    let mut options = dream_options(&ctx.config, transaction::lock::INTERACTIVE_TIMEOUT);
    options.focus.clone_from(&a.focus);
    if let Some(n) = a.recent {
        options.pick = dream::Pick::Recent(usize::try_from(n).unwrap_or(usize::MAX));
    } else if !a.conversations.is_empty() {
        options.pick = dream::Pick::Conversations(a.conversations.clone());
    }
    let r = chosen.dream(&ctx.root, &options)?;
    if a.json {
        return report::json_line(&r);
    }
    report::line(&in_words(&r))
}

/// A dream pass's report in words: what it selected, what the hygiene did,
/// what changed or why nothing did.
fn in_words(r: &dream::Report) -> String {
    let mut lines = Vec::new();
    if r.selected.is_empty() {
        lines.push("selected no conversation".to_owned());
    }
    for s in &r.selected {
        lines.push(format!("selected {} ({} records, {} bytes)", s.conversation, s.records, s.bytes));
    }
    lines.push(format!(
        "hygiene: {} duplicate blocks merged, {} alias lists sorted",
        r.hygiene.merged, r.hygiene.aliases
    ));
    match r.reason {
        Some(why) => lines.push(format!("nothing changed: {}", why.as_str())),
        None => lines.extend(r.changed.iter().map(|p| format!("changed {p}"))),
    }
    lines.join("\n")
}

/// Topics for trusted records no block cites, in batches.
pub(super) fn backfill(ctx: &Ctx, batch: usize, model: &ModelArgs, as_json: bool) -> Outcome {
    snapshot::require(&ctx.root)?;
    if batch == 0 {
        return Err(Error::invalid("--batch must be at least 1").into());
    }
    let mut chosen = choose(ctx, model)?;
    let bar = crate::progress::Progress::new("backfill: records", !as_json);
    let mut progress = |done: usize, total: usize| bar.set(done, total);
    let result = backfill::backfill(
        &ctx.root,
        chosen.input_writer(),
        batch,
        transaction::lock::INTERACTIVE_TIMEOUT,
        &mut progress,
    );
    drop(bar);
    let r = result?;
    if as_json {
        report::json_line(&r)
    } else {
        report::line(&format!(
            "{} records in {} batches; {} files changed",
            r.records,
            r.batches,
            r.changed.len()
        ))
    }
}
