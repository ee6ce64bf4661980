//! The verbs: each reads its flags, calls the library, and renders the
//! result; what they share (opening a writer or a snapshot, migrating a
//! hand-written `core.md`) is here.

use std::path::{Path, PathBuf};
use std::time::Duration;

use scriptorium::config::Config;
use scriptorium::snapshot::Snapshot;
use scriptorium::{transaction, Error};

use crate::args::{
    ArchiveCommand, Cli, Command, ConfigCommand, IndexCommand, RemoteCommand, SessionCommand, TopicCommand,
};
use crate::report::{self, shown, Outcome};

mod archive;
mod check;
mod config;
mod demo;
mod history;
mod hook;
mod install;
mod palace;
mod search;
mod sessions;
mod status;
mod sync;
mod update;

/// What every verb is given besides its flags.
#[derive(Debug)]
pub(crate) struct Ctx {
    /// The workspace the command line names.
    pub(crate) root: PathBuf,
    /// The configuration in force for it.
    pub(crate) config: Config,
}

/// Runs the verb the command line names.
pub(crate) fn run(cli: Cli) -> Outcome {
    let root = cli.workspace();
    let workspace_origin = cli.workspace_origin();
    // Configuration first: with memory.backend = "none" every verb refuses
    // before reading stdin or touching the workspace. Except a hook, which
    // never fails its agent: it reads the configuration and answers every
    // refusal itself, the disabled backend's included.
    let config = if matches!(cli.command, Command::Hook(_)) {
        Config::default()
    } else {
        let config = Config::load(&root).map_err(Error::from)?;
        // What is configured can always be shown, memory off included.
        if config.disabled() && !matches!(cli.command, Command::Config(_)) {
            return Err(Error::disabled().into());
        }
        config
    };
    let ctx = Ctx { root, config };
    match cli.command {
        Command::Archive(ArchiveCommand::Append { timeout_ms, .. }) => archive::append(&ctx, timeout_ms),
        Command::Archive(ArchiveCommand::Dump { file, .. }) => archive::dump(&file),
        Command::Topic(TopicCommand::Check { paths, json }) => check::topic_check(&ctx, &paths, json),
        Command::Index(IndexCommand::Build { json }) => status::index_build(&ctx, json),
        Command::Search { args, json } => search::search(&ctx, &args, json),
        Command::Update { patch, tier, timeout_ms, json } => {
            update::update(&ctx, &patch, tier, timeout_ms, json)
        }
        Command::Status { json } => status::status(&ctx, json),
        Command::Session(SessionCommand::Append { .. }) => sessions::append(&ctx),
        Command::Session(SessionCommand::Import { format, files, json }) => {
            sessions::import(&ctx, &format, &files, json)
        }
        Command::Write { session, force, json, threshold, timeout_ms, model } => sessions::write(
            &ctx,
            &sessions::WriteOptions { session, force, json, threshold, timeout_ms, model },
        ),
        Command::Watch { idle_secs, once, json, model } => {
            sessions::watch(&ctx, idle_secs, once, json, &model)
        }
        Command::Prompt { json, session } => search::prompt(&ctx, session.as_deref(), json),
        Command::Hook(h) => hook::run(ctx.root, h),
        Command::Mcp { tier } => crate::mcp::run(ctx.root, tier.tier()),
        Command::Demo { model, json } => demo::run(cli.workspace, &ctx.config, &model, json),
        Command::Recall { text, json } => search::recall(&ctx, &text, json),
        Command::Sleep(a) => sessions::sleep(&ctx, &a),
        Command::Backfill { batch, json, model } => sessions::backfill(&ctx, batch, &model, json),
        Command::Check { json, timeout_ms } => check::check(&ctx, json, timeout_ms),
        Command::Promote { source_ids, json, timeout_ms, model } => {
            update::promote(&ctx, &source_ids, json, timeout_ms, &model)
        }
        Command::Palace { out, open } => palace::run(&ctx, out, open),
        Command::Install { harness, scope, json } => install::install(&ctx, harness, scope, json),
        Command::Uninstall { harness, scope, json } => install::uninstall(&ctx, harness, scope, json),
        Command::Render { json, budget, timeout_ms } => status::render(&ctx, json, budget, timeout_ms),
        Command::Log { path, session, json } => history::log(&ctx, path, session, json),
        Command::Show { rev, json } => history::show(&ctx, &rev, json),
        Command::Undo { rev, force, timeout_ms, json } => history::undo(&ctx, &rev, force, timeout_ms, json),
        Command::Config(ConfigCommand::Show { json, model }) => {
            config::show(&ctx, workspace_origin, &model, json)
        }
        Command::Remote(RemoteCommand::Add { name, url, json }) => sync::remote_add(&ctx, &name, &url, json),
        Command::Sync { remote, timeout_ms, json } => sync::sync(&ctx, remote, timeout_ms, json),
        Command::Resolve { id, take, timeout_ms, json } => sync::resolve(&ctx, &id, &take, timeout_ms, json),
    }
}

