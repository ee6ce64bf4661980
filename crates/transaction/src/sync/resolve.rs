//! Closing a conflict a sync's merge found ([`resolve`]): one transaction
//! (writer `resolve`) that gives the file the version taken and removes the
//! conflict's record, so that the resolution syncs like any other change.
//!
//! * `ours` gives the block, front-matter key, lines, record or file this
//!   machine's version (a block or file this machine deleted goes); where
//!   it was edited since the merge, `ours` keeps the edit.
//! * `theirs` gives it the remote's version (a block or file the remote
//!   deleted goes); refused with `CONFLICT` where it was edited since.
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
            "{} was edited since the merge, so neither version is there to replace; `scriptorium resolve '{}' --take ours` keeps the edit and closes the conflict (edit {} by hand first to use the remote's version)",
            c.id, c.id, c.path
        ),
    )
    .at(c.path.clone())
}

/// The file's bytes once `take` is applied (`None`: no file). Ours and
/// theirs are the two versions recorded: taking one gives the file that
/// version (so a conflict a later fast-forward overtook still means what
/// it says). Where the file holds neither any more (edited since), `ours`
/// keeps it as it is and closes the conflict, and the others are
/// `CONFLICT`, never overwriting the edit.
fn resolved_bytes(c: &Conflict, take: Take, current: Option<&[u8]>) -> Result<Option<Vec<u8>>, Error> {
    let as_text = || String::from_utf8_lossy(current.unwrap_or(b"")).into_owned();
    let version = |v: &str| (!v.is_empty()).then(|| v.as_bytes().to_vec());
    match c.kind {
        Kind::File => Ok(version(if take == Take::Ours { &c.ours } else { &c.theirs })),
        Kind::Record => record_taken(c, take, current.unwrap_or(b"")).map(Some),
        Kind::Block => block_taken(c, take, &as_text()).map(|t| Some(t.into_bytes())),
        Kind::FrontMatter | Kind::Lines => lines_taken(c, take, &as_text()).map(|t| Some(t.into_bytes())),
    }
}

/// Where `needle` stands as whole lines in `text` (starting a line, ending
/// one), if it does.
fn whole_lines(text: &str, needle: &str) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    let mut from = 0;
    while let Some(k) = text[from..].find(needle).map(|k| k + from) {
        let starts = k == 0 || text.as_bytes()[k - 1] == b'\n';
        let rest = &text[k + needle.len()..];
        if starts && (rest.is_empty() || rest.starts_with('\n') || rest.starts_with("\r\n")) {
            return Some(k);
        }
        from = k + 1;
    }
    None
}

/// The topic file with the conflict's lines (or front-matter key) given the
/// version taken.
fn lines_taken(c: &Conflict, take: Take, text: &str) -> Result<String, Error> {
    if take == Take::Both && c.kind == Kind::FrontMatter {
        return Err(Error::new(
            Code::InvalidArgument,
            "a front-matter key has one value: take ours or theirs",
        ));
    }
    let (at, now) = match (whole_lines(text, &c.ours), whole_lines(text, &c.theirs)) {
        (Some(k), _) => (k, &c.ours),
        (None, Some(k)) => (k, &c.theirs),
        // Changed since: ours keeps what the file holds now.
        (None, None) if take == Take::Ours => return Ok(text.to_owned()),
        (None, None) => return Err(changed_since(c)),
    };
    let with = match take {
        Take::Ours => c.ours.clone(),
        Take::Theirs => c.theirs.clone(),
        Take::Both if now == &c.ours && !c.theirs.is_empty() => format!("{}\n{}", c.ours, c.theirs),
        Take::Both => now.clone(),
    };
    let mut end = at + now.len();
    if with.is_empty() {
        // The lines go with their line ending.
        let rest = &text[end..];
        end += if rest.starts_with("\r\n") { 2 } else { usize::from(rest.starts_with('\n')) };
    }
    Ok(format!("{}{with}{}", &text[..at], &text[end..]))
}

/// The archive file with the conflict's record given the version taken.
fn record_taken(c: &Conflict, take: Take, current: &[u8]) -> Result<Vec<u8>, Error> {
    let want = c.source_id.as_deref().unwrap_or(&c.id);
    let Some(parsed) = frames::parse(&c.path, current) else { return Err(changed_since(c)) };
    let frame = parsed
        .frames
        .iter()
        .find(|f| SourceId::parse(f.source_text).map(|i| i.text()).ok().as_deref() == Some(want))
        .ok_or_else(|| changed_since(c))?;
    let now = &current[frame.offset..frame.offset + frame.len];
    if now != c.ours.as_bytes() && now != c.theirs.as_bytes() {
        if take == Take::Ours {
            return Ok(current.to_vec());
        }
        return Err(changed_since(c));
    }
    let taken = if take == Take::Ours { &c.ours } else { &c.theirs };
    let mut out = current[..frame.offset].to_vec();
    out.extend_from_slice(taken.as_bytes());
    out.extend_from_slice(&current[frame.offset + frame.len..]);
    Ok(out)
}

/// The topic file with the conflict's block given the version taken
/// (`Both`: ours, then theirs as a new block with a new id).
fn block_taken(c: &Conflict, take: Take, text: &str) -> Result<String, Error> {
    let id = c.block_id.as_deref().unwrap_or(&c.id);
    let (file, _) = TopicFile::parse_lenient(text);
    let found = file.blocks.iter().find(|b| b.id.as_deref() == Some(id));
    let now = found.map(|b| file.block_text(b)).unwrap_or_default();
    let plain = |v: &str| v.replace("\r\n", "\n");
    if now != plain(&c.ours) && now != plain(&c.theirs) {
        if take == Take::Ours {
            // Changed since: ours keeps what the file holds now.
            return Ok(text.to_owned());
        }
        return Err(changed_since(c));
    }
    let with = match take {
        Take::Ours => c.ours.clone(),
        Take::Theirs => c.theirs.clone(),
        Take::Both if c.ours.is_empty() || c.theirs.is_empty() => format!("{}{}", c.ours, c.theirs),
        Take::Both => {
            let taken = |candidate: &str| file.blocks.iter().any(|b| b.id.as_deref() == Some(candidate));
            let fresh = new_block_id(format!("{}\n{}", c.path, c.theirs).as_bytes(), &taken);
            let body = c.theirs.strip_suffix(&format!(" ^{id}")).unwrap_or(&c.theirs);
            format!("{}\n\n{body} ^{fresh}", c.ours)
        }
    };
    if found.is_none() {
        // The block is not in the file: the version taken goes at the end.
        if with.is_empty() {
            return Ok(text.to_owned());
        }
        let sep = match () {
            _ if text.is_empty() || text.ends_with("\n\n") => "",
            _ if text.ends_with('\n') => "\n",
            _ => "\n\n",
        };
        return Ok(format!("{text}{sep}{with}\n"));
    }
    Ok(super::moves::splice_block(text, id, &with).unwrap_or_else(|| text.to_owned()))
}
