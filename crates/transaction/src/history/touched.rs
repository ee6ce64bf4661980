//! Which commits touched which topic blocks: the newest commits of the
//! history, and for every block id (`path#^id`) the commits that added,
//! changed or removed it.
//!
//! * **Which commits.** The first-parent chain from `HEAD`, newest first,
//!   as [`read::log`] lists it, cut at a limit: a reader shows the newest
//!   ones and says whether older ones exist.
//! * **What "touched" means.** A commit touches a block when the block's
//!   id is in one version of its topic file and not the other, or in both
//!   with another text ([`blocks`]). Only topic files (`topics/**.md`)
//!   are read; archive files are not parsed.
//! * **Cost.** Each commit compares two trees, descending only into
//!   subtrees whose ids differ, then parses the changed topic files alone;
//!   the version a commit replaced is kept until the older commit that
//!   wrote it is reached, so each version is parsed once.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use gix::ObjectId;

use crate::error::Error;

use super::blocks::{self, Blocks};
use super::diff;
use super::read::{self, LogEntry};

/// The newest commits and the blocks each touched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockHistory {
    /// The newest commits, newest first, at most the limit asked for.
    pub entries: Vec<LogEntry>,
    /// For every block touched by one of `entries`, by `path#^id`: the
    /// indexes into `entries` of the commits that touched it, newest
    /// first.
    pub touched: BTreeMap<String, Vec<usize>>,
    /// Whether older commits exist than the last of `entries`.
    pub truncated: bool,
}

/// Whether `path` (repository-relative) is a topic file.
fn is_topic(path: &str) -> bool {
    path.starts_with("topics/") && path.ends_with(".md")
}

/// The newest `limit` commits of the workspace's history and the topic
/// blocks each added, changed or removed; empty when the workspace has no
/// repository or no commit.
///
/// Errors: `IO` when the repository cannot be read.
pub fn block_history(root: &Path, limit: usize) -> Result<BlockHistory, Error> {
    let mut out = BlockHistory::default();
    let Some(repo) = read::open(root)? else { return Ok(out) };
    // The blocks of the versions a newer commit replaced: each is the
    // version an older commit wrote, read once for both.
    let mut replaced: HashMap<ObjectId, Blocks> = HashMap::new();
    let read_blob = |id: Option<ObjectId>, cache: &mut HashMap<ObjectId, Blocks>| match id {
        Some(id) => match cache.remove(&id) {
            Some(b) => Ok(b),
            None => Ok(blocks::blocks_of(&diff::blob(&repo, Some(id))?)),
        },
        None => Ok::<_, Error>(Blocks::new()),
    };
    read::walk_repo(&repo, &mut |c| {
        if out.entries.len() == limit {
            out.truncated = true;
            return Ok(false);
        }
        let k = out.entries.len();
        for ch in read::changes_of(&repo, &c)? {
            if !is_topic(&ch.path) {
                continue;
            }
            let new = read_blob(ch.new, &mut replaced)?;
            let old = read_blob(ch.old, &mut replaced)?;
            let d = blocks::diff_of(&old, &new);
            if let Some(id) = ch.old {
                replaced.insert(id, old);
            }
            for id in d.ids() {
                out.touched.entry(format!("{}#^{id}", ch.path)).or_default().push(k);
            }
        }
        out.entries.push(c.entry());
        Ok(true)
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_topic_markdown_files_are_read() {
        assert!(is_topic("topics/a.md"));
        assert!(is_topic("topics/people/deep/b.md"));
        assert!(!is_topic("sources/chat/_v2/t.md"));
        assert!(!is_topic("topics/notes.txt"));
        assert!(!is_topic(".gitignore"));
    }

    #[test]
    fn no_repository_is_an_empty_history() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(block_history(dir.path(), 10).unwrap(), BlockHistory::default());
    }
}
