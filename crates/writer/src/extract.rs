//! `extract_before_discard`: given turns a compactor is about to drop, the
//! text worth folding into its summary. Stores nothing.

use scriptorium_scheduler::WriteFailure;

use crate::input::Turn;
use crate::model::{Message, Model};
use crate::offline::{first_person, fits, preference, said, statements};

/// The extract prompt.
pub const EXTRACT_PROMPT: &str = include_str!("../prompts/extract.md");

/// Without a model: each turn's first-person and preference sentences,
/// each with the sentences right after it that qualify it
/// ([`crate::offline::statements`]), one line a turn, as
/// `<label or role> said: “…”` (quoted as the offline writer quotes: whole
/// and exactly, or marked not verbatim; a statement too long to quote whole
/// is left out). `None` when there are none.
pub fn extract_before_discard(turns: &[Turn]) -> Option<String> {
    let mut lines = Vec::new();
    for t in turns {
        let keep: Vec<&str> = statements(&t.content, |s| first_person(s) || preference(s))
            .into_iter()
            .map(|(_, s)| s)
            .filter(|s| fits(s))
            .collect();
        if !keep.is_empty() {
            lines.push(format!("{} said{} ({})", t.who(), said(&keep, &t.content), t.source));
        }
    }
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// With a model: it reads the turns (the writer-input lines, in a fence) and
/// answers the lines worth keeping; `None` when it answers `NOTHING` or
/// nothing.
pub fn extract_with(model: &mut dyn Model, turns: &[Turn]) -> Result<Option<String>, WriteFailure> {
    if turns.is_empty() {
        return Ok(None);
    }
    let user = crate::agent::observation("the part of the conversation being compacted", turns);
    let reply = model.chat(&[Message::text("system", EXTRACT_PROMPT), Message::text("user", user)], &[])?;
    Ok(reply.text.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty() && t != "NOTHING"))
}
