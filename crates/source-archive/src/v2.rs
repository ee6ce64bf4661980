//! The v2 archive file: the frame writer and the strict nom parser
//! (FORMAT.md §2.4–2.5).
//!
//! ```text
//! file  = MARKER LF *frame
//! frame = LF anchor LF source LF role LF [pending LF] [speaker-id LF] record-lines LF record
//! ```
//!
//! The parser is forward-only: it stops at the first frame that is malformed,
//! truncated or non-canonical, returns every frame before it, and never scans
//! later bytes for a new start. It never looks inside the `N` record lines
//! for structure, so a body may hold anything, whole forged frames included.
//! It never panics for any input (the `archive_parse` fuzz target holds it to
//! that).

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use nom::branch::alt;
use nom::bytes::complete::{tag, take_while, take_while1, take_while_m_n};
use nom::combinator::{map, opt, value};
use nom::sequence::{delimited, terminated};
use nom::IResult;

use crate::id::{anchor_hash_bytes, check_identifier, SourceId};
use crate::pct;
use crate::record::{Role, SourceRecord, MAX_RECORD_LINES};
use crate::speaker::{self, Speaker};
use crate::timestamp;

/// The first line of every v2 file (without its LF).
pub const MARKER: &str = "<!-- openprogram-source-archive:v2 -->";

/// Appends one frame for `record` to `out`.
pub fn write_frame(record: &SourceRecord, out: &mut Vec<u8>) {
    let text = record.id().text();
    out.extend_from_slice(b"\n<a id=\"source-");
    out.extend_from_slice(crate::id::anchor_hash(text.as_bytes()).as_bytes());
    out.extend_from_slice(b"\"></a>\n<!-- source:");
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(b" -->\n<!-- role:");
    out.extend_from_slice(record.role().as_str().as_bytes());
    out.extend_from_slice(b" -->\n");
    if record.is_pending() {
        out.extend_from_slice(b"<!-- trust:pending -->\n");
    }
    if let Some(s) = record.speaker() {
        out.extend_from_slice(b"<!-- speaker-id:");
        out.extend_from_slice(pct::encode(s.id().unwrap_or("")).as_bytes());
        out.extend_from_slice(b" -->\n");
    }
    out.extend_from_slice(b"<!-- record-lines:");
    out.extend_from_slice(record.record_lines().to_string().as_bytes());
    out.extend_from_slice(b" -->\n[");
    out.extend_from_slice(record.timestamp().as_bytes());
    out.extend_from_slice(b"] ");
    out.extend_from_slice(record.header_label().as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(record.content().as_bytes());
    out.push(b'\n');
}

/// The bytes of a new v2 file holding `records` in order.
pub fn write_file<'r>(records: impl IntoIterator<Item = &'r SourceRecord>) -> Vec<u8> {
    let mut out = Vec::with_capacity(4096);
    out.extend_from_slice(MARKER.as_bytes());
    out.push(b'\n');
    for r in records {
        write_frame(r, &mut out);
    }
    out
}

/// Where and why parsing stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Byte offset where the bad frame (or the marker) starts.
    pub offset: usize,
    /// 1-based line where the bad frame (or the marker) starts.
    pub line: u64,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid v2 frame at byte {} (line {}): {}", self.offset, self.line, self.reason)
    }
}

/// One valid frame, borrowing from the parsed bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame<'a> {
    /// Byte offset of the frame's separator line.
    pub offset: usize,
    /// 1-based line of the frame's separator line.
    pub line: u64,
    /// Byte length of the frame.
    pub len: usize,
    /// The encoded text form of the source id.
    pub source_text: &'a str,
    /// The provider, decoded.
    pub provider: Cow<'a, str>,
    /// The thread, decoded.
    pub thread: Cow<'a, str>,
    /// The message id, decoded.
    pub message: Cow<'a, str>,
    /// The role.
    pub role: Role,
    /// True when the frame carries `<!-- trust:pending -->`.
    pub pending: bool,
    /// `None` for a speakerless frame; the decoded `speaker-id` value (empty
    /// for a display-only identity) for a trusted one.
    pub speaker_id: Option<Cow<'a, str>>,
    /// The display recovered from the label (trusted identities only).
    pub speaker_display: Option<&'a str>,
    /// The header label (the role for a speakerless frame).
    pub label: &'a str,
    /// The timestamp, verbatim.
    pub timestamp: &'a str,
    /// The body, verbatim.
    pub body: &'a str,
}

