//! The offline writer: a deterministic extractive baseline that needs no
//! model (FORMAT.md §8).
//!
//! * `topics/people/<slug(attribution)>-<person key>.md`, one per trusted
//!   person (the key is a hash of the verbatim id, or of the display of a
//!   display-only identity): each turn's first-person sentences as
//!   `<attribution> said: “…”`;
//! * `topics/threads/<slug(provider-thread)>.md`: every other turn, the
//!   paragraph opening with the speaker's attribution or the role;
//! * `topics/core.md`: explicit preferences (`I prefer …`, `please always
//!   …`, `please never …`), opening with the attribution or the role.
//!
//! Every paragraph cites exactly the turn it came from and names that turn's
//! attribution (FORMAT.md §2.3; or its bare role), so nothing is ever
//! attributed to anyone but the transport's speaker — whatever the body
//! claims — and no impostor reads like the person it imitates. What the
//! turn said is quoted exactly (`said: “…”`, each sentence its own
//! quotation, at most 300 characters) when its normalised text can stand in
//! a paragraph as it is; otherwise it is made inert and written without
//! quotation marks, as `said (not verbatim): …`. A paragraph whose block id
//! is already in its file is not written again.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use sha2::{Digest, Sha256};

use scriptorium_scheduler::{BatchWriter, Code, WriteFailure, Written};
use scriptorium_topic_markdown::quote;
use scriptorium_transaction::{self as transaction, Base, Edit, Patch, Tier};

use crate::input::{hex, Input, Turn};

/// The offline baseline writer.
#[derive(Debug, Clone, Copy, Default)]
pub struct Offline;

/// The longest quotation, in characters.
pub const QUOTE_CHARS: usize = 300;

/// The name reports print.
pub const NAME: &str = "offline";

impl BatchWriter for Offline {
    fn name(&self) -> &str {
        NAME
    }

    fn write_batch(&mut self, batch: &scriptorium_scheduler::Batch<'_>) -> Result<Written, WriteFailure> {
        write(&Input::of_batch(batch))
    }
}

/// Writes `input` with the offline writer, as one transaction.
pub fn write(input: &Input<'_>) -> Result<Written, WriteFailure> {
    // The lock is held from reading the files to the install: nothing can
    // change under the plan.
    let mut w = transaction::Writer::open(input.root, input.lock_timeout)?;
    let mut input = input.clone();
    input.reconcile();
    let rev = transaction::revision::compute(input.root)?;
    let index = transaction::validation::TopicIndex::load(input.root, &rev)?;
    let known = Known {
        ids: index.files.values().flat_map(|f| f.ids.iter().cloned()).collect(),
        cited: index.files.values().flat_map(|f| f.sources.iter().cloned()).collect(),
    };
    let edits = plan(input.root, &input.turns, &known)?;
    let patch = Patch {
        base_revision: String::new(),
        message: format!("offline writer: {} turns of {}", input.turns.len(), input.origin),
        sources: input.archive.clone(),
        edits,
    };
    let done = w.commit(&patch, Tier::Owner, Base::Any)?;
    Ok(Written { revision: done.revision, changed: done.changed })
}

/// One paragraph to add to one file.
struct Para {
    id: String,
    text: String,
    definition: String,
    label: String,
}

/// What the workspace already holds: every block id, and every source id a
/// block cites.
#[derive(Debug, Clone, Default)]
pub struct Known {
    /// Block ids.
    pub ids: HashSet<String>,
    /// Cited source ids (text form).
    pub cited: HashSet<String>,
}

