//! Reading a whole file: its lines, front matter, blocks, headings and
//! definitions, and every problem the grammar alone can see.

use std::collections::{HashMap, HashSet};

use super::grammar::{
    block_id, definition_line, fence, fm_entry, is_blank, is_evidence_label, is_heading, parse_evidence,
};
use super::inline::scan_inline;
use super::{Block, Definition, FmEntry, FmValue, FrontMatter, Line, ParseProblem, TopicFile, TopicKind};
use crate::diag::Code;

fn split_lines(text: &str) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut start = 0;
    for lf in memchr::memchr_iter(b'\n', text.as_bytes()) {
        let end = if lf > start && text.as_bytes()[lf - 1] == b'\r' { lf - 1 } else { lf };
        lines.push(Line { start, end, next: lf + 1 });
        start = lf + 1;
    }
    if start < text.len() {
        let end = if text.ends_with('\r') { text.len() - 1 } else { text.len() };
        lines.push(Line { start, end, next: text.len() });
    }
    lines
}

/// The text being parsed and its lines.
#[derive(Clone, Copy)]
struct Source<'t> {
    text: &'t str,
    lines: &'t [Line],
}

impl<'t> Source<'t> {
    /// The content of line `k`, without its line ending.
    fn content(self, k: usize) -> &'t str {
        &self.text[self.lines[k].start..self.lines[k].end]
    }
}

/// The body of a file as one pass over its lines finds it.
struct Body {
    blocks: Vec<Block>,
    headings: Vec<usize>,
    definitions: Vec<Definition>,
    /// Per line: inside a code fence (or opening one).
    fenced: Vec<bool>,
    /// The first and last line of the block being read.
    current: Option<(usize, usize)>,
    /// The character and length of the code fence being read.
    open_fence: Option<(u8, usize)>,
}

impl TopicFile {
    /// Parses leniently: never fails; returns the tree and every problem
    /// the grammar alone can see (front matter, malformed definitions,
    /// missing block ids, labels defined twice).
    pub fn parse_lenient(text: &str) -> (TopicFile, Vec<ParseProblem>) {
        let text = text.to_owned();
        let lines = split_lines(&text);
        let src = Source { text: &text, lines: &lines };
        let mut problems = Vec::new();
        let (front_matter, first_body_line) = front_matter(src, &mut problems);
        let mut body = Body::read(src, first_body_line);
        read_blocks(src, &body.fenced, &mut body.blocks, &mut problems);
        check_definitions(&body.definitions, &mut problems);
        problems.sort_by_key(|p| p.line);
        let Body { blocks, headings, definitions, fenced, .. } = body;
        let mut def_index = HashMap::with_capacity(definitions.len());
        for (k, d) in definitions.iter().enumerate() {
            def_index.entry(d.label.clone()).or_insert(k);
        }
        let file = TopicFile { text, lines, fenced, def_index, front_matter, headings, blocks, definitions };
        (file, problems)
    }

    /// Parses strictly: the tree, or every problem the grammar sees.
    pub fn parse(text: &str) -> Result<TopicFile, Vec<ParseProblem>> {
        let (file, problems) = TopicFile::parse_lenient(text);
        if problems.is_empty() {
            Ok(file)
        } else {
            Err(problems)
        }
    }
}

/// The front matter, when the file opens with a `---` line (a byte-order
/// mark some editors write does not hide it), and the first line of the
/// body.
fn front_matter(src: Source<'_>, problems: &mut Vec<ParseProblem>) -> (Option<FrontMatter>, usize) {
    let lines = src.lines;
    if lines.is_empty() || src.content(0).strip_prefix('\u{FEFF}').unwrap_or(src.content(0)) != "---" {
        return (None, 0);
    }
    let close = (1..lines.len()).find(|&k| src.content(k) == "---");
    let mut entries = Vec::new();
    let end = close.unwrap_or(lines.len());
    if close.is_none() {
        problems.push(ParseProblem {
            code: Code::BadFrontMatter,
            line: 0,
            message: "front matter is not closed by a `---` line".into(),
        });
    }
    for k in 1..end {
        let l = src.content(k);
        if !is_blank(l) {
            front_matter_entry(k, l, &mut entries, problems);
        }
    }
    let first_body_line = close.map_or(lines.len(), |c| c + 1);
    (Some(FrontMatter { close_line: close, entries }), first_body_line)
}

/// Reads front matter line `k` (`l`, not blank) into `entries`, or says
/// what is wrong with it.
fn front_matter_entry(k: usize, l: &str, entries: &mut Vec<FmEntry>, problems: &mut Vec<ParseProblem>) {
    match fm_entry(l) {
        Ok((_, (key, FmValue::Scalar(v)))) if v.starts_with('[') => problems.push(ParseProblem {
            code: Code::BadFrontMatter,
            line: k,
            message: format!("front matter list for {key:?} is not closed by `]`"),
        }),
        Ok((_, (key, value))) => {
            if key == "kind" {
                let ok = matches!(&value, FmValue::Scalar(s) if TopicKind::parse(s).is_some());
                if !ok {
                    problems.push(ParseProblem {
                        code: Code::BadFrontMatter,
                        line: k,
                        message: format!(
                            "kind {l:?} is not one of person, project, theme, core, persona, identity"
                        ),
                    });
                }
            }
            if let Some(message) = limit_problem(key, &value) {
                problems.push(ParseProblem { code: Code::BadFrontMatter, line: k, message });
            }
            entries.push(FmEntry { line: k, key: key.to_owned(), value });
        }
        Err(_) => problems.push(ParseProblem {
            code: Code::BadFrontMatter,
            line: k,
            message: format!("front matter line {l:?} is not `key: value` or `key: [a, b]`"),
        }),
    }
}