impl Frame<'_> {
    /// The trusted identity of this frame, if any.
    pub fn speaker(&self) -> Option<Speaker> {
        self.speaker_id
            .as_ref()
            .and_then(|id| Speaker::from_stored(self.label, id))
    }

    /// An owned record equal to the one that was written.
    pub fn to_record(&self) -> SourceRecord {
        let id = SourceId::new(&self.provider, &self.thread, &self.message)
            .expect("a valid frame holds a valid source id");
        SourceRecord::from_parts_unchecked(
            id,
            self.role,
            self.timestamp.to_owned(),
            self.speaker(),
            self.pending,
            self.body.to_owned(),
        )
    }
}

/// The result of parsing a v2 file: the valid prefix and, if the file does
/// not parse to its end, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed<'a> {
    /// Every frame of the valid prefix, in file order.
    pub frames: Vec<Frame<'a>>,
    /// Length in bytes of the valid prefix (marker included).
    pub valid_len: usize,
    /// The first problem, or `None` when the whole input is valid.
    pub error: Option<Diagnostic>,
}

/// The (provider, thread) a file stands for, which every frame must name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expect<'e> {
    /// The decoded provider.
    pub provider: &'e str,
    /// The decoded thread.
    pub thread: &'e str,
}

type Res<'a, T> = IResult<&'a [u8], T, ()>;

fn is_pct_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'~' | b'-' | b'%')
}

fn lower_hex(b: u8) -> bool {
    b.is_ascii_digit() || (b'a'..=b'f').contains(&b)
}

fn anchor_line(i: &[u8]) -> Res<'_, &[u8]> {
    delimited(
        tag("<a id=\"source-"),
        take_while_m_n(8, 8, lower_hex),
        tag("\"></a>\n"),
    )(i)
}

fn source_line(i: &[u8]) -> Res<'_, &[u8]> {
    delimited(tag("<!-- source:"), take_while1(|b| is_pct_byte(b) || b == b'/'), tag(" -->\n"))(i)
}

fn role_line(i: &[u8]) -> Res<'_, Role> {
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

fn pending_line(i: &[u8]) -> Res<'_, bool> {
    map(opt(tag("<!-- trust:pending -->\n")), |p| p.is_some())(i)
}

fn speaker_line(i: &[u8]) -> Res<'_, Option<&[u8]>> {
    opt(delimited(tag("<!-- speaker-id:"), take_while(is_pct_byte), tag(" -->\n")))(i)
}

fn record_lines_line(i: &[u8]) -> Res<'_, &[u8]> {
    delimited(
        tag("<!-- record-lines:"),
        take_while_m_n(1, 7, |b: u8| b.is_ascii_digit()),
        tag(" -->\n"),
    )(i)
}

fn separator(i: &[u8]) -> Res<'_, &[u8]> {
    tag("\n")(i)
}

fn marker(i: &[u8]) -> Res<'_, &[u8]> {
    terminated(tag(MARKER), tag("\n"))(i)
}

/// Decodes a canonical PCT value, borrowing when it needs no decoding.
fn decode(encoded: &[u8]) -> Result<Cow<'_, str>, pct::PctError> {
    let mut prev_dash = false;
    let plain = encoded.iter().all(|&b| {
        let ok = b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'~') || (b == b'-' && !prev_dash);
        prev_dash = b == b'-';
        ok
    });
    if plain {
        // Only ASCII bytes, so this is valid UTF-8.
        Ok(Cow::Borrowed(std::str::from_utf8(encoded).map_err(|_| pct::PctError::InvalidUtf8)?))
    } else {
        pct::decode_canonical(encoded).map(Cow::Owned)
    }
}

fn ascii(b: &[u8]) -> &str {
    // Callers pass bytes matched by ASCII-only combinators.
    std::str::from_utf8(b).unwrap_or("")
}

struct Parser<'a> {
    bytes: &'a [u8],
    expect: Option<(Cow<'a, str>, Cow<'a, str>)>,
    seen: HashSet<&'a str>,
}

