//! Tamper evidence over the whole history: every frame any commit holds in
//! an archive file must still be in every later version of that file
//! ([`frames::check`]), in every commit after it and in the working tree.
//!
//! * **History.** [`verify`] walks every commit reachable from the head
//!   (first parents and merge parents) and compares each one's `sources/`
//!   with each parent's, descending only into trees whose ids differ: a
//!   commit made by hand (`git commit -am`) that rewrote a committed frame
//!   is found, however many commits later.
//! * **The cache** `.scriptorium/history/verified` holds the last commit
//!   whose ancestry was verified, and what it found there; the walk reads
//!   only the commits its ancestry does not hold (both walked newest first,
//!   until every commit left is one it holds), so a check after a few
//!   transactions, or after a sync's merge, reads a few commits.
//!   History rewritten past it (the cached commit no longer an ancestor)
//!   means a full walk, the cached findings dropped.
//! * **The working tree** is never cached: each archive file the head holds
//!   is hashed as a git blob and compared with the head's entry, and only a
//!   file that differs is parsed ([`tampered_files`] does this for a few
//!   named files, for search).

use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap};
use std::path::Path;

use gix::objs::tree::EntryMode;
use gix::ObjectId;

use crate::error::Error;

use super::frames::{self, Tampered};
use super::git_error;
use super::objects::{blob_at, head, read_blob, working};
use super::repo::{self, Settings};

/// The cache of the last commit whose ancestry verified clean, relative to
/// the workspace.
pub const VERIFIED_CACHE: &str = ".scriptorium/history/verified";

/// The decoded objects kept while walking the history.
const OBJECT_CACHE_BYTES: usize = 32 << 20;

/// The archive's top folder, in a tree.
const SOURCES: &str = "sources";

/// Every archive file whose committed frames were broken: in a commit of
/// the history (against its parent) or in the working tree (against the
/// head). One finding per file, its first breach (oldest commit first, then
/// the working tree), sorted by path. Empty when the workspace keeps no
/// history or has no commit yet.
pub fn verify(root: &Path) -> Result<Vec<Tampered>, Error> {
    if !Settings::read(root)?.enabled {
        return Ok(Vec::new());
    }
    let Some(mut repo) = repo::open(root)? else { return Ok(Vec::new()) };
    let Some(head) = head(&repo)? else { return Ok(Vec::new()) };
    // A commit's new version of a file is the next one's old version.
    repo.object_cache_size_if_unset(OBJECT_CACHE_BYTES);
    let mut found = history_breaches(root, &repo, head.id)?;
    let committed = sources_of(&repo, head.tree)?;
    for (path, blob) in blobs_under(&repo, committed)? {
        if found.contains_key(&path) {
            continue;
        }
        if let Some(t) = working_breach(&repo, root, &path, blob)? {
            found.insert(path, t);
        }
    }
    Ok(found.into_values().collect())
}

/// The archive files broken in a commit of the history, by path (each its
/// first breach): the cache's findings plus those of the commits made
/// since it, the cache then moved to `head`. A cache whose commit is no
/// longer reached from `head` (history rewritten) counts for nothing.
pub(super) fn history_breaches(
    root: &Path,
    repo: &gix::Repository,
    head: ObjectId,
) -> Result<BTreeMap<String, Tampered>, Error> {
    let (cached, mut found) = match read_cache(root, repo) {
        Some((id, found)) => (Some(id), found),
        None => (None, BTreeMap::new()),
    };
    if cached == Some(head) {
        return Ok(found);
    }
    let (mut commits, reached) = walk(repo, head, cached)?;
    if !reached {
        // The cache describes another history: everything is read again.
        found.clear();
        commits = walk(repo, head, None)?.0;
    }
    // Oldest first, so that a file's finding is its first breach; what the
    // cache found is older still.
    for id in commits.iter().rev() {
        for t in commit_breaches(repo, *id)? {
            found.entry(t.path.clone()).or_insert(t);
        }
    }
    write_cache(root, head, &found);
    Ok(found)
}

