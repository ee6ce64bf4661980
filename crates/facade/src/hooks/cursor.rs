//! How far each transcript has been read, so that a hook imports only what
//! a transcript gained since the last call.
//!
//! For each transcript file, `.scriptorium/hooks/transcripts/<hash>.json`
//! holds the byte offset read up to (always just after an LF), the lines
//! before it, and a hash of the file's first and last 4 KiB before that
//! offset. A file shorter than the offset, or whose hashed bytes changed,
//! was rewritten: it is read again from its start, which adds nothing twice
//! (a node id the store has is skipped), as is a transcript whose session
//! the store no longer has (a session store deleted and made anew). A last
//! line without its LF is still being written: it is left for the next
//! call. A line that cannot be read is skipped (and reported), so one
//! damaged line never stops the rest of a session from being recorded.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use scriptorium_scheduler::import::{self, Format, Origin, Transcript};
use scriptorium_scheduler::store::SESSIONS_DB;
use scriptorium_scheduler::{SessionStore, SqliteStore};
use scriptorium_source_archive::{timestamp, Code};

use crate::error::Error;
use crate::sessions::{self, Recorded};

/// The bytes hashed at each end of what was read.
const EDGE: u64 = 4096;

/// The most one call reads of a transcript; the rest waits for the next.
const MAX_READ: u64 = 256 << 20;

/// Where a transcript was read up to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Cursor {
    path: String,
    offset: u64,
    lines: usize,
    head: String,
    edge: String,
    /// The session the transcript's lines went to.
    #[serde(default)]
    session: Option<String>,
}

/// What reading a transcript's new lines did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gained {
    /// The sessions the new lines belong to.
    pub sessions: Vec<String>,
    /// What recording them did.
    pub recorded: Recorded,
    /// Whether the transcript had been rewritten or shortened since the
    /// last call (so it was read again from its start).
    pub reread: bool,
    /// The lines that could not be read (skipped), with why.
    pub skipped: Vec<Error>,
}

/// Imports what `transcript` (a file in `format`) gained since the last
/// call into the workspace at `root`, and remembers how far it was read. A
/// transcript that does not exist yet has gained nothing.
pub fn import_new(root: &Path, format: Format, transcript: &Path) -> Result<Gained, Error> {
    let shown = transcript.display().to_string();
    let io = |e: std::io::Error| Error::new(Code::Io, format!("cannot read the transcript: {e}")).at(&shown);
    let meta = match std::fs::metadata(transcript) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Gained::default()),
        Err(e) => return Err(io(e)),
    };
    if !meta.is_file() {
        return Err(Error::invalid("the transcript is not a regular file").at(&shown));
    }
    let mut file = File::open(transcript).map_err(io)?;
    let len = meta.len();
    let slot = slot(transcript);
    let saved = load(root, &slot).filter(|c| c.path == shown);
    let known = saved.as_ref().and_then(|c| c.session.clone());
    let (start, lines, reread) = match saved {
        Some(c) if c.offset <= len && still_there(root, &c) && same_bytes(&mut file, &c) => {
            (c.offset, c.lines, false)
        }
        Some(_) => (0, 0, true),
        None => (0, 0, false),
    };
    let want = (len - start).min(MAX_READ);
    let mut bytes = Vec::with_capacity(usize::try_from(want).unwrap_or(0));
    file.seek(SeekFrom::Start(start)).map_err(io)?;
    file.by_ref().take(want).read_to_end(&mut bytes).map_err(io)?;
    let Some(end) = bytes.iter().rposition(|&b| b == b'\n').map(|i| i + 1) else {
        return Ok(Gained { reread, sessions: known.into_iter().collect(), ..Gained::default() });
    };
    bytes.truncate(end);
    let mut skipped = Vec::new();
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let at = start + valid as u64;
            let mut told =
                Error::invalid(format!("not UTF-8 (at byte {at}); read with U+FFFD in its place")).at(&shown);
            let before = e.as_bytes()[..valid].iter().filter(|&&b| b == b'\n').count();
            told.line = Some((lines + 1 + before) as u64);
            skipped.push(told);
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    };
    // Lines after the first piece name their session only through what
    // was read before (a Codex rollout names it on its first line).
    let stem = match (&known, start) {
        (Some(session), s) if s > 0 => session.clone(),
        _ => transcript.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(),
    };
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or_else(|| timestamp::format_unix(0), |d| timestamp::format_unix(d.as_secs() as i64));
    let origin = Origin { stem: &stem, mtime: &mtime, first_line: lines + 1 };
    let transcripts = read_skipping(format, text.clone(), &origin, &shown, &mut skipped)?;
    let recorded = sessions::record(root, &transcripts)?;
    let mut names: Vec<String> = transcripts.into_iter().map(|t| t.session).collect();
    names.dedup();
    let session = names.last().cloned().or(known);
    let offset = start + end as u64;
    let (head, edge) = hashes(&mut file, offset).map_err(io)?;
    let lines = lines + text.matches('\n').count();
    let next = Cursor { path: shown, offset, lines, head, edge, session: session.clone() };
    save(root, &slot, &next)?;
    Ok(Gained { sessions: session.into_iter().collect(), recorded, reread, skipped })
}

