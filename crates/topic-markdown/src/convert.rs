//! A hand-written root `core.md` that is not a valid topic file, converted
//! into valid blocks of `topics/core.md`, each citing the record that
//! preserves the file verbatim (FORMAT.md §4.4). When `topics/core.md`
//! already exists, the blocks are appended to it.
//!
//! A byte-order mark at the start is dropped. The text is cut into pieces,
//! in order: front matter at the very start (a `---` line, `key: value`
//! lines, a `---` line) stays front matter; a paragraph (a run of non-blank
//! lines) is a block, and so is each top-level list item (a line starting
//! with `-`, `*`, `+` or `1.`/`1)` after at most one space) with the lines
//! that follow it; a heading becomes a block of its text in bold (the core
//! view shows blocks only); a code fence is a block of its own (an unclosed
//! one is closed at the end of the file); a footnote definition stays a
//! definition while a block cites it, and becomes a block otherwise. Each
//! block ends with the evidence citation and a new id. Pieces are kept
//! exactly as written, except:
//!
//! * the line ends (a CR before an LF is dropped, as topic files read it,
//!   and a lone CR is a line end of its own) and the spaces or tabs at the
//!   end of a block's last line;
//! * a piece the check finds a problem in is rewritten, one step at a time:
//!   first its root-relative links (the rendered `core.md`'s form,
//!   `topics/…` and `sources/…`) become relative to `topics/` again; then
//!   its Markdown syntax is made inert (`[^` → `[\^`, `[[` → `[\[`,
//!   `](` → `]\(`), so hostile footnotes, links and definitions are text;
//!   a definition made inert becomes a block, and front matter that is not
//!   valid (or follows existing text) becomes a fenced code block.
//!
//! Whatever cannot be made valid this way makes the conversion fail
//! (`None`): the caller then keeps only the preserved record.

use std::collections::HashSet;

use crate::diag::Code;
use crate::ids::new_block_id;
use crate::parse::{definition_line, fence, is_blank, is_heading, TopicFile};
use crate::validate::{check, Loaded, SourceResolver};

/// The path the conversion is checked as.
pub const CORE_PATH: &str = "topics/core.md";

/// How many times the pieces with problems are rewritten before giving up.
const ROUNDS: usize = 6;

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
    /// The bytes of `topics/core.md` (the existing file's, then the
    /// appended blocks, when there was one).
    pub text: String,
    /// Blocks written.
    pub blocks: usize,
    /// Pieces that had to be rewritten (relinked or made inert).
    pub rewritten: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PieceKind {
    FrontMatter,
    Heading,
    Text,
    Code,
    Definition,
}

