//! The topic file grammar (FORMAT.md §3): a nom parser over lines, and the
//! exact printer.
//!
//! The tree is lossless: it keeps every line's bytes (with its CR, if any,
//! and its line ending), and everything else — front matter, blocks, block
//! ids, footnote references, definitions and links — points into those
//! lines. Printing walks the tree and writes the lines back, so
//! `print(parse(text)) == text` for every input, accepted or not.
//!
//! The line grammar is in `grammar`, the scan of a line for references
//! and links in `inline`, the reading of a whole file in `file`, and the
//! text of a block without markup in `text`.

mod file;
mod front;
mod grammar;
mod inline;
mod text;

pub use front::{escape_item, limit_value, searchable, unescape_item, ALIAS_CHARS, LIMIT_KEYS, MAX_LIMIT};
pub use grammar::is_evidence_label;
pub(crate) use grammar::{definition_line, fence, is_blank, is_heading};
pub use inline::{inline_spans, Inline, InlineSpan};
pub use text::{plain_text, search_text};

use crate::diag::Code;
use crate::time::Instant;

/// One physical line: `text[start..end]` is its content (without LF and
/// without the CR before it), `text[start..next]` its raw bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line {
    /// Byte offset of the first byte.
    pub start: usize,
    /// Byte offset just past the content.
    pub end: usize,
    /// Byte offset of the next line (past the LF).
    pub next: usize,
}

/// The value of one front-matter key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FmValue {
    /// `key: value`
    Scalar(String),
    /// `key: [a, b]`
    List(Vec<String>),
}

/// One `key: value` line of front matter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FmEntry {
    /// 0-based line index.
    pub line: usize,
    /// The key.
    pub key: String,
    /// The value.
    pub value: FmValue,
}

/// The kinds a topic file may declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TopicKind {
    /// A person.
    Person,
    /// A project.
    Project,
    /// A recurring theme.
    Theme,
    /// The always-on block.
    Core,
    /// How the agent speaks and works: the self's persona
    /// (`topics/self/persona.md`, FORMAT.md §3).
    Persona,
    /// Who the agent is: the self's identity (`topics/self/identity.md`).
    Identity,
}

impl TopicKind {
    fn parse(s: &str) -> Option<TopicKind> {
        match s {
            "person" => Some(TopicKind::Person),
            "project" => Some(TopicKind::Project),
            "theme" => Some(TopicKind::Theme),
            "core" => Some(TopicKind::Core),
            "persona" => Some(TopicKind::Persona),
            "identity" => Some(TopicKind::Identity),
            _ => None,
        }
    }

    /// The kind as written.
    pub fn as_str(self) -> &'static str {
        match self {
            TopicKind::Person => "person",
            TopicKind::Project => "project",
            TopicKind::Theme => "theme",
            TopicKind::Core => "core",
            TopicKind::Persona => "persona",
            TopicKind::Identity => "identity",
        }
    }
}

/// Front matter between two `---` lines at the top of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontMatter {
    /// 0-based index of the closing `---` line (`None`: unclosed, runs to
    /// the end of the file).
    pub close_line: Option<usize>,
    /// The entries in order, unknown keys included.
    pub entries: Vec<FmEntry>,
}

impl FrontMatter {
    fn scalar(&self, key: &str) -> Option<&str> {
        self.entries.iter().find(|e| e.key == key).and_then(|e| match &e.value {
            FmValue::Scalar(s) => Some(s.as_str()),
            FmValue::List(_) => None,
        })
    }

    /// `description`, if any.
    pub fn description(&self) -> Option<&str> {
        self.scalar("description")
    }

    /// `kind`, if present and known.
    pub fn kind(&self) -> Option<TopicKind> {
        self.scalar("kind").and_then(TopicKind::parse)
    }

    /// `aliases` (a list, or a single scalar), as written: an item may hold
    /// `\u{hex}` escapes ([`unescape_item`] decodes them).
    pub fn aliases(&self) -> Vec<&str> {
        match self.entries.iter().find(|e| e.key == "aliases").map(|e| &e.value) {
            Some(FmValue::List(v)) => v.iter().map(String::as_str).collect(),
            Some(FmValue::Scalar(s)) if !s.is_empty() => vec![s.as_str()],
            _ => Vec::new(),
        }
    }

    /// The aliases search reads, decoded ([`searchable`]).
    pub fn searchable_aliases(&self) -> Vec<std::borrow::Cow<'_, str>> {
        searchable(&self.aliases())
    }

    /// `max_entries`: the most paragraphs this people card holds, when it
    /// sets its own (a whole number of at least 1, [`limit_value`]).
    pub fn max_entries(&self) -> Option<usize> {
        self.scalar("max_entries").and_then(limit_value)
    }

    /// `max_entry_chars`: the most characters of one paragraph of this
    /// people card, when it sets its own ([`limit_value`]).
    pub fn max_entry_chars(&self) -> Option<usize> {
        self.scalar("max_entry_chars").and_then(limit_value)
    }
}

