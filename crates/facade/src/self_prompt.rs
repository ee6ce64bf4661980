//! The self (FORMAT.md §3, §9): `topics/self/persona.md` and
//! `topics/self/identity.md`, ordinary topic files whose eligible blocks
//! every prompt a session is given starts with, inside the fence, under
//! their own token budget (`memory.self.budget`).
//!
//! ```text
//! [Self: persona, topics/self/persona.md]
//! You answer in short sentences.
//!
//! You never guess a file's path.
//! [Self: identity, topics/self/identity.md]
//! You are the release assistant of the Ada team.
//! [End of self]
//! ```
//!
//! Each block is shown as its text without footnote references and its
//! ` ^id` (links kept as written), the persona's blocks first, then the
//! identity's, each file in its order. Only eligible blocks (valid and not
//! pending) are shown. Like `core.md`, a file's blocks are taken in order
//! while the whole self, as it is shown in the fence (control and format
//! characters removed, fence tags neutralised), stays within the budget in
//! `o200k_base` tokens; the first block that would exceed it and the rest
//! of that file's blocks are omitted, whole, and reported — the identity
//! is still tried when the persona overflows. A block longer than the
//! budget could hold ([`MAX_TOKEN_BYTES`] bytes a token) is omitted
//! without being counted, so a hostile block costs a pass over its bytes.
//!
//! The self and `core.md` never repeat each other: `core.md` holds the
//! blocks of `topics/core.md` only. Recall leaves the self's blocks out
//! ([`crate::recall`]): they are in every session's prompt already.

use std::path::Path;

use scriptorium_topic_markdown::parse::plain_text;
use scriptorium_topic_markdown::validate::{Checked, Loaded};
use scriptorium_topic_markdown::views::{count_tokens, CoreReport, MAX_TOKEN_BYTES};

pub use scriptorium_topic_markdown::views::SELF_PATHS;

use crate::error::Error;
use crate::fence::{clean, fence_memory, neutralise, Fenced};

/// What rendering the self did: its tokens as shown (0 when nothing is)
/// and the ids of eligible blocks left out for the budget, the persona's
/// then the identity's, each in file order — the shape of `core.md`'s
/// report.
pub type SelfReport = CoreReport;

/// The line that ends the self.
pub const END: &str = "[End of self]";

/// The self as a prompt shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SelfView {
    /// The lines the fenced body starts with, as the fence will hold them
    /// (empty: no eligible block fits, or there is no self).
    pub text: String,
    /// Tokens and omitted ids.
    pub report: SelfReport,
}

/// Whether `path` is one of the self's files.
pub fn is_self(path: &str) -> bool {
    SELF_PATHS.contains(&path)
}

/// The heading line of the self file at `path`.
fn heading(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path).trim_end_matches(".md");
    format!("[Self: {name}, {path}]")
}

/// The self's text with `shown` (per file: its path and the texts of the
/// blocks taken), as the fence will hold it.
fn assemble(shown: &[(&str, Vec<String>)]) -> String {
    let mut s = String::new();
    for (path, blocks) in shown.iter().filter(|(_, b)| !b.is_empty()) {
        s.push_str(&heading(path));
        s.push('\n');
        s.push_str(&blocks.join("\n\n"));
        s.push('\n');
    }
    if !s.is_empty() {
        s.push_str(END);
    }
    neutralise(&clean(&s))
}

/// One eligible block of the self, as it is shown: its text cleaned as the
/// fence cleans it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Shown {
    /// Its file, one of [`SELF_PATHS`].
    path: &'static str,
    /// Its id.
    id: String,
    /// Its text without footnote references and id.
    text: String,
}

