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

mod lock;
mod workspace;

use scriptorium::topics::validate::{check, only_named, ArchiveResolver};
use scriptorium::topics::views::{core_promotion, render, CorePromotion, CORE_BUDGET};

/// Long-term memory for LLM agents.
#[derive(Debug, Parser)]
#[command(name = "scriptorium", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The verbatim source archive.
    #[command(subcommand)]
    Archive(ArchiveCommand),
    /// Topic files.
    #[command(subcommand)]
    Topic(TopicCommand),
    /// Rebuild every derived view (core.md, timeline/, recent_events.jsonl,
    /// relations.json) from topics and sources, and print what was built.
    Render {
        /// The workspace folder.
        #[arg(long)]
        workspace: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// The token budget of core.md.
        #[arg(long, default_value_t = CORE_BUDGET)]
        budget: usize,
        /// How long to wait for another writer's lock before refusing with LOCKED.
        #[arg(long, default_value_t = 5000)]
        timeout_ms: u64,
    },
}

#[derive(Debug, Subcommand)]
enum TopicCommand {
    /// Validate topic files (default: all of topics/) against the workspace's
    /// sources; print one diagnostic per line and exit 1 on any.
    Check {
        /// The workspace folder.
        #[arg(long)]
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
        #[arg(long)]
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

fn fail(err: &archive::Error) -> ExitCode {
    let _ = writeln!(io::stderr().lock(), "{}", json::error_line(err));
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
    let _lock = match lock::acquire(&workspace, std::time::Duration::from_millis(timeout_ms)) {
        Ok(l) => l,
        Err(lock::LockError::Timeout(t)) => {
            let message = format!(
                "another writer holds {} (waited {} ms); nothing was written, try again",
                lock::LOCK_FILE,
                t.as_millis()
            );
            return fail_with("LOCKED", message, Some(&workspace.join(lock::LOCK_FILE)));
        }
        Err(lock::LockError::Io(e)) => {
            let message = format!("cannot take the write lock {}: {e}", lock::LOCK_FILE);
            return fail_with("IO", message, Some(&workspace.join(lock::LOCK_FILE)));
        }
        Err(lock::LockError::Refused(e)) => return fail(&e),
    };
    match append::append(&workspace, &records) {
        Ok(report) => {
            let mut out = io::stdout().lock();
            match writeln!(out, "{}", json::to_line(&report)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => io_fail(e),
            }
        }
        Err(e) => fail(&e),
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
    let checked = check(&topics, &ArchiveResolver::new(&archive));
    if named.is_empty() {
        diagnostics.extend(checked.diagnostics.iter().cloned());
    } else {
        diagnostics.retain(|d| named.contains(&d.path));
        diagnostics.extend(only_named(&checked, &named));
    }
    diagnostics.sort_by(|a, b| (&a.path, a.line, a.code).cmp(&(&b.path, b.line, b.code)));
    let mut out = BufWriter::new(io::stdout().lock());
    for d in &diagnostics {
        let line = if as_json { json::to_line(d) } else { d.to_string() };
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

fn run_render(root: PathBuf, as_json: bool, budget: usize, timeout_ms: u64) -> ExitCode {
    if let Err(r) = workspace::require(&root) {
        return refuse(&r);
    }
    let _lock = match lock::acquire(&root, std::time::Duration::from_millis(timeout_ms)) {
        Ok(l) => l,
        Err(lock::LockError::Timeout(t)) => {
            let message = format!("another writer holds {} (waited {} ms)", lock::LOCK_FILE, t.as_millis());
            return fail_with("LOCKED", message, Some(&root.join(lock::LOCK_FILE)));
        }
        Err(lock::LockError::Io(e)) => {
            let message = format!("cannot take the write lock {}: {e}", lock::LOCK_FILE);
            return fail_with("IO", message, Some(&root.join(lock::LOCK_FILE)));
        }
        Err(lock::LockError::Refused(e)) => return fail(&e),
    };
    let (topics, _undecodable) = match workspace::load_topics(&root) {
        Ok(t) => t,
        Err(r) => return refuse(&r),
    };
    let archive = match archive::archive::Archive::scan(&root) {
        Ok(a) => a,
        Err(e) => return fail(&e),
    };
    let resolver = ArchiveResolver::new(&archive);
    let checked = check(&topics, &resolver);
    let rendered = render(&topics, &checked, budget);
    if let Err(r) = workspace::install_views(&root, &rendered.files) {
        return refuse(&r);
    }
    let mut report = serde_json::to_value(&rendered.report).expect("a report serializes");
    let hand_written =
        std::fs::read(root.join("core.md")).ok().map(|b| String::from_utf8_lossy(&b).into_owned());
    match core_promotion(hand_written.as_deref(), &topics, &resolver) {
        CorePromotion::Move => {
            report["hand_written_core"] = "valid: left untouched, to be moved to topics/core.md".into()
        }
        CorePromotion::PreserveAsEvidence(d) => {
            report["hand_written_core"] = format!(
                "not a valid topic file ({} problems): left untouched, to be preserved as evidence",
                d.len()
            )
            .into()
        }
        CorePromotion::Overwrite => {
            report["hand_written_core"] =
                "topics/core.md exists: the hand-written core.md is left untouched until it is preserved"
                    .into()
        }
        CorePromotion::Nothing => {}
    }
    let line = if as_json {
        json::to_line(&report)
    } else {
        let r = &rendered.report;
        format!(
            "core.md: {} tokens, {} block(s) left out; timeline: {} day file(s); recent events: {}; relations: {} nodes, {} edges",
            r.core.tokens,
            r.core.omitted.len(),
            r.timeline_files,
            r.events,
            r.relations.nodes,
            r.relations.edges
        )
    };
    match writeln!(io::stdout().lock(), "{line}") {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => io_fail(e),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Archive(ArchiveCommand::Append { workspace, json: _, timeout_ms }) => {
            run_append(workspace, timeout_ms)
        }
        Command::Archive(ArchiveCommand::Dump { file, json: _ }) => run_dump(file),
        Command::Topic(TopicCommand::Check { workspace, paths, json }) => {
            run_topic_check(workspace, paths, json)
        }
        Command::Render { workspace, json, budget, timeout_ms } => {
            run_render(workspace, json, budget, timeout_ms)
        }
    }
}
