//! The topic file grammar (FORMAT.md §3): a nom parser over lines, and the
//! exact printer.
//!
//! The tree is lossless: it keeps every line's bytes (with its CR, if any,
//! and its line ending), and everything else — front matter, blocks, block
//! ids, footnote references, definitions and links — points into those
//! lines. Printing walks the tree and writes the lines back, so
//! `print(parse(text)) == text` for every input, accepted or not.

use nom::bytes::complete::{tag, take_till1, take_until, take_while, take_while_m_n};
use nom::character::complete::char;
use nom::combinator::{all_consuming, map, opt, rest};
use nom::multi::separated_list1;
use nom::sequence::{delimited, preceded, separated_pair, terminated, tuple};
use nom::IResult;

use crate::diag::Code;
use crate::time::{self, Instant};

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
pub enum Kind {
    /// A person.
    Person,
    /// A project.
    Project,
    /// A recurring theme.
    Theme,
    /// The always-on block.
    Core,
}

impl Kind {
    fn parse(s: &str) -> Option<Kind> {
        match s {
            "person" => Some(Kind::Person),
            "project" => Some(Kind::Project),
            "theme" => Some(Kind::Theme),
            "core" => Some(Kind::Core),
            _ => None,
        }
    }

    /// The kind as written.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Person => "person",
            Kind::Project => "project",
            Kind::Theme => "theme",
            Kind::Core => "core",
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
    pub fn kind(&self) -> Option<Kind> {
        self.scalar("kind").and_then(Kind::parse)
    }

    /// `aliases` (a list, or a single scalar).
    pub fn aliases(&self) -> Vec<&str> {
        match self.entries.iter().find(|e| e.key == "aliases").map(|e| &e.value) {
            Some(FmValue::List(v)) => v.iter().map(String::as_str).collect(),
            Some(FmValue::Scalar(s)) if !s.is_empty() => vec![s.as_str()],
            _ => Vec::new(),
        }
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

type Res<'a, T> = IResult<&'a str, T, ()>;

/// True for a blank line: empty, or spaces and tabs only.
pub(crate) fn is_blank(s: &str) -> bool {
    s.bytes().all(|b| b == b' ' || b == b'\t')
}

/// A heading: 1–6 `#`, then a space or the end of the line.
pub(crate) fn is_heading(s: &str) -> bool {
    let n = s.bytes().take_while(|&b| b == b'#').count();
    (1..=6).contains(&n) && matches!(s.as_bytes().get(n), None | Some(b' '))
}

fn label_char(c: char) -> bool {
    !c.is_whitespace() && !matches!(c, '[' | ']' | '^')
}

/// `[^label]` → label.
fn footnote_ref(i: &str) -> Res<'_, &str> {
    delimited(tag("[^"), take_while(label_char), char(']'))(i).and_then(|(r, l)| {
        if l.is_empty() {
            Err(nom::Err::Error(()))
        } else {
            Ok((r, l))
        }
    })
}

/// `[^label]: body` → (label, body).
pub(crate) fn definition_line(i: &str) -> Res<'_, (&str, &str)> {
    separated_pair(footnote_ref, tag(":"), map(rest, |b: &str| b.strip_prefix(' ').unwrap_or(b)))(i)
}

/// True for an evidence label: `e-` and 10 lowercase hex digits.
pub fn is_evidence_label(label: &str) -> bool {
    label.len() == 12
        && label.starts_with("e-")
        && label[2..].bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `[id](path#anchor)`
fn source_link(i: &str) -> Res<'_, SourceLink> {
    map(
        tuple((
            delimited(char('['), take_till1(|c| c == ']' || c == '['), tag("](")),
            take_till1(|c| c == '#' || c == ')' || c == ' '),
            preceded(char('#'), take_till1(|c| c == ')' || c == ' ')),
            char(')'),
        )),
        |(id, path, anchor, _): (&str, &str, &str, char)| SourceLink {
            id: id.to_owned(),
            path: path.to_owned(),
            anchor: anchor.to_owned(),
        },
    )(i)
}

/// ``Time: `T`; Sources: [id](path#anchor), …``
fn evidence_body(i: &str) -> Res<'_, (&str, Vec<SourceLink>)> {
    all_consuming(terminated(
        tuple((
            delimited(tag("Time: `"), take_until("`"), tag("`; Sources: ")),
            separated_list1(tag(", "), source_link),
        )),
        take_while(|c| c == ' ' || c == '\t'),
    ))(i)
}

fn parse_evidence(body: &str) -> Result<Evidence, String> {
    let (_, (t, sources)) = evidence_body(body).map_err(|_| {
        "expected ``Time: `YYYY-MM-DD…`; Sources: [provider/thread/message](path#source-HASH8), …``"
            .to_owned()
    })?;
    let instant = time::parse(t)
        .ok_or_else(|| format!("Time `{t}` is not YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS[.f](Z|±HH:MM)"))?;
    Ok(Evidence { time: t.to_owned(), instant, sources })
}