impl<'a> Parser<'a> {
    /// Parses one frame at `at`; `Err(reason)` when it is not valid.
    fn frame(&mut self, at: usize, line: u64) -> Result<(Frame<'a>, u64), String> {
        let i = &self.bytes[at..];
        let truncated = |_| "truncated or malformed frame".to_owned();
        let (i, _) = separator(i).map_err(|_: nom::Err<()>| "expected an empty separator line".to_owned())?;
        let (i, hash) = anchor_line(i).map_err(|_| "expected `<a id=\"source-HASH8\"></a>`".to_owned())?;
        let (i, source) = source_line(i).map_err(|_| "expected `<!-- source:PROVIDER/THREAD/MESSAGE -->`".to_owned())?;
        let (i, role) = role_line(i).map_err(|_| "expected `<!-- role:user|assistant|system -->`".to_owned())?;
        let (i, pending) = pending_line(i).map_err(truncated)?;
        let (i, speaker) = speaker_line(i).map_err(truncated)?;
        let (i, n) = record_lines_line(i).map_err(|_| "expected `<!-- record-lines:N -->`".to_owned())?;
        let header_lines = 5 + u64::from(pending) + u64::from(speaker.is_some());

        // The source id: three canonical parts, the file's own provider/thread.
        let source_text = ascii(source);
        let mut parts = source.split(|&b| b == b'/');
        let (Some(p), Some(t), Some(m), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
            return Err(format!("source id {source_text:?} is not provider/thread/message"));
        };
        let bad = |what: &str, e: pct::PctError| format!("{what} in source id {source_text:?}: {}", e.describe());
        let provider = decode(p).map_err(|e| bad("provider", e))?;
        let thread = decode(t).map_err(|e| bad("thread", e))?;
        let message = decode(m).map_err(|e| bad("message", e))?;
        if source.len() > 3 * crate::id::MAX_ENCODED_BYTES + 2 || p.len() > 200 || t.len() > 200 || m.len() > 200 {
            return Err(format!("source id {source_text:?} has a part longer than 200 bytes"));
        }
        for (what, v, path) in [("provider", &provider, true), ("thread", &thread, true), ("message", &message, false)] {
            check_identifier(what, v, path).map_err(|e| e.message().to_owned())?;
        }
        match &self.expect {
            Some((ep, et)) if *ep != provider || *et != thread => {
                return Err(format!(
                    "source id {source_text:?} names another conversation than this file's ({}/{})",
                    pct::encode(ep),
                    pct::encode(et)
                ))
            }
            Some(_) => {}
            None => self.expect = Some((provider.clone(), thread.clone())),
        }
        let want = anchor_hash_bytes(source);
        let mut got = [0u8; 4];
        for (k, pair) in hash.chunks(2).enumerate() {
            let v = |c: u8| if c.is_ascii_digit() { c - b'0' } else { c - b'a' + 10 };
            got[k] = (v(pair[0]) << 4) | v(pair[1]);
        }
        if got != want {
            return Err(format!("anchor hash {} does not match source id {source_text:?}", ascii(hash)));
        }
        if !self.seen.insert(source_text) {
            return Err(format!("duplicate source id {source_text:?}"));
        }

        // The speaker-id value.
        let speaker_id = match speaker {
            None => None,
            Some(raw) if raw.is_empty() => Some(Cow::Borrowed("")),
            Some(raw) => {
                let id = decode(raw).map_err(|e| format!("speaker-id {:?}: {}", ascii(raw), e.describe()))?;
                check_identifier("speaker-id", &id, false).map_err(|e| e.message().to_owned())?;
                Some(id)
            }
        };

        // N: decimal, no leading zero, 1..=1,000,000.
        if n[0] == b'0' {
            return Err("record-lines has a leading zero (or is zero)".to_owned());
        }
        let n: usize = ascii(n).parse().map_err(|_| "record-lines is not a number".to_owned())?;
        if n > MAX_RECORD_LINES {
            return Err(format!("record-lines {n} exceeds {MAX_RECORD_LINES}"));
        }

        // Exactly N lines, each ending in LF.
        let mut lfs = memchr::memchr_iter(b'\n', i);
        let end = lfs
            .nth(n - 1)
            .ok_or_else(|| format!("truncated record: fewer than {n} complete lines"))?;
        let record = std::str::from_utf8(&i[..end]).map_err(|_| "record is not valid UTF-8".to_owned())?;

        // [TIMESTAMP] LABEL: BODY
        let rest = record.strip_prefix('[').ok_or("record does not start with `[`")?;
        let close = rest.find(']').ok_or("record timestamp is not closed by `]`")?;
        let ts = &rest[..close];
        if !timestamp::is_valid(ts) {
            return Err(format!("record timestamp {ts:?} is not RFC 3339 UTC with `Z`"));
        }
        let rest = rest[close + 1..].strip_prefix(' ').ok_or("expected a space after the timestamp")?;
        let colon = rest.find(':').ok_or("record has no `LABEL: ` header")?;
        let label = &rest[..colon];
        let body = rest[colon + 1..].strip_prefix(' ').ok_or("expected `: ` after the label")?;
        let speaker_display = match &speaker_id {
            None => {
                if label != role.as_str() {
                    return Err(format!("speakerless record's label {label:?} is not its role"));
                }
                None
            }
            Some(id) => match stored_display(label, id) {
                Some(d) => d,
                None => return Err(format!("label {label:?} is not label(display, id) for speaker-id {id:?}")),
            },
        };

        let consumed = (self.bytes.len() - i.len()) - at + end + 1;
        let frame = Frame {
            offset: at,
            line,
            len: consumed,
            source_text,
            provider,
            thread,
            message,
            role,
            pending,
            speaker_id,
            speaker_display,
            label,
            timestamp: ts,
            body,
        };
        Ok((frame, header_lines + n as u64))
    }
}

