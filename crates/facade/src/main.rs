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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Archive(ArchiveCommand::Append { workspace, json: _, timeout_ms }) => {
            run_append(workspace, timeout_ms)
        }
        Command::Archive(ArchiveCommand::Dump { file, json: _ }) => run_dump(file),
    }
}
