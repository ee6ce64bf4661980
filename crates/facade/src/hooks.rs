//! Memory inside coding agents: the answers to Claude Code's and Codex's
//! hook events, as typed calls (the `scriptorium hook` verb is a thin
//! adapter over them, so a harness written in Rust needs no binary).
//!
//! * `SessionStart`: the self and `core.md`, fenced, with the save nudge
//!   when due.
//! * `UserPromptSubmit`: the fenced recall for the prompt (top 5), after
//!   the self when the session does not hold it yet (`given`), with the
//!   nudge when due.
//! * `Stop`, `SubagentStop`: what the transcript gained since the last call
//!   is recorded ([`cursor`]); then a write (not forced: only at the
//!   threshold, or everything once the reflection cadence makes it due) is
//!   asked for, to run in the background, coalesced with any other write of
//!   the session ([`background_write`]).
//! * `PreCompact`, `SessionEnd`: extract before discard: record, then a
//!   forced write of the session, in the background.
//!
//! Injected context is capped at `memory.hooks.max_context_chars` by whole
//! lines ([`crate::fence::Fenced::capped`]). A failure never fails the
//! agent: the answer carries a short `systemMessage` naming the code (for
//! the person, not the model) and the failure is recorded for `status`
//! ([`failure`]). A change of the self since the last answer is told the
//! same way, once ([`notices`]). A workspace that does not exist yet is
//! not a failure: there is nothing to inject, and the first `Stop` creates
//! it.

use std::path::Path;
use std::time::Duration;

use scriptorium_scheduler::import::Format;
use scriptorium_scheduler::store::SESSIONS_DB;
use scriptorium_scheduler::{pending, Scheduler, SessionStore, SqliteStore, WriteFailure};

use scriptorium_source_archive::Code;

use crate::config::Config;
use crate::error::Error;
use crate::fence::Fenced;

pub mod cursor;
mod event;
pub mod failure;
mod given;
pub mod notices;
mod reply;
mod running;
mod state;

pub use event::{EventName, HookEvent, MAX_EVENT_BYTES};

/// The coding agents whose hooks memory answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Harness {
    /// Claude Code.
    ClaudeCode,
    /// Codex CLI.
    Codex,
}

impl Harness {
    /// The harness's name on the command line (`claude-code`, `codex`).
    pub fn name(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "claude-code",
            Harness::Codex => "codex",
        }
    }

    /// The events its hooks are registered for (by `install`), with each
    /// hook's timeout in seconds: every one without a matcher, so it runs
    /// on every occurrence (each `SessionStart` source, manual and
    /// automatic compaction).
    pub fn events(self) -> &'static [(&'static str, u64)] {
        match self {
            Harness::ClaudeCode => &[
                ("SessionStart", 30),
                ("UserPromptSubmit", 30),
                ("Stop", 60),
                ("SubagentStop", 60),
                ("PreCompact", 120),
                ("SessionEnd", 120),
            ],
            Harness::Codex => {
                &[("SessionStart", 30), ("UserPromptSubmit", 30), ("Stop", 60), ("PreCompact", 120)]
            }
        }
    }

    /// The shape of its transcript files.
    pub fn format(self) -> Format {
        match self {
            Harness::ClaudeCode => Format::ClaudeCode,
            Harness::Codex => Format::Codex,
        }
    }
}

/// A write a hook asks for, to run in a process of its own so the hook
/// returns at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackgroundWrite {
    /// The session to write.
    pub session: String,
    /// Everything pending (extract before discard), not only a batch at
    /// the threshold.
    pub force: bool,
}

/// A hook's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The event answered.
    pub event: EventName,
    /// Context for the model (empty: none).
    pub context: Fenced,
    /// A short notice for the person (a failure, naming its code).
    pub system_message: Option<String>,
    /// A write to start in the background.
    pub write: Option<BackgroundWrite>,
}

