//! The source ids a recalled block cites, read from its topic file.
//!
//! The index answers a block with its text and place, not its citations;
//! recall reads each topic file a hit names once (a file that cannot be
//! read, or a path that is not a plain relative path under `topics/`, cites
//! nothing).

use std::collections::HashMap;
use std::path::{Component, Path};

use scriptorium_topic_markdown::parse::TopicFile;

/// Citations of blocks, read once per file.
pub(super) struct Cites<'r> {
    root: &'r Path,
    files: HashMap<String, HashMap<String, Vec<String>>>,
}

impl<'r> Cites<'r> {
    pub(super) fn new(root: &'r Path) -> Cites<'r> {
        Cites { root, files: HashMap::new() }
    }

    /// The source ids block `block_id` of the topic file `path` cites, in
    /// the order it cites them.
    pub(super) fn of(&mut self, path: &str, block_id: &str) -> Vec<String> {
        let root = self.root;
        let blocks = self.files.entry(path.to_owned()).or_insert_with(|| read(root, path));
        blocks.get(block_id).cloned().unwrap_or_default()
    }
}

/// Block id → the source ids it cites, for the topic file at `path`.
fn read(root: &Path, path: &str) -> HashMap<String, Vec<String>> {
    let rel = Path::new(path);
    let plain = rel.starts_with("topics") && rel.components().all(|c| matches!(c, Component::Normal(_)));
    let Some(text) = plain.then(|| std::fs::read_to_string(root.join(rel)).ok()).flatten() else {
        return HashMap::new();
    };
    let (file, _) = TopicFile::parse_lenient(&text);
    let mut out = HashMap::new();
    for block in &file.blocks {
        let Some(id) = &block.id else { continue };
        let mut cited: Vec<String> = Vec::new();
        for r in &block.refs {
            let Some(Some(Ok(ev))) = file.definition(&r.label).map(|d| d.evidence.as_ref()) else { continue };
            for s in &ev.sources {
                if !cited.contains(&s.id) {
                    cited.push(s.id.clone());
                }
            }
        }
        out.entry(id.clone()).or_insert(cited);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_cites_the_sources_of_its_evidence_footnotes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("topics")).unwrap();
        std::fs::write(
            dir.path().join("topics/a.md"),
            "# A\n\nAda leads the launch.[^e-0123456789] ^b1\n\n\
             [^e-0123456789]: Time: `2026-03-02T09:01:00Z`; Sources: [c/t/m1](../sources/c/_v2/t.md#m1), [c/t/m2](../sources/c/_v2/t.md#m2)\n",
        )
        .unwrap();
        let mut cites = Cites::new(dir.path());
        assert_eq!(cites.of("topics/a.md", "b1"), ["c/t/m1", "c/t/m2"]);
        assert!(cites.of("topics/a.md", "nope").is_empty());
        assert!(cites.of("topics/../../etc/passwd", "b1").is_empty());
        assert!(cites.of("/etc/passwd", "b1").is_empty());
    }
}
