//! Footnote references and links inside a block line, found by one linear
//! scan that skips inline code spans.

use super::grammar::footnote_ref;
use super::{FootnoteRef, Link};

/// The next occurrence of a needle at or after a position, remembered so a
/// left-to-right scan does linear work in total (a line of ten thousand `[`
/// must not cost ten thousand searches to its end).
struct NextOf<'a> {
    hay: &'a [u8],
    needle: &'static [u8],
    /// (searched from, found at)
    cache: Option<(usize, Option<usize>)>,
}

impl<'a> NextOf<'a> {
    fn new(hay: &'a [u8], needle: &'static [u8]) -> NextOf<'a> {
        NextOf { hay, needle, cache: None }
    }

    fn find(&mut self, from: usize) -> Option<usize> {
        if let Some((searched, found)) = self.cache {
            match found {
                Some(p) if p >= from && from >= searched => return Some(p),
                None if from >= searched => return None,
                _ => {}
            }
        }
        let found = self.hay.get(from..).and_then(|h| memchr::memmem::find(h, self.needle)).map(|k| from + k);
        self.cache = Some((from, found));
        found
    }
}

/// Scans one block line (outside code fences) for footnote references and
/// links, skipping inline code spans. Linear in the line's length.
pub(super) fn scan_inline(s: &str, line: usize, refs: &mut Vec<FootnoteRef>, links: &mut Vec<(usize, Link)>) {
    scan_inline_spans(s, |_, item| match item {
        Inline::Footnote(label) => refs.push(FootnoteRef { label, line }),
        Inline::Link(link) => links.push((line, link)),
    });
}

/// What [`inline_spans`] finds in a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inline {
    /// A footnote reference `[^label]`, with its label.
    Footnote(String),
    /// A Markdown or wiki link.
    Link(Link),
}

/// A footnote reference or link of one line, with the bytes it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlineSpan {
    /// The bytes of the line it covers, markup included.
    pub range: std::ops::Range<usize>,
    /// What it is.
    pub item: Inline,
}

/// The footnote references and links of one block line (a line outside a
/// code fence, without its line ending), in order, with the bytes each
/// covers: exactly what the parser records for the block's `refs` and
/// `links`. Inline code spans are skipped. Linear in the line's length.
///
/// ```
/// use scriptorium_topic_markdown::parse::{inline_spans, Inline};
/// let spans = inline_spans("Ada said so.[^e-1175dea39c] See [[people/ada]].");
/// assert_eq!(spans[0].range, 12..27);
/// assert_eq!(spans[0].item, Inline::Footnote("e-1175dea39c".into()));
/// assert_eq!(spans[1].range, 32..46);
/// ```
pub fn inline_spans(line: &str) -> Vec<InlineSpan> {
    let mut out = Vec::new();
    scan_inline_spans(line, |range, item| out.push(InlineSpan { range, item }));
    out
}

/// The scanner behind [`scan_inline`] and [`inline_spans`]: calls `emit`
/// with the byte range and the item of every footnote reference and link.
fn scan_inline_spans(s: &str, mut emit: impl FnMut(std::ops::Range<usize>, Inline)) {
    let b = s.as_bytes();
    let mut close = NextOf::new(b, b"]");
    let mut close2 = NextOf::new(b, b"]]");
    let mut open = NextOf::new(b, b"[");
    let mut paren = NextOf::new(b, b")");
    let mut angle = NextOf::new(b, b">");
    // Backtick runs of length n with no closing run at or after a position.
    let mut no_close: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'`' => {
                let n = b[i..].iter().take_while(|&&c| c == b'`').count();
                let from = i + n;
                let hopeless = no_close.get(&n).is_some_and(|&p| from >= p);
                let found = if hopeless { None } else { s[from..].find(&s[i..i + n]) };
                match found {
                    Some(k) => i = from + k + n,
                    None => {
                        no_close.insert(n, from);
                        i = from;
                    }
                }
            }
            b'[' if b.get(i + 1) == Some(&b'[') => {
                if let Some(end) = close2.find(i + 2) {
                    let nested = open.find(i + 2).is_some_and(|o| o < end);
                    let inner = &s[i + 2..end];
                    if !inner.is_empty() && !nested {
                        let (target, alias) = match inner.split_once('|') {
                            Some((t, a)) => (t, Some(a.to_owned())),
                            None => (inner, None),
                        };
                        emit(i..end + 2, Inline::Link(Link::Wiki { target: target.to_owned(), alias }));
                        i = end + 2;
                        continue;
                    }
                }
                i += 1;
            }
            b'[' if b.get(i + 1) == Some(&b'^') => {
                if let Ok((r, label)) = footnote_ref(&s[i..]) {
                    let end = s.len() - r.len();
                    emit(i..end, Inline::Footnote(label.to_owned()));
                    i = end;
                } else {
                    i += 2;
                }
            }
            b'[' => {
                let image = i > 0 && b[i - 1] == b'!';
                match close.find(i + 1) {
                    Some(c) if b.get(c + 1) == Some(&b'(') => {
                        let start = c + 2;
                        // `<destination>` may hold spaces and `)`.
                        let end = if b.get(start) == Some(&b'<') {
                            angle
                                .find(start + 1)
                                .filter(|&g| b.get(g + 1) == Some(&b')'))
                                .map(|g| (start + 1, g, g + 2))
                        } else {
                            paren.find(start).map(|p| (start, p, p + 1))
                        };
                        if let Some((t0, t1, next)) = end {
                            let inner = &s[t0..t1];
                            let target = if t0 > start {
                                inner
                            } else {
                                inner.split([' ', '\t']).next().unwrap_or("")
                            };
                            if !image && !target.is_empty() {
                                let text = s[i + 1..c].to_owned();
                                emit(
                                    i..next,
                                    Inline::Link(Link::Markdown { text, target: target.to_owned() }),
                                );
                            }
                            i = next;
                        } else {
                            i = c + 1;
                        }
                    }
                    _ => i += 1,
                }
            }
            _ => i += 1,
        }
    }
}