/// The edits the offline writer makes for `turns` in the workspace at
/// `root` (reading the topic files they add to). A turn some block already
/// cites was written (perhaps moved since by a reorganize) and is skipped;
/// so is a paragraph whose block id exists.
pub fn plan(root: &Path, turns: &[Turn], known: &Known) -> Result<Vec<Edit>, WriteFailure> {
    let mut files: BTreeMap<String, (String, Vec<Para>)> = BTreeMap::new();
    for t in turns.iter().filter(|t| !known.cited.contains(&t.source)) {
        let sentences = sentences(&t.content);
        let mine: Vec<&str> = sentences.iter().copied().filter(|s| first_person(s)).collect();
        let prefs: Vec<&str> = sentences.iter().copied().filter(|s| preference(s)).collect();
        if !prefs.is_empty() {
            add(&mut files, on_disk(root, "topics/core.md"), "# Core\n".to_owned(), t, &prefs)?;
        }
        match (&t.speaker, &t.person) {
            (Some(who), Some(person)) if !mine.is_empty() => {
                let path = person_path(root, who, person);
                let who = opener(who);
                let head = format!(
                    "---\ndescription: What {who} said of themselves, quoted by the offline baseline writer.\nkind: person\n---\n# {who}\n"
                );
                add(&mut files, path, head, t, &mine)?;
            }
            _ if t.content.trim().is_empty() => {}
            _ => {
                let (provider, thread) = provider_thread(&t.source);
                let path =
                    on_disk(root, &format!("topics/threads/{}.md", slug(&format!("{provider}-{thread}"))));
                let head = format!(
                    "---\ndescription: The conversation {provider}/{thread}, quoted by the offline baseline writer.\n---\n# {provider}/{thread}\n"
                );
                add(&mut files, path, head, t, &[t.content.as_str()])?;
            }
        }
    }
    let mut edits = Vec::new();
    for (path, (head, paras)) in files {
        let existing = match std::fs::read_to_string(root.join(&path)) {
            Ok(s) => Some(s),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(WriteFailure::new(Code::Io, format!("cannot read {path}: {e}"))),
        };
        let mut text = String::new();
        let base = existing.as_deref().unwrap_or("");
        for p in paras {
            if known.ids.contains(&p.id) || text.contains(&format!(" ^{}\n", p.id)) {
                continue;
            }
            text.push('\n');
            text.push_str(&format!(
                "{} said{}[^{}] ^{}\n",
                unquoted(&p.label),
                p.text,
                evidence_label(&p.definition),
                p.id
            ));
            let def_prefix = format!("[^{}]:", evidence_label(&p.definition));
            if !base.contains(&def_prefix) && !text.contains(&def_prefix) {
                text.push('\n');
                text.push_str(&p.definition);
                text.push('\n');
            }
        }
        if text.is_empty() {
            continue;
        }
        match existing {
            None => edits.push(Edit::Create { path, content: format!("{head}{text}") }),
            Some(old) => {
                let sep = if old.is_empty() || old.ends_with('\n') { "" } else { "\n" };
                edits.push(Edit::Append { path, content: format!("{sep}{text}") });
            }
        }
    }
    Ok(edits)
}

fn evidence_label(definition: &str) -> &str {
    definition.strip_prefix("[^").and_then(|s| s.split(']').next()).unwrap_or("")
}

fn add(
    files: &mut BTreeMap<String, (String, Vec<Para>)>,
    path: String,
    head: String,
    t: &Turn,
    parts: &[&str],
) -> Result<(), WriteFailure> {
    let prefix = match path.as_str() {
        "topics/core.md" => "c",
        p if p.starts_with("topics/people/") => "p",
        _ => "t",
    };
    let id = format!("{prefix}-{}", hex(&Sha256::digest(format!("{path}\0{}", t.source).as_bytes())[..5]));
    let para =
        Para { id, text: said(parts), definition: t.evidence.definition(&path), label: opener(t.who()) };
    files.entry(path).or_insert_with(|| (head, Vec::new())).1.push(para);
    Ok(())
}

/// A label as the first word of a paragraph line: one that would open a
/// heading (`#`) or a code fence (`` ` ``, `~`) there gets a backslash, so
/// no display name can break the file.
pub fn opener(label: &str) -> String {
    if label.starts_with(['#', '`', '~']) {
        format!("\\{label}")
    } else {
        label.to_owned()
    }
}