/// The archive files the commits of `theirs` (another machine's commit, to
/// be merged) that `ours` (the head) does not hold break: a sync refuses to
/// bring them in. Only those commits are read; the cache is left as it is.
pub(crate) fn breaches_brought_by(
    repo: &gix::Repository,
    ours: Option<ObjectId>,
    theirs: ObjectId,
) -> Result<Vec<Tampered>, Error> {
    let mut found: BTreeMap<String, Tampered> = BTreeMap::new();
    for id in walk(repo, theirs, ours)?.0.iter().rev() {
        for t in commit_breaches(repo, *id)? {
            found.entry(t.path.clone()).or_insert(t);
        }
    }
    Ok(found.into_values().collect())
}

/// Which of `paths` (workspace-relative archive files) break frames the
/// history commits: in a commit of the history, or on disk now against
/// the head. A file whose blob id is the
/// head's is not read twice; a file the head does not hold is new, never
/// tampered. Empty when the workspace keeps no history.
pub fn tampered_files(root: &Path, paths: &[&str]) -> Result<BTreeSet<String>, Error> {
    let mut out = BTreeSet::new();
    let wanted: Vec<&str> = paths.iter().copied().filter(|p| p.starts_with("sources/")).collect();
    if wanted.is_empty() || !Settings::read(root)?.enabled {
        return Ok(out);
    }
    let Some(repo) = repo::open(root)? else { return Ok(out) };
    let Some(head) = head(&repo)? else { return Ok(out) };
    let in_history = history_breaches(root, &repo, head.id)?;
    for path in wanted {
        if in_history.contains_key(path) {
            out.insert(path.to_owned());
            continue;
        }
        let Some(blob) = blob_at(&repo, head.tree, path)? else { continue };
        if working_breach(&repo, root, path, blob)?.is_some() {
            out.insert(path.to_owned());
        }
    }
    Ok(out)
}

/// How the working file at `path` breaks the committed `blob`, if it does:
/// hashed first, parsed only when it differs.
fn working_breach(
    repo: &gix::Repository,
    root: &Path,
    path: &str,
    blob: ObjectId,
) -> Result<Option<Tampered>, Error> {
    let bytes = match working(root, path)? {
        Some(bytes) => {
            let id = gix::objs::compute_hash(repo.object_hash(), gix::objs::Kind::Blob, &bytes)
                .map_err(|e| git_error("cannot hash a file", e))?;
            if id == blob {
                return Ok(None);
            }
            bytes
        }
        None => Vec::new(),
    };
    Ok(frames::check(path, &read_blob(repo, blob)?, &bytes))
}

/// The commits reachable from `head` that `stop` (verified before, with
/// its ancestry) does not reach, newest first, and whether `stop` is an
/// ancestor of `head` (or `head` itself).
///
/// Both are walked together, newest commit first, painting what each
/// reaches, until every commit left to read is one `stop` reaches: so after
/// a merge the walk reads the commits the other side brought and stops at
/// the ancestry both share, however long it is.
fn walk(
    repo: &gix::Repository,
    head: ObjectId,
    stop: Option<ObjectId>,
) -> Result<(Vec<ObjectId>, bool), Error> {
    const NEW: u8 = 1;
    const OLD: u8 = 2;
    let mut paint: HashMap<ObjectId, u8> = HashMap::new();
    let mut queue: BinaryHeap<(i64, ObjectId)> = BinaryHeap::new();
    let mut done: HashMap<ObjectId, u8> = HashMap::new();
    let mut out = Vec::new();
    let paint_one = |id: ObjectId,
                     flag: u8,
                     paint: &mut HashMap<ObjectId, u8>,
                     queue: &mut BinaryHeap<(i64, ObjectId)>|
     -> Result<(), Error> {
        let p = paint.entry(id).or_insert(0);
        if *p & flag == 0 {
            *p |= flag;
            queue.push((commit_seconds(repo, id)?, id));
        }
        Ok(())
    };
    paint_one(head, NEW, &mut paint, &mut queue)?;
    if let Some(stop) = stop {
        paint_one(stop, OLD, &mut paint, &mut queue)?;
    }
    while let Some((_, id)) = queue.pop() {
        let p = paint[&id];
        if done.insert(id, p) == Some(p) {
            continue;
        }
        if p == NEW {
            out.push(id);
        }
        let commit = repo.find_commit(id).map_err(|e| git_error("cannot read a commit", e))?;
        for parent in commit.parent_ids() {
            paint_one(parent.detach(), p, &mut paint, &mut queue)?;
        }
        if queue.iter().all(|(_, q)| paint[q] & OLD != 0) {
            break;
        }
    }
    let reached = stop.is_some_and(|s| paint.get(&s).is_some_and(|p| p & NEW != 0));
    Ok((out, reached))
}

