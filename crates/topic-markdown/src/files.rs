//! Listing the Markdown files of a workspace folder on disk: regular files
//! only (links are never followed), sorted by workspace-relative path.

use std::fs::Metadata;
use std::path::{Path, PathBuf};

/// The `*.md` files below a folder.
#[derive(Debug, Default)]
pub struct Listing {
    /// Workspace-relative `/`-separated paths with their metadata, sorted.
    pub files: Vec<(String, Metadata)>,
    /// Files or folders whose names are not UTF-8, shown lossily; they are
    /// not read.
    pub bad_names: Vec<String>,
}

/// An I/O failure and the path it concerns.
#[derive(Debug)]
pub struct ListError {
    /// What failed.
    pub error: std::io::Error,
    /// Where.
    pub path: PathBuf,
}

fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/")
}

/// Lists the `*.md` regular files below `dir` (a missing folder is empty),
/// with paths relative to `root`.
pub fn list_md(root: &Path, dir: &Path) -> Result<Listing, ListError> {
    let mut out = Listing::default();
    walk(root, dir, &mut out)?;
    out.files.sort_by(|a, b| a.0.cmp(&b.0));
    out.bad_names.sort();
    Ok(out)
}

fn walk(root: &Path, dir: &Path, out: &mut Listing) -> Result<(), ListError> {
    let fail = |error, path: &Path| ListError { error, path: path.to_path_buf() };
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(fail(e, dir)),
    };
    for entry in rd {
        let entry = entry.map_err(|e| fail(e, dir))?;
        let path = entry.path();
        let ft = entry.file_type().map_err(|e| fail(e, &path))?;
        let is_md = path.extension().is_some_and(|x| x == "md");
        if entry.file_name().to_str().is_none() {
            if ft.is_dir() || is_md {
                out.bad_names.push(relative(root, &path));
            }
            continue;
        }
        if ft.is_dir() {
            walk(root, &path, out)?;
        } else if ft.is_file() && is_md {
            let meta = entry.metadata().map_err(|e| fail(e, &path))?;
            out.files.push((relative(root, &path), meta));
        }
    }
    Ok(())
}
