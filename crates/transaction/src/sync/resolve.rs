//! Closing a conflict a sync's merge found ([`resolve`]): one transaction
//! (writer `resolve`) that gives the file the version taken and removes the
//! conflict's record, so that the resolution syncs like any other change.
//!
//! * `ours` keeps what the merge kept (for a file: this machine's version).
//! * `theirs` gives the block, front-matter key, lines, record or file the
//!   remote's version (a block or file the remote deleted goes).
//! * `both` keeps ours and adds theirs after it: a block as a new block
//!   with a new id, lines after ours. A record or a file has one version,
//!   so `both` is refused for them.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use scriptorium_source_archive::SourceId;
use scriptorium_topic_markdown::ids::new_block_id;
use scriptorium_topic_markdown::parse::TopicFile;

use crate::commit::{Committer, FileChange};
use crate::error::{Code, Error};
use crate::history::frames::{self, Rule};
use crate::observe::Provenance;

use super::conflicts::{self, Conflict, Kind};

/// Which version a resolution takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Take {
    /// What the merge kept.
    Ours,
    /// The remote's version.
    Theirs,
    /// Ours, then theirs.
    Both,
}

impl Take {
    /// `ours`, `theirs` or `both`.
    pub fn parse(s: &str) -> Option<Take> {
        match s {
            "ours" => Some(Take::Ours),
            "theirs" => Some(Take::Theirs),
            "both" => Some(Take::Both),
            _ => None,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Take::Ours => "ours",
            Take::Theirs => "theirs",
            Take::Both => "both",
        }
    }
}

/// What a resolution did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resolved {
    /// The conflict closed.
    pub id: String,
    /// What it was about.
    pub kind: Kind,
    /// Its file.
    pub path: String,
    /// The version taken.
    pub take: Take,
    /// The files changed (none when ours was taken).
    pub changed: Vec<String>,
    /// The workspace revision after it.
    pub revision: String,
    /// What went wrong after the install.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Closes the open conflict `name` names (a block id or `path#^id`, a
/// source id, or the id `check` shows) by taking `take`.
pub fn resolve(root: &Path, name: &str, take: Take, lock_timeout: Duration) -> Result<Resolved, Error> {
    let mut writer = Committer::open(root, lock_timeout)?;
    let open = conflicts::list(root)?;
    let found: Vec<&Conflict> = open.iter().filter(|c| c.is_named(name)).collect();
    let c = match found.as_slice() {
        [c] => *c,
        [] => {
            let ids: Vec<&str> = open.iter().map(|c| c.id.as_str()).collect();
            let listed = if ids.is_empty() { "none".to_owned() } else { ids.join(", ") };
            return Err(Error::new(
                Code::NotFound,
                format!("no open conflict is named {name:?}; open conflicts: {listed}"),
            ));
        }
        many => {
            let named: Vec<String> = many.iter().map(|c| format!("{}#^{}", c.path, c.id)).collect();
            return Err(Error::new(
                Code::InvalidArgument,
                format!("{name:?} names {} conflicts; name one: {}", many.len(), named.join(", ")),
            ));
        }
    };
    if take == Take::Both && matches!(c.kind, Kind::Record | Kind::File) {
        return Err(Error::new(
            Code::InvalidArgument,
            format!(
                "a {} has one version: take ours or theirs",
                if c.kind == Kind::Record { "record" } else { "file" }
            ),
        ));
    }
    let current = read(root, &c.path)?;
    let new = resolved_bytes(c, take, current.as_deref())?;
    let files = if new == current { Vec::new() } else { vec![(c.path.clone(), new)] };
    let change = FileChange {
        files,
        local: vec![(c.record_path(), None)],
        message: format!("resolve {}: take {}", c.id, take.as_str()),
        rule: Some(Rule::Resolve),
        merge: None,
    };
    let committed = writer.commit_files(&change, &Provenance::by("resolve"))?;
    Ok(Resolved {
        id: c.id.clone(),
        kind: c.kind,
        path: c.path.clone(),
        take,
        changed: committed.changed,
        revision: committed.revision,
        warnings: committed.warnings,
    })
}

fn read(root: &Path, path: &str) -> Result<Option<Vec<u8>>, Error> {
    let p = root.join(path);
    match std::fs::read(&p) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(&e, "cannot read", &p)),
    }
}

