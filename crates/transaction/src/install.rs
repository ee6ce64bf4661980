//! The crash-safe install of a staged change across several files, and its
//! recovery.
//!
//! 1. Each new file is written under `.scriptorium/tmp/tx-<id>/` and fsynced,
//!    and that folder is fsynced.
//! 2. The **intent** — every target path with the SHA-256 of its new bytes
//!    (or a removal), the history line, the git commit to make, and a
//!    SHA-256 of the whole record —
//!    is written to `.scriptorium/journal/intent.tmp`, fsynced, renamed to
//!    `.scriptorium/journal/intent`, and the journal folder fsynced. That
//!    rename is the commit point.
//! 3. The staged files are renamed over their targets (removals made), and
//!    every folder touched is fsynced.
//! 4. The history line is appended (once: its transaction id is looked for
//!    first), the git commit made (once: see [`crate::history`]), the
//!    intent removed and the journal folder fsynced.
//!
//! [`recover`] runs before anything else under the write lock: a valid
//! intent is rolled forward (steps 3 and 4 again, skipping what is done); an
//! intent that does not check out, and any staging left without an intent,
//! are discarded. A crash at any moment therefore leaves the old revision
//! or the new one, and recovering twice is the same as once. A failed call
//! (fsync included) ends the commit with `IO`; it is never retried into a
//! success.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::disk::Disk;
use crate::error::{Code, Error};
use crate::history::{self, Planned};

/// The journal folder, relative to the workspace root.
pub const JOURNAL_DIR: &str = ".scriptorium/journal";
/// The intent record, relative to the workspace root.
pub const INTENT: &str = ".scriptorium/journal/intent";
const INTENT_TMP: &str = ".scriptorium/journal/intent.tmp";
/// The history of installed transactions, relative to the workspace root.
pub const HISTORY: &str = ".scriptorium/history.jsonl";
const TMP: &str = ".scriptorium/tmp";
const CHECKSUM_PREFIX: &str = "sha256 ";

/// One file of a change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Workspace-relative target.
    pub path: String,
    /// SHA-256 of the new bytes (hex); `None` removes the file.
    pub sha256: Option<String>,
}

/// The intent record: what an install will have done once complete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Intent {
    /// The transaction id (also the staging folder's suffix).
    pub tx: String,
    /// The files, in install order.
    pub entries: Vec<Entry>,
    /// The line appended to the history once installed (no newline).
    pub history: String,
    /// The git commit to make once installed (none when the workspace
    /// keeps no history; absent from intents of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<Planned>,
}

/// What a recovery found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Recovered {
    /// No intent: nothing to do (stale staging may have been removed).
    #[default]
    Nothing,
    /// A valid intent was rolled forward.
    RolledForward,
    /// An intent that did not check out was discarded.
    Discarded,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn sha_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn io_err(e: &io::Error, what: &str, path: &Path) -> Error {
    Error::io(e, what, path)
}

fn staging(root: &Path, tx: &str) -> PathBuf {
    root.join(TMP).join(format!("tx-{tx}"))
}

/// A fresh transaction id: time and process, unique enough to name a
/// staging folder that is removed afterwards.
pub fn new_tx_id() -> String {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{nanos:x}-{:x}", std::process::id())
}

impl Intent {
    fn encode(&self) -> Vec<u8> {
        let body = serde_json::to_string(self).expect("an intent serializes");
        format!("{body}\n{CHECKSUM_PREFIX}{}\n", sha_hex(body.as_bytes())).into_bytes()
    }

    fn decode(bytes: &[u8]) -> Option<Intent> {
        let text = std::str::from_utf8(bytes).ok()?;
        let (body, rest) = text.split_once('\n')?;
        let sum = rest.strip_prefix(CHECKSUM_PREFIX)?.strip_suffix('\n')?;
        if sum != sha_hex(body.as_bytes()) {
            return None;
        }
        serde_json::from_str(body).ok()
    }
}