/// The session the lines of `transcript` were recorded under, when it has
/// been read before.
pub fn session_of(root: &Path, transcript: &Path) -> Option<String> {
    let c = load(root, &slot(transcript))?;
    (c.path == transcript.display().to_string()).then_some(c.session).flatten()
}

/// Reads `text`, skipping each line that cannot be read (blanked, so the
/// others keep their line numbers and ids) and saying why in `skipped`.
fn read_skipping(
    format: Format,
    mut text: String,
    origin: &Origin<'_>,
    shown: &str,
    skipped: &mut Vec<Error>,
) -> Result<Vec<Transcript>, Error> {
    loop {
        let e: Error = match import::read_text(format, &text, origin) {
            Ok(t) => return Ok(t),
            Err(e) => e.into(),
        };
        let e = if e.path.is_none() { e.at(shown) } else { e };
        let Some(at) =
            e.line.and_then(|l| usize::try_from(l).ok()).and_then(|l| l.checked_sub(origin.first_line))
        else {
            return Err(e);
        };
        let Some(range) = line_range(&text, at) else { return Err(e) };
        if text[range.clone()].trim().is_empty() {
            return Err(e);
        }
        text.replace_range(range, "");
        skipped.push(e);
    }
}

/// The bytes of line `n` (0-based, without its LF) of `text`.
fn line_range(text: &str, n: usize) -> Option<std::ops::Range<usize>> {
    let start = if n == 0 { 0 } else { text.match_indices('\n').nth(n - 1)?.0 + 1 };
    let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    Some(start..end)
}

/// Whether the session store still has the session the cursor's lines
/// went to (a store deleted and made anew has lost them: read again).
fn still_there(root: &Path, c: &Cursor) -> bool {
    let Some(session) = &c.session else { return true };
    match SqliteStore::open_existing(&root.join(SESSIONS_DB)) {
        Ok(Some(store)) => store.session(session).is_ok_and(|s| s.is_some()),
        _ => false,
    }
}

/// Whether the bytes the cursor hashed are unchanged.
fn same_bytes(file: &mut File, c: &Cursor) -> bool {
    hashes(file, c.offset).ok() == Some((c.head.clone(), c.edge.clone()))
}

/// The file remembering `transcript`, workspace-relative.
fn slot(transcript: &Path) -> String {
    format!(
        "{}/transcripts/{}.json",
        super::state::DIR,
        super::state::name_of(transcript.as_os_str().as_encoded_bytes())
    )
}

/// The saved cursor; none when missing or unreadable (the transcript is
/// then read from its start, which adds nothing twice).
fn load(root: &Path, slot: &str) -> Option<Cursor> {
    serde_json::from_slice(&std::fs::read(root.join(slot)).ok()?).ok()
}

fn save(root: &Path, slot: &str, c: &Cursor) -> Result<(), Error> {
    let bytes = serde_json::to_vec(c).map_err(|e| Error::new(Code::Io, e.to_string()))?;
    super::state::write(root, slot, &bytes)
}

/// The hashes of the first and the last [`EDGE`] bytes before `offset`.
fn hashes(file: &mut File, offset: u64) -> std::io::Result<(String, String)> {
    let mut hash_at = |from: u64| -> std::io::Result<String> {
        let n = EDGE.min(offset - from);
        let mut buf = Vec::with_capacity(n as usize);
        file.seek(SeekFrom::Start(from))?;
        file.by_ref().take(n).read_to_end(&mut buf)?;
        if buf.len() as u64 != n {
            return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the file shrank while read"));
        }
        Ok(Sha256::digest(&buf)[..16].iter().map(|b| format!("{b:02x}")).collect())
    };
    Ok((hash_at(0)?, hash_at(offset.saturating_sub(EDGE))?))
}
