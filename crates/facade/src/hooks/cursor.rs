//! How far each transcript has been read, so that a hook imports only what
//! a transcript gained since the last call.
//!
//! For each transcript file, `.scriptorium/hooks/transcripts/<hash>.json`
//! holds the byte offset read up to (always just after an LF), the lines
//! before it, and a hash of the file's first and last 4 KiB before that
//! offset. A file shorter than the offset, or whose hashed bytes changed,
//! was rewritten: it is read again from its start, which adds nothing twice
//! (a node id the store has is skipped). A last line without its LF is
//! still being written: it is left for the next call.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use scriptorium_scheduler::import::{self, Format, Origin};
use scriptorium_source_archive::{fsio, timestamp, Code};

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
    let slot = slot(root, transcript);
    let saved = load(&slot).filter(|c| c.path == shown);
    let (start, lines, reread) = match saved {
        Some(c)
            if c.offset <= len
                && hashes(&mut file, c.offset).ok() == Some((c.head.clone(), c.edge.clone())) =>
        {
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
        return Ok(Gained { reread, ..Gained::default() });
    };
    bytes.truncate(end);
    let text = String::from_utf8(bytes).map_err(|e| {
        Error::invalid(format!("not UTF-8 (at byte {})", start + e.utf8_error().valid_up_to() as u64))
            .at(&shown)
    })?;
    let stem = transcript.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or_else(|| timestamp::format_unix(0), |d| timestamp::format_unix(d.as_secs() as i64));
    let origin = Origin { stem: &stem, mtime: &mtime, first_line: lines + 1 };
    let transcripts = import::read_text(format, &text, &origin).map_err(|e| {
        let e: Error = e.into();
        if e.path.is_none() {
            e.at(&shown)
        } else {
            e
        }
    })?;
    let recorded = sessions::record(root, &transcripts)?;
    let offset = start + end as u64;
    let (head, edge) = hashes(&mut file, offset).map_err(io)?;
    let next = Cursor { path: shown, offset, lines: lines + text.matches('\n').count(), head, edge };
    save(root, &slot, &next)?;
    let mut names: Vec<String> = transcripts.into_iter().map(|t| t.session).collect();
    names.dedup();
    Ok(Gained { sessions: names, recorded, reread })
}

/// The file remembering `transcript`.
fn slot(root: &Path, transcript: &Path) -> PathBuf {
    let digest = Sha256::digest(transcript.as_os_str().as_encoded_bytes());
    let name: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    root.join(".scriptorium/hooks/transcripts").join(format!("{name}.json"))
}

/// The saved cursor; none when missing or unreadable (the transcript is
/// then read from its start, which adds nothing twice).
fn load(slot: &Path) -> Option<Cursor> {
    serde_json::from_slice(&std::fs::read(slot).ok()?).ok()
}

fn save(root: &Path, slot: &Path, c: &Cursor) -> Result<(), Error> {
    if let Some(dir) = slot.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::new(Code::Io, format!("cannot create {}: {e}", dir.display())))?;
    }
    let bytes = serde_json::to_vec(c).map_err(|e| Error::new(Code::Io, e.to_string()))?;
    Ok(fsio::replace_cache_file(root, slot, &bytes)?)
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
