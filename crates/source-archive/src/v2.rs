//! The v2 archive file: the frame writer and the strict nom parser
//! (FORMAT.md §2.4–2.5).
//!
//! ```text
//! file  = MARKER LF *frame
//! frame = LF anchor LF source LF role LF [pending LF] [speaker-id LF] record-lines LF record
//! ```
//!
//! The parser is forward-only: it stops at the first frame that is malformed,
//! truncated or non-canonical, returns every frame before it, and never scans
//! later bytes for a new start. It never looks inside the `N` record lines
//! for structure, so a body may hold anything, whole forged frames included.
//! It never panics for any input (the `archive_parse` fuzz target holds it to
//! that).
//!
//! The writer is in `write`, what parsing gives in `frame`, the header
//! line matchers in `lines`, the checks of encoded identifiers in
//! `encoded`, duplicate detection in `duplicates` and the parser itself in
//! `parser`.

mod duplicates;
mod encoded;
mod frame;
mod lines;
mod parser;
pub(crate) mod sample;
mod write;

pub use frame::{Diagnostic, Expect, Frame, Parsed};
pub use parser::{parse, parse_frame, parse_prefix};
pub use write::{write_file, write_frame};

/// The first line of every v2 file (without its LF).
pub const MARKER: &str = "<!-- openprogram-source-archive:v2 -->";

#[cfg(test)]
mod tests;