/// A writer on `root`, waiting at most `timeout_ms` for the lock; says on
/// stderr what of an old layout it moved aside.
pub(crate) fn writer(root: &Path, timeout_ms: u64) -> Result<transaction::Committer<'static>, Error> {
    let w = transaction::Committer::open(root, Duration::from_millis(timeout_ms))?;
    note_superseded(root, &w.superseded);
    Ok(w)
}

fn note_superseded(root: &Path, superseded: &[String]) {
    if !superseded.is_empty() {
        let to = transaction::layout::superseded_dir(root);
        report::note(&format!("moved the old layout's {} to {}", superseded.join(", "), to.display()));
    }
}

/// The workspace held for reading ([`Snapshot`]); a workspace this process
/// cannot write is read as it is on disk, with a warning.
pub(crate) fn snapshot(root: &Path) -> Result<Snapshot, Error> {
    let s = Snapshot::open(root, Duration::from_millis(5000))?;
    note_superseded(root, s.superseded());
    if let Some(r) = s.read_only() {
        warn_read_only(&r);
    }
    Ok(s)
}

/// Says on stderr that the workspace is read as it is on disk, and whether
/// an interrupted install is left.
pub(crate) fn warn_read_only(r: &scriptorium::status::ReadOnly) {
    let mut lines = vec![format!(
        "the workspace cannot be written ({}): reading it as it is on disk; the search index is refreshed in memory for this command only",
        shown(&r.reason)
    )];
    if r.interrupted_install {
        lines.push(
            "an interrupted install could not be completed: its files are read as they are and may be half-installed; run check where the workspace can be written"
                .to_owned(),
        );
    }
    report::warn(&lines);
}

/// Says on stderr what happened to a hand-written root `core.md`, if
/// anything did (a failure to set it aside as a warning).
pub(crate) fn note_core(done: Option<transaction::CoreMigration>) {
    if let Some(d) = done {
        report::warn(&d.warnings);
        report::note(&format!("hand-written core.md: {}", shown(&d.note)));
    }
}

/// Migrates a hand-written root `core.md` before a verb reads or writes
/// (FORMAT §4.4). A workspace this process cannot write, or whose lock
/// another writer holds, is left as it is for now (a reader then reads it
/// as it is on disk; a writer meets the same refusal itself).
pub(crate) fn migrate_core(root: &Path) -> Result<(), Error> {
    let slot = transaction::views::CoreSlot::of(root);
    if let Some(w) = slot.warning() {
        report::warn(&[w]);
    }
    if slot != transaction::views::CoreSlot::HandWritten {
        return Ok(());
    }
    let mut w = match transaction::Committer::open(root, Duration::from_millis(5000)) {
        Ok(w) => w,
        Err(e)
            if matches!(
                e.code,
                transaction::Code::Io | transaction::Code::PermissionDenied | transaction::Code::Locked
            ) =>
        {
            return Ok(())
        }
        Err(e) => return Err(e.into()),
    };
    note_core(w.migrate_core()?);
    Ok(())
}
