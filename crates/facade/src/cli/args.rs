//! The command line's schema: every verb and flag of `scriptorium`, as clap
//! reads them. `--workspace` and `-v` are global.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use scriptorium::transaction;

mod subcommands;

pub(crate) use subcommands::{
    ArchiveCommand, ConfigCommand, HookCommand, IndexCommand, RemoteCommand, SessionCommand, TopicCommand,
};

mod model;
mod sleep;

pub(crate) use model::ModelArgs;
pub(crate) use sleep::SleepArgs;

/// Long-term memory for LLM agents.
#[derive(Debug, Parser)]
#[command(name = "scriptorium", version, about)]
pub(crate) struct Cli {
    /// Log what is happening on stderr: -v info, -vv debug, -vvv trace
    /// (`RUST_LOG`, in tracing's filter syntax, wins when set; default: no logs).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub(crate) verbose: u8,
    /// The workspace folder (default: $SCRIPTORIUM_WORKSPACE, else the
    /// user's default workspace; for `demo`, a fresh empty or missing folder,
    /// default a new temporary one). `archive append`, `session import`
    /// and `demo` create it when missing.
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    #[command(subcommand)]
    pub(crate) command: Command,
}

impl Cli {
    /// The workspace the command line names: `--workspace`, else
    /// `SCRIPTORIUM_WORKSPACE`, else the default.
    pub(crate) fn workspace(&self) -> PathBuf {
        self.workspace
            .clone()
            .or_else(|| {
                std::env::var_os("SCRIPTORIUM_WORKSPACE").filter(|v| !v.is_empty()).map(PathBuf::from)
            })
            .unwrap_or_else(scriptorium::config::default_workspace)
    }

