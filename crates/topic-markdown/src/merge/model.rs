//! One version of a topic file as the merge sees it (front matter items,
//! and the body as lines in which each block is one token), and the
//! printing of a merged one.

use std::collections::HashMap;

use crate::parse::{is_blank, is_heading, FrontMatter, TopicFile};

/// The front matter: its opening line and its items.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Fm {
    /// The opening `---` line (with a byte-order mark, if any).
    pub(super) open: String,
    /// `(key, line)` in order. A `key: value` line's key is its key; any
    /// other line's is ` ` and the line; a repeated key gets `\0` and its
    /// occurrence number.
    pub(super) items: Vec<(String, String)>,
}

/// The token standing for block `id` in a body: no line holds an LF, so
/// no line is mistaken for it.
pub(super) fn block_token(id: &str) -> String {
    format!("\n{id}")
}

/// The block id a token stands for, if it stands for one.
pub(super) fn token_block(token: &str) -> Option<&str> {
    token.strip_prefix('\n')
}

/// One version of a file. Lines are contents, without endings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Version {
    /// The front matter, if the file has one.
    pub(super) fm: Option<Fm>,
    /// The body: its lines, with each block with an id (the first of an
    /// id) as one [`block_token`].
    pub(super) tokens: Vec<String>,
    /// The block ids in file order.
    pub(super) order: Vec<String>,
    /// Each block's lines, by id.
    pub(super) blocks: HashMap<String, Vec<String>>,
}

impl Version {
    /// Splits a parsed file into front matter and body tokens.
    pub(super) fn read(file: &TopicFile) -> Version {
        let n = file.lines().len();
        let (fm, body_start) = match &file.front_matter {
            None => (None, 0),
            Some(f) => (Some(front_matter(file, f)), f.close_line.map_or(n, |c| c + 1)),
        };
        let starts: HashMap<usize, usize> =
            file.blocks.iter().enumerate().map(|(i, b)| (b.first_line, i)).collect();
        let mut v = Version { fm, tokens: Vec::new(), order: Vec::new(), blocks: HashMap::new() };
        let mut k = body_start;
        while k < n {
            let block = starts.get(&k).map(|&i| &file.blocks[i]);
            match block.and_then(|b| b.id.as_ref().map(|id| (b, id))) {
                Some((b, id)) if !v.blocks.contains_key(id) => {
                    let lines = (b.first_line..=b.last_line).map(|j| file.line(j).to_owned()).collect();
                    v.blocks.insert(id.clone(), lines);
                    v.tokens.push(block_token(id));
                    v.order.push(id.clone());
                    k = b.last_line + 1;
                }
                _ => {
                    v.tokens.push(file.line(k).to_owned());
                    k += 1;
                }
            }
        }
        v
    }
}

/// The front matter's opening line and items.
fn front_matter(file: &TopicFile, f: &FrontMatter) -> Fm {
    let end = f.close_line.unwrap_or(file.lines().len());
    let keys: HashMap<usize, &str> = f.entries.iter().map(|e| (e.line, e.key.as_str())).collect();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut items = Vec::new();
    for k in 1..end {
        let line = file.line(k);
        let key = keys.get(&k).map_or_else(|| format!(" {line}"), |k| (*k).to_owned());
        let count = seen.entry(key.clone()).or_insert(0);
        let key = if *count == 0 { key } else { format!("{key}\0{count}") };
        *count += 1;
        items.push((key, line.to_owned()));
    }
    Fm { open: file.line(0).to_owned(), items }
}

/// How the merged file ends its lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Style {
    eol: &'static str,
    final_eol: bool,
}

impl Style {
    /// Ours' line endings (theirs' when ours has none to tell).
    pub(super) fn of(ours: &str, theirs: &str) -> Style {
        let eol_of = |t: &str| t.find('\n').map(|i| if t[..i].ends_with('\r') { "\r\n" } else { "\n" });
        let eol = eol_of(ours).or_else(|| eol_of(theirs)).unwrap_or("\n");
        let final_eol =
            if !ours.is_empty() { ours.ends_with('\n') } else { theirs.is_empty() || theirs.ends_with('\n') };
        Style { eol, final_eol }
    }
}

/// A merged body: gaps and blocks, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Segment {
    /// Lines between blocks.
    Gap(Vec<String>),
    /// One block's lines.
    Block(Vec<String>),
}

/// Prints front matter (`open` and items) and body, with a blank line put
/// wherever a block would touch a line other than a blank or a heading.
pub(super) fn render(fm: Option<&Fm>, body: &[Segment], style: Style) -> String {
    let mut lines: Vec<&str> = Vec::new();
    if let Some(fm) = fm {
        lines.push(&fm.open);
        lines.extend(fm.items.iter().map(|(_, l)| l.as_str()));
        lines.push("---");
    }
    // Whether the last body line written may touch a block, and whether it
    // was a block's.
    let (mut loose, mut in_block) = (false, false);
    for seg in body {
        match seg {
            Segment::Block(block) => {
                if loose {
                    lines.push("");
                }
                lines.extend(block.iter().map(String::as_str));
                (loose, in_block) = (true, true);
            }
            Segment::Gap(gap) => {
                for l in gap {
                    let separator = is_blank(l) || is_heading(l);
                    if in_block && !separator {
                        lines.push("");
                    }
                    lines.push(l);
                    (loose, in_block) = (!separator, false);
                }
            }
        }
    }
    let mut out = lines.join(style.eol);
    if style.final_eol && !lines.is_empty() {
        out.push_str(style.eol);
    }
    out
}
