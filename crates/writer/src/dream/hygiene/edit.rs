//! Line edits of one topic file: lines replaced, removed, or added after a
//! line, printed back with every other byte as it was. Removing lines never
//! glues two blocks into one (a blank line is put between them) and never
//! leaves two blank lines where the removed lines stood.

use std::collections::{BTreeMap, BTreeSet};

use scriptorium_topic_markdown::parse::TopicFile;

/// What kind of line was last written, for the joins around removed lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Nothing yet.
    Start,
    /// A blank line outside a code fence.
    Blank,
    /// A line of a block.
    Block,
    /// Anything else: a heading, a definition, front matter.
    Other,
}

/// The edits of one file.
#[derive(Debug)]
pub(super) struct FileEdit<'a> {
    file: &'a TopicFile,
    in_block: Vec<bool>,
    replace: BTreeMap<usize, String>,
    delete: BTreeSet<usize>,
    insert_after: BTreeMap<usize, Vec<String>>,
}

impl<'a> FileEdit<'a> {
    /// No edits yet.
    pub(super) fn new(file: &'a TopicFile) -> FileEdit<'a> {
        let mut in_block = vec![false; file.lines().len()];
        for b in &file.blocks {
            in_block[b.first_line..=b.last_line].fill(true);
        }
        FileEdit {
            file,
            in_block,
            replace: BTreeMap::new(),
            delete: BTreeSet::new(),
            insert_after: BTreeMap::new(),
        }
    }

    /// The file edited.
    pub(super) fn file(&self) -> &'a TopicFile {
        self.file
    }

    /// Line `k` as it stands (replaced or as it was).
    pub(super) fn line(&self, k: usize) -> &str {
        self.replace.get(&k).map_or_else(|| self.file.line(k), String::as_str)
    }

    /// Replaces the content of line `k` (its line ending stays).
    pub(super) fn set(&mut self, k: usize, content: String) {
        self.replace.insert(k, content);
    }

    /// Removes lines `first..=last`.
    pub(super) fn remove(&mut self, first: usize, last: usize) {
        self.delete.extend(first..=last);
    }

    /// Adds `line` (without its line ending) after line `k`, after the lines
    /// added there before.
    pub(super) fn add_after(&mut self, k: usize, line: String) {
        self.insert_after.entry(k).or_default().push(line);
    }

    /// True when some edit was made.
    pub(super) fn is_edited(&self) -> bool {
        !(self.replace.is_empty() && self.delete.is_empty() && self.insert_after.is_empty())
    }

    fn kind(&self, k: usize) -> Kind {
        let f = self.file;
        if self.in_block[k] {
            Kind::Block
        } else if !f.is_fenced(k) && f.line(k).bytes().all(|b| b == b' ' || b == b'\t') {
            Kind::Blank
        } else {
            Kind::Other
        }
    }

    /// The file with the edits made.
    pub(super) fn print(&self) -> String {
        let f = self.file;
        let text = f.print();
        let mut out = String::with_capacity(text.len());
        let mut last = Kind::Start;
        let mut after_removal = false;
        for (k, l) in f.lines().iter().enumerate() {
            if self.delete.contains(&k) {
                after_removal = true;
                continue;
            }
            let kind = self.kind(k);
            if after_removal {
                if kind == Kind::Blank && matches!(last, Kind::Start | Kind::Blank) {
                    continue;
                }
                if kind == Kind::Block && last == Kind::Block {
                    push_line(&mut out, "", "\n");
                }
                after_removal = false;
            }
            let ending = &text[l.end..l.next];
            push_line(&mut out, self.line(k), ending);
            last = kind;
            for added in self.insert_after.get(&k).into_iter().flatten() {
                let ending = if ending.is_empty() { "\n" } else { ending };
                push_line(&mut out, added, ending);
                last = Kind::Other;
            }
        }
        out
    }
}

/// Appends one line; a line before it that had no line ending gets one.
fn push_line(out: &mut String, content: &str, ending: &str) {
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(content);
    out.push_str(ending);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> TopicFile {
        TopicFile::parse_lenient(text).0
    }

    #[test]
    fn no_edit_prints_the_same_bytes() {
        for text in ["", "a ^x", "# T\r\n\r\nA ^a\r\n\r\n\r\nB ^b", "x\n\n\n"] {
            let f = parse(text);
            assert_eq!(FileEdit::new(&f).print(), text);
        }
    }

    #[test]
    fn removing_a_block_leaves_one_blank_line() {
        let f = parse("# T\n\nA ^a\n\nR ^r\n\nB ^b\n");
        let mut e = FileEdit::new(&f);
        e.remove(4, 4);
        assert_eq!(e.print(), "# T\n\nA ^a\n\nB ^b\n");
        let mut e = FileEdit::new(&f);
        e.remove(2, 2);
        assert_eq!(e.print(), "# T\n\nR ^r\n\nB ^b\n");
        let mut e = FileEdit::new(&f);
        e.remove(6, 6);
        assert_eq!(e.print(), "# T\n\nA ^a\n\nR ^r\n\n");
    }

    #[test]
    fn removing_a_definition_between_two_blocks_keeps_them_apart() {
        let f = parse("A ^a\n[^n]: note\nB ^b\n");
        let mut e = FileEdit::new(&f);
        e.remove(1, 1);
        assert_eq!(e.print(), "A ^a\n\nB ^b\n");
        let again = parse(&e.print());
        assert_eq!(again.blocks.len(), 2);
    }

    #[test]
    fn lines_added_after_the_last_line_get_their_own_line() {
        let f = parse("A ^a");
        let mut e = FileEdit::new(&f);
        e.add_after(0, "[^n]: note".into());
        e.set(0, "A[^n] ^a".into());
        assert_eq!(e.print(), "A[^n] ^a\n[^n]: note\n");
        let f = parse("A ^a\r\n\r\nB ^b\r\n");
        let mut e = FileEdit::new(&f);
        e.add_after(0, "[^n]: note".into());
        assert_eq!(e.print(), "A ^a\r\n[^n]: note\r\n\r\nB ^b\r\n");
    }
}
