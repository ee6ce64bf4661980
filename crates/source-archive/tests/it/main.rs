//! Integration tests of the archive layer: the FORMAT.md test vector, batch
//! refusal and replay on a real workspace, property round trips, and the
//! replay of the committed fuzz corpora.

mod append;
mod corpus;
mod roundtrip;
mod scan;
mod vector;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every file under `root` with its bytes.
pub(crate) fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else { continue };
        for e in rd {
            let p = e.unwrap().path();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&p).unwrap();
                out.insert(
                    p.strip_prefix(root).unwrap().to_path_buf(),
                    target.to_string_lossy().into_owned().into_bytes(),
                );
            } else if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(root).unwrap().to_path_buf(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

pub(crate) fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}
