//! The workspace layout (FORMAT.md §1): creating it, its identity file,
//! and moving an old layout's folders out of the way.

use std::fs;
use std::path::{Path, PathBuf};

use scriptorium_source_archive::fsio;
use serde::{Deserialize, Serialize};

use crate::error::{Code, Error};

/// The identity file, relative to the workspace.
pub const WORKSPACE_JSON: &str = ".scriptorium/workspace.json";

/// Folders every workspace has.
const DIRS: &[&str] =
    &["topics", "sources", ".scriptorium", ".scriptorium/tmp", ".scriptorium/index", ".scriptorium/journal"];

/// What the old layout kept at the root; moved, never deleted.
const SUPERSEDED: &[&str] = &["journal", "wiki", ".state", "index.sqlite"];

/// `.scriptorium/workspace.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    /// A random id (32 hex digits), fixed when the workspace is created.
    pub id: String,
    /// The layout version: 1.
    pub format: u32,
}

fn random_id() -> String {
    let mut bytes = [0u8; 16];
    let ok = fs::File::open("/dev/urandom").and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes));
    if ok.is_err() {
        // No system randomness: time and process id, hashed.
        use sha2::{Digest, Sha256};
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        let digest = Sha256::digest(format!("{}:{}", now.as_nanos(), std::process::id()));
        bytes.copy_from_slice(&digest[..16]);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads the workspace's identity, if it has one.
pub fn identity(root: &Path) -> Result<Option<Identity>, Error> {
    let path = root.join(WORKSPACE_JSON);
    match fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            Error::new(Code::Io, format!("{WORKSPACE_JSON} is damaged: {e}")).at(WORKSPACE_JSON)
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(&e, "cannot read", &path)),
    }
}

/// Creates the layout and `workspace.json` where missing, and returns the
/// identity. Idempotent: an existing id is never changed.
pub fn ensure(root: &Path) -> Result<Identity, Error> {
    for d in DIRS {
        fsio::check_no_links(root, d)?;
        fsio::create_dir_durable(&root.join(d))?;
    }
    if let Some(id) = identity(root)? {
        return Ok(id);
    }
    let id = Identity { id: random_id(), format: 1 };
    let text = serde_json::to_string(&id).map_err(|e| Error::new(Code::Io, e.to_string()))? + "\n";
    // Written whole under a private name, then linked into place: a link
    // never replaces, so when two processes create the workspace at once
    // exactly one id wins and the other process reads it.
    let tmp = root.join(format!(".scriptorium/tmp/workspace-{}.json", id.id));
    let target = root.join(WORKSPACE_JSON);
    fsio::replace_file(root, &tmp, text.as_bytes())?;
    let linked = fs::hard_link(&tmp, &target);
    let _ = fs::remove_file(&tmp);
    match linked {
        Ok(()) => {
            fsio::sync_dir(&root.join(".scriptorium"))?;
            Ok(id)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => identity(root)?
            .ok_or_else(|| Error::new(Code::Io, format!("{WORKSPACE_JSON} vanished while it was created"))),
        Err(e) => Err(Error::io(&e, "cannot create", &target)),
    }
}

/// The workspace's configuration file, owned by the facade; this layer
/// reads only `memory.core_budget` from it.
pub const CONFIG_FILE: &str = "scriptorium.toml";

/// The `core.md` token budget: `memory.core_budget` in the workspace's
/// `scriptorium.toml`, else [`CORE_BUDGET`](scriptorium_topic_markdown::views::CORE_BUDGET).
/// A workspace property, so every process renders the same `core.md`. A
/// file that does not parse or a value out of range is `INVALID_ARGUMENT`
/// naming the file.
pub fn core_budget(root: &Path) -> Result<usize, Error> {
    use scriptorium_topic_markdown::views::CORE_BUDGET;
    let path = root.join(CONFIG_FILE);
    if std::fs::metadata(&path).is_ok_and(|m| !m.is_file()) {
        return Err(
            Error::new(Code::InvalidArgument, format!("{CONFIG_FILE} is not a regular file")).at(CONFIG_FILE)
        );
    }
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(CORE_BUDGET),
        Err(e) => return Err(Error::io(&e, "cannot read", &path)),
    };
    let bad = |why: String| Error::new(Code::InvalidArgument, why).at(CONFIG_FILE);
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| bad(e.message().to_owned()))?;
    match table.get("memory").and_then(|m| m.get("core_budget")) {
        None => Ok(CORE_BUDGET),
        Some(v) => budget_of(v).map_err(bad),
    }
}

/// The value of `memory.core_budget` as a budget, or what is wrong with it
/// (the one rule, for every reader of the file).
pub fn budget_of(v: &toml::Value) -> Result<usize, String> {
    match v.as_integer() {
        Some(n @ 1..=1_000_000) => Ok(n as usize),
        _ => Err(format!("memory.core_budget must be a whole number from 1 to 1000000, not {v}")),
    }
}

