//! Committing whole files: what a sync's merge and a conflict's resolution
//! write. The same order as a patch — the paths, validation
//! (`VALIDATION_FAILED` with every added diagnostic), the crash-safe
//! install, the index and views — but the new bytes of each file are
//! given, archive files included (a merge puts frames between committed
//! ones, which no patch can), and files of the machine's own state (under
//! `.scriptorium/`) may be installed with them in the same atomic change,
//! outside the revision and the commit.

use std::collections::{BTreeMap, HashMap};

use scriptorium_source_archive::fsio;

use crate::error::{Code, Error};
use crate::history::{self, frames::Rule, Merge};
use crate::install;
use crate::observe::Provenance;
use crate::patch::{self, check_file_path, Tier};
use crate::revision;
use crate::validation::TopicIndex;

use super::{history_line, plan_commit, validate_files, Committed, Committer, Installing, Planning};

/// A change given as whole files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileChange {
    /// Workspace files under `topics/` and `sources/`: new bytes, or `None`
    /// to remove.
    pub files: Vec<(String, Option<Vec<u8>>)>,
    /// Files of this machine's own state under `.scriptorium/`, installed
    /// with `files` and never committed.
    pub local: Vec<(String, Option<Vec<u8>>)>,
    /// The commit's summary line.
    pub message: String,
    /// What the archive files may do besides appending.
    pub rule: Option<Rule>,
    /// How the commit joins another history, for a sync.
    pub merge: Option<Merge>,
}

fn check_local_path(path: &str) -> Result<(), Error> {
    let rest = path.strip_prefix(".scriptorium/").unwrap_or("");
    if rest.is_empty() || rest.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
        return Err(
            Error::new(Code::InvalidArgument, format!("{path:?} is not under .scriptorium/")).at(path)
        );
    }
    Ok(())
}

/// `VALIDATION_FAILED` for a v2 archive file that would not parse to its
/// end: a whole-file change never installs a damaged archive file.
fn check_archive_file(path: &str, bytes: Option<&[u8]>) -> Result<(), Error> {
    let Some(bytes) = bytes else { return Ok(()) };
    let Some(parsed) = history::frames::parse(path, bytes) else { return Ok(()) };
    match parsed.error {
        Some(d) => Err(Error {
            offset: Some(d.offset as u64),
            line: Some(d.line),
            ..Error::new(
                Code::ValidationFailed,
                format!("the archive file would not parse to its end ({}); nothing was written", d.reason),
            )
            .at(path)
        }),
        None => Ok(()),
    }
}

impl Committer<'_> {
    /// Validates and installs `change` as one transaction made by
    /// `provenance`, at the owner's tier; one commit (a merge commit, or
    /// the head moved, when `change.merge` says so).
    pub fn commit_files(&mut self, change: &FileChange, provenance: &Provenance) -> Result<Committed, Error> {
        let root = self.root.clone();
        let root = root.as_path();
        for (p, _) in &change.files {
            check_file_path(p)?;
            fsio::check_no_links(root, p)?;
        }
        let written: Vec<&str> =
            change.files.iter().filter(|(_, b)| b.is_some()).map(|(p, _)| p.as_str()).collect();
        patch::check_files_on_disk(root, &written)?;
        for (p, _) in &change.local {
            check_local_path(p)?;
        }
        for (p, bytes) in &change.files {
            check_archive_file(p, bytes.as_deref())?;
        }
        let rev = revision::compute(root)?;
        let mut index_of_topics = TopicIndex::load(root, &rev)?;
        let topics: BTreeMap<String, Option<Vec<u8>>> =
            change.files.iter().filter(|(p, _)| p.starts_with("topics/")).cloned().collect();
        let sources: HashMap<String, Vec<u8>> = change
            .files
            .iter()
            .filter(|(p, _)| p.starts_with("sources/"))
            .filter_map(|(p, b)| b.clone().map(|b| (p.clone(), b)))
            .collect();
        let outcome = validate_files(root, &index_of_topics, &topics, &sources, "result")?;
        let mut files = change.files.clone();
        files.sort_by(|a, b| a.0.cmp(&b.0));
        let changed: Vec<String> = files.iter().map(|(p, _)| p.clone()).collect();
        let mut committed = Committed {
            revision: rev.hex.clone(),
            revision_before: rev.hex.clone(),
            changed,
            appended: 0,
            duplicates: 0,
            files_checked: outcome.files_checked,
            rebuilt_views: false,
            warnings: Vec::new(),
        };
        if files.is_empty() && change.local.is_empty() && change.merge.is_none() {
            return Ok(committed);
        }
        let after = rev.after(&files);
        let tier = Tier::Owner;
        let planning = Planning {
            tier,
            message: &change.message,
            provenance,
            rule: change.rule.unwrap_or(Rule::Append),
            merge: change.merge.clone(),
        };
        let planned = plan_commit(root, &rev, &files, &after, &planning)?;
        let tx = install::new_tx_id();
        let line = history_line(&tx, &rev.hex, &after, tier, &change.message, &committed.changed, 0);
        let mut all = files;
        all.extend(change.local.iter().cloned());
        let installing = Installing { tx: &tx, files: &all, line, planned };
        self.install(installing, &mut index_of_topics, outcome.facts, &mut committed)?;
        committed.revision = after;
        self.settle(&index_of_topics, &mut committed, tier, &change.message, provenance);
        Ok(committed)
    }
}