impl Answer {
    fn empty(event: EventName) -> Answer {
        Answer { event, context: Fenced::default(), system_message: None, write: None }
    }

    /// What the hook prints on stdout: only the keys both harnesses accept
    /// for the event, and nothing at all when there is nothing to say.
    pub fn to_json(&self) -> Option<serde_json::Value> {
        reply::render(self)
    }
}

/// Answers one hook event of `harness` (read with [`HookEvent::parse`])
/// for the workspace at `root`. Never fails: a failure becomes the
/// answer's `system_message` and is recorded for `status`.
pub fn answer(root: &Path, config: &Config, harness: Harness, event: &HookEvent) -> Answer {
    if root.exists() && !root.is_dir() {
        let e = Error::invalid("the workspace is not a folder").at(root.display().to_string());
        return failed(root, event.name.clone(), &e);
    }
    let mut a = match answer_with(root, config, harness, event) {
        Ok(a) => a,
        Err(e) => failed(root, event.name.clone(), &e),
    };
    // Changes of the self since the last answer, for the person only.
    if let Some(told) = notices::take(root, config) {
        a.system_message = Some(match a.system_message.take() {
            Some(m) => format!("{m}\n{told}"),
            None => told,
        });
    }
    a
}

fn answer_with(root: &Path, config: &Config, harness: Harness, event: &HookEvent) -> Result<Answer, Error> {
    let mut a = Answer::empty(event.name.clone());
    match event.name {
        EventName::SessionStart | EventName::UserPromptSubmit => context(root, config, event, &mut a)?,
        EventName::Stop | EventName::SubagentStop | EventName::PreCompact | EventName::SessionEnd => {
            let force = matches!(event.name, EventName::PreCompact | EventName::SessionEnd);
            let gained = match &event.transcript_path {
                Some(t) => cursor::import_new(root, harness.format(), t)?,
                None => cursor::Gained::default(),
            };
            if let Some(first) = gained.skipped.first() {
                // The rest was recorded; the person is told what was not.
                failure::record(root, event.name.as_str(), first);
                let more = gained.skipped.len() - 1;
                let also = if more > 0 { format!(" (and {more} more line(s))") } else { String::new() };
                a.system_message = Some(format!("{}{also}", notice(first)));
            }
            let session = gained.sessions.last().cloned().or_else(|| event.session_id.clone());
            if let Some(session) = session {
                if force || gained.recorded.added > 0 {
                    a.write = Some(BackgroundWrite { session, force });
                }
            }
        }
        EventName::Other(_) => {}
    }
    Ok(a)
}

/// The context of a `SessionStart` or `UserPromptSubmit` answer: the self
/// (at `SessionStart` always, at `UserPromptSubmit` when the session was
/// not given this self yet: [`given`]), the save nudge when due, then
/// `core.md` or the recall for the prompt; capped.
fn context(root: &Path, config: &Config, event: &HookEvent, a: &mut Answer) -> Result<(), Error> {
    if !root.join(".scriptorium").is_dir() && !root.join("core.md").is_file() {
        return Ok(());
    }
    // The session the transcript's turns are recorded under (a resumed
    // transcript may name an earlier one), else the event's.
    let session = event
        .transcript_path
        .as_deref()
        .and_then(|t| cursor::session_of(root, t))
        .or_else(|| event.session_id.clone());
    // Without the nudge or the self the context is still worth giving: the
    // failure is told and recorded beside it.
    let mut told = |e: Error| {
        failure::record(root, event.name.as_str(), &e);
        a.system_message.get_or_insert_with(|| notice(&e));
    };
    let nudge = match &session {
        Some(s) => crate::nudge::due(root, s, config.nudge_every_user_turns),
        None => Ok(None),
    };
    let nudge = nudge.unwrap_or_else(|e| {
        told(e);
        None
    });
    let me = crate::self_prompt::of_workspace(root, config.self_budget).map(|v| v.text);
    let me = me.unwrap_or_else(|e| {
        told(e);
        String::new()
    });
    let start = event.name == EventName::SessionStart;
    let shown = if start || given::due(root, session.as_deref(), &me) { me.as_str() } else { "" };
    let body = match (&event.name, &event.prompt) {
        (EventName::SessionStart, _) => crate::recall::core_text(root)
            .map_err(|e| Error::new(Code::Io, format!("cannot read core.md: {e}")).at("core.md"))?,
        (_, Some(p)) => crate::recall::recall_text_with(root, p, crate::recall::IndexRead::AsIs)?.join("\n"),
        (_, None) => String::new(),
    };
    let context = crate::self_prompt::fence_prompt(shown, nudge.as_deref(), &body);
    a.context = context.capped(config.max_context_chars);
    given::record(root, session.as_deref(), &me);
    Ok(())
}