/// The person file of a speaker: a readable slug of its attribution and
/// the person key (of the verbatim id), so two identities never share a
/// file however alike their names look.
fn person_path(root: &Path, attribution: &str, person: &str) -> String {
    on_disk(root, &format!("topics/people/{}-{person}.md", slug(attribution)))
}

/// `path` as it exists on disk: each component that is missing but has a
/// twin differing only in case (`topics/People/`, `Ada.md`) takes the
/// twin's name (the first in byte order), so the writer adds to what is
/// there instead of being refused for creating a twin.
pub fn on_disk(root: &Path, path: &str) -> String {
    let mut dir = root.to_path_buf();
    let mut out: Vec<String> = Vec::new();
    let mut missing = false;
    for part in path.split('/') {
        let mut name = part.to_owned();
        if !missing && !dir.join(part).exists() {
            let mut twins: Vec<String> = std::fs::read_dir(&dir)
                .map(|rd| {
                    rd.flatten()
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .filter(|n| n.to_lowercase() == part.to_lowercase())
                        .collect()
                })
                .unwrap_or_default();
            twins.sort();
            match twins.into_iter().next() {
                Some(t) => name = t,
                None => missing = true,
            }
        }
        dir.push(&name);
        out.push(name);
    }
    out.join("/")
}

/// The decoded provider and thread of a source id's text form.
fn provider_thread(source: &str) -> (String, String) {
    let mut parts = source.splitn(3, '/');
    let dec = |p: Option<&str>| {
        let p = p.unwrap_or("");
        scriptorium_source_archive::pct::decode_canonical(p.as_bytes()).unwrap_or_else(|_| p.to_owned())
    };
    let provider = dec(parts.next());
    let thread = dec(parts.next());
    (inert(&provider), inert(&thread))
}

/// A file name from a label: lowercase ASCII letters and digits, runs of
/// anything else as one `-`, at most 60 bytes; a label with no such
/// character gets `speaker-` and a hash.
pub fn slug(label: &str) -> String {
    let mut out = String::new();
    for c in label.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
        if out.len() >= 60 {
            break;
        }
    }
    let out = out.trim_end_matches('-').to_owned();
    if out.is_empty() {
        format!("speaker-{}", hex(&Sha256::digest(label.as_bytes())[..4]))
    } else {
        out
    }
}

/// What a paragraph says was said, after `<label> said`: each of `parts`
/// (sentences of the turn, or its whole text) quoted exactly, after the
/// normalisation quotations are checked in (`quote::normalise`), when no
/// part holds `[`, `]` or a quotation mark that makes a span (`quote::MARKS`):
/// `: “…” “…”`, at most [`QUOTE_CHARS`] characters in all, a cut quotation
/// being a prefix of the part with `…` after its closing mark. Otherwise
/// the parts joined and made [`inert`], without quotation marks:
/// ` (not verbatim): …`, with `…` when cut.
pub fn said(parts: &[&str]) -> String {
    let exact: Vec<String> = parts.iter().map(|p| quote::normalise(p)).collect();
    let quotable = exact.iter().all(|p| !p.contains(|c| matches!(c, '[' | ']') || quote::is_mark(c)));
    if !quotable {
        let full = inert_uncut(&parts.join(" "));
        let mut out = format!(" (not verbatim): {}", full.chars().take(QUOTE_CHARS).collect::<String>());
        if full.chars().count() > QUOTE_CHARS {
            out.push('…');
        }
        return out;
    }
    let mut out = String::from(":");
    let mut left = QUOTE_CHARS;
    for (k, p) in exact.iter().enumerate() {
        let n = p.chars().count();
        if n <= left {
            out.push_str(&format!(" “{p}”"));
            left -= n;
            if left == 0 && k + 1 < exact.len() {
                out.push('…');
                break;
            }
        } else {
            // Cut between words: a quotation ends on a word boundary of
            // the record it is grounded in.
            let cut = quote::cut_on_boundary(p, left).trim_end();
            if !cut.is_empty() {
                out.push_str(&format!(" “{cut}”"));
            }
            out.push('…');
            break;
        }
    }
    out
}

