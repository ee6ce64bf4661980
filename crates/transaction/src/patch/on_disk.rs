//! The checks of a patch's paths against the disk, made under the lock
//! before staging: nothing on the way to a path is a symbolic link, and no
//! path is an NFC/case-fold twin of an existing path, on any prefix, or of
//! another path of the same patch.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use scriptorium_source_archive::id::fold_key;

use super::Patch;
use crate::error::{Code, Error};

/// The checks of the edit paths against the disk (made under the lock,
/// before staging): nothing on the way to a path is a symbolic link, and no
/// path is an NFC/case-fold twin of an existing path, on any prefix, or of
/// another path of the same patch.
pub fn check_paths_on_disk(root: &Path, patch: &Patch) -> Result<(), Error> {
    let paths: Vec<&str> = patch.edits.iter().map(|e| e.path()).collect();
    check_spellings(&paths, &|k| format!("edits[{k}].path"))?;
    for (k, path) in paths.iter().enumerate() {
        check_on_disk(root, path, || format!("edits[{k}].path"))?;
    }
    Ok(())
}

/// [`check_paths_on_disk`] for files a whole-file change writes: each is
/// named by its path.
pub fn check_files_on_disk(root: &Path, paths: &[&str]) -> Result<(), Error> {
    check_spellings(paths, &|k| paths[k].to_owned())?;
    for path in paths {
        check_on_disk(root, path, || (*path).to_owned())?;
    }
    Ok(())
}

fn invalid(message: String, at: String) -> Error {
    Error::new(Code::InvalidArgument, message).at(at)
}

/// Within the patch: every prefix (folder or file) is spelled one way, and
/// no file path is also a folder of another path.
fn check_spellings(paths: &[&str], name: &dyn Fn(usize) -> String) -> Result<(), Error> {
    let mut spelled: HashMap<String, String> = HashMap::new();
    let mut files: HashSet<&str> = HashSet::new();
    let mut folders: HashSet<String> = HashSet::new();
    for (k, &path) in paths.iter().enumerate() {
        let at = || name(k);
        let parts: Vec<&str> = path.split('/').collect();
        for i in 0..parts.len() {
            let prefix = parts[..=i].join("/");
            let key = fold_key(&prefix);
            match spelled.get(&key) {
                Some(other) if *other != prefix => {
                    return Err(invalid(
                        format!("{prefix} and {other} differ only in case or Unicode normalisation"),
                        at(),
                    ));
                }
                Some(_) => {}
                None => {
                    spelled.insert(key, prefix.clone());
                }
            }
            if i + 1 < parts.len() {
                if files.contains(prefix.as_str()) {
                    return Err(invalid(
                        format!("{prefix} is a file of this patch and cannot also be a folder"),
                        at(),
                    ));
                }
                folders.insert(prefix);
            }
        }
        if folders.contains(path) {
            return Err(invalid(format!("{path} is a folder of this patch and cannot also be a file"), at()));
        }
        files.insert(path);
    }
    Ok(())
}

/// Walks `path` from `root`: every folder on the way is a folder (not a
/// link), the file is a regular file when it exists, and the first name
/// that does not exist is no twin of a name beside it. `at` names the
/// path in errors.
fn check_on_disk(root: &Path, path: &str, at: impl Fn() -> String) -> Result<(), Error> {
    let mut dir = root.to_path_buf();
    let parts: Vec<&str> = path.split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        let here = dir.join(part);
        match std::fs::symlink_metadata(&here) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(invalid(
                    format!("{} is a symbolic link; edits never go through links", parts[..=i].join("/")),
                    at(),
                ));
            }
            Ok(m) if i + 1 < parts.len() && !m.is_dir() => {
                return Err(invalid(format!("{} is a file, not a folder", parts[..=i].join("/")), at()));
            }
            Ok(m) if i + 1 == parts.len() && !m.is_file() => {
                return Err(invalid(format!("{} exists and is not a regular file", parts.join("/")), at()));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
                return Err(invalid(
                    format!("a component of {} is a file, not a folder", parts[..=i].join("/")),
                    at(),
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // A new name: it must not be a twin of a sibling.
                return match twin_beside(&dir, part) {
                    Some(name) => Err(invalid(
                        format!(
                            "{} is a case or Unicode-normalisation twin of the existing {}",
                            parts[..=i].join("/"),
                            parts[..i]
                                .iter()
                                .copied()
                                .chain(std::iter::once(name.as_str()))
                                .collect::<Vec<_>>()
                                .join("/")
                        ),
                        at(),
                    )),
                    None => Ok(()),
                };
            }
            Err(e) if e.kind() == std::io::ErrorKind::InvalidFilename => {
                return Err(invalid(format!("{path}: the name is too long or invalid here"), at()));
            }
            Err(e) => return Err(Error::io(&e, "cannot stat", &here)),
        }
        dir = here;
    }
    Ok(())
}

/// The name of an entry of `dir` other than `name` that folds to the same
/// key, if any (an unreadable folder has none).
fn twin_beside(dir: &Path, name: &str) -> Option<String> {
    let want = fold_key(name);
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let other = entry.file_name();
        let other = other.to_string_lossy();
        if other != name && fold_key(&other) == want {
            return Some(other.into_owned());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    //! Twins and links against a real folder.
    use super::*;
    use crate::patch::Edit;

    fn with_edits(paths: &[&str]) -> Patch {
        Patch {
            base_revision: String::new(),
            message: String::new(),
            sources: Vec::new(),
            edits: paths
                .iter()
                .map(|p| Edit::Create { path: (*p).to_owned(), content: String::new() })
                .collect(),
        }
    }

    #[test]
    fn twins_and_links_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("topics/People")).unwrap();
        std::fs::write(root.join("topics/People/Ada.md"), "x").unwrap();
        std::fs::write(root.join("topics/caf\u{e9}.md"), "x").unwrap();
        let ok = |p: &[&str]| check_paths_on_disk(root, &with_edits(p));
        assert!(ok(&["topics/People/Ada.md"]).is_ok(), "the same path is no twin");
        assert!(ok(&["topics/People/bo.md", "topics/new/x.md"]).is_ok());
        // Within one patch: twin folders on the way, a file that is also a folder.
        for bad in [
            &["topics/q/r/a.md", "topics/q/R/b.md"][..],
            &["topics/caf\u{e9}x/a.md", "topics/cafe\u{301}x/b.md"],
            &["topics/x.md", "topics/x.md/b.md"],
            &["topics/x.md/b.md", "topics/x.md"],
            &["topics/x.md/b.md", "topics/X.md"],
        ] {
            assert_eq!(ok(bad).unwrap_err().code, Code::InvalidArgument, "{bad:?}");
        }
        for twin in
            ["topics/people/x.md", "topics/People/ada.md", "topics/cafe\u{301}.md", "topics/CAF\u{c9}.md"]
        {
            assert_eq!(ok(&[twin]).unwrap_err().code, Code::InvalidArgument, "{twin}");
        }
        assert_eq!(ok(&["topics/n/a.md", "topics/N/a.md"]).unwrap_err().code, Code::InvalidArgument);
        #[cfg(unix)]
        {
            let outside = tempfile::tempdir().unwrap();
            std::os::unix::fs::symlink(outside.path(), root.join("topics/out")).unwrap();
            assert_eq!(ok(&["topics/out/x.md"]).unwrap_err().code, Code::InvalidArgument);
            std::os::unix::fs::symlink(root.join("topics/People/Ada.md"), root.join("topics/alias.md"))
                .unwrap();
            assert_eq!(ok(&["topics/alias.md"]).unwrap_err().code, Code::InvalidArgument);
        }
    }
}