/// Installs `files` (workspace-relative path, new bytes or `None` to
/// remove) as one crash-safe change. Every path must already be checked.
pub fn install(
    root: &Path,
    disk: Disk<'_>,
    tx: &str,
    files: &[(String, Option<Vec<u8>>)],
    history: String,
    commit: Option<Planned>,
) -> Result<(), Error> {
    let stage = staging(root, tx);
    let entries: Vec<Entry> = files
        .iter()
        .map(|(path, bytes)| Entry { path: path.clone(), sha256: bytes.as_deref().map(sha_hex) })
        .collect();
    let intent = Intent { tx: tx.to_owned(), entries, history, commit };
    let before_commit_point = (|| {
        disk.create_dirs(&stage).map_err(|e| io_err(&e, "cannot create", &stage))?;
        for (k, (_, bytes)) in files.iter().enumerate() {
            if let Some(bytes) = bytes {
                let p = stage.join(k.to_string());
                disk.write_new(&p, bytes).map_err(|e| io_err(&e, "cannot stage", &p))?;
            }
        }
        disk.sync_dir(&stage).map_err(|e| io_err(&e, "cannot fsync", &stage))?;
        let journal = root.join(JOURNAL_DIR);
        disk.create_dirs(&journal).map_err(|e| io_err(&e, "cannot create", &journal))?;
        let tmp = root.join(INTENT_TMP);
        disk.remove_file(&tmp).map_err(|e| io_err(&e, "cannot remove", &tmp))?;
        disk.write_new(&tmp, &intent.encode()).map_err(|e| io_err(&e, "cannot write", &tmp))?;
        Ok::<(), Error>(())
    })();
    if let Err(e) = before_commit_point {
        // Best effort: the next recovery removes whatever this leaves.
        let _ = discard_staging(root, disk, Some(tx));
        return Err(e);
    }
    let intent_path = root.join(INTENT);
    if let Err(e) = disk.rename(&root.join(INTENT_TMP), &intent_path) {
        let _ = discard_staging(root, disk, Some(tx));
        return Err(io_err(&e, "cannot write the intent", &intent_path));
    }
    // From here on the change is decided: a failure below is reported, and
    // the next writer (or reader) rolls the intent forward.
    let journal = root.join(JOURNAL_DIR);
    disk.sync_dir(&journal).map_err(|e| io_err(&e, "cannot fsync", &journal))?;
    roll_forward(root, disk, &intent)
}

/// Steps 3 and 4 for a committed intent; each part skips what is done.
fn roll_forward(root: &Path, disk: Disk<'_>, intent: &Intent) -> Result<(), Error> {
    let stage = staging(root, &intent.tx);
    let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
    for (k, entry) in intent.entries.iter().enumerate() {
        scriptorium_source_archive::fsio::check_no_links(root, &entry.path)?;
        let target = root.join(&entry.path);
        let dir = target.parent().map(Path::to_path_buf).unwrap_or_else(|| root.to_path_buf());
        match &entry.sha256 {
            None => {
                disk.remove_file(&target).map_err(|e| io_err(&e, "cannot remove", &target))?;
            }
            Some(want) => {
                let staged = stage.join(k.to_string());
                match fs::read(&staged) {
                    Ok(bytes) => {
                        if sha_hex(&bytes) != *want {
                            return Err(Error::new(
                                Code::Io,
                                format!(
                                    "the staged copy of {} does not match its intent; the install cannot be completed (the intent is kept in {INTENT})",
                                    entry.path
                                ),
                            )
                            .at(&entry.path));
                        }
                        disk.create_dirs(&dir).map_err(|e| io_err(&e, "cannot create", &dir))?;
                        disk.rename(&staged, &target).map_err(|e| io_err(&e, "cannot install", &target))?;
                    }
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        // Renamed before the interruption: the target must
                        // hold the new bytes.
                        let now = fs::read(&target).map(|b| sha_hex(&b)).ok();
                        if now.as_deref() != Some(want.as_str()) {
                            return Err(Error::new(
                                Code::Io,
                                format!(
                                    "{} holds neither its staged copy nor its new bytes; the install cannot be completed (the intent is kept in {INTENT})",
                                    entry.path
                                ),
                            )
                            .at(&entry.path));
                        }
                    }
                    Err(e) => return Err(io_err(&e, "cannot read", &staged)),
                }
            }
        }
        dirs.insert(dir);
    }
    for dir in &dirs {
        if dir.is_dir() {
            disk.sync_dir(dir).map_err(|e| io_err(&e, "cannot fsync", dir))?;
        }
    }
    append_history_once(root, disk, intent)?;
    if let Some(planned) = &intent.commit {
        if let Err(e) = history::commit_installed(root, disk, planned) {
            // Git refused (a lock another git process holds, a damaged
            // repository): the files stand, the commit waits for the next
            // writer. Only a crash here keeps the intent.
            history::postpone(root, disk, planned, &e)?;
        }
    }
    let intent_path = root.join(INTENT);
    disk.remove_file(&intent_path).map_err(|e| io_err(&e, "cannot remove", &intent_path))?;
    let journal = root.join(JOURNAL_DIR);
    disk.sync_dir(&journal).map_err(|e| io_err(&e, "cannot fsync", &journal))?;
    discard_staging(root, disk, Some(&intent.tx))
}

