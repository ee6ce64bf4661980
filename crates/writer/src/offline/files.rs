//! One file of the offline writer's plan: the paragraphs to add to it and,
//! for a people card, the names to add to its aliases, made into one edit
//! within the card's limits (FORMAT.md §8, *People cards*).

use std::collections::HashSet;
use std::path::Path;

use scriptorium_scheduler::{Code, Limit, LimitHit, WriteFailure};
use scriptorium_topic_markdown::parse::{TopicFile, ALIAS_CHARS};
use scriptorium_transaction::Edit;

use super::text::unquoted;
use crate::people::{add_aliases, Limits};

/// One paragraph to add to one file.
#[derive(Debug)]
pub(super) struct Para {
    /// Its block id.
    pub(super) id: String,
    /// What follows `<who> said`.
    pub(super) text: String,
    /// The evidence footnote's definition line.
    pub(super) definition: String,
    /// Who said it, as the paragraph opens.
    pub(super) label: String,
    /// The turn it comes from (source id, text form).
    pub(super) source: String,
}

/// What the writer adds to one file.
#[derive(Debug, Default)]
pub(super) struct FilePlan {
    /// What a new file starts with.
    pub(super) head: String,
    /// The paragraphs, in the turns' order.
    pub(super) paras: Vec<Para>,
    /// Whether the file is a people card (limits and aliases apply).
    pub(super) card: bool,
    /// For a card: the names to add to its aliases, each with the turn
    /// that showed it.
    pub(super) names: Vec<(String, String)>,
}

/// The edit that adds `plan` to the file at `path` (`None`: nothing to
/// add), skipping paragraphs whose block id is `held` elsewhere; for a
/// card, the paragraphs and names its limits leave out are added to
/// `hits`. A new card is made only for a paragraph: names alone never
/// create a file.
pub(super) fn edit(
    root: &Path,
    path: &str,
    plan: FilePlan,
    held: &HashSet<String>,
    limits: Limits,
    hits: &mut Vec<LimitHit>,
) -> Result<Option<Edit>, WriteFailure> {
    let existing = read(root, path)?;
    let base = existing.as_deref().unwrap_or(&plan.head);
    let mut within = Within::of(plan.card, base, limits, path);
    let mut text = String::new();
    let mut ids = HashSet::new();
    for p in plan.paras {
        if held.contains(&p.id) || !ids.insert(p.id.clone()) {
            continue;
        }
        let line = format!("{} said{}", unquoted(&p.label), p.text);
        if !within.admits(&line, &p.source, hits) {
            continue;
        }
        text.push('\n');
        text.push_str(&format!("{line}[^{}] ^{}\n", evidence_label(&p.definition), p.id));
        let def_prefix = format!("[^{}]:", evidence_label(&p.definition));
        if !base.contains(&def_prefix) && !text.contains(&def_prefix) {
            text.push('\n');
            text.push_str(&p.definition);
            text.push('\n');
        }
    }
    if existing.is_none() && text.is_empty() {
        return Ok(None);
    }
    let names: Vec<String> = plan.names.iter().map(|(n, _)| n.clone()).collect();
    let named = if plan.card { add_aliases(base, &names) } else { Default::default() };
    for k in named.left_out {
        note(hits, path, Limit::Aliases, ALIAS_CHARS, &plan.names[k].1);
    }
    let front = named.text.as_deref().unwrap_or(base);
    let sep = if front.is_empty() || front.ends_with('\n') || text.is_empty() { "" } else { "\n" };
    Ok(match existing {
        None => Some(Edit::Create { path: path.to_owned(), content: format!("{front}{text}") }),
        Some(_) if named.text.is_some() => {
            Some(Edit::Replace { path: path.to_owned(), content: format!("{front}{sep}{text}") })
        }
        Some(_) if text.is_empty() => None,
        Some(_) => Some(Edit::Append { path: path.to_owned(), content: format!("{sep}{text}") }),
    })
}

/// A card's limits as paragraphs are added to it (no limit for any other
/// file).
struct Within<'a> {
    path: &'a str,
    limits: Option<Limits>,
    entries: usize,
}

impl<'a> Within<'a> {
    /// The limits of the file `path` holding `base`: a card's own where its
    /// front matter sets them, `limits` otherwise.
    fn of(card: bool, base: &str, limits: Limits, path: &'a str) -> Within<'a> {
        if !card {
            return Within { path, limits: None, entries: 0 };
        }
        let (file, _) = TopicFile::parse_lenient(base);
        Within { path, limits: Some(limits.for_card(file.front_matter.as_ref())), entries: file.blocks.len() }
    }

    /// Whether the paragraph `line` (of the turn `source`) may be added: not
    /// longer than `max_entry_chars` (it is never cut) and the card not
    /// full; what is left out is noted in `hits`.
    fn admits(&mut self, line: &str, source: &str, hits: &mut Vec<LimitHit>) -> bool {
        let Some(limits) = self.limits else { return true };
        if line.chars().count() > limits.max_entry_chars {
            note(hits, self.path, Limit::MaxEntryChars, limits.max_entry_chars, source);
            return false;
        }
        if self.entries >= limits.max_entries {
            note(hits, self.path, Limit::MaxEntries, limits.max_entries, source);
            return false;
        }
        self.entries += 1;
        true
    }
}

/// Notes that the turn `source` was left out of `path` by `limit`.
fn note(hits: &mut Vec<LimitHit>, path: &str, limit: Limit, value: usize, source: &str) {
    let hit = LimitHit { path: path.to_owned(), limit, value, sources: vec![source.to_owned()] };
    scriptorium_scheduler::limits::merge(hits, vec![hit]);
}

/// The text of the workspace file at `path`, `None` when it does not exist.
fn read(root: &Path, path: &str) -> Result<Option<String>, WriteFailure> {
    match std::fs::read_to_string(root.join(path)) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(WriteFailure::new(Code::Io, format!("cannot read {path}: {e}"))),
    }
}

fn evidence_label(definition: &str) -> &str {
    definition.strip_prefix("[^").and_then(|s| s.split(']').next()).unwrap_or("")
}