/// A link in a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Link {
    /// `[text](target)`, target relative to the topic file's folder.
    Markdown {
        /// The link text.
        text: String,
        /// The target as written (without a title).
        target: String,
    },
    /// `[[target]]` or `[[target|alias]]`, target relative to `topics/`.
    Wiki {
        /// The target as written.
        target: String,
        /// The alias after `|`, if any.
        alias: Option<String>,
    },
}

/// A footnote reference `[^label]` in a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FootnoteRef {
    /// The label.
    pub label: String,
    /// 0-based line index.
    pub line: usize,
}

/// A block: a paragraph ending in ` ^block-id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// 0-based index of the first line.
    pub first_line: usize,
    /// 0-based index of the last line (inclusive).
    pub last_line: usize,
    /// The block id, when the last line ends in ` ^id`.
    pub id: Option<String>,
    /// Footnote references, in order.
    pub refs: Vec<FootnoteRef>,
    /// Links (outside code), in order, with their 0-based line.
    pub links: Vec<(usize, Link)>,
}

/// One source link of an evidence definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLink {
    /// The link text: the source id's text form.
    pub id: String,
    /// The target path (relative to the topic file's folder), without `#…`.
    pub path: String,
    /// The fragment after `#`, e.g. `source-8339b8d3`.
    pub anchor: String,
}

/// The body of an evidence definition: `Time: `T`; Sources: […](…), …`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    /// The time as written.
    pub time: String,
    /// The time as an instant.
    pub instant: Instant,
    /// One or more sources.
    pub sources: Vec<SourceLink>,
}

/// A footnote definition line `[^label]: body`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    /// 0-based line index.
    pub line: usize,
    /// The label.
    pub label: String,
    /// For an evidence label (`e-` + 10 hex digits): the parsed body, or
    /// why it is malformed. `None` for an ordinary footnote.
    pub evidence: Option<Result<Evidence, String>>,
}

/// A problem found while parsing one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseProblem {
    /// The stable code.
    pub code: Code,
    /// 0-based line index.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// A block's text from its bytes as [`TopicFile::block_source`] gives them:
/// its lines' contents (each without the CR before its LF) joined by LF.
pub fn block_text_of(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut lines = source.split('\n').peekable();
    while let Some(line) = lines.next() {
        if lines.peek().is_some() {
            out.push_str(line.strip_suffix('\r').unwrap_or(line));
            out.push('\n');
        } else {
            out.push_str(line);
        }
    }
    out
}

/// A parsed topic file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicFile {
    text: String,
    lines: Vec<Line>,
    fenced: Vec<bool>,
    /// Label → index in `definitions` of its first definition.
    def_index: std::collections::HashMap<String, usize>,
    /// Front matter, when the file starts with `---`.
    pub front_matter: Option<FrontMatter>,
    /// 0-based indexes of heading lines.
    pub headings: Vec<usize>,
    /// The blocks in file order.
    pub blocks: Vec<Block>,
    /// The footnote definitions in file order.
    pub definitions: Vec<Definition>,
}

impl TopicFile {
    /// Prints the file back: front matter, then every line in order, with
    /// its own line ending. `print(parse(text)) == text`.
    pub fn print(&self) -> String {
        let mut out = String::with_capacity(self.text.len());
        for l in &self.lines {
            out.push_str(&self.text[l.start..l.next]);
        }
        out
    }

    /// The lines of the file.
    pub fn lines(&self) -> &[Line] {
        &self.lines
    }

    /// The content of line `k` (0-based), without its line ending.
    pub fn line(&self, k: usize) -> &str {
        &self.text[self.lines[k].start..self.lines[k].end]
    }

    /// True when line `k` (0-based) lies inside a code fence (or opens one).
    pub fn is_fenced(&self, k: usize) -> bool {
        self.fenced[k]
    }

    /// The text of a block: its lines' contents joined by LF.
    pub fn block_text(&self, block: &Block) -> String {
        (block.first_line..=block.last_line).map(|k| self.line(k)).collect::<Vec<_>>().join("\n")
    }

    /// Where a block stands in the file: the byte offset of its first line
    /// and its bytes up to the end of its last line's content (without
    /// that line's ending). [`block_text_of`] gives its
    /// [`block_text`](TopicFile::block_text) back from those bytes alone.
    pub fn block_source(&self, block: &Block) -> (usize, &str) {
        let start = self.lines[block.first_line].start;
        (start, &self.text[start..self.lines[block.last_line].end.max(start)])
    }

    /// The definition of `label`, if any (the first, when defined twice).
    pub fn definition(&self, label: &str) -> Option<&Definition> {
        self.def_index.get(label).map(|&k| &self.definitions[k])
    }
}

#[cfg(test)]
mod tests;
