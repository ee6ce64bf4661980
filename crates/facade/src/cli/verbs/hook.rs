//! `hook claude-code`, `hook codex`: a coding agent's hook event on stdin,
//! answered on stdout in the shape the agent expects
//! ([`scriptorium::hooks`]); and the hidden `hook write`, the background
//! write a hook starts in a detached process of its own.
//!
//! A hook always exits 0: a failure is told to the person as a short
//! `systemMessage` naming its code and recorded for `status`, never by
//! failing (or blocking) the agent.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use scriptorium::config::Config;
use scriptorium::hooks::{self, Answer, BackgroundWrite, EventName, Harness, HookEvent, MAX_EVENT_BYTES};
use scriptorium::{Code, Error};

use crate::args::HookCommand;
use crate::report::{Exit, Outcome};

/// Runs a hook verb on the workspace at `root`.
pub(super) fn run(root: PathBuf, command: HookCommand) -> Outcome {
    match command {
        HookCommand::ClaudeCode => Ok(answer(&root, Harness::ClaudeCode)),
        HookCommand::Codex => Ok(answer(&root, Harness::Codex)),
        HookCommand::Write { event, session, force, deadline_secs } => {
            let config = Config::load(&root).map_err(Error::from)?;
            if config.disabled() {
                return Err(Error::disabled().into());
            }
            let job = BackgroundWrite { session, force };
            hooks::background_write(&root, &config, &event, &job, Duration::from_secs(deadline_secs))?;
            Ok(Exit::Success)
        }
    }
}

/// Answers the event on stdin; whatever happens, exits 0.
fn answer(root: &Path, harness: Harness) -> Exit {
    let mut input = Vec::new();
    let read = io::stdin().lock().take(MAX_EVENT_BYTES as u64 + 1).read_to_end(&mut input);
    let unknown = || EventName::Other("unknown".to_owned());
    let a = match read
        .map_err(|e| Error::new(Code::Io, format!("cannot read the hook event: {e}")).at("stdin"))
    {
        Err(e) => hooks::failed(root, unknown(), &e),
        Ok(_) => match HookEvent::parse(&input) {
            Err(e) => hooks::failed(root, unknown(), &e),
            Ok(event) => match Config::load(root) {
                Err(e) => hooks::failed(root, event.name.clone(), &e.into()),
                Ok(config) if config.disabled() => disabled(event.name),
                Ok(config) => answer_event(root, &config, harness, &event),
            },
        },
    };
    if let Some(v) = a.to_json() {
        // A reader gone away cannot be told anything more.
        let _ = writeln!(io::stdout().lock(), "{v}");
    }
    Exit::Success
}

/// The answer to `event`, with its background write started.
fn answer_event(root: &Path, config: &Config, harness: Harness, event: &HookEvent) -> Answer {
    let mut a = hooks::answer(root, config, harness, event);
    if let Some(job) = a.write.take() {
        if let Err(e) = start(root, &a.event, &job, config.write_deadline_secs) {
            hooks::failure::record(root, a.event.as_str(), &e);
            a.system_message.get_or_insert_with(|| hooks::notice(&e));
        }
    }
    a
}

/// With `memory.backend = "none"` nothing is read or written; the person
/// is told once per session, when it starts.
fn disabled(event: EventName) -> Answer {
    let system_message = (event == EventName::SessionStart).then(|| hooks::notice(&Error::disabled()));
    Answer { event, context: Default::default(), system_message, write: None }
}

/// Starts the background write in a detached process (its own process
/// group, no stdin, stdout or stderr), so the hook returns at once and the
/// agent waits for nothing.
fn start(root: &Path, event: &EventName, job: &BackgroundWrite, deadline_secs: u64) -> Result<(), Error> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::new(Code::Io, format!("cannot find this program to start the write: {e}")))?;
    let mut cmd = Command::new(exe);
    cmd.arg("--workspace")
        .arg(root)
        .args(["hook", "write", "--event", event.as_str(), "--session"])
        .arg(&job.session)
        .arg("--deadline-secs")
        .arg(deadline_secs.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if job.force {
        cmd.arg("--force");
    }
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    cmd.spawn().map(drop).map_err(|e| Error::new(Code::Io, format!("cannot start the background write: {e}")))
}