/// The display a stored label implies, if the pair is valid
/// (see [`Speaker::from_stored`]); allocation-free when the id is already
/// normalised.
fn stored_display<'l>(label: &'l str, id: &str) -> Option<Option<&'l str>> {
    let owned;
    let i: &str = if speaker::is_normalised(id) {
        id
    } else {
        owned = speaker::normalise(id);
        &owned
    };
    let display = if i.is_empty() {
        Some(label)
    } else if label == i {
        None
    } else {
        Some(label.strip_suffix(')')?.strip_suffix(i)?.strip_suffix(" (")?)
    };
    match display {
        Some(d) if d.is_empty() || !speaker::is_normalised(d) => None,
        d => Some(d),
    }
}

/// Parses a v2 file, returning its valid prefix and the first problem.
///
/// `expect` is the (provider, thread) the file stands for; when `None`, the
/// first frame decides and every later frame must agree. Never panics.
pub fn parse_prefix<'a>(bytes: &'a [u8], expect: Option<Expect<'_>>) -> Parsed<'a> {
    let mut parsed = Parsed {
        frames: Vec::new(),
        valid_len: 0,
        error: None,
    };
    let Ok((_, _)) = marker(bytes) else {
        parsed.error = Some(Diagnostic {
            offset: 0,
            line: 1,
            reason: format!("file does not start with the line `{MARKER}`"),
        });
        return parsed;
    };
    let mut parser = Parser {
        bytes,
        expect: expect.map(|e| (Cow::Owned(e.provider.to_owned()), Cow::Owned(e.thread.to_owned()))),
        seen: HashSet::new(),
    };
    let mut at = MARKER.len() + 1;
    let mut line = 2u64;
    while at < bytes.len() {
        match parser.frame(at, line) {
            Ok((frame, lines)) => {
                at += frame.len;
                line += lines;
                parsed.frames.push(frame);
            }
            Err(reason) => {
                parsed.error = Some(Diagnostic { offset: at, line, reason });
                break;
            }
        }
    }
    parsed.valid_len = at;
    parsed
}

/// Parses a whole v2 file strictly: every byte must belong to a valid frame.
pub fn parse<'a>(bytes: &'a [u8], expect: Option<Expect<'_>>) -> Result<Vec<Frame<'a>>, Diagnostic> {
    let parsed = parse_prefix(bytes, expect);
    match parsed.error {
        None => Ok(parsed.frames),
        Some(d) => Err(d),
    }
}

#[cfg(test)]
mod tests;