    /// Where [`Cli::workspace`] came from.
    pub(crate) fn workspace_origin(&self) -> scriptorium::config::Origin {
        use scriptorium::config::Origin;
        if self.workspace.is_some() {
            Origin::Flag
        } else if std::env::var_os("SCRIPTORIUM_WORKSPACE").is_some_and(|v| !v.is_empty()) {
            Origin::Env
        } else {
            Origin::Default
        }
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
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
        /// One JSON object per hit (FORMAT.md §7).
        #[arg(long)]
        json: bool,
    },
    /// Apply a patch (FORMAT.md §6) as one validated, all-or-nothing,
    /// crash-safe transaction; print {"revision","changed"}.
    Update {
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
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Validate the whole workspace (recovering an interrupted install
    /// first); print one diagnostic per line, then a summary; exit 1 on any
    /// error.
    Check {
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
        model: ModelArgs,
    },
    /// Conversation sessions (.scriptorium/sessions.db).
    #[command(subcommand)]
    Session(SessionCommand),
    /// Write what the sessions owe: batches of pending turns at the token
    /// threshold (all of them with --force), each one transaction; exactly
    /// the written turns are marked.
    Write {
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
        model: ModelArgs,
    },
    /// Run the idle watcher in the foreground: sessions quiet for --idle-secs
    /// get a forced write; the nightly pass runs at local 03:00
    /// (memory.writer.nightly_hour). Events go to stdout.
    Watch {
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
        model: ModelArgs,
    },
    /// A bundled group conversation (three trusted speakers, a forged label,
    /// an unpaired member) written into a fresh workspace, and what a person
    /// should see of it; the last line names the workspace.
    Demo {
        #[command(flatten)]
        model: ModelArgs,
        /// Everything shown as one JSON object: writer, turns, batches,
        /// topics, prompt, recalls, speaker_search, workspace.
        #[arg(long)]
        json: bool,
    },
    /// Serve the memory_* tools over the Model Context Protocol (stdio,
    /// one JSON-RPC message per line).
    Mcp {
        /// What callers may write: owner may do everything, paired may only
        /// create files and append to them.
        #[arg(long, value_enum, default_value_t = TierArg::Paired)]
        tier: TierArg,
    },
    /// Print what an agent is given every session: the rendered core.md,
    /// fenced as recalled memory (nothing when it is empty).
    Prompt {
        /// Machine-readable output: {"text","hits"}.
        #[arg(long)]
        json: bool,
        /// The session being started: adds the save nudge when it is due.
        #[arg(long)]
        session: Option<String>,
    },
    /// Answer a coding agent's hook event (JSON on stdin) in the shape that
    /// agent expects; never fails the agent (exit 0, a short systemMessage
    /// naming the error code).
    #[command(subcommand)]
    Hook(HookCommand),
    /// Register the hooks and the memory tools (MCP) in a coding agent's
    /// settings, keeping every other setting; a second install changes
    /// nothing.
    Install {
        /// The agent.
        #[arg(value_enum)]
        harness: HarnessArg,
        /// user: the settings in your home folder; project: the ones under
        /// the current folder.
        #[arg(long, value_enum, default_value_t = ScopeArg::User)]
        scope: ScopeArg,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Take out what install put in, leaving every other setting as it is.
    Uninstall {
        /// The agent.
        #[arg(value_enum)]
        harness: HarnessArg,
        /// Which settings (see install).
        #[arg(long, value_enum, default_value_t = ScopeArg::User)]
        scope: ScopeArg,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Print what an agent is given for one message: the top 5 blocks and
    /// records for it, fenced as recalled memory (nothing when nothing
    /// matches).
    Recall {
        /// The message.
        text: String,
        /// Machine-readable output: {"text","hits"}.
        #[arg(long)]
        json: bool,
    },
    /// The dream pass on demand (the watcher runs it nightly): offline
    /// hygiene (duplicate blocks merged, people cards' aliases sorted), then,
    /// with a model, the conversations with the most unreflected records (or
    /// those asked for) consolidated through one transaction. Says what it
    /// selected, what it changed, and why it changed nothing.
    Sleep(SleepArgs),
    /// Write topics for trusted archived records that no block cites, in
    /// batches, without archiving them again.
    Backfill {
        /// Records per batch.
        #[arg(long, default_value_t = 50)]
        batch: usize,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        model: ModelArgs,
    },
    /// Write the memory palace: one self-contained HTML page showing the
    /// topics with their cited records, people, timeline, relations,
    /// history and core.md; print its absolute path.
    Palace {
        /// Write the page here (its folder must exist; the file is replaced
        /// atomically). Default: palace.html in a fresh private temporary folder.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Open the page with the platform's opener (xdg-open, open).
        #[arg(long)]
        open: bool,
    },
    /// The workspace's history, newest first: one line per commit (one
    /// JSON object per commit with --json). Nothing without a repository.
    Log {
        /// Only commits that changed this file, or a file under this folder.
        #[arg(long, value_name = "PATH")]
        path: Option<String>,
        /// Only commits that wrote turns of this session.
        #[arg(long, value_name = "SESSION")]
        session: Option<String>,
        /// One JSON object per commit.
        #[arg(long)]
        json: bool,
    },
    /// What one commit changed: the blocks it added, changed and removed,
    /// the records it archived, its paths.
    Show {
        /// A commit id (4 to 40 hex digits), a workspace revision (64 hex
        /// digits), HEAD or HEAD~N.
        rev: String,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Undo a commit's topic changes as a new transaction (archived records
    /// stay); refused with CONFLICT when a block it touched changed since.
    Undo {
        /// The commit: as for `show`.
        rev: String,
        /// Give the blocks changed since their state from before REV anyway.
        #[arg(long)]
        force: bool,
        /// How long to wait for another writer's lock before refusing with LOCKED.
        #[arg(long, default_value_t = 5000)]
        timeout_ms: u64,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// The git remotes the workspace syncs with.
    #[command(subcommand)]
    Remote(RemoteCommand),
    /// The configuration in force.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Sync the workspace with a git remote: fetch, merge (archives by
    /// records, topics by blocks), validate, commit, push; again while the
    /// remote moves. Conflicts keep this machine's version and are listed
    /// by `check` until `resolve` closes them.
    Sync {
        /// The remote (default: origin).
        #[arg(long, value_name = "NAME")]
        remote: Option<String>,
        /// How long to wait for another writer's lock before refusing with LOCKED.
        #[arg(long, default_value_t = 10000)]
        timeout_ms: u64,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Close a conflict a sync found, as a transaction that syncs like any
    /// other.
    Resolve {
        /// The conflict: a block id (or PATH#^ID), a source id, or the id
        /// `check` shows.
        id: String,
        /// Which version to keep: ours (what the merge kept), theirs (the
        /// remote's), or both (blocks and lines only).
        #[arg(long, value_name = "ours|theirs|both")]
        take: String,
        /// How long to wait for another writer's lock before refusing with LOCKED.
        #[arg(long, default_value_t = 5000)]
        timeout_ms: u64,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Rebuild every derived view (core.md, timeline/, recent_events.jsonl,
    /// relations.json) from topics and sources, and print what was built.
    Render {
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

/// The coding agents with hooks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum HarnessArg {
    /// Claude Code.
    ClaudeCode,
    /// Codex CLI.
    Codex,
}

/// Where an agent's settings live.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ScopeArg {
    /// The person's own settings (in the home folder).
    User,
    /// The project's settings (under the current folder).
    Project,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum TierArg {
    Owner,
    Paired,
}

impl TierArg {
    /// The tier the flag names.
    pub(crate) fn tier(self) -> transaction::Tier {
        match self {
            TierArg::Owner => transaction::Tier::Owner,
            TierArg::Paired => transaction::Tier::Paired,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum MethodArg {
    Bm25,
    Embedding,
    Hybrid,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(crate) enum KindArg {
    Topic,
    Source,
}

/// What to search for and how.
#[derive(Debug, clap::Args)]
pub(crate) struct SearchArgs {
    /// Free text.
    pub(crate) query: String,
    /// At most this many hits.
    #[arg(long, default_value_t = 10)]
    pub(crate) limit: usize,
    /// Only topic blocks or only source records.
    #[arg(long, value_enum)]
    pub(crate) kind: Option<KindArg>,
    /// Only paths starting with these bytes (workspace-relative).
    #[arg(long)]
    pub(crate) path_prefix: Option<String>,
    /// Only documents dated on or after this UTC day (YYYY-MM-DD).
    #[arg(long)]
    pub(crate) date_from: Option<String>,
    /// Only documents dated on or before this UTC day (YYYY-MM-DD).
    #[arg(long)]
    pub(crate) date_to: Option<String>,
    /// Only records of this speaker: an exact id, or a display, label or
    /// attribution (case-insensitive) that exactly one archived identity
    /// has (several: refused, listing them); implies source records.
    #[arg(long)]
    pub(crate) speaker: Option<String>,
    /// Include pending blocks and records.
    #[arg(long)]
    pub(crate) include_pending: bool,
    /// How to rank: BM25, cosine similarity of embeddings from the
    /// configured [memory.embeddings] endpoint, or both fused (which
    /// falls back to BM25, saying so, without an endpoint).
    #[arg(long, value_enum, default_value_t = MethodArg::Bm25)]
    pub(crate) method: MethodArg,
}
