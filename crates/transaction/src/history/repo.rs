//! Opening (or creating) the workspace's repository, its settings and the
//! committed `.gitignore`.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Code, Error};
use crate::layout::CONFIG_FILE;

use super::git_error;

/// The committed ignore file, relative to the workspace.
pub const GITIGNORE: &str = ".gitignore";

/// What a new repository's `.gitignore` says: the derived views and the
/// runtime state are rebuilt from `topics/` and `sources/`, never committed.
pub const GITIGNORE_TEXT: &str = "\
# Scriptorium: derived views and runtime state, rebuilt from topics/ and sources/
/core.md
/timeline/
/recent_events.jsonl
/relations.json
/.scriptorium/
";

/// The history settings of a workspace, from its `scriptorium.toml`
/// (`[memory]`): `history = "git"` (the default) or `"off"`, and
/// `history_author = "Name <email>"`, the identity commits are made as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// False with `memory.history = "off"`.
    pub enabled: bool,
    /// The author and committer name.
    pub name: String,
    /// The author and committer email.
    pub email: String,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings { enabled: true, name: "Scriptorium".into(), email: "scriptorium@localhost".into() }
    }
}

impl Settings {
    /// The settings of the workspace at `root` (`INVALID_ARGUMENT` naming
    /// the key when one is malformed).
    pub fn read(root: &Path) -> Result<Settings, Error> {
        let path = root.join(CONFIG_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Settings::default()),
            Err(e) => return Err(Error::io(&e, "cannot read", &path)),
        };
        let bad = |why: String| Error::new(Code::InvalidArgument, why).at(CONFIG_FILE);
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| bad(e.message().to_owned()))?;
        let memory = table.get("memory");
        let mut s = Settings::default();
        if let Some(v) = memory.and_then(|m| m.get("history")) {
            s.enabled = enabled_of(v).map_err(bad)?;
        }
        if let Some(v) = memory.and_then(|m| m.get("history_author")) {
            (s.name, s.email) = author_of(v).map_err(bad)?;
        }
        Ok(s)
    }
}

/// The value of `memory.history` (the one rule, for every reader).
pub fn enabled_of(v: &toml::Value) -> Result<bool, String> {
    match v.as_str() {
        Some("git") => Ok(true),
        Some("off") => Ok(false),
        _ => Err(format!("memory.history must be \"git\" or \"off\", not {v}")),
    }
}

/// The value of `memory.history_author`: `Name <email>`.
pub fn author_of(v: &toml::Value) -> Result<(String, String), String> {
    let bad = || format!("memory.history_author must be \"Name <email>\" on one line, not {v}");
    let s = v.as_str().ok_or_else(bad)?;
    let (name, rest) = s.split_once('<').ok_or_else(bad)?;
    let email = rest.strip_suffix('>').ok_or_else(bad)?;
    let name = name.trim();
    let clean = |t: &str| !t.is_empty() && !t.contains(['<', '>', '\n', '\r', '\0']);
    if !clean(name) || !clean(email) {
        return Err(bad());
    }
    Ok((name.to_owned(), email.to_owned()))
}

/// The repository at `<root>/.git`, if there is one. Opened isolated from
/// the user's and the system's git configuration, so that a commit is the
/// same on every machine.
pub(crate) fn open(root: &Path) -> Result<Option<gix::Repository>, Error> {
    let dot_git = root.join(".git");
    match std::fs::symlink_metadata(&dot_git) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&e, "cannot read", &dot_git)),
        Ok(_) => {}
    }
    let options = gix::open::Options::isolated();
    gix::open_opts(root, options).map(Some).map_err(|e| git_error("cannot open the repository", e))
}

/// The repository at `<root>/.git`, created when missing; the
/// `.gitignore` is written first when the workspace has none.
pub(super) fn open_or_init(root: &Path) -> Result<gix::Repository, Error> {
    scriptorium_source_archive::fsio::check_no_links(root, GITIGNORE)?;
    let ignore = root.join(GITIGNORE);
    if std::fs::symlink_metadata(&ignore).is_err() {
        scriptorium_source_archive::fsio::replace_file(root, &ignore, GITIGNORE_TEXT.as_bytes())?;
    }
    if let Some(repo) = open(root)? {
        return Ok(repo);
    }
    gix::init(root).map_err(|e| git_error("cannot create the repository", e))?;
    open(root)?.ok_or_else(|| git_error("cannot open the repository just created", "no .git"))
}

/// The signature commits are made with, at the current time.
pub(super) fn signature(settings: &Settings) -> gix::actor::Signature {
    gix::actor::Signature {
        name: settings.name.as_str().into(),
        email: settings.email.as_str().into(),
        time: gix::date::Time::now_utc(),
    }
}

/// The marker of git writes under way, relative to the workspace.
const WRITING: &str = ".scriptorium/history.writing";

/// Git writes under way: the marker exists from [`Writing::begin`] until
/// this is dropped. Writes happen under the workspace's write lock only, so
/// a marker found by the next writer means the last one died in the middle
/// of them (a `SIGKILL`, a power loss), leaving git's lock files behind:
/// those are removed first, or every later commit would fail.
#[derive(Debug)]
pub(super) struct Writing {
    marker: PathBuf,
}

impl Writing {
    /// Marks git writes as under way in the repository of `root`.
    pub(super) fn begin(root: &Path, repo: &gix::Repository) -> Result<Writing, Error> {
        let marker = root.join(WRITING);
        if fs::symlink_metadata(&marker).is_ok() {
            remove_stale_locks(repo.git_dir())?;
        }
        fs::write(&marker, std::process::id().to_string())
            .map_err(|e| Error::io(&e, "cannot write", &marker))?;
        Ok(Writing { marker })
    }
}

impl Drop for Writing {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.marker);
    }
}

/// Removes the lock files a commit takes: `HEAD.lock`, `index.lock`,
/// `packed-refs.lock` and `refs/heads/**.lock`.
fn remove_stale_locks(git_dir: &Path) -> Result<(), Error> {
    let mut locks: Vec<PathBuf> =
        ["HEAD.lock", "index.lock", "packed-refs.lock"].iter().map(|n| git_dir.join(n)).collect();
    let mut dirs = vec![git_dir.join("refs/heads")];
    while let Some(dir) = dirs.pop() {
        let Ok(rd) = fs::read_dir(&dir) else { continue };
        for e in rd.filter_map(Result::ok) {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                dirs.push(e.path());
            } else if e.file_name().to_string_lossy().ends_with(".lock") {
                locks.push(e.path());
            }
        }
    }
    for lock in locks {
        match fs::remove_file(&lock) {
            Ok(()) => {
                tracing::warn!(lock = %lock.display(), "history: removed a lock file an interrupted commit left")
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&e, "cannot remove", &lock)),
        }
    }
    Ok(())
}
