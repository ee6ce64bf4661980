//! The memory palace: one self-contained HTML page that shows a person
//! what a workspace remembers and why (FORMAT.md §9).
//!
//! [`export`] reads the workspace once — topic files, the archive, the
//! promotions, the git history and the derived views, each through its own
//! layer's API — and writes every topic, the records its citations name,
//! every pending record, and counts for the rest as one JSON document.
//! [`page`] wraps that document in an HTML page whose script and style are
//! inline and pinned by their SHA-256 in a Content-Security-Policy of
//! `default-src 'none'`; [`write()`] puts the page on disk (mode 0600, in a
//! fresh 0700 folder unless told where); `scriptorium palace --open` hands
//! it to the platform's opener.
//!
//! **Safety:** every string from memory is data. The JSON sits in a
//! `<script type="application/json">` element with `<`, `>`, `&`, U+2028
//! and U+2029 escaped ([`escape_json`]), so no byte of memory can end the
//! element or open a comment; the page's script reaches the DOM only
//! through `textContent` and element construction, never `innerHTML`; the
//! only links it makes are in-page (`#…`) or `file://` links into the
//! workspace, built here from workspace-relative paths.
//!
//! What it does not do: it changes no memory (nothing under `topics/` or
//! `sources/`, no derived view; computing the revision may refresh its
//! cache in `.scriptorium/`, as every reader does) and takes no lock (the
//! command line holds the shared lock while [`export`] reads).
//!
//! The work is split by concern: `data` builds the embedded document from
//! the workspace, `html` assembles the page around it from the inline
//! assets (`palace/palace.js`, `palace/palace.css`), and `write` puts the
//! page on disk.
//!
//! ```
//! let json = r#"{"text":"</script><!--"}"#;
//! assert_eq!(scriptorium::palace::escape_json(json), r#"{"text":"\u003c/script\u003e\u003c!--"}"#);
//! ```

use std::path::Path;

use crate::error::Error;
use scriptorium_source_archive::Code;

mod data;
mod html;
mod write;

pub use html::{content_security_policy, escape_json, page};
pub use write::write;

/// The name of the page in the fresh folder [`write()`] makes by default.
pub const FILE_NAME: &str = "palace.html";

/// The version of the embedded JSON document's shape (2: `history` is the
/// workspace's git log, and each block names the commits that touched it;
/// 3: `health`, the writer's health as `status` reports it).
pub const DATA_FORMAT: u32 = 3;

/// At most this many commits of the workspace's git history, the newest,
/// are embedded (with `history_truncated` saying whether older ones
/// exist): each one read costs a tree comparison and the parsing of the
/// topic files it changed, and a page is for a person to read.
pub const HISTORY_LIMIT: usize = 1000;

/// The id of the `<script type="application/json">` element holding the data.
pub const DATA_ELEMENT_ID: &str = "palace-data";

/// Reads the workspace at `root` and returns the palace's data as one
/// compact JSON document (not yet escaped for HTML; see [`escape_json`]).
///
/// It embeds every topic file (headings and blocks as parts: text,
/// citations, links), every record a citation names and every pending
/// record (verbatim, in the FORMAT.md §5 record shape plus its `file://`
/// URL), counts per thread, speaker and day for all records, the people,
/// the timeline, `relations.json`, the newest [`HISTORY_LIMIT`] commits of
/// the workspace's git history with, for every block, the commits that
/// added, changed or removed it, `.scriptorium/audit.jsonl`, the
/// rendered `core.md` with its token count and the blocks left out, and
/// the writer's health ([`crate::health::Health`]).
///
/// Errors: `NOT_FOUND` when `root` is not a folder; `IO` when a file
/// cannot be read; `INVALID_ARGUMENT` for a malformed `scriptorium.toml`.
pub fn export(root: &Path) -> Result<String, Error> {
    if !root.is_dir() {
        let mut e = Error::new(Code::NotFound, format!("no workspace at {}", root.display()));
        e.path = Some(root.display().to_string());
        return Err(e);
    }
    let root = std::fs::canonicalize(root).map_err(|e| io_error(&e, "cannot resolve", root))?;
    data::json(&root)
}

/// The page for the workspace at `root`: [`page`] of [`export`].
pub fn generate(root: &Path) -> Result<String, Error> {
    Ok(page(&export(root)?))
}

/// The facade error for an I/O failure `what`-ing `path`: `NOT_FOUND`,
/// `PERMISSION_DENIED` or `IO` by the failure's kind.
fn io_error(e: &std::io::Error, what: &str, path: &Path) -> Error {
    let code = match e.kind() {
        std::io::ErrorKind::NotFound => Code::NotFound,
        std::io::ErrorKind::PermissionDenied => Code::PermissionDenied,
        _ => Code::Io,
    };
    let mut err = Error::new(code, format!("{what} {}: {e}", path.display()));
    err.path = Some(path.display().to_string());
    err
}

#[cfg(test)]
mod tests;