fn changed_since(c: &Conflict) -> Error {
    Error::new(
        Code::Conflict,
        format!(
            "{} changed since the merge and the version to replace is no longer there; edit {} by hand, then `scriptorium resolve '{}' --take ours`",
            c.id, c.path, c.id
        ),
    )
    .at(c.path.clone())
}

/// The file's bytes once `take` is applied (`None`: no file).
fn resolved_bytes(c: &Conflict, take: Take, current: Option<&[u8]>) -> Result<Option<Vec<u8>>, Error> {
    let keep = || current.map(<[u8]>::to_vec);
    if take == Take::Ours && c.kind != Kind::File {
        return Ok(keep());
    }
    let as_text = || String::from_utf8_lossy(current.unwrap_or(b"")).into_owned();
    let version = |v: &str| (!v.is_empty()).then(|| v.as_bytes().to_vec());
    match c.kind {
        Kind::File => Ok(version(if take == Take::Ours { &c.ours } else { &c.theirs })),
        Kind::Record => record_taken(c, current.unwrap_or(b"")).map(Some),
        Kind::Block => Ok(Some(block_taken(c, take, &as_text()).into_bytes())),
        Kind::FrontMatter | Kind::Lines => {
            let text = as_text();
            if c.ours.is_empty() || !text.contains(&c.ours) {
                return Err(changed_since(c));
            }
            let with = match take {
                Take::Both if !c.theirs.is_empty() => format!("{}\n{}", c.ours, c.theirs),
                Take::Both => c.ours.clone(),
                _ => c.theirs.clone(),
            };
            let mut out = text.replacen(&c.ours, &with, 1);
            if with.is_empty() {
                // The line goes with its line ending.
                out = out.replacen("\n\n\n", "\n\n", 1);
            }
            Ok(Some(out.into_bytes()))
        }
    }
}

/// The archive file with the conflict's record given the remote's bytes.
fn record_taken(c: &Conflict, current: &[u8]) -> Result<Vec<u8>, Error> {
    let want = c.source_id.as_deref().unwrap_or(&c.id);
    let Some(parsed) = frames::parse(&c.path, current) else { return Err(changed_since(c)) };
    let frame = parsed
        .frames
        .iter()
        .find(|f| SourceId::parse(f.source_text).map(|i| i.text()).ok().as_deref() == Some(want))
        .ok_or_else(|| changed_since(c))?;
    let mut out = current[..frame.offset].to_vec();
    out.extend_from_slice(c.theirs.as_bytes());
    out.extend_from_slice(&current[frame.offset + frame.len..]);
    Ok(out)
}

/// The topic file with the conflict's block given the remote's text
/// (`Theirs`), or the remote's text added after it as a new block (`Both`).
fn block_taken(c: &Conflict, take: Take, text: &str) -> String {
    let id = c.block_id.as_deref().unwrap_or(&c.id);
    let (file, _) = TopicFile::parse_lenient(text);
    let block = file.blocks.iter().find(|b| b.id.as_deref() == Some(id));
    let lines = file.lines();
    let theirs = match take {
        Take::Both => {
            let taken = |candidate: &str| file.blocks.iter().any(|b| b.id.as_deref() == Some(candidate));
            let fresh = new_block_id(format!("{}\n{}", c.path, c.theirs).as_bytes(), &taken);
            let body = c.theirs.strip_suffix(&format!(" ^{id}")).unwrap_or(&c.theirs);
            format!("{body} ^{fresh}")
        }
        _ => c.theirs.clone(),
    };
    let Some(b) = block else {
        // The block is gone here: the remote's version goes at the end.
        if theirs.is_empty() {
            return text.to_owned();
        }
        let sep = if text.is_empty() || text.ends_with("\n\n") {
            ""
        } else if text.ends_with('\n') {
            "\n"
        } else {
            "\n\n"
        };
        return format!("{text}{sep}{theirs}\n");
    };
    let (start, end) = (lines[b.first_line].start, lines[b.last_line].end);
    match take {
        Take::Both if !theirs.is_empty() => format!("{}\n\n{theirs}{}", &text[..end], &text[end..]),
        Take::Both => text.to_owned(),
        _ if theirs.is_empty() => {
            // The block goes, with the blank line after it.
            let next = lines[b.last_line].next;
            let after = lines.get(b.last_line + 1).filter(|l| l.start == l.end).map_or(next, |l| l.next);
            format!("{}{}", &text[..start], &text[after..])
        }
        _ => format!("{}{theirs}{}", &text[..start], &text[end..]),
    }
}
