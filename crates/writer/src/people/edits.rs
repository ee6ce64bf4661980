//! The people-card limits on a model's edits (FORMAT.md §8, *People
//! cards*): the model-driven writer's staged edits may not leave a card
//! fuller than its limits allow, and a refusal is shown to the model like
//! a validation refusal, so it can repair its edits.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use scriptorium_topic_markdown::parse::{plain_text, TopicFile, TopicKind};
use scriptorium_transaction::{self as transaction, Edit};

use super::{entry_chars, Limits};

/// Refuses `edits` (in order, against the workspace at `root`) that would
/// leave a people card (a file whose front matter says `kind: person` once
/// the edits are made) with more paragraphs than its `max_entries` and
/// than it held before, or with a paragraph longer than its
/// `max_entry_chars` ([`entry_chars`]) that it did not hold before, the
/// card's own limits first ([`Limits::for_card`]). What a card held
/// already is never held against an edit. `VALIDATION_FAILED`, at the
/// first such card, naming every card, limit and paragraph. An edit the
/// transaction would refuse anyway (a missing file, text not found, a path
/// through a symbolic link) is left to it.
pub fn check(root: &Path, edits: &[Edit], limits: Limits) -> Result<(), transaction::Error> {
    let mut problems = Vec::new();
    let mut first: Option<String> = None;
    for (path, after) in applied(root, edits) {
        let Some(after) = after else { continue };
        let (file, _) = TopicFile::parse_lenient(&after);
        let Some(fm) = file.front_matter.as_ref().filter(|fm| fm.kind() == Some(TopicKind::Person)) else {
            continue;
        };
        let limits = limits.for_card(Some(fm));
        let before = read(root, &path).map(|t| TopicFile::parse_lenient(&t).0);
        let held = before.as_ref().map_or(0, |b| b.blocks.len());
        let texts: HashSet<String> = before
            .iter()
            .flat_map(|b| b.blocks.iter().map(|k| plain_text(&b.block_text(k), k.id.as_deref())))
            .collect();
        if file.blocks.len() > limits.max_entries && file.blocks.len() > held {
            problems.push(format!(
                "{path} would hold {} paragraphs, more than its max_entries {} (it holds {held}): leave a paragraph out, or merge it with one about the same thing",
                file.blocks.len(),
                limits.max_entries
            ));
        }
        for b in &file.blocks {
            let text = file.block_text(b);
            let chars = entry_chars(&text, b.id.as_deref());
            if chars > limits.max_entry_chars && !texts.contains(&plain_text(&text, b.id.as_deref())) {
                problems.push(format!(
                    "{path} line {}{}: a paragraph of {chars} characters, more than its max_entry_chars {}: say it in fewer words (a quotation is kept whole or not at all), or leave it out",
                    b.first_line + 1,
                    b.id.as_deref().map(|id| format!(" (^{id})")).unwrap_or_default(),
                    limits.max_entry_chars
                ));
            }
        }
        if first.is_none() && !problems.is_empty() {
            first = Some(path);
        }
    }
    match first {
        None => Ok(()),
        Some(path) => Err(transaction::Error::new(
            transaction::Code::ValidationFailed,
            format!("people card limits: {}", problems.join("; ")),
        )
        .at(path)),
    }
}

/// The text of every file `edits` touch once they are made (`None`:
/// deleted or missing), applied in order to what is on disk.
fn applied(root: &Path, edits: &[Edit]) -> BTreeMap<String, Option<String>> {
    let mut files: BTreeMap<String, Option<String>> = BTreeMap::new();
    for e in edits {
        let path = e.path().to_owned();
        let current = files.entry(path.clone()).or_insert_with(|| read(root, &path));
        *current = match (e, current.take()) {
            (Edit::Create { content, .. } | Edit::Replace { content, .. }, _) => Some(content.clone()),
            (Edit::Append { content, .. }, Some(text)) => Some(text + content),
            (Edit::StrReplace { old, new, .. }, Some(text)) if !old.is_empty() => {
                Some(text.replacen(old, new, 1))
            }
            (Edit::Delete { .. }, _) => None,
            (_, text) => text,
        };
    }
    files
}

/// The text of the topic file at `path`, `None` when it is missing, is not
/// UTF-8 or lies through a symbolic link.
fn read(root: &Path, path: &str) -> Option<String> {
    scriptorium_source_archive::fsio::check_no_links(root, path).ok()?;
    std::fs::read_to_string(root.join(path)).ok()
}