fn append_history_once(root: &Path, disk: Disk<'_>, intent: &Intent) -> Result<(), Error> {
    let path = root.join(HISTORY);
    scriptorium_source_archive::fsio::check_no_links(root, HISTORY)?;
    let marker = format!("\"tx\":\"{}\"", intent.tx);
    if let Ok(bytes) = fs::read(&path) {
        // The line is the last one written, if it was written at all.
        let tail = &bytes[bytes.len().saturating_sub(intent.history.len() + 4096)..];
        if memchr::memmem::find(tail, marker.as_bytes()).is_some() {
            return Ok(());
        }
        // A torn last line (a crash mid-append) is ended first, so that the
        // new line stays whole.
        if bytes.last().is_some_and(|&b| b != b'\n') {
            disk.append(&path, b"\n").map_err(|e| io_err(&e, "cannot append to", &path))?;
        }
    }
    let mut line = intent.history.clone().into_bytes();
    line.push(b'\n');
    disk.append(&path, &line).map_err(|e| io_err(&e, "cannot append to", &path))
}

/// Removes staging folders: `tx`'s, or every `tx-*` one when `None`.
fn discard_staging(root: &Path, disk: Disk<'_>, tx: Option<&str>) -> Result<(), Error> {
    let tmp = root.join(TMP);
    let dirs: Vec<PathBuf> = match tx {
        Some(tx) => vec![staging(root, tx)],
        None => match fs::read_dir(&tmp) {
            Ok(rd) => rd
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("tx-"))
                .map(|e| e.path())
                .collect(),
            Err(_) => Vec::new(),
        },
    };
    for dir in dirs {
        if !dir.is_dir() || fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
            continue;
        }
        if let Ok(rd) = fs::read_dir(&dir) {
            for f in rd.filter_map(Result::ok) {
                let p = f.path();
                disk.remove_file(&p).map_err(|e| io_err(&e, "cannot remove", &p))?;
            }
        }
        disk.remove_empty_dir(&dir).map_err(|e| io_err(&e, "cannot remove", &dir))?;
    }
    let tmp_intent = root.join(INTENT_TMP);
    if tmp_intent.exists() {
        disk.remove_file(&tmp_intent).map_err(|e| io_err(&e, "cannot remove", &tmp_intent))?;
    }
    Ok(())
}

/// Removes the temporaries of atomic file replacements that a killed
/// process left in `.scriptorium/tmp/` (`write-*.tmp`). Safe only under
/// the exclusive lock: readers publish index files through the same folder
/// while they hold the lock shared.
fn remove_orphan_temporaries(root: &Path, disk: Disk<'_>) -> Result<(), Error> {
    let Ok(rd) = fs::read_dir(root.join(TMP)) else { return Ok(()) };
    for e in rd.filter_map(Result::ok) {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("write-") && name.ends_with(".tmp") && e.file_type().is_ok_and(|t| t.is_file()) {
            let p = e.path();
            disk.remove_file(&p).map_err(|err| io_err(&err, "cannot remove", &p))?;
        }
    }
    Ok(())
}

/// True when an interrupted install waits for recovery.
pub fn pending(root: &Path) -> bool {
    root.join(INTENT).exists()
}

/// Completes or discards an interrupted install. Call it holding the
/// write lock, before reading anything the install may change.
pub fn recover(root: &Path, disk: Disk<'_>) -> Result<Recovered, Error> {
    let path = root.join(INTENT);
    remove_orphan_temporaries(root, disk)?;
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            discard_staging(root, disk, None)?;
            return Ok(Recovered::Nothing);
        }
        Err(e) => return Err(io_err(&e, "cannot read", &path)),
    };
    match Intent::decode(&bytes) {
        Some(intent) if intent.entries.iter().all(|e| crate::patch::check_target(&e.path).is_ok()) => {
            roll_forward(root, disk, &intent)?;
            discard_staging(root, disk, None)?;
            Ok(Recovered::RolledForward)
        }
        _ => {
            disk.remove_file(&path).map_err(|e| io_err(&e, "cannot remove", &path))?;
            let journal = root.join(JOURNAL_DIR);
            disk.sync_dir(&journal).map_err(|e| io_err(&e, "cannot fsync", &journal))?;
            discard_staging(root, disk, None)?;
            Ok(Recovered::Discarded)
        }
    }
}
