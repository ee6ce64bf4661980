//! Three-way merge of two versions of one topic file, block by block.
//!
//! `scriptorium sync` hands [`merge`] the version of a `topics/*.md` file
//! at the merge base (`None` when the file did not exist there, or the
//! histories are unrelated), ours and theirs. The merge is a pure function
//! of the three texts: the same inputs give the same bytes.
//!
//! **Reading.** A file is read with [`TopicFile::parse_lenient`] into its
//! front matter and its body. In the body each block with an id (FORMAT.md
//! §3) is one *token*; every other line (headings, footnote definitions,
//! blank lines, paragraphs without an id, a second block with an id
//! already seen) is itself.
//!
//! **Blocks,** compared by id and text:
//! * a block added on either side is kept; changed on one side only, it
//!   takes that change; changed identically on both, it is taken once;
//! * changed differently on both sides, or added on both with the same id
//!   and different texts, ours is kept and a [`ConflictKind::Block`]
//!   conflict records both full texts (with their ` ^id`);
//! * deleted on one side and unchanged on the other, it is deleted;
//!   deleted on one side and changed on the other, the changed one is kept
//!   and the conflict's deleted side is the empty string.
//!
//! **Body and order.** The three bodies merge as token sequences, three-way
//! (diff3): each side's change to the base is a list of hunks found by a
//! heaviest common subsequence (a block token outweighs a line of text,
//! which outweighs a blank line, so the alignment follows the blocks and
//! the lines move with them). Blocks both sides kept are the fixed points;
//! a hunk only one side made applies as it is, so a run of blocks (or
//! lines) one side inserted goes where that side put it and a block one
//! side moved moves. Hunks of both sides that overlap, or insert at one
//! place, are resolved together:
//! * insertions at one place are all kept, each once, and the run whose
//!   first block id sorts lower comes first (runs without a block first,
//!   by their lines), so the order never depends on which side is ours —
//!   this is how two sets of appended footnote definitions come together;
//! * where one side only removed lines, the other side's change applies
//!   less those lines, and where one side only inserted lines, they go
//!   into the other side's change (nothing either side wrote is lost);
//! * where every base line that went is a footnote definition, a block
//!   token or blank, the base lines both kept stay and every line either
//!   added is kept (a footnote label added with two different lines
//!   excepted);
//! * anything else is a clash, such as one heading changed two ways: ours
//!   is kept with a [`ConflictKind::Lines`] conflict naming the block the
//!   lines follow.
//!
//! A block then appears once (where the merge first put it), only if its
//! rule above keeps it, with its merged text; a kept block a clash left
//! out goes after the block it follows on its side. A footnote definition
//! line appears once.
//!
//! **Front matter** merges by key, three-way: a key added, changed or
//! removed on one side takes that side; changed differently on both, ours
//! is kept with a [`ConflictKind::FrontMatter`] conflict. Keys come in
//! ours' order, then the keys only theirs has, in theirs' order.
//!
//! **Shape.** A block never touches a line that would glue onto it: a
//! blank line is put between a block and a neighbouring line that is
//! neither blank nor a heading. Lines end as ours' do (LF or CRLF), and
//! the file ends with a line ending when ours does.
//!
//! **Identities.** `merge(base, x, x)` is `x`, `merge(Some(b), b, t)` is
//! `t` and `merge(Some(b), o, b)` is `o`, byte for byte.

mod align;
mod blocks;
mod front;
mod lines;
mod model;

use serde::{Deserialize, Serialize};

use crate::parse::TopicFile;

/// The result of [`merge`]: the merged text and every conflict met.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Merged {
    /// The merged file; where a conflict was met it holds ours.
    pub text: String,
    /// The conflicts: front matter keys, then clashes of lines, then
    /// blocks, each in file order.
    pub conflicts: Vec<Conflict>,
}

/// One place where both sides changed the same thing differently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conflict {
    /// What clashed.
    pub kind: ConflictKind,
    /// Ours (the kept text; empty when ours deleted it).
    pub ours: String,
    /// Theirs (empty when theirs deleted it).
    pub theirs: String,
}

/// What a [`Conflict`] is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ConflictKind {
    /// A block, by id; the texts are the full blocks, ` ^id` included.
    Block {
        /// The block id.
        id: String,
    },
    /// A front matter key; the texts are the whole `key: value` lines.
    FrontMatter {
        /// The key (for a line that is not `key: value`, the line).
        key: String,
    },
    /// Lines between blocks; the texts are the clashing lines, joined by LF.
    Lines {
        /// The id of the block the lines follow (`None`: the file start).
        after: Option<String>,
    },
}

/// Merges `ours` and `theirs`, two versions of one topic file, given the
/// merge base's version (`None`: no common version). See the module
/// documentation for the rules.
pub fn merge(base: Option<&str>, ours: &str, theirs: &str) -> Merged {
    let done = |text: &str| Merged { text: text.to_owned(), conflicts: Vec::new() };
    if ours == theirs || base == Some(theirs) {
        return done(ours);
    }
    if base == Some(ours) {
        return done(theirs);
    }
    let read = |t: &str| model::Version::read(&TopicFile::parse_lenient(t).0);
    let (b, o, t) = (base.map(read), read(ours), read(theirs));
    let mut conflicts = Vec::new();
    let fm = front::merge(b.as_ref(), &o, &t, &mut conflicts);
    let body = blocks::merge(b.as_ref(), &o, &t, &mut conflicts);
    let style = model::Style::of(ours, theirs);
    Merged { text: model::render(fm.as_ref(), &body, style), conflicts }
}

#[cfg(test)]
mod prop;
#[cfg(test)]
mod tests;