/// The sibling folder that receives an old layout's folders and a
/// hand-written `core.md`: `<root>-superseded` beside the root's real path
/// (so `--workspace .` names the folder it is in), or, when that name is
/// taken by something other than a folder (a file, a symbolic link, …), the
/// first of `<root>-superseded.1`, `<root>-superseded.2`, … that is free or
/// a folder.
pub fn superseded_dir(root: &Path) -> PathBuf {
    let real = fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let name =
        real.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "workspace".into());
    let usable = |p: &Path| fs::symlink_metadata(p).map_or(true, |m| m.is_dir());
    let mut dir = real.with_file_name(format!("{name}-superseded"));
    let mut n = 1;
    while !usable(&dir) {
        dir = real.with_file_name(format!("{name}-superseded.{n}"));
        n += 1;
    }
    dir
}

/// Nothing is moved through a symbolic link.
fn refuse_link(target: &Path) -> Result<(), Error> {
    if fs::symlink_metadata(target).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(Error::new(
            crate::error::Code::InvalidArgument,
            format!("{} is a symbolic link; nothing is moved through links", target.display()),
        ));
    }
    Ok(())
}

/// Moves the workspace entry `name` into `<root>-superseded/` under a free
/// name (`name`, `name.1`, …); returns where it went.
pub fn set_aside(root: &Path, name: &str) -> Result<PathBuf, Error> {
    let from = root.join(name);
    let target = superseded_dir(root);
    refuse_link(&target)?;
    fs::create_dir_all(&target).map_err(|e| Error::io(&e, "cannot create", &target))?;
    let mut to = target.join(name);
    let mut n = 1;
    while fs::symlink_metadata(&to).is_ok() {
        to = target.join(format!("{name}.{n}"));
        n += 1;
    }
    fs::rename(&from, &to).map_err(|e| Error::io(&e, "cannot move", &from))?;
    Ok(to)
}

/// Moves the old layout's `journal/`, `wiki/`, `.state/` and `index.sqlite`
/// into `<root>-superseded/` (never deleting anything: a name already taken
/// there gets a numbered suffix). Returns the workspace-relative names moved.
pub fn move_superseded(root: &Path) -> Result<Vec<String>, Error> {
    let mut moved = Vec::new();
    for name in SUPERSEDED {
        let from = root.join(name);
        if fs::symlink_metadata(&from).is_err() {
            continue;
        }
        set_aside(root, name)?;
        moved.push((*name).to_owned());
    }
    Ok(moved)
}

#[cfg(test)]
mod tests {
    //! Layout creation and the old layout's move.
    use super::*;

    #[test]
    fn ensure_is_idempotent_and_keeps_the_id() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("mem");
        let a = ensure(&root).unwrap();
        assert_eq!(a.id.len(), 32);
        assert!(a.id.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(a.format, 1);
        let b = ensure(&root).unwrap();
        assert_eq!(a, b);
        for d in DIRS {
            assert!(root.join(d).is_dir(), "{d}");
        }
        let other = ensure(&dir.path().join("other")).unwrap();
        assert_ne!(a.id, other.id);
        std::fs::write(root.join(WORKSPACE_JSON), "{not json").unwrap();
        assert_eq!(ensure(&root).unwrap_err().code, Code::Io);
    }

    #[test]
    fn the_old_layout_is_moved_never_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("mem");
        std::fs::create_dir_all(root.join("wiki/x")).unwrap();
        std::fs::write(root.join("wiki/x/page.md"), "old page").unwrap();
        std::fs::write(root.join("index.sqlite"), "db").unwrap();
        std::fs::create_dir_all(dir.path().join("mem-superseded/wiki")).unwrap();
        let moved = move_superseded(&root).unwrap();
        assert_eq!(moved, ["wiki", "index.sqlite"]);
        assert!(!root.join("wiki").exists());
        let sup = dir.path().join("mem-superseded");
        assert_eq!(std::fs::read_to_string(sup.join("wiki.1/x/page.md")).unwrap(), "old page");
        assert_eq!(std::fs::read_to_string(sup.join("index.sqlite")).unwrap(), "db");
        assert!(move_superseded(&root).unwrap().is_empty());
    }

    #[test]
    fn a_taken_superseded_name_gets_a_numbered_sibling() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let root = base.join("mem");
        std::fs::create_dir_all(&root).unwrap();
        assert_eq!(superseded_dir(&root), base.join("mem-superseded"));
        std::fs::write(base.join("mem-superseded"), "a file").unwrap();
        assert_eq!(superseded_dir(&root), base.join("mem-superseded.1"));
        #[cfg(unix)]
        {
            std::fs::create_dir_all(base.join("elsewhere")).unwrap();
            std::os::unix::fs::symlink(base.join("elsewhere"), base.join("mem-superseded.1")).unwrap();
            assert_eq!(superseded_dir(&root), base.join("mem-superseded.2"));
        }
        // The old layout is moved there, never through the link.
        std::fs::write(root.join("index.sqlite"), "db").unwrap();
        assert_eq!(move_superseded(&root).unwrap(), ["index.sqlite"]);
        let to = superseded_dir(&root);
        assert_eq!(std::fs::read_to_string(to.join("index.sqlite")).unwrap(), "db");
        assert_eq!(std::fs::read_to_string(base.join("mem-superseded")).unwrap(), "a file");
    }

    #[test]
    fn the_superseded_folder_is_named_after_the_real_root() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let root = base.join("mem");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        assert_eq!(superseded_dir(&root.join(".")), base.join("mem-superseded"));
        assert_eq!(superseded_dir(&root.join("sub/..")), base.join("mem-superseded"));
    }
}
