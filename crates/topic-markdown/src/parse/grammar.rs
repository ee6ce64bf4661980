//! The line grammar: nom matchers and predicates for the lines and pieces
//! of lines a topic file is made of (blank lines, headings, code fences,
//! footnote references and definitions, evidence bodies, front matter
//! entries, block ids).

use nom::bytes::complete::{tag, take_till1, take_until, take_while, take_while_m_n};
use nom::character::complete::char;
use nom::combinator::{all_consuming, map, opt, rest};
use nom::multi::separated_list1;
use nom::sequence::{delimited, preceded, separated_pair, terminated, tuple};
use nom::IResult;

use super::{Evidence, FmValue, SourceLink};
use crate::time;

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
pub(super) fn footnote_ref(i: &str) -> Res<'_, &str> {
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

pub(super) fn parse_evidence(body: &str) -> Result<Evidence, String> {
    let (_, (t, sources)) = evidence_body(body).map_err(|_| {
        "expected ``Time: `YYYY-MM-DD…`; Sources: [provider/thread/message](path#source-HASH8), …``"
            .to_owned()
    })?;
    let instant = time::parse(t)
        .ok_or_else(|| format!("Time `{t}` is not YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS[.f](Z|±HH:MM)"))?;
    Ok(Evidence { time: t.to_owned(), instant, sources })
}

/// `key: value` or `key: [a, b]`.
pub(super) fn fm_entry(i: &str) -> Res<'_, (&str, FmValue)> {
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

/// The block id at the end of a block's last line: ` ^id` with id
/// `[A-Za-z0-9-]{1,64}`.
pub(super) fn block_id(last: &str) -> Option<&str> {
    let k = last.rfind(" ^")?;
    let id = &last[k + 2..];
    let ok = (1..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    ok.then_some(id)
}
