//! A hand-written root `core.md` that is not a valid topic file, converted
//! into valid blocks of `topics/core.md`, each citing the record that
//! preserves the file verbatim (FORMAT.md §4.4).
//!
//! The text is cut into pieces, in order: a heading line stays a heading; a
//! paragraph (a run of non-blank lines) is a block, and so is each top-level
//! list item (a line starting with `-`, `*`, `+` or `1.`/`1)` after at most
//! one space) with the lines that follow it; a code fence is a block of its
//! own (an unclosed one is closed at the end of the file); a footnote
//! definition line stays a definition. Each block ends with the evidence
//! citation and a new id. Pieces are kept exactly as written, except:
//!
//! * the line ends (a CR before an LF is dropped, as topic files read it)
//!   and the spaces or tabs at the end of a block's last line;
//! * a piece the check finds a problem in is rewritten, one step at a time:
//!   first its root-relative links (the rendered `core.md`'s form,
//!   `topics/…` and `sources/…`) become relative to `topics/` again; then
//!   its Markdown syntax is made inert (`[^` → `[\^`, `[[` → `[\[`,
//!   `](` → `]\(`), so hostile footnotes, links and definitions are text;
//!   a definition made inert becomes a block.
//!
//! Whatever cannot be made valid this way makes the conversion fail
//! (`None`): the caller then keeps only the preserved record.

use std::collections::HashSet;

use crate::ids::new_block_id;
use crate::parse::{definition_line, fence, is_blank, is_heading};
use crate::validate::{check, Loaded, SourceResolver};

/// The path the conversion is checked as.
pub const CORE_PATH: &str = "topics/core.md";

/// How many times the pieces with problems are rewritten before giving up.
const ROUNDS: usize = 4;

/// The citation every block carries.
#[derive(Debug, Clone, Copy)]
pub struct Citation<'a> {
    /// The footnote label (`e-` and ten hex digits).
    pub label: &'a str,
    /// Its definition line as written in `topics/core.md` (no LF).
    pub definition: &'a str,
}

/// A successful conversion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Converted {
    /// The bytes of `topics/core.md`.
    pub text: String,
    /// Blocks written.
    pub blocks: usize,
    /// Pieces that had to be rewritten (relinked or made inert).
    pub rewritten: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Heading,
    Text,
    Code,
    Definition,
}

#[derive(Debug, Clone)]
struct Piece {
    kind: Kind,
    lines: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    AsIs,
    Relinked,
    Inert,
}

/// A code fence opener as the topic parser reads one: its character and
/// length.
fn opener(line: &str) -> Option<(u8, usize)> {
    let (c, n, after) = fence(line)?;
    (c == b'~' || !after.contains('`')).then_some((c, n))
}

fn closes(line: &str, (c, n): (u8, usize)) -> bool {
    fence(line).is_some_and(|(c2, n2, after)| c2 == c && n2 >= n && is_blank(after))
}

fn list_item(line: &str) -> bool {
    let t = line.strip_prefix(' ').unwrap_or(line);
    let b = t.as_bytes();
    if matches!(b, [b'-' | b'*' | b'+', b' ' | b'\t', ..]) {
        return true;
    }
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    (1..=9).contains(&digits)
        && matches!(b.get(digits), Some(b'.' | b')'))
        && matches!(b.get(digits + 1), Some(b' ' | b'\t'))
}

/// Cuts `text` into pieces (see the module documentation).
fn pieces(text: &str) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    let mut open: Option<Piece> = None;
    let mut in_fence: Option<(u8, usize)> = None;
    let flush = |open: &mut Option<Piece>, out: &mut Vec<Piece>| out.extend(open.take());
    for line in text.lines().map(str::to_owned) {
        if let Some(f) = in_fence {
            let done = closes(&line, f);
            open.get_or_insert(Piece { kind: Kind::Code, lines: Vec::new() }).lines.push(line);
            if done {
                in_fence = None;
                flush(&mut open, &mut out);
            }
            continue;
        }
        if is_blank(&line) {
            flush(&mut open, &mut out);
        } else if is_heading(&line) {
            flush(&mut open, &mut out);
            out.push(Piece { kind: Kind::Heading, lines: vec![line] });
        } else if definition_line(&line).is_ok() {
            flush(&mut open, &mut out);
            out.push(Piece { kind: Kind::Definition, lines: vec![line] });
        } else if let Some(f) = opener(&line) {
            flush(&mut open, &mut out);
            in_fence = Some(f);
            open = Some(Piece { kind: Kind::Code, lines: vec![line] });
        } else if list_item(&line) || open.is_none() {
            flush(&mut open, &mut out);
            open = Some(Piece { kind: Kind::Text, lines: vec![line] });
        } else if let Some(p) = open.as_mut() {
            p.lines.push(line);
        }
    }
    if let (Some((c, n)), Some(p)) = (in_fence, open.as_mut()) {
        p.lines.push(String::from_utf8(vec![c; n]).expect("ASCII"));
    }
    flush(&mut open, &mut out);
    out
}

