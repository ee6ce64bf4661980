//! Reading a workspace's topic files from disk for the topic verbs.

use std::path::{Path, PathBuf};

use scriptorium::archive;
use scriptorium::topics::diag::{Code, Diagnostic};
use scriptorium::topics::files;
use scriptorium::topics::validate::Loaded;

/// A refusal of the topic verbs: stable code, message, optional path.
#[derive(Debug)]
pub(crate) struct Refusal {
    pub(crate) code: &'static str,
    pub(crate) message: String,
    pub(crate) path: Option<PathBuf>,
}

impl From<archive::Error> for Refusal {
    fn from(e: archive::Error) -> Refusal {
        Refusal { code: e.code(), message: e.message().to_owned(), path: e.path().map(Path::to_path_buf) }
    }
}

fn io(e: std::io::Error, what: &str, path: &Path) -> Refusal {
    Refusal { code: "IO", message: format!("{what} {}: {e}", path.display()), path: Some(path.to_path_buf()) }
}

/// Refuses a workspace folder that does not exist.
pub(crate) fn require(root: &Path) -> Result<(), Refusal> {
    if root.is_dir() {
        Ok(())
    } else {
        Err(Refusal {
            code: "NOT_FOUND",
            message: format!("no workspace at {}", root.display()),
            path: Some(root.to_path_buf()),
        })
    }
}

/// Lists `*.md` regular files below `dir` as workspace-relative paths;
/// names that are not UTF-8 go to `bad` (lossily shown) instead.
fn walk_names(root: &Path, dir: &Path, out: &mut Vec<String>, bad: &mut Vec<String>) -> Result<(), Refusal> {
    let listing = files::list_md(root, dir).map_err(|e| io(e.error, "cannot list", &e.path))?;
    out.extend(listing.files.into_iter().map(|(rel, _)| rel));
    bad.extend(listing.bad_names);
    Ok(())
}

/// Every topic file, parsed, sorted by path; undecodable files become a
/// `BAD_ENCODING` diagnostic instead.
pub(crate) fn load_topics(root: &Path) -> Result<(Vec<Loaded>, Vec<Diagnostic>), Refusal> {
    let mut paths = Vec::new();
    let mut bad_names = Vec::new();
    walk_names(root, &root.join("topics"), &mut paths, &mut bad_names)?;
    paths.sort();
    let mut loaded = Vec::with_capacity(paths.len());
    let mut bad: Vec<Diagnostic> = bad_names
        .into_iter()
        .map(|path| Diagnostic {
            code: Code::BadEncoding,
            path,
            line: 1,
            block_id: None,
            message: "the file or folder name is not valid UTF-8; it is not read".into(),
        })
        .collect();
    for rel in paths {
        let full = root.join(&rel);
        let bytes = std::fs::read(&full).map_err(|e| io(e, "cannot read", &full))?;
        match String::from_utf8(bytes) {
            Ok(text) => loaded.push(Loaded::parse(&rel, &text)),
            Err(e) => bad.push(Diagnostic {
                code: Code::BadEncoding,
                path: rel,
                line: 1,
                block_id: None,
                message: format!("the file is not valid UTF-8 ({})", e.utf8_error()),
            }),
        }
    }
    Ok((loaded, bad))
}

/// A named file as a workspace-relative path (`topics/…`), whether it was
/// given relative to the workspace or as a path on disk inside it.
pub(crate) fn relative_topic_path(root: &Path, named: &str) -> Result<String, Refusal> {
    let as_given = Path::new(named);
    let candidates = [root.join(named), as_given.to_path_buf()];
    let canon_root = root.canonicalize().map_err(|e| io(e, "cannot resolve", root))?;
    for c in candidates {
        if let Ok(canon) = c.canonicalize() {
            if let Ok(rel) = canon.strip_prefix(&canon_root) {
                let parts: Vec<String> =
                    rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
                let rel = parts.join("/");
                if rel.starts_with("topics/") && rel.ends_with(".md") {
                    return Ok(rel);
                }
                return Err(Refusal {
                    code: "INVALID_ARGUMENT",
                    message: format!("{named} is not a topic file (topics/**/*.md)"),
                    path: Some(c),
                });
            }
        }
    }
    Err(Refusal {
        code: "NOT_FOUND",
        message: format!("no topic file {named} in the workspace"),
        path: Some(root.join(named)),
    })
}
