//! Three-way merge of two versions of one topic file, block by block.
//!
//! `scriptorium sync` hands [`merge`] the version of a `topics/*.md` file
//! at the merge base (`None` when the file did not exist there, or the
//! histories are unrelated), ours and theirs. The merge is a pure function
//! of the three texts: the same inputs give the same bytes.
//!
//! **Pieces.** A file is read with [`TopicFile::parse_lenient`] into its
//! front matter, its blocks with ids (FORMAT.md §3; a second block with an
//! id already seen, and a paragraph without an id, are ordinary lines),
//! and the *gaps*: the runs of other lines (headings, footnote definitions,
//! blank lines, …). Each gap belongs to the block that follows it; the
//! last one to the end of the file.
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
//! **Order.** The blocks both sides have are sync points (the longest
//! common subsequence of their ids; a block one side moved past another
//! follows ours). Between two sync points, a run only one side inserted
//! goes where that side put it; when both sides inserted runs at the same
//! place, the run whose first id sorts lower comes first, so the order
//! never depends on which side is ours.
//!
//! **Front matter** merges by key, three-way: a key added, changed or
//! removed on one side takes that side; changed differently on both, ours
//! is kept with a [`ConflictKind::FrontMatter`] conflict. Keys come in
//! ours' order, then the keys only theirs has, in theirs' order.
//!
//! **Gaps** merge as lines, three-way (diff3): lines only one side changed
//! take that change; lines both sides inserted at the same place are both
//! kept, each once, ours-independent (the lower side's lines first — how
//! two sets of appended footnote definitions come together); one side
//! removing lines the other kept while inserting next to them keeps the
//! insertions; anything else is a clash: ours is kept with a
//! [`ConflictKind::Lines`] conflict naming the block the lines follow.
//! Footnote definitions are the exception: a clash of definitions (and
//! blank lines) only keeps ours' and adds theirs' after them, and a
//! definition line the merge put in the file more than once is kept at its
//! last place only. Two sides that each append a block with its definition
//! after it both carry the definition that ended the file into their new
//! block's gap and end the file differently; this merges them cleanly.
//!
//! **Shape.** A block never touches a line that would glue onto it: a
//! blank line is put between a block and a neighbouring line that is
//! neither blank nor a heading. Lines end as ours' do (LF or CRLF), and
//! the file ends with a line ending when ours does.
//!
//! **Identities.** `merge(base, x, x)` is `x`, `merge(Some(b), b, t)` is
//! `t` and `merge(Some(b), o, b)` is `o`, byte for byte.

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
    /// The conflicts, in the order the merge met them (front matter, then
    /// the file from top to bottom).
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
