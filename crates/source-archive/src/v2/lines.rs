//! The nom matchers of the marker and of a frame's header lines. They only
//! match bytes; the values they return are checked by the parser.

use nom::branch::alt;
use nom::bytes::complete::{take_while, take_while1, take_while_m_n};
use nom::combinator::{map, opt, value};
use nom::sequence::{delimited, terminated};
use nom::IResult;

use super::MARKER;
use crate::record::Role;

type Res<'a, T> = IResult<&'a [u8], T, ()>;

/// nom's `tag` for a constant byte string, compared with one `starts_with`
/// (a fixed-length memcmp) instead of byte by byte.
#[inline]
fn tag<'a>(t: &'static str) -> impl Fn(&'a [u8]) -> Res<'a, &'a [u8]> {
    move |i: &'a [u8]| {
        if i.starts_with(t.as_bytes()) {
            Ok((&i[t.len()..], &i[..t.len()]))
        } else {
            Err(nom::Err::Error(()))
        }
    }
}

#[inline]
fn is_pct_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'~' | b'-' | b'%')
}

#[inline]
fn lower_hex(b: u8) -> bool {
    b.is_ascii_digit() || (b'a'..=b'f').contains(&b)
}

#[inline]
pub(super) fn anchor_line(i: &[u8]) -> Res<'_, &[u8]> {
    delimited(tag("<a id=\"source-"), take_while_m_n(8, 8, lower_hex), tag("\"></a>\n"))(i)
}

#[inline]
pub(super) fn source_line(i: &[u8]) -> Res<'_, &[u8]> {
    delimited(tag("<!-- source:"), take_while1(|b| is_pct_byte(b) || b == b'/'), tag(" -->\n"))(i)
}

#[inline]
pub(super) fn role_line(i: &[u8]) -> Res<'_, Role> {
    delimited(
        tag("<!-- role:"),
        alt((
            value(Role::User, tag("user")),
            value(Role::Assistant, tag("assistant")),
            value(Role::System, tag("system")),
        )),
        tag(" -->\n"),
    )(i)
}

#[inline]
pub(super) fn pending_line(i: &[u8]) -> Res<'_, bool> {
    map(opt(tag("<!-- trust:pending -->\n")), |p| p.is_some())(i)
}

#[inline]
pub(super) fn speaker_line(i: &[u8]) -> Res<'_, Option<&[u8]>> {
    opt(delimited(tag("<!-- speaker-id:"), take_while(is_pct_byte), tag(" -->\n")))(i)
}

#[inline]
pub(super) fn record_lines_line(i: &[u8]) -> Res<'_, &[u8]> {
    delimited(tag("<!-- record-lines:"), take_while_m_n(1, 7, |b: u8| b.is_ascii_digit()), tag(" -->\n"))(i)
}

#[inline]
pub(super) fn separator(i: &[u8]) -> Res<'_, &[u8]> {
    tag("\n")(i)
}

#[inline]
pub(super) fn marker(i: &[u8]) -> Res<'_, &[u8]> {
    terminated(tag(MARKER), tag("\n"))(i)
}