/// The answer to a failure met while answering `event`: a notice naming
/// the code, recorded for `status`.
pub fn failed(root: &Path, event: EventName, e: &Error) -> Answer {
    failure::record(root, event.as_str(), e);
    let mut a = Answer::empty(event);
    a.system_message = Some(notice(e));
    a
}

/// A short notice for the person: what failed, where, and its code.
pub fn notice(e: &Error) -> String {
    let mut message: String = e.message.chars().take(200).collect();
    if message.len() < e.message.len() {
        message.push('…');
    }
    let place = match (&e.path, e.line) {
        (Some(p), Some(l)) => format!(" [{p}, line {l}]"),
        (Some(p), None) => format!(" [{p}]"),
        (None, Some(l)) => format!(" [line {l}]"),
        (None, None) => String::new(),
    };
    format!("scriptorium memory: {message}{place} ({})", e.code.as_str())
}

/// The background write a hook asked for: writes `session` (everything
/// pending when `force`, or when the reflection cadence makes it due),
/// waiting for the write lock up to `deadline`. A failure (`LOCKED` past
/// the deadline, a model that cannot be reached, …) is recorded for
/// `event` and in the writer status (it counts in the failure streak), and
/// returned; a retryable one leaves the turns pending for the watcher or
/// the next hook. A write asked for while another of the same session runs
/// is coalesced ([`running`]): one follow-up covers every such request.
pub fn background_write(
    root: &Path,
    config: &Config,
    event: &str,
    job: &BackgroundWrite,
    deadline: Duration,
) -> Result<(), Error> {
    let started = std::time::Instant::now();
    notices::register();
    // Whether the scheduler ran the write (and so recorded its outcome).
    let mut noted = false;
    let mut run = || -> Result<(), Error> {
        let Some(identity) = scriptorium_transaction::layout::identity(root)? else { return Ok(()) };
        let running = match running::claim(root, &job.session, job.force, deadline)? {
            running::Claim::Run(r) => r,
            running::Claim::Absorbed => return Ok(()),
        };
        let Some(store) = SqliteStore::open_existing(&root.join(SESSIONS_DB)).map_err(WriteFailure::from)?
        else {
            return Ok(());
        };
        // A session that recorded nothing yet (closed before its first
        // turn) owes nothing.
        if store.session(&job.session).map_err(WriteFailure::from)?.is_none() {
            return Ok(());
        }
        let mut chosen = crate::writers::choose(&crate::writers::WriterFlags::default(), config)?;
        let mut sch = Scheduler::new(&store, root, &identity.id);
        sch.threshold = config.threshold.unwrap_or(pending::DEFAULT_THRESHOLD);
        sch.every_steps = config.reflection_every_steps;
        sch.lock_timeout = deadline.saturating_sub(started.elapsed());
        noted = true;
        sch.write(chosen.batch_writer(), &job.session, running.force)?;
        Ok(())
    };
    let result = run();
    if let Err(e) = &result {
        failure::record(root, event, e);
        if !noted {
            failure::record_writer(root, e);
        }
    }
    result
}