/// What is wrong with a people card's limit (`max_entries`,
/// `max_entry_chars`) that is not a whole number from 1 to
/// [`super::MAX_LIMIT`]; `None` for a sound one and for every other key.
fn limit_problem(key: &str, value: &FmValue) -> Option<String> {
    if !super::LIMIT_KEYS.contains(&key) {
        return None;
    }
    match value {
        FmValue::Scalar(s) if super::limit_value(s).is_some() => None,
        FmValue::Scalar(s) => {
            Some(format!("{key} {s:?} is not a whole number from 1 to {}", super::MAX_LIMIT))
        }
        FmValue::List(_) => {
            Some(format!("{key} is a list, not a whole number from 1 to {}", super::MAX_LIMIT))
        }
    }
}

impl Body {
    /// Blocks, headings, definitions and code fences of the lines from
    /// `first_body_line` on.
    fn read(src: Source<'_>, first_body_line: usize) -> Body {
        let mut body = Body {
            blocks: Vec::new(),
            headings: Vec::new(),
            definitions: Vec::new(),
            fenced: vec![false; src.lines.len()],
            current: None,
            open_fence: None,
        };
        for k in first_body_line..src.lines.len() {
            body.line(k, src.content(k));
        }
        body.finish_block();
        body
    }

    /// Reads line `k`, whose content is `l`.
    fn line(&mut self, k: usize, l: &str) {
        if let Some((c, n)) = self.open_fence {
            self.fenced[k] = true;
            if let Some((c2, n2, after)) = fence(l) {
                if c2 == c && n2 >= n && is_blank(after) {
                    self.open_fence = None;
                }
            }
            self.extend_block(k);
            return;
        }
        if is_blank(l) {
            self.finish_block();
        } else if is_heading(l) {
            self.finish_block();
            self.headings.push(k);
        } else if let Ok((_, (label, body))) = definition_line(l) {
            self.finish_block();
            let evidence = is_evidence_label(label).then(|| parse_evidence(body));
            self.definitions.push(Definition { line: k, label: label.to_owned(), evidence });
        } else {
            if let Some((c, n, after)) = fence(l) {
                // A backtick fence's info string holds no backtick.
                if c == b'~' || !after.contains('`') {
                    self.fenced[k] = true;
                    self.open_fence = Some((c, n));
                }
            }
            self.extend_block(k);
        }
    }

    /// Line `k` belongs to the current block (which it starts if there is
    /// none).
    fn extend_block(&mut self, k: usize) {
        self.current = self.current.map(|(a, _)| (a, k)).or(Some((k, k)));
    }

    /// Ends the current block, if any.
    fn finish_block(&mut self) {
        if let Some((a, b)) = self.current.take() {
            self.blocks.push(Block {
                first_line: a,
                last_line: b,
                id: None,
                refs: Vec::new(),
                links: Vec::new(),
            });
        }
    }
}

/// Fills in every block's footnote references, links (outside code
/// fences) and block id; a block without an id is a problem.
fn read_blocks(src: Source<'_>, fenced: &[bool], blocks: &mut [Block], problems: &mut Vec<ParseProblem>) {
    for block in blocks {
        for (k, &f) in fenced.iter().enumerate().take(block.last_line + 1).skip(block.first_line) {
            if !f {
                scan_inline(src.content(k), k, &mut block.refs, &mut block.links);
            }
        }
        let last = src.content(block.last_line);
        block.id = if fenced[block.last_line] { None } else { block_id(last).map(str::to_owned) };
        if block.id.is_none() {
            problems.push(ParseProblem {
                code: Code::MissingBlockId,
                line: block.first_line,
                message: "the block's last line does not end in ` ^block-id` ([A-Za-z0-9-]{1,64})".into(),
            });
        }
    }
}

/// A label defined twice, and a malformed evidence definition, are
/// problems.
fn check_definitions(definitions: &[Definition], problems: &mut Vec<ParseProblem>) {
    let mut seen = HashSet::new();
    for d in definitions {
        if !seen.insert(d.label.as_str()) {
            problems.push(ParseProblem {
                code: Code::BadFootnote,
                line: d.line,
                message: format!("footnote [^{}] is defined more than once", d.label),
            });
        }
        if let Some(Err(why)) = &d.evidence {
            problems.push(ParseProblem {
                code: Code::BadFootnote,
                line: d.line,
                message: format!("evidence [^{}]: {why}", d.label),
            });
        }
    }
}