/// Root-relative link targets made relative to `topics/` again.
fn relinked(line: &str) -> String {
    line.replace("](topics/", "](").replace("](sources/", "](../sources/")
}

/// Footnotes, wiki links and links made inert text.
fn inert(line: &str) -> String {
    line.replace("[^", "[\\^").replace("[[", "[\\[").replace("](", "]\\(")
}

fn shaped(p: &Piece, form: Form) -> Vec<String> {
    if p.kind == Kind::Code {
        return p.lines.clone();
    }
    match form {
        Form::AsIs => p.lines.clone(),
        Form::Relinked => p.lines.iter().map(|l| relinked(l)).collect(),
        Form::Inert => p.lines.iter().map(|l| inert(&relinked(l))).collect(),
    }
}

/// Whether the piece is written as a block (with the citation and an id).
fn is_block(p: &Piece, form: Form) -> bool {
    match p.kind {
        Kind::Heading => false,
        Kind::Definition => form == Form::Inert,
        Kind::Text | Kind::Code => true,
    }
}

/// The file, and each piece's 1-based line range in it.
fn assemble(
    pieces: &[Piece],
    forms: &[Form],
    ids: &[String],
    cite: Citation<'_>,
) -> (String, Vec<(usize, usize)>) {
    let mut out = String::new();
    let mut line = 1;
    let mut ranges = Vec::with_capacity(pieces.len());
    if pieces.first().is_none_or(|p| p.kind != Kind::Heading) {
        out.push_str("# Core\n\n");
        line += 2;
    }
    for (k, p) in pieces.iter().enumerate() {
        let mut lines = shaped(p, forms[k]);
        if is_block(p, forms[k]) {
            let tail = format!("[^{}] ^{}", cite.label, ids[k]);
            match p.kind {
                Kind::Code => lines.push(tail),
                _ => {
                    let last = lines.last_mut().expect("a piece has a line");
                    last.truncate(last.trim_end_matches([' ', '\t']).len());
                    last.push(' ');
                    last.push_str(&tail);
                }
            }
        }
        ranges.push((line, line + lines.len() - 1));
        line += lines.len() + 1;
        for l in lines {
            out.push_str(&l);
            out.push('\n');
        }
        out.push('\n');
    }
    out.push_str(cite.definition);
    out.push('\n');
    (out, ranges)
}

/// Converts the hand-written `text` into `topics/core.md` (see the module
/// documentation), checked with the other topic files `others` against
/// `resolver`, which must resolve the cited record. `None` when some piece
/// cannot be made valid.
pub fn convert_core(
    text: &str,
    cite: Citation<'_>,
    others: &[Loaded],
    resolver: &dyn SourceResolver,
) -> Option<Converted> {
    let pieces = pieces(text);
    let mut taken: HashSet<String> =
        others.iter().flat_map(|l| l.file.blocks.iter().filter_map(|b| b.id.clone())).collect();
    let ids: Vec<String> = pieces
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let seed = format!("{CORE_PATH}\n{k}\n{}", p.lines.join("\n"));
            let id = new_block_id(seed.as_bytes(), &|i| taken.contains(i));
            taken.insert(id.clone());
            id
        })
        .collect();
    let mut forms = vec![Form::AsIs; pieces.len()];
    let mut all: Vec<Loaded> = others.to_vec();
    all.push(Loaded::parse(CORE_PATH, ""));
    for _ in 0..ROUNDS {
        let (out, ranges) = assemble(&pieces, &forms, &ids, cite);
        *all.last_mut().expect("pushed") = Loaded::parse(CORE_PATH, &out);
        let checked = check(&all, resolver);
        let lines: Vec<usize> =
            checked.diagnostics.iter().filter(|d| d.path == CORE_PATH).map(|d| d.line).collect();
        if lines.is_empty() {
            let blocks = pieces.iter().zip(&forms).filter(|(p, f)| is_block(p, **f)).count();
            let rewritten = forms.iter().filter(|f| **f != Form::AsIs).count();
            return Some(Converted { text: out, blocks, rewritten });
        }
        let mut bumped = HashSet::new();
        for line in lines {
            let k = ranges.iter().position(|&(a, b)| a <= line && line <= b)?;
            if !bumped.insert(k) {
                continue;
            }
            let relinks = pieces[k].lines.iter().any(|l| relinked(l) != *l);
            forms[k] = match forms[k] {
                Form::AsIs if relinks => Form::Relinked,
                Form::AsIs | Form::Relinked if pieces[k].kind != Kind::Code => Form::Inert,
                _ => return None,
            };
        }
    }
    None
}

#[cfg(test)]
mod tests;
