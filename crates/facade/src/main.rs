//! The `scriptorium` command-line program.
//!
//! Results go to stdout, one JSON object per line; refusals go to stderr as
//! `{"error":{"code","message",…}}` with exit code 1; usage errors exit 2.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{self, BufWriter, IsTerminal, Write};
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
use scriptorium::transaction::{self, lock};

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
    /// The search index under .scriptorium/index/.
    #[command(subcommand)]
    Index(IndexCommand),
    /// Search topic blocks and archived records with BM25, best first
    /// (refreshing a stale index first). No hits prints nothing.
    Search {
        /// Free text.
        query: String,
        /// The workspace folder.
        #[arg(long)]
        workspace: PathBuf,
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
        /// Only records of this speaker: the exact id, display or label
        /// (case-insensitive); implies source records.
        #[arg(long)]
        speaker: Option<String>,
        /// Include pending blocks and records.
        #[arg(long)]
        include_pending: bool,
        /// One JSON object per hit (FORMAT.md §7).
        #[arg(long)]
        json: bool,
    },
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
enum IndexCommand {
    /// Build the search index of a workspace from every file, replacing any
    /// index there, and print what was built.
    Build {
        /// The workspace folder.
        #[arg(long)]
        workspace: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
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

/// A refusal of the transaction layer (its path is workspace-relative).
fn fail_tx(root: &std::path::Path, e: &transaction::error::Error) -> ExitCode {
    let path = e.path.as_deref().map(|p| root.join(p));
    fail_with(e.code.as_str(), e.message.clone(), path.as_deref())
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
        Err(e) => return fail_tx(&workspace, &e),
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
        Err(e) => return fail_tx(&root, &e),
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

fn index_fail(e: &archive::Error) -> ExitCode {
    fail(e)
}

fn run_index_build(root: PathBuf, as_json: bool) -> ExitCode {
    if let Err(r) = workspace::require(&root) {
        return refuse(&r);
    }
    let show = !as_json && io::stderr().is_terminal();
    let mut progress = |done: usize, total: usize| {
        if show {
            let width = 30;
            let filled = (done * width).checked_div(total).unwrap_or(width).min(width);
            let bar = format!("{}{}", "#".repeat(filled), "-".repeat(width - filled));
            let _ = write!(io::stderr().lock(), "\rreading files [{bar}] {done}/{total}");
        }
    };
    let opened = match index::workspace::build_with_progress(&root, TokenizerConfig::default(), &mut progress)
    {
        Ok(o) => o,
        Err(e) => return index_fail(&e),
    };
    if show {
        let _ = writeln!(io::stderr().lock());
    }
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

struct SearchArgs {
    query: String,
    limit: usize,
    kind: Option<KindArg>,
    path_prefix: Option<String>,
    date_from: Option<String>,
    date_to: Option<String>,
    speaker: Option<String>,
    include_pending: bool,
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
        speaker: a.speaker.as_deref().map(index::workspace::speaker_key),
        include_pending: a.include_pending,
    })
}

fn run_search(root: PathBuf, a: SearchArgs, as_json: bool) -> ExitCode {
    if let Err(r) = workspace::require(&root) {
        return refuse(&r);
    }
    let filters = match search_filters(&a) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let lines = match index::workspace::search_lines(
        &root,
        TokenizerConfig::default(),
        &a.query,
        &filters,
        a.limit,
        Bm25::default(),
    ) {
        Ok(l) => l,
        Err(e) => return index_fail(&e),
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

/// `score  path#anchor  [label]  snippet` for a person reading a terminal.
fn human_hit(line: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
    let anchor = shown(v["block_id"].as_str().or(v["anchor"].as_str()).unwrap_or(""));
    let who = v["speaker_label"].as_str().map(|l| format!("  [{}]", shown(l))).unwrap_or_default();
    let pending = if v["trust"] == "pending" { "  (pending)" } else { "" };
    format!(
        "{:.3}  {}#{anchor}{who}{pending}  {}",
        v["score"].as_f64().unwrap_or(0.0),
        shown(v["path"].as_str().unwrap_or("")),
        shown(v["snippet"].as_str().unwrap_or(""))
    )
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
        Command::Index(IndexCommand::Build { workspace, json }) => run_index_build(workspace, json),
        Command::Search {
            query,
            workspace,
            limit,
            kind,
            path_prefix,
            date_from,
            date_to,
            speaker,
            include_pending,
            json,
        } => {
            let args =
                SearchArgs { query, limit, kind, path_prefix, date_from, date_to, speaker, include_pending };
            run_search(workspace, args, json)
        }
        Command::Render { workspace, json, budget, timeout_ms } => {
            run_render(workspace, json, budget, timeout_ms)
        }
    }
}
