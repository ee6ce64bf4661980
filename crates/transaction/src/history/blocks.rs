//! The blocks of two versions of a topic file, compared by id: which a
//! change added, changed or removed.

use std::collections::BTreeMap;

use scriptorium_topic_markdown::parse::TopicFile;

/// The blocks of a topic file that have an id, by id: their text (lines
/// joined by LF) and their place in the file. A file that is not UTF-8
/// has none.
pub(crate) fn blocks_of(bytes: &[u8]) -> Blocks {
    let Ok(text) = std::str::from_utf8(bytes) else { return BTreeMap::new() };
    let (file, _) = TopicFile::parse_lenient(text);
    let mut out = BTreeMap::new();
    for (k, b) in file.blocks.iter().enumerate() {
        if let Some(id) = &b.id {
            out.entry(id.clone()).or_insert_with(|| (k, file.block_text(b)));
        }
    }
    out
}

/// The block ids a change from `old` to `new` added, changed (in both,
/// with a different text) and removed, each in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct BlockDiff {
    pub(super) added: Vec<String>,
    pub(super) changed: Vec<String>,
    pub(super) removed: Vec<String>,
}

impl BlockDiff {
    /// Every id the change touched.
    pub(super) fn ids(&self) -> impl Iterator<Item = &String> {
        self.added.iter().chain(&self.changed).chain(&self.removed)
    }
}

/// The blocks of one version of a topic file, as [`blocks_of`] reads them.
pub(crate) type Blocks = BTreeMap<String, (usize, String)>;

/// How `new` differs from `old`, block by block.
pub(super) fn diff(old: &[u8], new: &[u8]) -> BlockDiff {
    diff_of(&blocks_of(old), &blocks_of(new))
}

/// [`diff`] of two versions already read.
pub(super) fn diff_of(a: &Blocks, b: &Blocks) -> BlockDiff {
    let in_order = |m: &BTreeMap<String, (usize, String)>, keep: &dyn Fn(&str, &str) -> bool| {
        let mut v: Vec<(usize, String)> =
            m.iter().filter(|(id, (_, t))| keep(id, t)).map(|(id, (k, _))| (*k, id.clone())).collect();
        v.sort();
        v.into_iter().map(|(_, id)| id).collect::<Vec<_>>()
    };
    BlockDiff {
        added: in_order(b, &|id, _| !a.contains_key(id)),
        changed: in_order(b, &|id, t| a.get(id).is_some_and(|(_, old)| old != t)),
        removed: in_order(a, &|id, _| !b.contains_key(id)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_changed_and_removed_blocks_are_told_apart() {
        let old = "# T\n\nOne.[^e-0000000001] ^a1\n\nTwo.[^e-0000000001] ^b2\n\nThree. ^c3\n";
        let new = "# T\n\nOne.[^e-0000000001] ^a1\n\nTwo, edited.[^e-0000000001] ^b2\n\nFour. ^d4\n";
        let d = diff(old.as_bytes(), new.as_bytes());
        assert_eq!(d.added, vec!["d4"]);
        assert_eq!(d.changed, vec!["b2"]);
        assert_eq!(d.removed, vec!["c3"]);
        assert_eq!(diff(b"", new.as_bytes()).added, vec!["a1", "b2", "d4"]);
    }
}
