//! What one commit changed: the blobs that differ between two trees,
//! found by descending only into subtrees whose ids differ, so that the
//! cost follows the change and not the size of the workspace.

use std::collections::BTreeMap;

use gix::ObjectId;

use crate::error::Error;

use super::git_error;

/// One file a commit changed: its blob before and after (`None` where
/// the file is absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    /// The repository-relative path.
    pub(crate) path: String,
    /// The blob before.
    pub(crate) old: Option<ObjectId>,
    /// The blob after.
    pub(crate) new: Option<ObjectId>,
}

/// An entry of a tree: whether it is a tree, and its id.
type Entries = BTreeMap<String, (bool, ObjectId)>;

/// The files and folders of `tree` by name, and the names of its other
/// entries (symbolic links, submodules).
fn entries(repo: &gix::Repository, tree: Option<ObjectId>) -> Result<(Entries, Vec<String>), Error> {
    let mut out = Entries::new();
    let mut others = Vec::new();
    let Some(id) = tree else { return Ok((out, others)) };
    let t = repo.find_tree(id).map_err(|e| git_error("cannot read a tree", e))?;
    for e in t.decode().map_err(|e| git_error("cannot read a tree", e))?.entries {
        if e.mode.is_tree() || e.mode.is_blob() {
            out.insert(e.filename.to_string(), (e.mode.is_tree(), e.oid.to_owned()));
        } else {
            others.push(e.filename.to_string());
        }
    }
    Ok((out, others))
}

/// The files that differ between the trees `old` and `new` (`None`: the
/// empty tree), sorted by path.
pub(crate) fn changes(
    repo: &gix::Repository,
    old: Option<ObjectId>,
    new: Option<ObjectId>,
) -> Result<Vec<Change>, Error> {
    Ok(walk(repo, old, new)?.0)
}

/// [`changes`], and the paths of the entries in `new` that are neither a
/// file nor a folder (symbolic links, submodules) under the folders that
/// differ, sorted.
pub(crate) fn changes_and_others(
    repo: &gix::Repository,
    old: Option<ObjectId>,
    new: Option<ObjectId>,
) -> Result<(Vec<Change>, Vec<String>), Error> {
    walk(repo, old, new)
}

fn walk(
    repo: &gix::Repository,
    old: Option<ObjectId>,
    new: Option<ObjectId>,
) -> Result<(Vec<Change>, Vec<String>), Error> {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    let mut stack = vec![(String::new(), old, new)];
    let join = |dir: &str, name: &str| if dir.is_empty() { name.to_owned() } else { format!("{dir}/{name}") };
    while let Some((dir, old, new)) = stack.pop() {
        if old == new {
            continue;
        }
        let ((a, _), (b, others)) = (entries(repo, old)?, entries(repo, new)?);
        skipped.extend(others.iter().map(|n| join(&dir, n)));
        let names: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        for name in names {
            let (x, y) = (a.get(name).copied(), b.get(name).copied());
            if x == y {
                continue;
            }
            let path = join(&dir, name);
            let tree = |e: Option<(bool, ObjectId)>| e.filter(|e| e.0).map(|e| e.1);
            let blob = |e: Option<(bool, ObjectId)>| e.filter(|e| !e.0).map(|e| e.1);
            if tree(x).is_some() || tree(y).is_some() {
                stack.push((path.clone(), tree(x), tree(y)));
            }
            if blob(x) != blob(y) {
                out.push(Change { path, old: blob(x), new: blob(y) });
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    skipped.sort();
    Ok((out, skipped))
}

/// The id of the entry (file or folder) at `path` in `tree`, if any.
pub(super) fn entry_at(
    repo: &gix::Repository,
    tree: Option<ObjectId>,
    path: &str,
) -> Result<Option<ObjectId>, Error> {
    let Some(tree) = tree else { return Ok(None) };
    let tree = repo.find_tree(tree).map_err(|e| git_error("cannot read a tree", e))?;
    let entry = tree.lookup_entry_by_path(path).map_err(|e| git_error("cannot read a tree", e))?;
    Ok(entry.map(|e| e.object_id()))
}

/// The bytes of blob `id` (`None`: empty).
pub(super) fn blob(repo: &gix::Repository, id: Option<ObjectId>) -> Result<Vec<u8>, Error> {
    match id {
        Some(id) => Ok(repo.find_blob(id).map_err(|e| git_error("cannot read a blob", e))?.take_data()),
        None => Ok(Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(root: &std::path::Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=T", "-c", "user.email=t@example.com", "-C"])
            .arg(root)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    fn write(root: &std::path::Path, path: &str, text: &str) {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn only_the_changed_files_are_found_at_any_depth() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        write(root, "topics/a/x.md", "x\n");
        write(root, "topics/b/deep/y.md", "y\n");
        write(root, "sources/s.md", "s\n");
        git(root, &["add", "-A"]);
        git(root, &["commit", "-qm", "one"]);
        write(root, "topics/b/deep/y.md", "y2\n");
        write(root, "topics/c.md", "c\n");
        std::fs::remove_file(root.join("sources/s.md")).unwrap();
        git(root, &["add", "-A"]);
        git(root, &["commit", "-qm", "two"]);
        let repo = gix::open(root).unwrap();
        let tree = |rev: &str| Some(ObjectId::from_hex(git(root, &["rev-parse", rev]).as_bytes()).unwrap());
        let id = tree;
        let found = changes(&repo, tree("HEAD~1^{tree}"), tree("HEAD^{tree}")).unwrap();
        let want = vec![
            Change { path: "sources/s.md".into(), old: id("HEAD~1:sources/s.md"), new: None },
            Change {
                path: "topics/b/deep/y.md".into(),
                old: id("HEAD~1:topics/b/deep/y.md"),
                new: id("HEAD:topics/b/deep/y.md"),
            },
            Change { path: "topics/c.md".into(), old: None, new: id("HEAD:topics/c.md") },
        ];
        assert_eq!(found, want);
        // From nothing: every file.
        assert_eq!(changes(&repo, None, tree("HEAD^{tree}")).unwrap().len(), 3);
        assert_eq!(entry_at(&repo, tree("HEAD^{tree}"), "topics/b").unwrap(), tree("HEAD:topics/b"));
        assert_eq!(blob(&repo, id("HEAD:topics/c.md")).unwrap(), b"c\n");
    }
}
