//! Moving commits between the workspace's repository and a remote: the
//! `git` program does it (`git fetch`, `git push`, `git remote`), so every
//! transport git knows (a folder, `file://`, SSH, HTTPS, `git://`) works
//! with the user's own credentials and settings. Commits, merges and the
//! index are made in process ([`crate::history`]); only transfer is left to
//! git.
//!
//! Git is run with `GIT_TERMINAL_PROMPT=0` (a missing password fails
//! instead of waiting for a keyboard nobody watches), `LC_ALL=C`, and
//! `GIT_ALLOW_PROTOCOL` limited to the transports that only move data
//! (`file`, `git`, `ssh`, `http`, `https`).

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::error::{Code, Error};

/// What a push came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Pushed {
    /// The remote branch is now the commit pushed.
    Done,
    /// The remote moved since the fetch (not a fast-forward): fetch and
    /// merge again.
    Rejected(String),
}

/// Checks a remote's name: letters, digits, `.`, `_` and `-`, not starting
/// with `-` or `.` (so it can never be read as an option or a path).
pub fn check_remote_name(name: &str) -> Result<(), Error> {
    let ok = !name.is_empty()
        && name.len() <= 100
        && !name.starts_with(['-', '.'])
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(Error::new(
            Code::InvalidArgument,
            format!(
                "remote name {name:?} must be letters, digits, '.', '_' or '-', not starting with '-' or '.'"
            ),
        ))
    }
}

/// The transports sync lets git use.
const ALLOWED_PROTOCOLS: &str = "file:git:ssh:http:https";

fn git(root: &Path) -> Command {
    let mut c = Command::new("git");
    c.arg("-C")
        .arg(root)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        // Transports that move data; never ones that run commands (`ext::`)
        // or read a file descriptor (`fd::`).
        .env("GIT_ALLOW_PROTOCOL", ALLOWED_PROTOCOLS)
        .stdin(Stdio::null());
    c
}

fn run(mut c: Command, what: &str) -> Result<Output, Error> {
    c.output().map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::NotFound {
            " (sync needs the git program on PATH)"
        } else {
            ""
        };
        Error::new(Code::Io, format!("cannot run git to {what}: {e}{hint}"))
    })
}

fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).trim().to_owned()
}

/// The URL of the remote `name`: `NOT_FOUND` when the workspace's
/// repository has no such remote.
pub fn remote_url(root: &Path, name: &str) -> Result<String, Error> {
    check_remote_name(name)?;
    let mut c = git(root);
    c.args(["remote", "get-url", name]);
    let out = run(c, "read the remote")?;
    if !out.status.success() {
        return Err(Error::new(
            Code::NotFound,
            format!("the workspace has no remote {name:?}; add one with `scriptorium remote add {name} URL`"),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Adds the remote `name` at `url` (`CONFLICT` when one of that name
/// exists).
pub fn add_remote(root: &Path, name: &str, url: &str) -> Result<(), Error> {
    check_remote_name(name)?;
    if url.is_empty() || url.starts_with('-') || url.contains(['\n', '\r', '\0']) {
        return Err(Error::new(Code::InvalidArgument, format!("remote URL {url:?} is not one")));
    }
    if remote_url(root, name).is_ok() {
        return Err(Error::new(Code::Conflict, format!("the workspace already has a remote {name:?}")));
    }
    let mut c = git(root);
    c.args(["remote", "add", name, url]);
    let out = run(c, "add the remote")?;
    if !out.status.success() {
        return Err(Error::new(Code::Io, format!("git remote add failed: {}", stderr_of(&out))));
    }
    Ok(())
}

/// Fetches every branch of `remote` into `refs/remotes/<remote>/` (a
/// branch the remote no longer has is pruned).
pub(crate) fn fetch(root: &Path, remote: &str) -> Result<(), Error> {
    let mut c = git(root);
    c.args(["fetch", "--quiet", "--no-tags", "--prune", "--no-write-fetch-head", remote])
        .arg(format!("+refs/heads/*:refs/remotes/{remote}/*"));
    let out = run(c, "fetch")?;
    if !out.status.success() {
        return Err(Error::new(Code::Io, format!("git fetch from {remote:?} failed: {}", stderr_of(&out))));
    }
    Ok(())
}

/// Pushes `commit` to the branch `branch` of `remote`, only as a
/// fast-forward.
pub(crate) fn push(root: &Path, remote: &str, commit: &str, branch: &str) -> Result<Pushed, Error> {
    let mut c = git(root);
    c.args(["push", "--porcelain", "--quiet", remote]).arg(format!("{commit}:refs/heads/{branch}"));
    let out = run(c, "push")?;
    if out.status.success() {
        return Ok(Pushed::Done);
    }
    // `--porcelain` prints one line per ref: `!` marks a rejected one.
    let stdout = String::from_utf8_lossy(&out.stdout);
    if let Some(line) = stdout.lines().find(|l| l.starts_with('!')) {
        let why = line.trim_start_matches('!').trim().to_owned();
        if why.contains("remote rejected") {
            // Not a race: the remote refused the update itself.
            let lock = why.contains("lock") || why.contains("failed to update ref");
            let (code, hint) = if lock {
                (
                    Code::Locked,
                    format!(
                        "another push is under way, or one that was killed left refs/heads/{branch}.lock in the remote repository; remove that file once no push is running, then sync again"
                    ),
                )
            } else {
                (Code::Io, "the remote refused the update (a hook, or permissions); what was merged is committed here".to_owned())
            };
            return Err(Error::new(code, format!("git push to {remote:?} was refused ({why}): {hint}")));
        }
        return Ok(Pushed::Rejected(why));
    }
    Err(Error::new(Code::Io, format!("git push to {remote:?} failed: {}", stderr_of(&out))))
}
