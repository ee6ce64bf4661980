//! Where a kept sentence goes: `topics/core.md`, the speaker's person card,
//! or the conversation's thread file (`docs/writer.md`, *Where it goes*).

use std::path::Path;

use sha2::{Digest, Sha256};

use super::classify::Statement;
use super::text::inert;
use crate::input::{hex, Turn};

/// The file a sentence is written to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Destination {
    /// `topics/core.md`: what every session starts with.
    Core,
    /// The speaker's person card.
    Person,
    /// The conversation's thread file.
    Thread,
}

/// Where a sentence stating `what` in turn `t` goes:
///
/// | statement | trusted speaker | speakerless `user` | other roles |
/// |---|---|---|---|
/// | standing preference or instruction | core | core | thread |
/// | durable fact about the speaker | person card | core | thread |
/// | dated plan or event | person card | thread | thread |
/// | decision, group plan or event | thread | thread | thread |
///
/// A speakerless user turn is the one user of a workspace: their durable
/// facts are standing context. Only a user's words reach `core.md`, which
/// every prompt shows.
pub fn destination(what: Statement, t: &Turn) -> Destination {
    let user = t.role == "user";
    let person = t.speaker.is_some() && t.person.is_some();
    match what {
        Statement::Standing if user => Destination::Core,
        Statement::Fact | Statement::Dated if person => Destination::Person,
        Statement::Fact if user => Destination::Core,
        _ => Destination::Thread,
    }
}

/// The path (as on disk) and the head a new file starts with, of
/// `destination` for turn `t`.
pub(super) fn file(root: &Path, destination: Destination, t: &Turn) -> (String, String) {
    match (destination, &t.speaker, &t.person) {
        (Destination::Core, _, _) => (on_disk(root, "topics/core.md"), "# Core\n".to_owned()),
        (Destination::Person, Some(who), Some(person)) => {
            let path = person_path(root, who, person);
            let who = opener(who);
            let head = format!(
                "---\ndescription: What {who} said of themselves, chosen by the offline baseline writer.\nkind: person\n---\n# {who}\n"
            );
            (path, head)
        }
        _ => {
            let (provider, thread) = provider_thread(&t.source);
            let path = on_disk(root, &format!("topics/threads/{}.md", slug(&format!("{provider}-{thread}"))));
            let head = format!(
                "---\ndescription: The conversation {provider}/{thread}, chosen by the offline baseline writer.\n---\n# {provider}/{thread}\n"
            );
            (path, head)
        }
    }
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
