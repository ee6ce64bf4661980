//! People cards (FORMAT.md §3, §8): the topic file of one person, with
//! `kind: person`, the names the platform showed for that person in
//! `aliases`, and two limits, `max_entries` (paragraphs of the card) and
//! `max_entry_chars` (characters of one paragraph), from the configuration
//! unless the card sets its own in its front matter.
//!
//! * [`Limits`]: the limits, and a card's own ([`Limits::for_card`]);
//! * [`alias`] and [`add_aliases`]: a display name as an alias, and a card
//!   with names added to its `aliases`, the names already there kept;
//! * [`Cards`]: a workspace's cards by person key, so a person renamed on
//!   the platform keeps one card;
//! * [`edits`]: the limits on a model's edits.

pub mod edits;

use std::collections::{HashMap, HashSet};
use std::path::Path;

use scriptorium_source_archive::speaker::shown_display;
use scriptorium_topic_markdown::diag::Code as TopicCode;
use scriptorium_topic_markdown::parse::{
    escape_item, plain_text, unescape_item, FmValue, FrontMatter, TopicFile, ALIAS_CHARS,
};

/// The most paragraphs of a people card, unless configured otherwise
/// (`memory.people.max_entries`).
pub const DEFAULT_MAX_ENTRIES: usize = 200;

/// The most characters of one paragraph of a people card, unless
/// configured otherwise (`memory.people.max_entry_chars`).
pub const DEFAULT_MAX_ENTRY_CHARS: usize = 2000;

/// The limits of a people card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most paragraphs (blocks) the card holds.
    pub max_entries: usize,
    /// The most characters of one paragraph ([`entry_chars`]).
    pub max_entry_chars: usize,
}

impl Default for Limits {
    /// [`DEFAULT_MAX_ENTRIES`] and [`DEFAULT_MAX_ENTRY_CHARS`].
    fn default() -> Limits {
        Limits { max_entries: DEFAULT_MAX_ENTRIES, max_entry_chars: DEFAULT_MAX_ENTRY_CHARS }
    }
}

impl Limits {
    /// The limits of a card with front matter `fm`: its own `max_entries`
    /// and `max_entry_chars` where it sets them, these otherwise.
    pub fn for_card(self, fm: Option<&FrontMatter>) -> Limits {
        Limits {
            max_entries: fm.and_then(FrontMatter::max_entries).unwrap_or(self.max_entries),
            max_entry_chars: fm.and_then(FrontMatter::max_entry_chars).unwrap_or(self.max_entry_chars),
        }
    }
}

/// The characters of a paragraph as `max_entry_chars` counts them: its
/// text without footnote references and block id (what search and recall
/// show), in Unicode scalar values.
pub fn entry_chars(block_text: &str, id: Option<&str>) -> usize {
    plain_text(block_text, id).chars().count()
}

