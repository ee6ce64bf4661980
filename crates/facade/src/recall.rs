//! What the model sees of memory without asking: the fenced `core.md` every
//! session, and every turn the top hits for the message, fenced.

use std::path::Path;

use scriptorium_bm25_index::search::{Bm25, Filters};
use scriptorium_bm25_index::tokenize::TokenizerConfig;
use serde_json::Value;

use crate::fence::{fence_memory, Fenced};

/// Hits per turn.
pub const RECALL_LIMIT: usize = 5;
/// The most characters of one recalled hit.
pub const HIT_CHARS: usize = 600;

/// The marker line the rendered `core.md` starts with.
const CORE_MARKER: &str = "<!-- scriptorium:derived core.md -->";

/// The fenced `core.md` (the derived file, without its marker line);
/// empty when there is none.
pub fn system_prompt(root: &Path) -> std::io::Result<Fenced> {
    let text = match std::fs::read_to_string(root.join("core.md")) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Fenced::default()),
        Err(e) => return Err(e),
    };
    let body = text.strip_prefix(CORE_MARKER).map(|b| b.trim_start_matches('\n')).unwrap_or(&text);
    Ok(fence_memory(body.trim_end()))
}

/// The fenced top [`RECALL_LIMIT`] hits (topic blocks and archived
/// records, pending ones left out) for `message`, one per line; empty when
/// nothing matches.
pub fn recall(root: &Path, message: &str) -> Result<(Fenced, usize), scriptorium_source_archive::Error> {
    let lines = scriptorium_bm25_index::workspace::search_lines(
        root,
        TokenizerConfig::default(),
        message,
        &Filters::default(),
        RECALL_LIMIT,
        Bm25::default(),
    )?;
    let hits: Vec<String> =
        lines.iter().filter_map(|l| serde_json::from_str::<Value>(l).ok()).map(|h| hit_line(&h)).collect();
    Ok((fence_memory(&hits.join("\n")), hits.len()))
}

fn one_line(s: &str) -> String {
    let collapsed = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() > HIT_CHARS {
        let cut: String = collapsed.chars().take(HIT_CHARS).collect();
        format!("{cut}…")
    } else {
        collapsed
    }
}

/// One recalled hit as a line: a block with where it lives, or a record
/// with its time, speaker and source id.
fn hit_line(h: &Value) -> String {
    let s = |k: &str| h[k].as_str().unwrap_or("");
    if s("kind") == "topic" {
        format!("- {} ({}#^{}, {})", one_line(s("text")), s("path"), s("block_id"), s("time"))
    } else {
        let who = if s("speaker_label").is_empty() { s("role") } else { s("speaker_label") };
        format!("- [{}] {}: {} ({})", s("timestamp"), one_line(who), one_line(s("content")), s("source_id"))
    }
}