/// A label with every quotation mark that makes a span written as a
/// `\u{…}` escape, so that no display name opens a quotation in the
/// paragraph it starts.
pub fn unquoted(label: &str) -> String {
    let mut out = String::with_capacity(label.len());
    for c in label.chars() {
        if quote::is_mark(c) {
            out.push_str(&format!("\\u{{{:X}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Text made inert: white space collapsed, control and format characters
/// (NUL, bidi overrides, zero-width joiners) removed, brackets made
/// parentheses, double quotation marks and corner brackets made single
/// quotation marks, cut at [`QUOTE_CHARS`] characters.
pub fn inert(text: &str) -> String {
    inert_uncut(text).chars().take(QUOTE_CHARS).collect()
}

fn inert_uncut(text: &str) -> String {
    quote::normalise(text)
        .chars()
        .map(|c| match c {
            '[' => '(',
            ']' => ')',
            // Quotation marks would let a body open a quotation of words
            // the record does not hold, or close one and forge another.
            '“' | '„' | '‟' | '«' | '「' => '‘',
            '”' | '»' | '」' => '’',
            '"' => '\'',
            c => c,
        })
        .collect()
}

/// Sentences: split at line ends and after `.`, `!`, `?` followed by white
/// space.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut start = 0;
        let bytes = line.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            if matches!(b, b'.' | b'!' | b'?') && bytes.get(i + 1).is_some_and(|n| n.is_ascii_whitespace()) {
                push(&mut out, &line[start..=i]);
                start = i + 1;
            }
        }
        push(&mut out, &line[start..]);
    }
    out
}

fn push<'a>(out: &mut Vec<&'a str>, s: &'a str) {
    let s = s.trim();
    if !s.is_empty() {
        out.push(s);
    }
}

fn words(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’')).filter(|w| !w.is_empty())
}

/// Whether a sentence speaks of its speaker: `I`, `I'm`, `I've`, `I'll`,
/// `I'd`, `me`, `my`, `mine`, `myself`.
pub fn first_person(s: &str) -> bool {
    words(s).any(|w| {
        let w = w.replace('’', "'");
        matches!(w.as_str(), "I" | "I'm" | "I've" | "I'll" | "I'd")
            || matches!(w.to_lowercase().as_str(), "me" | "my" | "mine" | "myself")
    })
}

/// Whether a sentence states a preference explicitly: `I prefer …`,
/// `please always …`, `please never …`.
pub fn preference(s: &str) -> bool {
    let w: Vec<String> = words(s).map(str::to_lowercase).collect();
    w.windows(2).any(|p| {
        matches!((p[0].as_str(), p[1].as_str()), ("i", "prefer") | ("please", "always") | ("please", "never"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_and_classes() {
        assert_eq!(
            sentences("I like tea. You like coffee!\nMy dog is 3.5 years old"),
            ["I like tea.", "You like coffee!", "My dog is 3.5 years old"]
        );
        assert!(first_person("I’m moving to Oslo"));
        assert!(first_person("that is mine"));
        assert!(!first_person("Imagine a mime"));
        assert!(preference("Honestly, I prefer tea"));
        assert!(preference("Please always answer in French."));
        assert!(!preference("I'd prefer not to say"));
        assert_eq!(inert("a  [b]\n\tc"), "a (b) c");
        assert_eq!(inert(&"x".repeat(400)).chars().count(), 300);
        assert_eq!(slug("Ada (7391)"), "ada-7391");
        assert_eq!(slug("  Bo--Li "), "bo-li");
        assert!(slug("中文").starts_with("speaker-"));
    }
}