/// A trusted display name (normalised, FORMAT.md §2.3) as a card's alias:
/// as an attribution shows it (`shown_display`: look-alikes of
/// punctuation, brackets and quotation marks, and `\`, written `\u{hex}`),
/// and `,`, `"`, `[`, `]` written `\u{hex}` too, so no name can end the
/// list, open a quotation or pass for another; search decodes the escapes
/// (`parse::unescape_item`) and finds the name as it is.
///
/// ```
/// use scriptorium_writer::people::alias;
/// assert_eq!(alias("José"), "José");
/// assert_eq!(alias("Smith, Jo"), "Smith\\u{2c} Jo");
/// assert_eq!(alias("Bo \"the boss\""), "Bo \\u{22}the boss\\u{22}");
/// assert_eq!(alias("Ann “Queen”"), "Ann \\u{201c}Queen\\u{201d}");
/// ```
pub fn alias(display: &str) -> String {
    let mut out = String::with_capacity(display.len());
    for c in shown_display(display).chars() {
        match c {
            ',' | '"' | '[' | ']' => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

/// What [`add_aliases`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Named {
    /// The card's new text, when a name was added.
    pub text: Option<String>,
    /// The names (indexes into what was asked) left out because the card's
    /// aliases would then pass [`ALIAS_CHARS`] characters: more than
    /// search reads.
    pub left_out: Vec<usize>,
}

/// `text` (a people card, or the head of a new one) with `names` (aliases,
/// [`alias`]) added to its front matter's `aliases` list, after the names
/// there, which are kept as written: a name already there (compared
/// decoded, letter case ignored) is not added again, and a name is left
/// out when the aliases would then hold more than [`ALIAS_CHARS`]
/// characters. A card without front matter gets `kind: person` and the
/// list; a card whose front matter does not parse is left as it is (it
/// is `BAD_FRONT_MATTER` already).
pub fn add_aliases(text: &str, names: &[String]) -> Named {
    let (file, problems) = TopicFile::parse_lenient(text);
    if names.is_empty() || problems.iter().any(|p| p.code == TopicCode::BadFrontMatter) {
        return Named::default();
    }
    let fm = file.front_matter.as_ref();
    let written: Vec<&str> = fm.map(FrontMatter::aliases).unwrap_or_default();
    let mut seen: HashSet<String> = written.iter().map(|a| unescape_item(a).to_lowercase()).collect();
    let mut chars: usize = written.iter().map(|a| unescape_item(a).chars().count()).sum();
    let mut added = Vec::new();
    let mut left_out = Vec::new();
    for (k, name) in names.iter().enumerate() {
        let decoded = unescape_item(name);
        let folded = decoded.to_lowercase();
        if decoded.is_empty() || seen.contains(&folded) {
            continue;
        }
        let n = decoded.chars().count();
        if chars + n > ALIAS_CHARS {
            left_out.push(k);
            continue;
        }
        chars += n;
        seen.insert(folded);
        added.push(name.as_str());
    }
    let text = (!added.is_empty()).then(|| with_names(text, &file, &added));
    Named { text, left_out }
}

/// `text` (parsed as `file`, its front matter sound) with `added` after
/// the names of its `aliases`.
fn with_names(text: &str, file: &TopicFile, added: &[&str]) -> String {
    let Some(fm) = &file.front_matter else {
        // After a byte-order mark, if any: the front matter must open the file.
        let bom = if text.starts_with('\u{FEFF}') { '\u{FEFF}'.len_utf8() } else { 0 };
        return format!(
            "{}---\nkind: person\naliases: [{}]\n---\n{}",
            &text[..bom],
            added.join(", "),
            &text[bom..]
        );
    };
    match fm.entries.iter().find(|e| e.key == "aliases") {
        Some(entry) => {
            let line = file.lines()[entry.line];
            let content = &text[line.start..line.end];
            let new = match &entry.value {
                FmValue::List(items) => {
                    // Before the list's closing `]`, keeping the line as written.
                    let close = content.rfind(']').unwrap_or(content.len());
                    let sep = if items.is_empty() { "" } else { ", " };
                    format!("{}{sep}{}{}", &content[..close], added.join(", "), &content[close..])
                }
                FmValue::Scalar(s) if s.is_empty() => format!("aliases: [{}]", added.join(", ")),
                FmValue::Scalar(s) => format!("aliases: [{}, {}]", escape_item(s), added.join(", ")),
            };
            format!("{}{new}{}", &text[..line.start], &text[line.end..])
        }
        None => {
            // Before the closing `---` (sound front matter is closed), with
            // that line's own line ending.
            let close = file.lines()[fm.close_line.unwrap_or(0)];
            let ending = &text[close.end..close.next];
            let ending = if ending.is_empty() { "\n" } else { ending };
            format!("{}aliases: [{}]{ending}{}", &text[..close.start], added.join(", "), &text[close.start..])
        }
    }
}

/// A workspace's people cards by person key (`input::person_key`): the
/// regular files `<folder>/<anything>-<key>.md` (the folder `topics/people`
/// as it is on disk: `offline::on_disk`); of two with one key, the first in
/// byte order.
#[derive(Debug, Clone, Default)]
pub struct Cards {
    by_key: HashMap<String, String>,
}

impl Cards {
    /// The cards in the folder `dir` (workspace-relative) of the workspace
    /// at `root` (one listing; no card when it cannot be listed).
    pub fn scan(root: &Path, dir: &str) -> Cards {
        let mut names: Vec<String> = std::fs::read_dir(root.join(dir))
            .map(|rd| {
                rd.flatten()
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                    .filter_map(|e| e.file_name().into_string().ok())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        let mut by_key = HashMap::new();
        for name in names {
            let Some(key) = name.strip_suffix(".md").and_then(|s| s.rsplit_once('-')).map(|(_, k)| k) else {
                continue;
            };
            if key.len() == 16 && key.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
                by_key.entry(key.to_owned()).or_insert_with(|| format!("{dir}/{name}"));
            }
        }
        Cards { by_key }
    }

    /// The card of the person with key `key`, workspace-relative.
    pub fn of(&self, key: &str) -> Option<&str> {
        self.by_key.get(key).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn names_join_the_list_and_hand_written_ones_stay() {
        let card = "---\nkind: person\naliases: [Dave,  dave.k ]\n---\n# Dave\n";
        let n = add_aliases(card, &names(&["DAVE", "Davey", "Davey"]));
        assert_eq!(
            n.text.as_deref(),
            Some("---\nkind: person\naliases: [Dave,  dave.k , Davey]\n---\n# Dave\n")
        );
        assert_eq!(add_aliases(card, &names(&["dave.K"])), Named::default());
        let n = add_aliases("---\r\nkind: person\r\n---\r\n", &names(&["Ada"]));
        assert_eq!(n.text.as_deref(), Some("---\r\nkind: person\r\naliases: [Ada]\r\n---\r\n"));
        let n = add_aliases("---\naliases: Smith, Jo\n---\n", &names(&["Jo"]));
        assert_eq!(n.text.as_deref(), Some("---\naliases: [Smith\\u{2c} Jo, Jo]\n---\n"));
        for empty in ["aliases: []", "aliases:", "aliases:   "] {
            let n = add_aliases(&format!("---\n{empty}\n---\n"), &names(&["Jo"]));
            assert_eq!(n.text.as_deref(), Some("---\naliases: [Jo]\n---\n"), "{empty:?}");
        }
        let n = add_aliases("\u{FEFF}# Ada, by hand\n", &names(&["Ada"]));
        assert_eq!(
            n.text.as_deref(),
            Some("\u{FEFF}---\nkind: person\naliases: [Ada]\n---\n# Ada, by hand\n")
        );
        // Broken front matter is left alone.
        assert_eq!(add_aliases("---\naliases: [a\n---\n", &names(&["Jo"])), Named::default());
    }

    #[test]
    fn names_past_what_search_reads_are_left_out() {
        let long = "x".repeat(ALIAS_CHARS - 3);
        let card = format!("---\naliases: [{long}]\n---\n");
        let n = add_aliases(&card, &names(&["Bob", "Al", "Jo"]));
        assert_eq!(n.text, Some(format!("---\naliases: [{long}, Bob]\n---\n")));
        assert_eq!(n.left_out, [1, 2]);
    }

    #[test]
    fn a_hostile_name_is_one_item_that_decodes_to_itself() {
        for display in ["Smith, Jo", "a]b[c", "Bo \"x\"", "\\u{2c}", "O’Brien", "Ada ［id 7391］", "x꞉ y"]
        {
            let a = alias(display);
            let (f, problems) = TopicFile::parse_lenient(&format!("---\naliases: [Ada, {a}]\n---\n"));
            assert!(problems.is_empty(), "{display}: {problems:?}");
            let fm = f.front_matter.unwrap();
            assert_eq!(fm.aliases().len(), 2, "{display}");
            assert_eq!(unescape_item(fm.aliases()[1]), display);
        }
    }
}