#[derive(Debug, Clone)]
struct Piece {
    kind: PieceKind,
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

/// The front matter `text` starts with, as lines: a `---` line, then up
/// to the next `---` line. `Ok` when it parses as front matter, `Err` when
/// it does not (it is then shown as code); `None` when there is none.
fn front_matter(text: &str) -> Option<Result<Vec<String>, Vec<String>>> {
    let mut lines = text.lines();
    if lines.next() != Some("---") {
        return None;
    }
    let close = lines.position(|l| l == "---")? + 1;
    let block: Vec<String> = text.lines().take(close + 1).map(str::to_owned).collect();
    let (file, problems) = TopicFile::parse_lenient(&(block.join("\n") + "\n"));
    let valid = file.front_matter.is_some() && problems.iter().all(|p| p.code != Code::BadFrontMatter);
    Some(if valid { Ok(block) } else { Err(block) })
}

/// A fence around `lines` that none of them closes.
fn fenced(lines: &[String]) -> Vec<String> {
    let longest = lines.iter().map(|l| l.trim_start().bytes().take_while(|&b| b == b'`').count()).max();
    let fence = "`".repeat(longest.unwrap_or(0).max(2) + 1);
    let mut out = vec![format!("{fence}text")];
    out.extend(lines.iter().cloned());
    out.push(fence);
    out
}

/// A heading's text in bold: the `#` marks, and a closing run of them,
/// dropped; `None` when it has no text.
fn heading_text(line: &str) -> Option<String> {
    let t = line.trim_start_matches('#').trim();
    let t = match t.trim_end_matches('#') {
        rest if rest.is_empty() || rest.ends_with([' ', '\t']) => rest.trim_end(),
        _ => t,
    };
    (!t.is_empty()).then(|| format!("**{t}**"))
}

/// Cuts `text` into pieces (see the module documentation).
fn pieces(text: &str) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    let mut open: Option<Piece> = None;
    let mut in_fence: Option<(u8, usize)> = None;
    let flush = |open: &mut Option<Piece>, out: &mut Vec<Piece>| out.extend(open.take());
    let mut skip = 0;
    match front_matter(text) {
        Some(Ok(lines)) => {
            skip = lines.len();
            out.push(Piece { kind: PieceKind::FrontMatter, lines });
        }
        Some(Err(lines)) => {
            skip = lines.len();
            out.push(Piece { kind: PieceKind::Code, lines: fenced(&lines) });
        }
        None => {}
    }
    for line in text.lines().skip(skip).map(str::to_owned) {
        if let Some(f) = in_fence {
            let done = closes(&line, f);
            open.get_or_insert(Piece { kind: PieceKind::Code, lines: Vec::new() }).lines.push(line);
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
            out.extend(heading_text(&line).map(|t| Piece { kind: PieceKind::Heading, lines: vec![t] }));
        } else if definition_line(&line).is_ok() {
            flush(&mut open, &mut out);
            out.push(Piece { kind: PieceKind::Definition, lines: vec![line] });
        } else if let Some(f) = opener(&line) {
            flush(&mut open, &mut out);
            in_fence = Some(f);
            open = Some(Piece { kind: PieceKind::Code, lines: vec![line] });
        } else if list_item(&line) || open.is_none() {
            flush(&mut open, &mut out);
            open = Some(Piece { kind: PieceKind::Text, lines: vec![line] });
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
    match p.kind {
        PieceKind::Code => return p.lines.clone(),
        PieceKind::FrontMatter if form == Form::Inert => return fenced(&p.lines),
        _ => {}
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
        PieceKind::Definition | PieceKind::FrontMatter => form == Form::Inert,
        PieceKind::Heading | PieceKind::Text | PieceKind::Code => true,
    }
}

/// The file, and each piece's 1-based line range in it: `base` (the
/// existing `topics/core.md`) when there is one, else `# Core` after the
/// front matter kept; then the pieces and the evidence definition.
fn assemble(
    base: Option<&str>,
    pieces: &[Piece],
    forms: &[Form],
    ids: &[String],
    cite: Citation<'_>,
) -> (String, Vec<(usize, usize)>) {
    let mut out = String::new();
    let mut line = 1;
    let mut ranges = Vec::with_capacity(pieces.len());
    let mut header = base.is_none();
    if let Some(b) = base.map(|b| b.trim_end_matches(['\n', '\r'])).filter(|b| !b.is_empty()) {
        out.push_str(b);
        out.push_str("\n\n");
        line += b.split('\n').count() + 1;
    }
    for (k, p) in pieces.iter().enumerate() {
        if header && !(p.kind == PieceKind::FrontMatter && forms[k] != Form::Inert) {
            out.push_str("# Core\n\n");
            line += 2;
            header = false;
        }
        let mut lines = shaped(p, forms[k]);
        if is_block(p, forms[k]) {
            let tail = format!("[^{}] ^{}", cite.label, ids[k]);
            match p.kind {
                PieceKind::Code | PieceKind::FrontMatter => lines.push(tail),
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
    if header {
        out.push_str("# Core\n\n");
    }
    // The same record preserved before is defined once.
    let defined = format!("[^{}]:", cite.label);
    if !base.is_some_and(|b| b.lines().any(|l| l.starts_with(&defined))) {
        out.push_str(cite.definition);
        out.push('\n');
    }
    (out, ranges)
}

/// The definitions kept as definitions that no block of `file` cites.
fn uncited(file: &TopicFile, pieces: &[Piece], forms: &[Form]) -> Vec<usize> {
    let cited: HashSet<&str> =
        file.blocks.iter().flat_map(|b| b.refs.iter().map(|r| r.label.as_str())).collect();
    (0..pieces.len())
        .filter(|&k| pieces[k].kind == PieceKind::Definition && forms[k] != Form::Inert)
        .filter(|&k| definition_line(&pieces[k].lines[0]).is_ok_and(|(_, (label, _))| !cited.contains(label)))
        .collect()
}

/// Converts the hand-written `text` into `topics/core.md` (see the module
/// documentation), checked with the other topic files `others` against
/// `resolver`, which must resolve the cited record. When `others` holds
/// `topics/core.md`, the blocks are appended to it (its own problems, if
/// any, are not this conversion's). `None` when some piece cannot be made
/// valid.
pub fn convert_core(
    text: &str,
    cite: Citation<'_>,
    others: &[Loaded],
    resolver: &dyn SourceResolver,
) -> Option<Converted> {
    // A lone CR is a line end too (a CR before an LF is part of one).
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let pieces = pieces(text.strip_prefix('\u{feff}').unwrap_or(&text));
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
    let base_text = others.iter().find(|l| l.path == CORE_PATH).map(|l| l.file.print());
    let base = base_text.as_deref();
    // Front matter can only open a file.
    let mut forms: Vec<Form> = pieces
        .iter()
        .map(|p| if base.is_some() && p.kind == PieceKind::FrontMatter { Form::Inert } else { Form::AsIs })
        .collect();
    let mut all: Vec<Loaded> = others.iter().filter(|l| l.path != CORE_PATH).cloned().collect();
    all.push(Loaded::parse(CORE_PATH, ""));
    for _ in 0..ROUNDS {
        let (out, ranges) = assemble(base, &pieces, &forms, &ids, cite);
        let first = ranges.first().map_or(usize::MAX, |r| r.0);
        *all.last_mut().expect("pushed") = Loaded::parse(CORE_PATH, &out);
        let checked = check(&all, resolver);
        let mut bump: Vec<usize> = Vec::new();
        for d in checked.diagnostics.iter().filter(|d| d.path == CORE_PATH) {
            match ranges.iter().position(|&(a, b)| a <= d.line && d.line <= b) {
                Some(k) => bump.push(k),
                None if base.is_some() && d.line < first => {}
                None => return None,
            }
        }
        if bump.is_empty() {
            bump = uncited(&all.last().expect("pushed").file, &pieces, &forms);
        }
        if bump.is_empty() {
            let blocks = pieces.iter().zip(&forms).filter(|(p, f)| is_block(p, **f)).count();
            let rewritten = forms.iter().filter(|f| **f != Form::AsIs).count();
            return Some(Converted { text: out, blocks, rewritten });
        }
        bump.sort_unstable();
        bump.dedup();
        for k in bump {
            let relinks = pieces[k].lines.iter().any(|l| relinked(l) != *l);
            forms[k] = match forms[k] {
                Form::AsIs if relinks => Form::Relinked,
                Form::AsIs | Form::Relinked if pieces[k].kind != PieceKind::Code => Form::Inert,
                _ => return None,
            };
        }
    }
    None
}

#[cfg(test)]
mod tests;