/// `key: value` or `key: [a, b]`.
fn fm_entry(i: &str) -> Res<'_, (&str, FmValue)> {
    let key = take_while_m_n(1, 64, |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let list = map(
        delimited(
            char('['),
            opt(separated_list1(tag(","), take_till1(|c| c == ',' || c == ']'))),
            tuple((char(']'), take_while(|c| c == ' ' || c == '\t'))),
        ),
        |items: Option<Vec<&str>>| {
            FmValue::List(
                items
                    .unwrap_or_default()
                    .into_iter()
                    .map(|s| s.trim().to_owned())
                    .filter(|s| !s.is_empty())
                    .collect(),
            )
        },
    );
    let scalar = map(rest, |s: &str| FmValue::Scalar(s.trim().to_owned()));
    all_consuming(separated_pair(
        key,
        tuple((char(':'), take_while(|c| c == ' '))),
        nom::branch::alt((list, scalar)),
    ))(i)
}

/// A code fence opener or closer: up to 3 spaces, then 3+ backticks or tildes.
pub(crate) fn fence(s: &str) -> Option<(u8, usize, &str)> {
    let indent = s.bytes().take_while(|&b| b == b' ').count();
    if indent > 3 {
        return None;
    }
    let t = &s[indent..];
    let c = *t.as_bytes().first()?;
    if c != b'`' && c != b'~' {
        return None;
    }
    let n = t.bytes().take_while(|&b| b == c).count();
    (n >= 3).then(|| (c, n, &t[n..]))
}

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
fn scan_inline(s: &str, line: usize, refs: &mut Vec<FootnoteRef>, links: &mut Vec<(usize, Link)>) {
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

/// The block id at the end of a block's last line: ` ^id` with id
/// `[A-Za-z0-9-]{1,64}`.
fn block_id(last: &str) -> Option<&str> {
    let k = last.rfind(" ^")?;
    let id = &last[k + 2..];
    let ok = (1..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    ok.then_some(id)
}

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

impl TopicFile {
    /// Parses leniently: never fails; returns the tree and every problem
    /// the grammar alone can see (front matter, malformed definitions,
    /// missing block ids, labels defined twice).
    pub fn parse_lenient(text: &str) -> (TopicFile, Vec<ParseProblem>) {
        let text = text.to_owned();
        let lines = split_lines(&text);
        let content = |k: usize| &text[lines[k].start..lines[k].end];
        let mut problems = Vec::new();

        // Front matter.
        let mut front_matter = None;
        let mut first_body_line = 0;
        // A byte-order mark some editors write does not hide front matter.
        if !lines.is_empty() && content(0).strip_prefix('\u{FEFF}').unwrap_or(content(0)) == "---" {
            let close = (1..lines.len()).find(|&k| content(k) == "---");
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
                let l = content(k);
                if is_blank(l) {
                    continue;
                }
                match fm_entry(l) {
                    Ok((_, (key, FmValue::Scalar(v)))) if v.starts_with('[') => problems.push(ParseProblem {
                        code: Code::BadFrontMatter,
                        line: k,
                        message: format!("front matter list for {key:?} is not closed by `]`"),
                    }),
                    Ok((_, (key, value))) => {
                        if key == "kind" {
                            let ok = matches!(&value, FmValue::Scalar(s) if Kind::parse(s).is_some());
                            if !ok {
                                problems.push(ParseProblem {
                                    code: Code::BadFrontMatter,
                                    line: k,
                                    message: format!("kind {l:?} is not one of person, project, theme, core"),
                                });
                            }
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
            first_body_line = close.map_or(lines.len(), |c| c + 1);
            front_matter = Some(FrontMatter { close_line: close, entries });
        }

        // Blocks, headings, definitions.
        let mut blocks: Vec<Block> = Vec::new();
        let mut headings = Vec::new();
        let mut definitions = Vec::new();
        let mut current: Option<(usize, usize)> = None;
        let mut fenced: Vec<bool> = vec![false; lines.len()];
        let mut open_fence: Option<(u8, usize)> = None;
        let finish = |cur: &mut Option<(usize, usize)>, blocks: &mut Vec<Block>| {
            if let Some((a, b)) = cur.take() {
                blocks.push(Block {
                    first_line: a,
                    last_line: b,
                    id: None,
                    refs: Vec::new(),
                    links: Vec::new(),
                });
            }
        };
        for (k, is_fenced) in fenced.iter_mut().enumerate().skip(first_body_line) {
            let l = content(k);
            if let Some((c, n)) = open_fence {
                *is_fenced = true;
                if let Some((c2, n2, after)) = fence(l) {
                    if c2 == c && n2 >= n && is_blank(after) {
                        open_fence = None;
                    }
                }
                current = current.map(|(a, _)| (a, k)).or(Some((k, k)));
                continue;
            }
            if is_blank(l) {
                finish(&mut current, &mut blocks);
            } else if is_heading(l) {
                finish(&mut current, &mut blocks);
                headings.push(k);
            } else if let Ok((_, (label, body))) = definition_line(l) {
                finish(&mut current, &mut blocks);
                let evidence = is_evidence_label(label).then(|| parse_evidence(body));
                definitions.push(Definition { line: k, label: label.to_owned(), evidence });
            } else {
                if let Some((c, n, after)) = fence(l) {
                    // A backtick fence's info string holds no backtick.
                    if c == b'~' || !after.contains('`') {
                        *is_fenced = true;
                        open_fence = Some((c, n));
                    }
                }
                current = current.map(|(a, _)| (a, k)).or(Some((k, k)));
            }
        }
        finish(&mut current, &mut blocks);

        for block in &mut blocks {
            for (k, &f) in fenced.iter().enumerate().take(block.last_line + 1).skip(block.first_line) {
                if !f {
                    scan_inline(content(k), k, &mut block.refs, &mut block.links);
                }
            }
            let last = content(block.last_line);
            block.id = if fenced[block.last_line] { None } else { block_id(last).map(str::to_owned) };
            if block.id.is_none() {
                problems.push(ParseProblem {
                    code: Code::MissingBlockId,
                    line: block.first_line,
                    message: "the block's last line does not end in ` ^block-id` ([A-Za-z0-9-]{1,64})".into(),
                });
            }
        }
        let mut seen = std::collections::HashSet::new();
        for d in &definitions {
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
        problems.sort_by_key(|p| p.line);
        let mut def_index = std::collections::HashMap::with_capacity(definitions.len());
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

    /// The definition of `label`, if any (the first, when defined twice).
    pub fn definition(&self, label: &str) -> Option<&Definition> {
        self.def_index.get(label).map(|&k| &self.definitions[k])
    }
}

/// A block's text without footnote references and without its ` ^id`.
pub fn plain_text(block_text: &str, id: Option<&str>) -> String {
    let mut s = block_text;
    if let Some(id) = id {
        if let Some(stripped) = s.strip_suffix(id).and_then(|t| t.strip_suffix(" ^")) {
            s = stripped;
        }
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(k) = rest.find("[^") {
        out.push_str(&rest[..k]);
        match footnote_ref(&rest[k..]) {
            Ok((r, _)) => rest = r,
            Err(_) => {
                out.push_str("[^");
                rest = &rest[k + 2..];
            }
        }
    }
    out.push_str(rest);
    out.trim_end().to_owned()
}

/// A block's text as search indexes it: [`plain_text`] with link markup
/// removed and link text kept (`[text](target)` → `text`, `[[target]]` →
/// `target`, `[[target|alias]]` → `alias`). Linear in the text's length.
pub fn search_text(block_text: &str, id: Option<&str>) -> String {
    let s = plain_text(block_text, id);
    let b = s.as_bytes();
    let n = b.len();
    // next[c][i]: the first position ≥ i holding byte c (n when none).
    let next_of = |c: u8| {
        let mut v = vec![n as u32; n + 1];
        for i in (0..n).rev() {
            v[i] = if b[i] == c { i as u32 } else { v[i + 1] };
        }
        v
    };
    let (close, paren, open) = (next_of(b']'), next_of(b')'), next_of(b'['));
    let at = |v: &Vec<u32>, i: usize| v.get(i).map_or(n, |&x| x as usize);
    let mut out = String::with_capacity(n);
    let (mut i, mut copied) = (0, 0);
    while i < n {
        if b[i] == b'[' {
            if b.get(i + 1) == Some(&b'[') {
                let e = at(&close, i + 2);
                if e > i + 2 && b.get(e + 1) == Some(&b']') && at(&open, i + 2) > e {
                    let inner = &s[i + 2..e];
                    out.push_str(&s[copied..i]);
                    out.push_str(inner.split_once('|').map_or(inner, |x| x.1));
                    i = e + 2;
                    copied = i;
                    continue;
                }
            } else {
                let e = at(&close, i + 1);
                if e < n && b.get(e + 1) == Some(&b'(') && at(&open, i + 1) > e {
                    let p = at(&paren, e + 2);
                    if p < n {
                        out.push_str(&s[copied..i]);
                        out.push_str(&s[i + 1..e]);
                        i = p + 1;
                        copied = i;
                        continue;
                    }
                }
            }
        }
        i += 1;
    }
    out.push_str(&s[copied..]);
    out
}

#[cfg(test)]
mod tests;