fn commit_seconds(repo: &gix::Repository, id: ObjectId) -> Result<i64, Error> {
    let commit = repo.find_commit(id).map_err(|e| git_error("cannot read a commit", e))?;
    Ok(commit.time().map_err(|e| git_error("cannot read a commit", e))?.seconds)
}

/// The archive files commit `id` broke, against each of its parents.
fn commit_breaches(repo: &gix::Repository, id: ObjectId) -> Result<Vec<Tampered>, Error> {
    let commit = repo.find_commit(id).map_err(|e| git_error("cannot read a commit", e))?;
    let tree = commit.tree_id().map_err(|e| git_error("cannot read a commit", e))?.detach();
    let parents: Vec<ObjectId> = commit.parent_ids().map(|p| p.detach()).collect();
    let mut out = Vec::new();
    if parents.is_empty() {
        return Ok(out);
    }
    // A merge holds every record of each parent, in one version and the
    // canonical order (which cannot keep two orders of the same records
    // that unrelated histories hold); a resolution may give a record
    // another version; a sync may put records between committed ones.
    // Anything else only appends.
    let message = commit.message_raw().map_err(|e| git_error("cannot read a commit", e))?;
    let writer = super::Stamp::parse(&String::from_utf8_lossy(message)).map(|s| s.writer);
    let rule = match writer.as_deref() {
        _ if parents.len() > 1 => frames::Rule::Union,
        Some("resolve") => frames::Rule::Resolve,
        Some("sync") => frames::Rule::Merge,
        _ => frames::Rule::Append,
    };
    let new = sources_of(repo, tree)?;
    for parent in parents {
        let parent = repo.find_commit(parent).map_err(|e| git_error("cannot read a commit", e))?;
        let parent_tree = parent.tree_id().map_err(|e| git_error("cannot read a commit", e))?.detach();
        let old = sources_of(repo, parent_tree)?;
        diff(repo, SOURCES, old, new, rule, &mut out)?;
    }
    Ok(out)
}

/// The `sources` subtree of the root tree `tree`, if it has one.
fn sources_of(repo: &gix::Repository, tree: ObjectId) -> Result<Option<ObjectId>, Error> {
    Ok(entries(repo, Some(tree))?.remove(SOURCES).filter(|(mode, _)| mode.is_tree()).map(|(_, id)| id))
}

/// The entries of tree `id` by name (none for `None`).
fn entries(
    repo: &gix::Repository,
    id: Option<ObjectId>,
) -> Result<BTreeMap<String, (EntryMode, ObjectId)>, Error> {
    let mut out = BTreeMap::new();
    let Some(id) = id else { return Ok(out) };
    let tree = repo.find_tree(id).map_err(|e| git_error("cannot read a tree", e))?;
    for e in tree.decode().map_err(|e| git_error("cannot read a tree", e))?.entries {
        out.insert(e.filename.to_string(), (e.mode, e.oid.to_owned()));
    }
    Ok(out)
}

