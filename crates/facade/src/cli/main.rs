//! The `scriptorium` command-line program.
//!
//! Results go to stdout, one JSON object per line; refusals go to stderr as
//! `{"error":{"code","message",…}}` with exit code 1; usage errors exit 2.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use scriptorium::archive::{self, append, input, json};
use scriptorium::index::{
    self,
    search::{Bm25, Filters},
    segment::Kind,
    tokenize::TokenizerConfig,
};
use scriptorium::transaction;

mod demo;
mod mcp;
mod palace;
mod progress;
mod sessions;
mod workspace;

use scriptorium::topics::validate::{check, only_named, ArchiveResolver, Checked};

/// Long-term memory for LLM agents.
#[derive(Debug, Parser)]
#[command(name = "scriptorium", version, about)]
struct Cli {
    /// Log what is happening on stderr: -v info, -vv debug, -vvv trace
    /// (`RUST_LOG`, in tracing's filter syntax, wins when set; default: no logs).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

/// Logs on stderr, off unless `-v` or `RUST_LOG` asks: stderr otherwise
/// carries only the error object of a refusal.
fn init_logs(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let filter = match std::env::var("RUST_LOG") {
        Ok(spec) if !spec.trim().is_empty() => EnvFilter::try_new(spec.trim()),
        _ => EnvFilter::try_new(match verbose {
            0 => "off",
            1 => "info",
            2 => "debug",
            _ => "trace",
        }),
    };
    let filter = filter.unwrap_or_else(|e| {
        let _ = writeln!(io::stderr().lock(), "RUST_LOG is not a valid filter ({e}); logging warnings only");
        EnvFilter::new("warn")
    });
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&io::stderr()))
        .with_target(true)
        .try_init();
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The verbatim source archive.
    #[command(subcommand)]
    Archive(ArchiveCommand),
    /// Topic files.
    #[command(subcommand)]
    Topic(TopicCommand),
    /// The search index under .scriptorium/index/.
    #[command(subcommand)]
    Index(IndexCommand),
    /// Search topic blocks and archived records, best first: BM25, or by
    /// meaning with --method embedding|hybrid (refreshing a stale index
    /// first). No hits prints nothing.
    Search {
        #[command(flatten)]
        args: SearchArgs,
        /// The workspace folder.
        #[arg(long, env = "SCRIPTORIUM_WORKSPACE", default_value_os_t = scriptorium::config::default_workspace())]
        workspace: PathBuf,
        /// One JSON object per hit (FORMAT.md §7).
        #[arg(long)]
        json: bool,
    },
    /// Apply a patch (FORMAT.md §6) as one validated, all-or-nothing,
    /// crash-safe transaction; print {"revision","changed"}.
    Update {
        /// The workspace folder.
        #[arg(long, env = "SCRIPTORIUM_WORKSPACE", default_value_os_t = scriptorium::config::default_workspace())]
        workspace: PathBuf,
        /// The patch file, or `-` for stdin.
        #[arg(long)]
        patch: String,
        /// Who is writing: `owner` may do everything, `paired` may only
        /// create files and append to them.
        #[arg(long, value_enum, default_value_t = TierArg::Owner)]
        tier: TierArg,
        /// How long to wait for another writer's lock before refusing with LOCKED.
        #[arg(long, default_value_t = 5000)]
        timeout_ms: u64,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// The revision, counts of topic files, blocks, pending blocks, source
    /// records, pending sources, and the index state.
    Status {
        /// The workspace folder.
        #[arg(long, env = "SCRIPTORIUM_WORKSPACE", default_value_os_t = scriptorium::config::default_workspace())]
        workspace: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Validate the whole workspace (recovering an interrupted install
    /// first); print one diagnostic per line, then a summary; exit 1 on any
    /// error.
    Check {
        /// The workspace folder.
        #[arg(long, env = "SCRIPTORIUM_WORKSPACE", default_value_os_t = scriptorium::config::default_workspace())]
        workspace: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// How long to wait for another writer's lock before refusing with LOCKED.
        #[arg(long, default_value_t = 5000)]
        timeout_ms: u64,
    },
    /// Promote pending sources (owner only): they and the blocks citing them
    /// count as trusted from now on; recorded in .scriptorium/audit.jsonl.
    /// Then the writer writes the named records no block cites yet, as one
    /// transaction.
    Promote {
        /// The workspace folder.
        #[arg(long, env = "SCRIPTORIUM_WORKSPACE", default_value_os_t = scriptorium::config::default_workspace())]
        workspace: PathBuf,
        /// Source ids (provider/thread/message).
        #[arg(required = true)]
        source_ids: Vec<String>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// How long to wait for another writer's lock before refusing with LOCKED.
        #[arg(long, default_value_t = 5000)]
        timeout_ms: u64,
        #[command(flatten)]
        model: sessions::ModelArgs,
    },
    /// Conversation sessions (.scriptorium/sessions.db).
    #[command(subcommand)]
    Session(SessionCommand),
    /// Write what the sessions owe: batches of pending turns at the token
    /// threshold (all of them with --force), each one transaction; exactly
    /// the written turns are marked.
    Write {
        /// The workspace folder.
        #[arg(long, env = "SCRIPTORIUM_WORKSPACE", default_value_os_t = scriptorium::config::default_workspace())]
        workspace: PathBuf,
        /// Only this session (default: every session, in id order).
        #[arg(long)]
        session: Option<String>,
        /// Write everything pending, on every branch tip, below the threshold too.
        #[arg(long)]
        force: bool,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// The batch threshold in o200k_base tokens.
        /// The batch threshold in o200k_base tokens (default: memory.writer.threshold, else 16000).
        #[arg(long)]
        threshold: Option<usize>,
        /// How long to wait for another writer's lock before failing with LOCKED (retryable).
        #[arg(long, default_value_t = 5000)]
        timeout_ms: u64,
        #[command(flatten)]
        model: sessions::ModelArgs,
    },
    /// Run the idle watcher in the foreground: sessions quiet for --idle-secs
    /// get a forced write; the nightly pass runs at local 03:00
    /// (memory.writer.nightly_hour). Events go to stdout.
    Watch {
        /// The workspace folder.
        #[arg(long, env = "SCRIPTORIUM_WORKSPACE", default_value_os_t = scriptorium::config::default_workspace())]
        workspace: PathBuf,
        /// Seconds a session must be quiet before it is written.
        /// (default: memory.writer.idle_secs, else 600)
        #[arg(long)]
        idle_secs: Option<u64>,
        /// One poll, then exit.
        #[arg(long)]
        once: bool,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        model: sessions::ModelArgs,
    },
    /// A bundled group conversation (three trusted speakers, a forged label,
    /// an unpaired member) written into a fresh workspace, and what a person
    /// should see of it; the last line names the workspace.
    Demo {
        /// A fresh (empty or missing) folder; default a new temporary one.
        #[arg(long)]
        workspace: Option<PathBuf>,
        #[command(flatten)]
        model: sessions::ModelArgs,
        /// Everything shown as one JSON object: writer, turns, batches,
        /// topics, prompt, recalls, speaker_search, workspace.
        #[arg(long)]
        json: bool,
    },
    /// Serve the memory_* tools over the Model Context Protocol (stdio,
    /// one JSON-RPC message per line).
    Mcp {
        /// The workspace folder.
        #[arg(long, env = "SCRIPTORIUM_WORKSPACE", default_value_os_t = scriptorium::config::default_workspace())]
        workspace: PathBuf,
        /// What callers may write: owner may do everything, paired may only
        /// create files and append to them.
        #[arg(long, value_enum, default_value_t = TierArg::Paired)]
        tier: TierArg,
    },
    /// Print what an agent is given every session: the rendered core.md,
    /// fenced as recalled memory (nothing when it is empty).
    Prompt {
        /// The workspace folder.
        #[arg(long, env = "SCRIPTORIUM_WORKSPACE", default_value_os_t = scriptorium::config::default_workspace())]
        workspace: PathBuf,
        /// Machine-readable output: {"text","hits"}.
        #[arg(long)]
        json: bool,
    },
    /// Print what an agent is given for one message: the top 5 blocks and
    /// records for it, fenced as recalled memory (nothing when nothing
    /// matches).
    Recall {
        /// The message.
        text: String,
        /// The workspace folder.
        #[arg(long, env = "SCRIPTORIUM_WORKSPACE", default_value_os_t = scriptorium::config::default_workspace())]
        workspace: PathBuf,
        /// Machine-readable output: {"text","hits"}.
        #[arg(long)]
        json: bool,
    },
    /// The reorganize pass on demand (the watcher runs it nightly): split,
    /// merge and repair topic files through one transaction. The offline
    /// writer changes nothing.
    Sleep {
        /// The workspace folder.
        #[arg(long, env = "SCRIPTORIUM_WORKSPACE", default_value_os_t = scriptorium::config::default_workspace())]
        workspace: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        model: sessions::ModelArgs,
    },
    /// Write topics for trusted archived records that no block cites, in
    /// batches, without archiving them again.
    Backfill {
        /// The workspace folder.
        #[arg(long, env = "SCRIPTORIUM_WORKSPACE", default_value_os_t = scriptorium::config::default_workspace())]
        workspace: PathBuf,
        /// Records per batch.
        #[arg(long, default_value_t = 50)]
        batch: usize,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        model: sessions::ModelArgs,
    },
    /// Write the memory palace: one self-contained HTML page showing the
    /// topics with their cited records, people, timeline, relations,
    /// history and core.md; print its absolute path.
    Palace {
        /// The workspace folder.
        #[arg(long, env = "SCRIPTORIUM_WORKSPACE", default_value_os_t = scriptorium::config::default_workspace())]
        workspace: PathBuf,
        /// Write the page here (its folder must exist; the file is replaced
        /// atomically). Default: palace.html in a fresh private temporary folder.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Open the page with the platform's opener (xdg-open, open).
        #[arg(long)]
        open: bool,
    },
    /// Rebuild every derived view (core.md, timeline/, recent_events.jsonl,
    /// relations.json) from topics and sources, and print what was built.
    Render {
        /// The workspace folder.
        #[arg(long, env = "SCRIPTORIUM_WORKSPACE", default_value_os_t = scriptorium::config::default_workspace())]
        workspace: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// The token budget of core.md, for this rendering only (default:
        /// memory.core_budget in the workspace's scriptorium.toml, else 2000).
        #[arg(long)]
        budget: Option<usize>,
        /// How long to wait for another writer's lock before refusing with LOCKED.
        #[arg(long, default_value_t = 5000)]
        timeout_ms: u64,
    },
}

#[derive(Debug, Subcommand)]
enum IndexCommand {
    /// Build the search index of a workspace from every file, replacing any
    /// index there, and print what was built.
    Build {
        /// The workspace folder.
        #[arg(long, env = "SCRIPTORIUM_WORKSPACE", default_value_os_t = scriptorium::config::default_workspace())]
        workspace: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum TierArg {
    Owner,
    Paired,
}

fn tier_of(t: TierArg) -> transaction::Tier {
    match t {
        TierArg::Owner => transaction::Tier::Owner,
        TierArg::Paired => transaction::Tier::Paired,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum MethodArg {
    Bm25,
    Embedding,
    Hybrid,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum KindArg {
    Topic,
    Source,
}

#[derive(Debug, Subcommand)]
enum TopicCommand {
    /// Validate topic files (default: all of topics/) against the workspace's
    /// sources; print one diagnostic per line and exit 1 on any.
    Check {
        /// The workspace folder.
        #[arg(long, env = "SCRIPTORIUM_WORKSPACE", default_value_os_t = scriptorium::config::default_workspace())]
        workspace: PathBuf,
        /// Topic files to check (workspace-relative, or paths inside it).
        paths: Vec<String>,
        /// One JSON object per diagnostic.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum ArchiveCommand {
    /// Archive records read as JSON lines on stdin, as one all-or-nothing batch.
    ///
    /// Each line: {"provider","thread","message","role","timestamp","content"}
    /// plus optional "speaker_id", "speaker_display" and "pending". Prints
    /// {"appended":N,"duplicates":M,"files":[…]}.
    Append {
        /// The workspace folder (created when missing).
        #[arg(long, env = "SCRIPTORIUM_WORKSPACE", default_value_os_t = scriptorium::config::default_workspace())]
        workspace: PathBuf,
        /// Machine-readable output (the only output form of this verb).
        #[arg(long)]
        json: bool,
        /// How long to wait for another writer's lock before refusing with LOCKED.
        #[arg(long, default_value_t = 5000)]
        timeout_ms: u64,
    },
    /// Print every record of a v2 or legacy archive file, one JSON object per line.
    Dump {
        /// The archive file.
        file: PathBuf,
        /// Machine-readable output (the only output form of this verb).
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum SessionCommand {
    /// Import transcripts into the session store; a file imported again
    /// adds only nodes with new ids.
    Import {
        /// The workspace folder (created if missing).
        #[arg(long, env = "SCRIPTORIUM_WORKSPACE", default_value_os_t = scriptorium::config::default_workspace())]
        workspace: PathBuf,
        /// jsonl, openai, claude-code or locomo.
        #[arg(long)]
        format: String,
        /// The transcript files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
}

fn fail(err: &archive::Error) -> ExitCode {
    let _ = writeln!(io::stderr().lock(), "{}", json::error_line(err));
    ExitCode::from(1)
}

fn tool_fail(e: &scriptorium::Error) -> ExitCode {
    let _ = writeln!(io::stderr().lock(), "{}", json::to_line(&serde_json::json!({ "error": e })));
    ExitCode::from(1)
}

fn fail_with(code: &str, message: String, path: Option<&std::path::Path>) -> ExitCode {
    let mut obj = serde_json::json!({"code": code, "message": message});
    if let Some(p) = path {
        obj["path"] = p.to_string_lossy().into_owned().into();
    }
    let _ = writeln!(io::stderr().lock(), "{}", json::to_line(&serde_json::json!({ "error": obj })));
    ExitCode::from(1)
}

/// A refusal of the transaction layer: its path is workspace-relative (or
/// a JSON location in the patch), and a validation failure lists every
/// diagnostic the change would add.
fn fail_tx(e: &transaction::Error) -> ExitCode {
    let mut obj = serde_json::json!({"code": e.code.as_str(), "message": e.message});
    if let Some(p) = &e.path {
        obj["path"] = p.clone().into();
    }
    if let Some(o) = e.offset {
        obj["offset"] = o.into();
    }
    if let Some(l) = e.line {
        obj["line"] = l.into();
    }
    if !e.diagnostics.is_empty() {
        obj["diagnostics"] = serde_json::to_value(&e.diagnostics).expect("diagnostics serialize");
    }
    let _ = writeln!(io::stderr().lock(), "{}", json::to_line(&serde_json::json!({ "error": obj })));
    ExitCode::from(1)
}

fn print_line(line: &str) -> ExitCode {
    match writeln!(io::stdout().lock(), "{line}") {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => io_fail(e),
    }
}

/// A writer on `root`, waiting at most `timeout_ms` for the lock.
fn writer(root: &std::path::Path, timeout_ms: u64) -> Result<transaction::Writer<'static>, ExitCode> {
    let w = transaction::Writer::open(root, std::time::Duration::from_millis(timeout_ms))
        .map_err(|e| fail_tx(&e))?;
    if !w.superseded.is_empty() {
        let to = transaction::layout::superseded_dir(root);
        let _ = writeln!(
            io::stderr().lock(),
            "note: moved the old layout's {} to {}",
            w.superseded.join(", "),
            to.display()
        );
    }
    Ok(w)
}

/// A reader never sees a half-installed patch: an install waiting for
/// recovery is completed first (under the write lock, which also rebuilds
/// views torn since they were written), then the lock is
/// held shared while reading, so no install runs meanwhile. A workspace this
/// process cannot write is read as it is on disk, with a warning.
fn settle(root: &std::path::Path) -> Result<transaction::lock::WriteLock, ExitCode> {
    let wait = std::time::Duration::from_millis(5000);
    let shared = transaction::lock::acquire_shared(root, wait).map_err(|e| fail_tx(&e))?;
    if let Some(why) = shared.held().not_writable() {
        warn_read_only(root, why);
        return Ok(shared);
    }
    // Views torn since they were written are rebuilt by the writer too.
    if !transaction::install::pending(root) && !transaction::views::stamp::views_torn(root) {
        return Ok(shared);
    }
    drop(shared);
    writer(root, 5000)?;
    transaction::lock::acquire_shared(root, wait).map_err(|e| fail_tx(&e))
}

/// Says on stderr that the workspace is read as it is on disk, because
/// `why` it cannot be written, and whether an interrupted install is left.
fn warn_read_only(root: &std::path::Path, why: &str) {
    let mut lines = vec![format!(
        "the workspace cannot be written ({}): reading it as it is on disk; the search index is refreshed in memory for this command only",
        shown(why)
    )];
    if transaction::install::pending(root) {
        lines.push(
            "an interrupted install could not be completed: its files are read as they are and may be half-installed; run check where the workspace can be written"
                .to_owned(),
        );
    }
    warn(&lines);
}

fn io_fail(e: io::Error) -> ExitCode {
    if e.kind() == io::ErrorKind::BrokenPipe {
        return ExitCode::from(1);
    }
    let line = json::to_line(
        &serde_json::json!({"error": {"code": "IO", "message": format!("writing output: {e}")}}),
    );
    let _ = writeln!(io::stderr().lock(), "{line}");
    ExitCode::from(1)
}

fn run_append(workspace: PathBuf, timeout_ms: u64) -> ExitCode {
    // Bad input is refused before the lock is taken.
    let records = match input::read_records(io::stdin().lock()) {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    if records.is_empty() {
        let report = append::AppendReport::default();
        return match writeln!(io::stdout().lock(), "{}", json::to_line(&report)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => io_fail(e),
        };
    }
    if let Err(e) = std::fs::create_dir_all(&workspace) {
        return fail_with("IO", format!("cannot create {}: {e}", workspace.display()), Some(&workspace));
    }
    let mut w = match writer(&workspace, timeout_ms) {
        Ok(w) => w,
        Err(code) => return code,
    };
    let patch = transaction::Patch {
        base_revision: String::new(),
        message: "archive append".into(),
        sources: records,
        edits: Vec::new(),
    };
    match w.commit(&patch, transaction::Tier::Owner, transaction::Base::Any) {
        Ok(c) => {
            warn(&c.warnings);
            let report =
                append::AppendReport { appended: c.appended, duplicates: c.duplicates, files: c.changed };
            print_line(&json::to_line(&report))
        }
        Err(e) => fail_tx(&e),
    }
}

/// Says on stderr what happened to a hand-written root `core.md`, if
/// anything did (a failure to set it aside as a warning).
fn note_core(done: Option<transaction::CoreMigration>) {
    if let Some(d) = done {
        warn(&d.warnings);
        let _ = writeln!(io::stderr().lock(), "note: hand-written core.md: {}", shown(&d.note));
    }
}

/// Migrates a hand-written root `core.md` before a verb reads or writes
/// (FORMAT §4.4). A workspace this process cannot write, or whose lock
/// another writer holds, is left as it is for now (a reader then reads it
/// as it is on disk; a writer meets the same refusal itself).
fn migrate_core(root: &std::path::Path) -> Result<(), ExitCode> {
    let slot = transaction::views::CoreSlot::of(root);
    if let Some(w) = slot.warning() {
        warn(&[w]);
    }
    if slot != transaction::views::CoreSlot::HandWritten {
        return Ok(());
    }
    let mut w = match transaction::Writer::open(root, std::time::Duration::from_millis(5000)) {
        Ok(w) => w,
        Err(e)
            if matches!(
                e.code,
                transaction::Code::Io | transaction::Code::PermissionDenied | transaction::Code::Locked
            ) =>
        {
            return Ok(())
        }
        Err(e) => return Err(fail_tx(&e)),
    };
    note_core(w.migrate_core().map_err(|e| fail_tx(&e))?);
    Ok(())
}

fn warn(warnings: &[String]) {
    for w in warnings {
        let _ = writeln!(io::stderr().lock(), "warning: {w}");
    }
}

fn run_update(root: PathBuf, patch: String, tier: TierArg, timeout_ms: u64, as_json: bool) -> ExitCode {
    let text = if patch == "-" {
        let mut s = String::new();
        match io::Read::read_to_string(&mut io::stdin().lock(), &mut s) {
            Ok(_) => s,
            Err(e) => {
                return fail_with("INVALID_ARGUMENT", format!("cannot read the patch from stdin: {e}"), None)
            }
        }
    } else {
        match std::fs::read(&patch) {
            Ok(b) => match String::from_utf8(b) {
                Ok(s) => s,
                Err(_) => {
                    return fail_with(
                        "INVALID_ARGUMENT",
                        format!("the patch {patch} is not UTF-8"),
                        Some(std::path::Path::new(&patch)),
                    )
                }
            },
            Err(e) => {
                let code = if e.kind() == io::ErrorKind::NotFound { "NOT_FOUND" } else { "IO" };
                return fail_with(
                    code,
                    format!("cannot read the patch {patch}: {e}"),
                    Some(std::path::Path::new(&patch)),
                );
            }
        }
    };
    let tier = tier_of(tier);
    // INVALID_ARGUMENT (shape, paths, links and twins on disk), then
    // PERMISSION_DENIED, before the lock.
    let mut parsed = match transaction::patch::parse(&text, transaction::Tier::Owner) {
        Ok(p) => p,
        Err(e) => return fail_tx(&e),
    };
    if root.is_dir() {
        if let Err(e) = transaction::patch::check_paths_on_disk(&root, &parsed) {
            return fail_tx(&e);
        }
    }
    if let Err(e) = transaction::patch::check_tier(&parsed, tier) {
        return fail_tx(&e);
    }
    if let Err(r) = workspace::require(&root) {
        return refuse(&r);
    }
    let mut w = match writer(&root, timeout_ms) {
        Ok(w) => w,
        Err(code) => return code,
    };
    match w.migrate_core_before(&mut parsed) {
        Ok(note) => note_core(note),
        Err(e) => return fail_tx(&e),
    }
    match w.commit(&parsed, tier, transaction::Base::Check) {
        Ok(c) => {
            warn(&c.warnings);
            if as_json {
                print_line(&json::to_line(&serde_json::json!({"revision": c.revision, "changed": c.changed})))
            } else {
                print_line(&format!("revision {}; {} file(s) changed", c.revision, c.changed.len()))
            }
        }
        Err(e) => fail_tx(&e),
    }
}

fn run_promote(
    root: PathBuf,
    ids: Vec<String>,
    as_json: bool,
    timeout_ms: u64,
    model: &sessions::ModelArgs,
) -> ExitCode {
    if let Err(r) = workspace::require(&root) {
        return refuse(&r);
    }
    // The writer is chosen first: a bad choice promotes nothing.
    let mut chosen = match sessions::choose(model) {
        Ok(c) => c,
        Err(f) => return sessions::fail_write(&f),
    };
    let timeout = std::time::Duration::from_millis(timeout_ms);
    let p = match scriptorium::writers::promote(&root, &ids, "owner", chosen.input_writer(), timeout) {
        Ok(p) => p,
        Err(e) => return fail_tx(&e),
    };
    let shown = if as_json {
        print_line(&json::to_line(&p))
    } else {
        let written = match &p.written {
            Some(b) => format!("; wrote {} record(s), {} file(s) changed", b.records, b.changed.len()),
            None => String::new(),
        };
        print_line(&format!(
            "promoted {} source(s); {} already trusted{written}",
            p.promotion.promoted.len(),
            p.promotion.already_trusted.len()
        ))
    };
    match &p.write_error {
        // The promotion stands; the failure is the exit status and the
        // error object on stderr.
        Some(e) => {
            let _ = writeln!(io::stderr().lock(), "{}", json::to_line(&serde_json::json!({ "error": e })));
            ExitCode::from(1)
        }
        None => shown,
    }
}

/// Every diagnostic of the whole workspace: topic files checked against
/// the archive (promotions counted).
fn whole_workspace_diagnostics(
    root: &std::path::Path,
) -> Result<(Vec<scriptorium::topics::diag::Diagnostic>, Checked, archive::archive::Archive), ExitCode> {
    let (topics, mut diagnostics) = workspace::load_topics(root).map_err(|r| refuse(&r))?;
    let archive = archive::archive::Archive::scan(root).map_err(|e| fail(&e))?;
    let mut resolver = ArchiveResolver::new(&archive);
    let promoted = archive::trust::promoted(root).map_err(|e| fail(&e))?;
    resolver.promote(&promoted);
    let checked = check(&topics, &resolver);
    diagnostics.extend(checked.diagnostics.iter().cloned());
    diagnostics.sort_by(|a, b| (&a.path, a.line, a.code).cmp(&(&b.path, b.line, b.code)));
    Ok((diagnostics, checked, archive))
}

fn run_check(root: PathBuf, as_json: bool, timeout_ms: u64) -> ExitCode {
    if let Err(r) = workspace::require(&root) {
        return refuse(&r);
    }
    // A workspace this process cannot write is checked as it is on disk,
    // under the shared lock; otherwise the write lock completes an
    // interrupted install first.
    let shared = match transaction::lock::acquire_shared(&root, std::time::Duration::from_millis(timeout_ms))
    {
        Ok(l) => l,
        Err(e) => return fail_tx(&e),
    };
    let (w, _shared) = match shared.held().not_writable() {
        Some(why) => {
            warn_read_only(&root, why);
            (None, Some(shared))
        }
        None => {
            drop(shared);
            match writer(&root, timeout_ms) {
                Ok(w) => (Some(w), None),
                Err(code) => return code,
            }
        }
    };
    let recovered = match w.as_ref().map(|w| &w.recovered) {
        Some(transaction::install::Recovered::Nothing) => "nothing",
        Some(transaction::install::Recovered::RolledForward) => "rolled_forward",
        Some(transaction::install::Recovered::Discarded) => "discarded",
        None if transaction::install::pending(&root) => "not_completed",
        None => "nothing",
    };
    let (diagnostics, _, archive) = match whole_workspace_diagnostics(&root) {
        Ok(x) => x,
        Err(code) => return code,
    };
    // An archive file that does not parse to its end: only its valid
    // prefix is read, and nothing is ever appended to it.
    let damaged: Vec<serde_json::Value> = archive
        .problems()
        .iter()
        .map(|p| {
            serde_json::json!({"code": "VALIDATION_FAILED", "path": p.path, "offset": p.diagnostic.offset,
                "line": p.diagnostic.line,
                "message": format!("the archive file does not parse to its end: {}", p.diagnostic.reason)})
        })
        .collect();
    let revision = match transaction::revision::compute(&root) {
        Ok(r) => r.hex,
        Err(e) => return fail_tx(&e),
    };
    drop(w);
    let mut out = BufWriter::new(io::stdout().lock());
    for d in &diagnostics {
        let line = if as_json { json::to_line(d) } else { shown(&d.to_string()) };
        if let Err(e) = writeln!(out, "{line}") {
            return io_fail(e);
        }
    }
    for d in &damaged {
        let line = if as_json {
            json::to_line(d)
        } else {
            format!(
                "{}: byte {}: {}",
                shown(d["path"].as_str().unwrap_or("")),
                d["offset"],
                shown(d["message"].as_str().unwrap_or(""))
            )
        };
        if let Err(e) = writeln!(out, "{line}") {
            return io_fail(e);
        }
    }
    let errors = diagnostics.len() + damaged.len();
    let ok = errors == 0;
    let summary = if as_json {
        json::to_line(
            &serde_json::json!({"ok": ok, "errors": errors, "revision": revision, "recovered": recovered}),
        )
    } else {
        format!("{errors} error(s); revision {revision}; recovery: {recovered}")
    };
    if let Err(e) = writeln!(out, "{summary}").and_then(|()| out.flush()) {
        return io_fail(e);
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn run_status(root: PathBuf, as_json: bool) -> ExitCode {
    if let Err(r) = workspace::require(&root) {
        return refuse(&r);
    }
    let _shared = match settle(&root) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let revision = match transaction::revision::compute(&root) {
        Ok(r) => r.hex,
        Err(e) => return fail_tx(&e),
    };
    let (diagnostics, checked, archive) = match whole_workspace_diagnostics(&root) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let promoted = match archive::trust::promoted(&root) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let topic_files =
        checked.blocks.iter().map(|b| b.path.as_str()).collect::<std::collections::BTreeSet<_>>();
    let (topic_count, _) = match workspace::load_topics(&root) {
        Ok((t, bad)) => (t.len() + bad.len(), ()),
        Err(r) => return refuse(&r),
    };
    let _ = topic_files;
    let blocks = checked.blocks.iter().filter(|b| b.id.is_some()).count();
    let pending_blocks = checked.blocks.iter().filter(|b| b.id.is_some() && b.pending).count();
    let records = archive.v2_records().count() + archive.legacy_records().count();
    let pending_sources =
        archive.v2_records().filter(|r| r.is_pending() && !promoted.contains(&r.id().text())).count();
    let index_state = match index::workspace::open(&root, TokenizerConfig::default()) {
        Ok(o) => serde_json::json!({
            "documents": o.report.documents,
            "action": o.report.action,
            "base_bytes": o.report.base_bytes,
            "delta_bytes": o.report.delta_bytes,
            "unsaved": o.report.unsaved,
        }),
        Err(e) => serde_json::json!({"error": e.message()}),
    };
    let core = match scriptorium::core_report(&root, &checked) {
        Ok(c) => c,
        Err(e) => return fail_tx(&e),
    };
    let mut v = serde_json::json!({
        "revision": revision,
        "topic_files": topic_count,
        "blocks": blocks,
        "pending_blocks": pending_blocks,
        "source_records": records,
        "pending_sources": pending_sources,
        "diagnostics": diagnostics.len(),
        "index": index_state,
        "core": core,
    });
    if let Some(obj) = v.as_object_mut() {
        obj.extend(scriptorium::writer_status(&root));
    }
    if as_json {
        print_line(&json::to_line(&v))
    } else {
        print_line(&format!(
            "revision {revision}\ntopic files {topic_count}, blocks {blocks} ({pending_blocks} pending), diagnostics {}\nsource records {records} ({pending_sources} pending)\ncore.md {} tokens, {} block(s) left out\nindex {}\npending turns {}\nwriter {}",
            diagnostics.len(),
            core.tokens,
            core.omitted.len(),
            v["index"],
            v["pending_turns"],
            v["writer"]
        ))
    }
}

fn run_dump(file: PathBuf) -> ExitCode {
    let dump = match archive::archive::dump(&file) {
        Ok(d) => d,
        Err(e) => return fail(&e),
    };
    let mut out = BufWriter::new(io::stdout().lock());
    for r in &dump.records {
        if let Err(e) = writeln!(out, "{}", json::to_line(r)) {
            return io_fail(e);
        }
    }
    if let Err(e) = out.flush() {
        return io_fail(e);
    }
    drop(out);
    match dump.error {
        Some(e) => fail(&e),
        None => ExitCode::SUCCESS,
    }
}

fn refuse(r: &workspace::Refusal) -> ExitCode {
    fail_with(r.code, r.message.clone(), r.path.as_deref())
}

fn run_topic_check(root: PathBuf, paths: Vec<String>, as_json: bool) -> ExitCode {
    if let Err(r) = workspace::require(&root) {
        return refuse(&r);
    }
    let mut named = Vec::new();
    for p in &paths {
        match workspace::relative_topic_path(&root, p) {
            Ok(rel) => named.push(rel),
            Err(r) => return refuse(&r),
        }
    }
    let (topics, mut diagnostics) = match workspace::load_topics(&root) {
        Ok(t) => t,
        Err(r) => return refuse(&r),
    };
    let archive = match archive::archive::Archive::scan(&root) {
        Ok(a) => a,
        Err(e) => return fail(&e),
    };
    let mut resolver = ArchiveResolver::new(&archive);
    match archive::trust::promoted(&root) {
        Ok(p) => resolver.promote(&p),
        Err(e) => return fail(&e),
    }
    let checked = check(&topics, &resolver);
    if named.is_empty() {
        diagnostics.extend(checked.diagnostics.iter().cloned());
    } else {
        diagnostics.retain(|d| named.contains(&d.path));
        diagnostics.extend(only_named(&checked, &named));
    }
    diagnostics.sort_by(|a, b| (&a.path, a.line, a.code).cmp(&(&b.path, b.line, b.code)));
    let mut out = BufWriter::new(io::stdout().lock());
    for d in &diagnostics {
        let line = if as_json { json::to_line(d) } else { shown(&d.to_string()) };
        if let Err(e) = writeln!(out, "{line}") {
            return io_fail(e);
        }
    }
    if let Err(e) = out.flush() {
        return io_fail(e);
    }
    if diagnostics.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn run_render(root: PathBuf, as_json: bool, budget: Option<usize>, timeout_ms: u64) -> ExitCode {
    if let Err(r) = workspace::require(&root) {
        return refuse(&r);
    }
    let mut w = match writer(&root, timeout_ms) {
        Ok(w) => w,
        Err(code) => return code,
    };
    if let Some(b) = budget {
        w.budget = b;
    }
    let derived = match w.rebuild_derived() {
        Ok(d) => d,
        Err(e) => return fail_tx(&e),
    };
    warn(&derived.warnings);
    let r = &derived.views;
    let line = if as_json {
        let mut report = serde_json::to_value(r).expect("a report serializes");
        if let Some(note) = &derived.hand_written_core {
            report["hand_written_core"] = note.clone().into();
        }
        if !derived.warnings.is_empty() {
            report["warnings"] = derived.warnings.clone().into();
        }
        json::to_line(&report)
    } else {
        format!(
            "core.md: {} tokens, {} block(s) left out; timeline: {} day file(s); recent events: {}; relations: {} nodes, {} edges{}",
            r.core.tokens,
            r.core.omitted.len(),
            r.timeline_files,
            r.events,
            r.relations.nodes,
            r.relations.edges,
            derived.hand_written_core.as_ref().map(|n| format!("; hand-written core.md: {n}")).unwrap_or_default()
        )
    };
    print_line(&line)
}

fn index_fail(e: &archive::Error) -> ExitCode {
    fail(e)
}

fn run_index_build(root: PathBuf, as_json: bool) -> ExitCode {
    if let Err(r) = workspace::require(&root) {
        return refuse(&r);
    }
    let bar = progress::Progress::new("reading files", !as_json);
    let mut progress = |done: usize, total: usize| bar.set(done, total);
    let opened = match index::workspace::build_with_progress(&root, TokenizerConfig::default(), &mut progress)
    {
        Ok(o) => o,
        Err(e) => return index_fail(&e),
    };
    drop(bar);
    let r = &opened.report;
    let line = if as_json {
        json::to_line(r)
    } else {
        format!("indexed {} documents from {} files ({} bytes)", r.documents, r.files_read, r.base_bytes)
    };
    match writeln!(io::stdout().lock(), "{line}") {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => io_fail(e),
    }
}

/// What to search for and how.
#[derive(Debug, clap::Args)]
struct SearchArgs {
    /// Free text.
    query: String,
    /// At most this many hits.
    #[arg(long, default_value_t = 10)]
    limit: usize,
    /// Only topic blocks or only source records.
    #[arg(long, value_enum)]
    kind: Option<KindArg>,
    /// Only paths starting with these bytes (workspace-relative).
    #[arg(long)]
    path_prefix: Option<String>,
    /// Only documents dated on or after this UTC day (YYYY-MM-DD).
    #[arg(long)]
    date_from: Option<String>,
    /// Only documents dated on or before this UTC day (YYYY-MM-DD).
    #[arg(long)]
    date_to: Option<String>,
    /// Only records of this speaker: an exact id, or a display, label or
    /// attribution (case-insensitive) that exactly one archived identity
    /// has (several: refused, listing them); implies source records.
    #[arg(long)]
    speaker: Option<String>,
    /// Include pending blocks and records.
    #[arg(long)]
    include_pending: bool,
    /// How to rank: BM25, cosine similarity of embeddings from the
    /// configured [memory.embeddings] endpoint, or both fused (which
    /// falls back to BM25, saying so, without an endpoint).
    #[arg(long, value_enum, default_value_t = MethodArg::Bm25)]
    method: MethodArg,
}

fn search_filters(a: &SearchArgs) -> Result<Filters, ExitCode> {
    let day = |flag: &str, v: &Option<String>| -> Result<Option<i32>, ExitCode> {
        match v {
            None => Ok(None),
            Some(s) => index::workspace::parse_day(s).map(Some).ok_or_else(|| {
                fail_with("INVALID_ARGUMENT", format!("{flag} {s:?} is not a date (YYYY-MM-DD)"), None)
            }),
        }
    };
    let kind = a.kind.map(|k| match k {
        KindArg::Topic => Kind::Topic,
        KindArg::Source => Kind::Source,
    });
    if a.speaker.is_some() && kind == Some(Kind::Topic) {
        let message = "--speaker matches archived records only; it cannot be combined with --kind topic";
        return Err(fail_with("INVALID_ARGUMENT", message.into(), None));
    }
    Ok(Filters {
        kind,
        path_prefix: a.path_prefix.clone(),
        day_from: day("--date-from", &a.date_from)?,
        day_to: day("--date-to", &a.date_to)?,
        speaker: None,
        include_pending: a.include_pending,
    })
}

fn print_fenced(f: &scriptorium::fence::Fenced, hits: usize, as_json: bool) -> ExitCode {
    if as_json {
        print_line(&json::to_line(&serde_json::json!({"text": f.as_str(), "hits": hits})))
    } else if f.is_empty() {
        ExitCode::SUCCESS
    } else {
        print_line(f.as_str())
    }
}

fn run_prompt(root: PathBuf, as_json: bool) -> ExitCode {
    if let Err(r) = workspace::require(&root) {
        return refuse(&r);
    }
    if let Err(code) = migrate_core(&root) {
        return code;
    }
    let _shared = match settle(&root) {
        Ok(l) => l,
        Err(code) => return code,
    };
    match scriptorium::recall::system_prompt(&root) {
        Ok(f) => {
            let blocks = f.as_str().lines().filter(|l| l.contains(" ^")).count();
            print_fenced(&f, blocks, as_json)
        }
        Err(e) => fail_with("IO", format!("cannot read core.md: {e}"), Some(&root.join("core.md"))),
    }
}

fn run_recall(root: PathBuf, text: &str, as_json: bool) -> ExitCode {
    if let Err(r) = workspace::require(&root) {
        return refuse(&r);
    }
    let _shared = match settle(&root) {
        Ok(l) => l,
        Err(code) => return code,
    };
    match scriptorium::recall::recall(&root, text) {
        Ok((f, hits)) => print_fenced(&f, hits, as_json),
        Err(e) => fail(&e),
    }
}

fn run_search(root: PathBuf, a: SearchArgs, as_json: bool) -> ExitCode {
    if a.speaker.is_some() && a.method != MethodArg::Bm25 {
        let method = if a.method == MethodArg::Embedding { "embedding" } else { "hybrid" };
        return fail_with(
            "INVALID_ARGUMENT",
            format!("--speaker works only with --method bm25 (it matches archived records' trusted speaker fields), not {method}"),
            None,
        );
    }
    if let Err(r) = workspace::require(&root) {
        return refuse(&r);
    }
    let _shared = match settle(&root) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let filters = match search_filters(&a) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let lines = if a.method == MethodArg::Bm25 {
        match index::workspace::search_lines(
            &root,
            TokenizerConfig::default(),
            &a.query,
            &filters,
            a.speaker.as_deref(),
            a.limit,
            Bm25::default(),
        ) {
            Ok(l) => l,
            Err(e) => return index_fail(&e),
        }
    } else {
        let method = if a.method == MethodArg::Embedding { "embedding" } else { "hybrid" };
        let answer = match scriptorium::embeddings::answer(
            &root,
            &sessions::config(),
            method,
            &a.query,
            &filters,
            None,
            a.limit,
        ) {
            Ok(v) => v,
            Err(e) => return tool_fail(&e),
        };
        if let Some(why) = answer["fallback"].as_str() {
            let _ = writeln!(io::stderr().lock(), "note: {}", shown(why));
        }
        answer["hits"].as_array().into_iter().flatten().map(scriptorium::embeddings::hit_line).collect()
    };
    if a.speaker.is_some() && !as_json {
        let _ = writeln!(io::stderr().lock(), "note: --speaker searches archived records only");
    }
    let mut out = BufWriter::new(io::stdout().lock());
    for l in &lines {
        let line = if as_json { l.clone() } else { human_hit(l) };
        if let Err(e) = writeln!(out, "{line}") {
            return io_fail(e);
        }
    }
    match out.flush() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => io_fail(e),
    }
}

/// A value shown on a terminal: control and format characters (escape
/// sequences, bidi controls, line separators) are written as `\u{…}`, so
/// a file name or label can neither move the cursor nor break the line.
fn shown(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() || archive::speaker::is_format_char(c) || matches!(c, '\u{2028}' | '\u{2029}') {
                format!("\\u{{{:x}}}", u32::from(c))
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// `score  path#anchor  attribution  snippet` for a person reading a
/// terminal (a record's attribution, FORMAT.md §2.3: who said it, shown so
/// no impostor looks like the person it imitates).
fn human_hit(line: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
    let anchor = shown(v["block_id"].as_str().or(v["anchor"].as_str()).unwrap_or(""));
    let who = v["attribution"].as_str().map(|l| format!("  {}", shown(l))).unwrap_or_default();
    let pending = if v["trust"] == "pending" { "  (pending)" } else { "" };
    format!(
        "{:.3}  {}#{anchor}{who}{pending}  {}",
        v["score"].as_f64().unwrap_or(0.0),
        shown(v["path"].as_str().unwrap_or("")),
        shown(v["snippet"].as_str().unwrap_or(""))
    )
}

/// The workspace a command line names (`--workspace DIR` or
/// `--workspace=DIR`), else `SCRIPTORIUM_WORKSPACE`, else the default.
fn workspace_of_args() -> PathBuf {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    for (i, a) in args.iter().enumerate() {
        if a == "--workspace" {
            if let Some(v) = args.get(i + 1) {
                return PathBuf::from(v);
            }
        }
        if let Some(v) = a.to_str().and_then(|s| s.strip_prefix("--workspace=")) {
            return PathBuf::from(v);
        }
    }
    std::env::var_os("SCRIPTORIUM_WORKSPACE")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(scriptorium::config::default_workspace)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logs(cli.verbose);
    // Configuration first: with memory.backend = "none" every verb refuses
    // before reading stdin or touching the workspace.
    let config = match scriptorium::config::Config::load(&workspace_of_args()) {
        Ok(c) => c,
        Err(e) => {
            return fail_with("INVALID_ARGUMENT", format!("configuration: {}", e.message), Some(&e.path))
        }
    };
    if config.disabled() {
        return fail_with(
            "MEMORY_DISABLED",
            "memory is disabled (memory.backend = \"none\")".to_owned(),
            None,
        );
    }
    sessions::set_config(config);
    match cli.command {
        Command::Archive(ArchiveCommand::Append { workspace, json: _, timeout_ms }) => {
            run_append(workspace, timeout_ms)
        }
        Command::Archive(ArchiveCommand::Dump { file, json: _ }) => run_dump(file),
        Command::Topic(TopicCommand::Check { workspace, paths, json }) => {
            run_topic_check(workspace, paths, json)
        }
        Command::Index(IndexCommand::Build { workspace, json }) => run_index_build(workspace, json),
        Command::Search { args, workspace, json } => run_search(workspace, args, json),
        Command::Update { workspace, patch, tier, timeout_ms, json } => {
            run_update(workspace, patch, tier, timeout_ms, json)
        }
        Command::Status { workspace, json } => run_status(workspace, json),
        Command::Session(SessionCommand::Import { workspace, format, files, json }) => {
            sessions::run_import(workspace, format, files, json)
        }
        Command::Write { workspace, session, force, json, threshold, timeout_ms, model } => {
            sessions::run_write(sessions::WriteOptions {
                root: workspace,
                session,
                force,
                json,
                threshold,
                timeout_ms,
                model,
            })
        }
        Command::Watch { workspace, idle_secs, once, json, model } => {
            sessions::run_watch(workspace, idle_secs, once, json, &model)
        }
        Command::Prompt { workspace, json } => run_prompt(workspace, json),
        Command::Mcp { workspace, tier } => mcp::run(workspace, tier_of(tier)),
        Command::Demo { workspace, model, json } => demo::run(workspace, &model, json),
        Command::Recall { text, workspace, json } => run_recall(workspace, &text, json),
        Command::Sleep { workspace, json, model } => sessions::run_sleep(workspace, &model, json),
        Command::Backfill { workspace, batch, json, model } => {
            sessions::run_backfill(workspace, batch, &model, json)
        }
        Command::Check { workspace, json, timeout_ms } => run_check(workspace, json, timeout_ms),
        Command::Promote { workspace, source_ids, json, timeout_ms, model } => {
            run_promote(workspace, source_ids, json, timeout_ms, &model)
        }
        Command::Palace { workspace, out, open } => palace::run(workspace, out, open),
        Command::Render { workspace, json, budget, timeout_ms } => {
            run_render(workspace, json, budget, timeout_ms)
        }
    }
}
