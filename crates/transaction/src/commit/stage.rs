//! Staging a patch: the archive plan, and every edit applied to a private
//! copy of its topic file. Nothing is written.
//!
//! Which refusal wins: `CONFLICT`, then `NOT_FOUND`, then
//! `VALIDATION_FAILED`; so every edit is tried, and the first of each kind
//! kept.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use scriptorium_source_archive::append::{self, AppendPlan};

use crate::error::{Code, Error};
use crate::patch::{Edit, Patch};

/// A patch staged in memory.
pub(super) struct StagedPatch {
    /// The archive files to write (path and new bytes) and the report.
    pub(super) plan: AppendPlan,
    /// The same archive files by path, for validation.
    pub(super) sources: HashMap<String, Vec<u8>>,
    /// The topic files the edits change, as they will be (`None`: deleted);
    /// files the edits leave as they were are left out.
    pub(super) topics: BTreeMap<String, Option<Vec<u8>>>,
}

/// The first refusal of each kind.
#[derive(Default)]
struct Refusals {
    conflict: Option<Error>,
    missing: Option<Error>,
    damaged: Option<Error>,
}

impl Refusals {
    /// The refusal that wins, if any.
    fn first(self) -> Option<Error> {
        self.conflict.or(self.missing).or(self.damaged)
    }
}

/// Stages `patch` over the workspace at `root`.
pub(super) fn stage(root: &Path, patch: &Patch) -> Result<StagedPatch, Error> {
    let mut refused = Refusals::default();
    let plan = archive_plan(root, patch, &mut refused)?;
    let sources: HashMap<String, Vec<u8>> = plan.writes.iter().cloned().collect();
    let topics = apply_edits(root, patch, &mut refused)?;
    if let Some(e) = refused.first() {
        return Err(e);
    }
    Ok(StagedPatch { plan, sources, topics })
}

/// The archive plan of the patch's sources; an empty one when they are
/// refused (noted in `refused`).
fn archive_plan(root: &Path, patch: &Patch, refused: &mut Refusals) -> Result<AppendPlan, Error> {
    match append::plan(root, &patch.sources) {
        Ok(p) => Ok(p),
        Err(e) => {
            let e = Error::from(e);
            match e.code {
                Code::Conflict => refused.conflict = Some(e),
                Code::ValidationFailed => refused.damaged = Some(e),
                _ => return Err(e),
            }
            Ok(AppendPlan { writes: Vec::new(), report: Default::default() })
        }
    }
}

/// Every edit applied in order to a copy of its file; the files that end
/// as they began are left out.
fn apply_edits(
    root: &Path,
    patch: &Patch,
    refused: &mut Refusals,
) -> Result<BTreeMap<String, Option<Vec<u8>>>, Error> {
    let mut topics: BTreeMap<String, Option<Vec<u8>>> = BTreeMap::new();
    let mut originals: HashMap<String, Option<Vec<u8>>> = HashMap::new();
    for (k, edit) in patch.edits.iter().enumerate() {
        let path = edit.path();
        if !topics.contains_key(path) {
            let current = read_topic(root, path)?;
            originals.insert(path.to_owned(), current.clone());
            topics.insert(path.to_owned(), current);
        }
        let slot = topics.get_mut(path).expect("just inserted");
        match apply_edit(k, edit, slot) {
            Some(e) if e.code == Code::Conflict => {
                refused.conflict.get_or_insert(e);
            }
            Some(e) => {
                refused.missing.get_or_insert(e);
            }
            None => {}
        }
    }
    topics.retain(|p, new| originals.get(p) != Some(new));
    Ok(topics)
}

/// Applies edit `k` to `slot`, the file as the edits before it left it
/// (`None`: absent); the refusal when it cannot apply.
fn apply_edit(k: usize, edit: &Edit, slot: &mut Option<Vec<u8>>) -> Option<Error> {
    let path = edit.path();
    match (edit, slot.as_mut()) {
        (Edit::Create { .. }, Some(_)) => Some(
            Error::new(Code::Conflict, format!("edits[{k}]: create {path}: the file already exists"))
                .at(path),
        ),
        (Edit::Create { content, .. }, None) => {
            *slot = Some(content.as_bytes().to_vec());
            None
        }
        (Edit::Append { content, .. }, Some(bytes)) => {
            bytes.extend_from_slice(content.as_bytes());
            None
        }
        (Edit::Replace { content, .. }, Some(bytes)) => {
            *bytes = content.as_bytes().to_vec();
            None
        }
        (Edit::StrReplace { old, new, .. }, Some(bytes)) => match memchr::memmem::find(bytes, old.as_bytes())
        {
            Some(at) => {
                bytes.splice(at..at + old.len(), new.as_bytes().iter().copied());
                None
            }
            None => Some(not_found(k, path, &format!("str_replace in {path}: `old` does not occur"))),
        },
        (Edit::Delete { .. }, Some(_)) => {
            *slot = None;
            None
        }
        (e, None) => Some(not_found(k, path, &format!("{} {path}: no such file", e.op()))),
    }
}

fn not_found(k: usize, path: &str, what: &str) -> Error {
    Error::new(Code::NotFound, format!("edits[{k}]: {what}")).at(path)
}

/// The current bytes of a topic file, `None` when it does not exist;
/// `INVALID_ARGUMENT` when the path is a folder or not a regular file.
fn read_topic(root: &Path, path: &str) -> Result<Option<Vec<u8>>, Error> {
    let full = root.join(path);
    match std::fs::symlink_metadata(&full) {
        Ok(m) if m.is_file() => {
            std::fs::read(&full).map(Some).map_err(|e| Error::io(&e, "cannot read", &full))
        }
        Ok(_) => {
            Err(Error::new(Code::InvalidArgument, format!("{path} exists and is not a regular file"))
                .at(path))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => Err(Error::new(
            Code::InvalidArgument,
            format!("{path}: a component of the path is a file, not a folder"),
        )
        .at(path)),
        Err(e) => Err(Error::io(&e, "cannot stat", &full)),
    }
}