/// The eligible blocks of the self's files among `files`, persona first,
/// each file in order (blocks showing nothing left out).
fn eligible(files: &[Loaded], checked: &Checked) -> Vec<Shown> {
    let mut out = Vec::new();
    for path in SELF_PATHS {
        let Some(file) = files.iter().find(|f| f.path == path) else { continue };
        for state in checked.blocks.iter().filter(|b| b.path == path && b.eligible()) {
            let Some(id) = state.id.as_deref() else { continue };
            let text = clean(&plain_text(&file.file.block_text(&file.file.blocks[state.index]), Some(id)));
            // Nothing a reader would see (format characters only).
            if !text.trim().is_empty() {
                out.push(Shown { path, id: id.to_owned(), text });
            }
        }
    }
    out
}

/// Renders the self from `files` (the topic files read, the self's among
/// them) and their check, under `budget` tokens.
pub fn render(files: &[Loaded], checked: &Checked, budget: usize) -> SelfView {
    render_blocks(&eligible(files, checked), budget)
}

/// Renders the self from its eligible blocks under `budget` tokens.
fn render_blocks(blocks: &[Shown], budget: usize) -> SelfView {
    let mut view = SelfView::default();
    let mut shown: Vec<(&str, Vec<String>)> = Vec::new();
    let mut full = false;
    for b in blocks {
        if shown.last().is_none_or(|(p, _)| *p != b.path) {
            shown.push((b.path, Vec::new()));
            full = false;
        }
        // More bytes than the budget's tokens can stand for: it cannot
        // fit, and is not counted.
        let fits = !full
            && b.text.len() <= budget.saturating_mul(MAX_TOKEN_BYTES)
            && take(&mut shown, b.text.clone(), budget, &mut view);
        if !fits {
            full = true;
            view.report.omitted.push(b.id.clone());
        }
    }
    view
}

/// Adds `text` to the last file of `shown` when the whole self then stays
/// within `budget`, and makes `view` that self; says whether it did.
fn take(shown: &mut [(&str, Vec<String>)], text: String, budget: usize, view: &mut SelfView) -> bool {
    let Some(last) = shown.last_mut() else { return false };
    last.1.push(text);
    let candidate = assemble(shown);
    let tokens = count_tokens(&candidate);
    if tokens > budget {
        if let Some(last) = shown.last_mut() {
            last.1.pop();
        }
        return false;
    }
    view.report.tokens = tokens;
    view.text = candidate;
    true
}

/// The self of the workspace at `root` under `budget` tokens, its files
/// checked at a cost that follows them
/// ([`scriptorium_transaction::snapshot::check_files`]); nothing when
/// there is none. Reads the workspace as it is: a caller that needs a
/// settled workspace opens a [`crate::snapshot::Snapshot`] first.
///
/// The render is kept in `.scriptorium/self.cache` with a hash of what it
/// was made from (`cache`), so a prompt whose self did not change neither
/// loads the tokenizer nor counts again.
pub fn of_workspace(root: &Path, budget: usize) -> Result<SelfView, Error> {
    let some = scriptorium_transaction::snapshot::check_files(root, &SELF_PATHS)?;
    let blocks = eligible(&some.loaded, &some.checked);
    if blocks.is_empty() {
        return Ok(SelfView::default());
    }
    Ok(cache::through(root, budget, &blocks, || render_blocks(&blocks, budget)))
}

/// The self's report for a status: `memory.self.budget` of the
/// configuration in force for `root` over the whole workspace's check.
pub fn report(root: &Path, files: &[Loaded], checked: &Checked) -> Result<SelfReport, Error> {
    let budget = crate::config::Config::load(root)?.self_budget;
    Ok(render(files, checked, budget).report)
}

/// What a session is given, fenced: the self, then the save nudge (when
/// due), then `body` (`core.md`, or recall), each left out when empty.
pub fn fence_prompt(self_text: &str, nudge: Option<&str>, body: &str) -> Fenced {
    let parts: Vec<&str> =
        [self_text, nudge.unwrap_or(""), body].into_iter().filter(|p| !p.trim().is_empty()).collect();
    fence_memory(&parts.join("\n"))
}

mod cache;
#[cfg(test)]
mod tests;