/// Compares the blobs under tree `old` (at `dir`) with those under `new`:
/// a blob changed or gone (its new bytes empty) is checked frame by frame;
/// subtrees whose ids are equal are not read.
fn diff(
    repo: &gix::Repository,
    dir: &str,
    old: Option<ObjectId>,
    new: Option<ObjectId>,
    rule: frames::Rule,
    out: &mut Vec<Tampered>,
) -> Result<(), Error> {
    if old.is_none() || old == new {
        return Ok(());
    }
    let before = entries(repo, old)?;
    let after = entries(repo, new)?;
    for (name, (mode, id)) in before {
        let now = after.get(&name).copied();
        if now == Some((mode, id)) {
            continue;
        }
        let path = format!("{dir}/{name}");
        if mode.is_tree() {
            let subtree = now.filter(|(m, _)| m.is_tree()).map(|(_, id)| id);
            diff(repo, &path, Some(id), subtree, rule, out)?;
        } else if mode.is_blob() && archived(&path) {
            let bytes = match now {
                Some((m, new_id)) if m.is_blob() => read_blob(repo, new_id)?,
                _ => Vec::new(),
            };
            out.extend(frames::check_with(&path, &read_blob(repo, id)?, &bytes, rule));
        }
    }
    Ok(())
}

/// Whether `path` is an archive file a workspace may hold: a committed file
/// under `sources/` that no workspace may hold (a hidden provider, a
/// non-canonical name, added by hand) is no record of the archive, which
/// a sync leaves out.
fn archived(path: &str) -> bool {
    crate::patch::check_file_path(path).is_ok()
}

/// Every blob under tree `id` (the archive's folder), by
/// workspace-relative path.
fn blobs_under(repo: &gix::Repository, id: Option<ObjectId>) -> Result<Vec<(String, ObjectId)>, Error> {
    let mut out = Vec::new();
    let mut stack = vec![(SOURCES.to_owned(), id)];
    while let Some((dir, id)) = stack.pop() {
        for (name, (mode, id)) in entries(repo, id)? {
            let path = format!("{dir}/{name}");
            if mode.is_tree() {
                stack.push((path, Some(id)));
            } else if mode.is_blob() && archived(&path) {
                out.push((path, id));
            }
        }
    }
    Ok(out)
}

/// The cached commit, when the cache holds a commit id this repository has.
fn read_cache(root: &Path, repo: &gix::Repository) -> Option<(ObjectId, BTreeMap<String, Tampered>)> {
    let text = std::fs::read_to_string(root.join(VERIFIED_CACHE)).ok()?;
    let (first, rest) = text.split_once('\n').unwrap_or((text.as_str(), ""));
    let id = ObjectId::from_hex(first.trim().as_bytes()).ok()?;
    repo.find_commit(id).ok()?;
    let mut found = BTreeMap::new();
    for line in rest.lines().filter(|l| !l.trim().is_empty()) {
        let t: Tampered = serde_json::from_str(line).ok()?;
        found.insert(t.path.clone(), t);
    }
    Some((id, found))
}

/// Records `id` as verified, with what its history broke (one finding
/// per line after the id). A cache that cannot be written (a read-only
/// workspace) only costs the next check a longer walk.
fn write_cache(root: &Path, id: ObjectId, found: &BTreeMap<String, Tampered>) {
    let target = root.join(VERIFIED_CACHE);
    let mut text = format!("{id}\n");
    for t in found.values() {
        text.push_str(&serde_json::to_string(t).expect("a finding serializes"));
        text.push('\n');
    }
    if let Err(e) = scriptorium_source_archive::fsio::replace_cache_file(root, &target, text.as_bytes()) {
        tracing::debug!(error = %e, "history: cannot write the verified-commit cache");
    }
}
