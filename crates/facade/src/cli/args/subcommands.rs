//! The verbs that group subcommands: `archive`, `topic`, `index`,
//! `session`, `hook`, `remote`, `config`.

use std::path::PathBuf;

use clap::Subcommand;

use super::*;

#[derive(Debug, Subcommand)]
pub(crate) enum HookCommand {
    /// A Claude Code hook event on stdin.
    ClaudeCode,
    /// A Codex CLI hook event on stdin.
    Codex,
    /// The background write a Stop, PreCompact or SessionEnd hook starts.
    #[command(hide = true)]
    Write {
        /// The hook event that started it.
        #[arg(long)]
        event: String,
        /// The session to write.
        #[arg(long)]
        session: String,
        /// Write everything pending (extract-before-discard).
        #[arg(long)]
        force: bool,
        /// Seconds to wait for the write lock.
        #[arg(long)]
        deadline_secs: u64,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum IndexCommand {
    /// Build the search index of a workspace from every file, replacing any
    /// index there, and print what was built.
    Build {
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum TopicCommand {
    /// Validate topic files (default: all of topics/) against the workspace's
    /// sources; print one diagnostic per line and exit 1 on any.
    Check {
        /// Topic files to check (workspace-relative, or paths inside it).
        paths: Vec<String>,
        /// One JSON object per diagnostic.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum ArchiveCommand {
    /// Archive records read as JSON lines on stdin, as one all-or-nothing batch.
    ///
    /// Each line: {"provider","thread","message","role","timestamp","content"}
    /// plus optional "speaker_id", "speaker_display" and "pending". Prints
    /// {"appended":N,"duplicates":M,"files":[…]}.
    Append {
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
pub(crate) enum SessionCommand {
    /// Record turns read as JSON lines on stdin (FORMAT.md §8, the jsonl
    /// shape): each node id once, a known one skipped; prints
    /// {"added","skipped"}. The harness, not the model, names the speaker.
    Append {
        /// Machine-readable output (the only output form of this verb).
        #[arg(long)]
        json: bool,
    },
    /// Import transcripts into the session store; a file imported again
    /// adds only nodes with new ids.
    Import {
        /// jsonl, openai, claude-code, codex or locomo.
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

#[derive(Debug, Subcommand)]
pub(crate) enum ConfigCommand {
    /// Every resolved setting with its value and where it came from
    /// (default, user, workspace, env, flag); secrets are shown as "***".
    Show {
        /// Machine-readable output: {"settings":[{"key","value","source"}]}.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        model: ModelArgs,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum RemoteCommand {
    /// Add a git remote (any URL git accepts: a folder, file://, ssh, https);
    /// creates a missing workspace, so a new machine joins with `remote add`
    /// then `sync`.
    Add {
        /// Its name (letters, digits, '.', '_' or '-').
        name: String,
        /// Its URL.
        url: String,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
}
