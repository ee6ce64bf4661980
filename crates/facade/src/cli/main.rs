//! The `scriptorium` command-line program: a thin adapter over the
//! `scriptorium` library.
//!
//! Results go to stdout, one JSON object per line; refusals go to stderr as
//! `{"error":{"code","message",…}}` with exit code 1; usage errors exit 2.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{self, Write};
use std::process::ExitCode;

use clap::Parser;

mod args;
mod mcp;
mod progress;
mod report;
mod verbs;

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

/// Whether the command line asks for a hook: its first word that is not a
/// flag (or `--workspace`'s value) is `hook`.
fn is_hook(args: &[std::ffi::OsString]) -> bool {
    let mut words = args.iter().skip(1);
    while let Some(w) = words.next() {
        if w == "--workspace" {
            words.next();
        } else if !w.to_string_lossy().starts_with('-') {
            return w == "hook";
        }
    }
    false
}

fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match args::Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        // A hook never fails its agent, not even on a bad command line
        // (exit 2 would block Claude Code's prompt or stop).
        Err(e) if is_hook(&argv) && e.use_stderr() => return report::hook_usage(&e.to_string()),
        Err(e) => e.exit(),
    };
    init_logs(cli.verbose);
    // Whatever verb changes the self, the person is told at the next hook.
    scriptorium::hooks::notices::register();
    report::finish(verbs::run(cli))
}
