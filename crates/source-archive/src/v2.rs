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
use std::fmt;

use nom::branch::alt;
use nom::bytes::complete::{take_while, take_while1, take_while_m_n};
use nom::combinator::{map, opt, value};
use nom::sequence::{delimited, terminated};
use nom::IResult;

use crate::id::{anchor_hash_bytes, SourceId};
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
///
/// Identifiers stay in their encoded (canonical) form; the accessors decode
/// them on demand, so parsing allocates nothing for the common frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// Byte offset of the frame's separator line.
    pub offset: usize,
    /// 1-based line of the frame's separator line.
    pub line: u64,
    /// Byte length of the frame.
    pub len: usize,
    /// The encoded text form of the source id.
    pub source_text: &'a str,
    /// The role.
    pub role: Role,
    /// True when the frame carries `<!-- trust:pending -->`.
    pub pending: bool,
    /// `None` for a speakerless frame; the encoded `speaker-id` value (empty
    /// for a display-only identity) for a trusted one.
    pub speaker_id_encoded: Option<&'a str>,
    /// The display recovered from the label (trusted identities only).
    pub speaker_display: Option<&'a str>,
    /// The header label (the role for a speakerless frame).
    pub label: &'a str,
    /// The timestamp, verbatim.
    pub timestamp: &'a str,
    /// The body, verbatim.
    pub body: &'a str,
}

fn decoded(encoded: &str) -> Cow<'_, str> {
    if is_plain(encoded.as_bytes()) {
        Cow::Borrowed(encoded)
    } else {
        Cow::Owned(pct::decode_canonical(encoded.as_bytes()).expect("a valid frame holds canonical values"))
    }
}

impl<'a> Frame<'a> {
    fn part(&self, k: usize) -> &'a str {
        self.source_text.split('/').nth(k).expect("a valid frame's id has three parts")
    }

    /// The provider, decoded.
    pub fn provider(&self) -> Cow<'a, str> {
        decoded(self.part(0))
    }

    /// The thread, decoded.
    pub fn thread(&self) -> Cow<'a, str> {
        decoded(self.part(1))
    }

    /// The message id, decoded.
    pub fn message(&self) -> Cow<'a, str> {
        decoded(self.part(2))
    }

    /// The decoded `speaker-id` value: `None` when speakerless, empty for a
    /// display-only identity.
    pub fn speaker_id(&self) -> Option<Cow<'a, str>> {
        self.speaker_id_encoded.map(decoded)
    }

    /// The trusted identity of this frame, if any.
    pub fn speaker(&self) -> Option<Speaker> {
        self.speaker_id().and_then(|id| Speaker::from_stored(self.label, &id))
    }

    /// An owned record equal to the one that was written.
    pub fn to_record(&self) -> SourceRecord {
        let id = SourceId::new(&self.provider(), &self.thread(), &self.message())
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

/// nom's `tag` for a constant byte string, compared with one `starts_with`
/// (a fixed-length memcmp) instead of byte by byte.
fn tag<'a>(t: &'static str) -> impl Fn(&'a [u8]) -> Res<'a, &'a [u8]> {
    move |i: &'a [u8]| {
        if i.starts_with(t.as_bytes()) {
            Ok((&i[t.len()..], &i[..t.len()]))
        } else {
            Err(nom::Err::Error(()))
        }
    }
}

fn is_pct_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'~' | b'-' | b'%')
}

fn lower_hex(b: u8) -> bool {
    b.is_ascii_digit() || (b'a'..=b'f').contains(&b)
}

fn anchor_line(i: &[u8]) -> Res<'_, &[u8]> {
    delimited(tag("<a id=\"source-"), take_while_m_n(8, 8, lower_hex), tag("\"></a>\n"))(i)
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
    delimited(tag("<!-- record-lines:"), take_while_m_n(1, 7, |b: u8| b.is_ascii_digit()), tag(" -->\n"))(i)
}

fn separator(i: &[u8]) -> Res<'_, &[u8]> {
    tag("\n")(i)
}

fn marker(i: &[u8]) -> Res<'_, &[u8]> {
    terminated(tag(MARKER), tag("\n"))(i)
}

/// Bytes written raw by PCT (`-` aside).
const UNRESERVED: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || c == b'.' || c == b'_' || c == b'~';
        b += 1;
    }
    t
};

/// True when `encoded` needs no decoding: unreserved bytes and single `-`.
fn is_plain(encoded: &[u8]) -> bool {
    let mut prev_dash = false;
    for &b in encoded {
        if UNRESERVED[usize::from(b)] {
            prev_dash = false;
        } else if b == b'-' && !prev_dash {
            prev_dash = true;
        } else {
            return false;
        }
    }
    true
}

fn ascii(b: &[u8]) -> &str {
    // Callers pass bytes matched by ASCII-only combinators.
    if b.is_ascii() {
        // SAFETY: ASCII bytes are valid UTF-8.
        unsafe { std::str::from_utf8_unchecked(b) }
    } else {
        ""
    }
}

/// How many bytes of input are validated as UTF-8 at a time: small enough
/// that a chunk is still in cache when its frames are parsed.
const UTF8_CHUNK: usize = 64 * 1024;

/// Sorts `keys` by their high 32 bits (stable, LSD radix, four passes).
fn radix_sort_high32(keys: &mut Vec<u64>) {
    let mut buf = vec![0u64; keys.len()];
    for pass in 0..4 {
        let shift = 32 + 8 * pass;
        let mut counts = [0usize; 257];
        for &k in keys.iter() {
            counts[((k >> shift) & 0xFF) as usize + 1] += 1;
        }
        for d in 0..256 {
            counts[d + 1] += counts[d];
        }
        for &k in keys.iter() {
            let d = ((k >> shift) & 0xFF) as usize;
            buf[counts[d]] = k;
            counts[d] += 1;
        }
        std::mem::swap(keys, &mut buf);
    }
}

/// The index of the first frame whose source id already appeared earlier
/// in `frames`. `keys` holds `anchor << 32 | index` for every frame.
///
/// Equivalent to checking each frame against a set of the ids before it,
/// but a sort of the anchor hashes (already computed, uniformly random) is
/// several times cheaper than a hash set's random probes at archive scale.
fn first_duplicate(frames: &[Frame<'_>], mut keys: Vec<u64>) -> Option<usize> {
    radix_sort_high32(&mut keys);
    let mut first: Option<usize> = None;
    let mut run = 0;
    while run < keys.len() {
        let anchor = keys[run] >> 32;
        let mut end = run + 1;
        while end < keys.len() && keys[end] >> 32 == anchor {
            end += 1;
        }
        if end - run > 1 {
            // Same anchor: compare the ids themselves (in frame order).
            let idx: Vec<usize> = keys[run..end].iter().map(|k| (k & 0xFFFF_FFFF) as usize).collect();
            for (j, &later) in idx.iter().enumerate().skip(1) {
                if idx[..j].iter().any(|&e| frames[e].source_text == frames[later].source_text) {
                    first = Some(first.map_or(later, |f| f.min(later)));
                    break;
                }
            }
        }
        run = end;
    }
    first
}

/// A speaker id seen earlier in the file and what validating it gave.
struct KnownSpeaker<'a> {
    encoded: &'a [u8],
    normalised: String,
}

struct Parser<'a> {
    bytes: &'a [u8],
    /// `bytes[..valid_to]` is known to be valid UTF-8.
    valid_to: usize,
    /// True once invalid UTF-8 was found at `valid_to`.
    invalid_utf8: bool,
    /// The encoded provider and thread every frame must name.
    expect: Option<(String, String)>,
    /// Why the expected provider/thread can hold no valid frame at all.
    expect_error: Option<String>,
    /// `anchor << 32 | frame index` for every frame, for duplicate detection.
    keys: Vec<u64>,
    /// Recently validated speaker ids (speakers repeat within a thread).
    speakers: Vec<KnownSpeaker<'a>>,
}

/// Checks one encoded identifier part.
fn check_encoded(what: &str, encoded: &[u8], path_component: bool) -> Result<(), String> {
    if !is_plain(encoded) {
        let value = pct::decode_canonical(encoded)
            .map_err(|e| format!("{what} {:?}: {}", String::from_utf8_lossy(encoded), e.describe()))?;
        if value.contains('\0') {
            return Err(format!("{what} contains NUL"));
        }
    }
    if encoded.is_empty() {
        return Err(format!("{what} is empty"));
    }
    if encoded.len() > crate::id::MAX_ENCODED_BYTES {
        return Err(format!("{what} is longer than {} bytes encoded", crate::id::MAX_ENCODED_BYTES));
    }
    if path_component && encoded[0] == b'.' {
        return Err(format!("{what} starts with '.'"));
    }
    Ok(())
}

impl<'a> Parser<'a> {
    /// Validates UTF-8 forward in cache-sized chunks until `bytes[..end]`
    /// is covered; false when invalid UTF-8 comes first.
    fn utf8_until(&mut self, end: usize) -> bool {
        while self.valid_to < end {
            if self.invalid_utf8 {
                return false;
            }
            let mut chunk_end = (self.valid_to + UTF8_CHUNK).max(end).min(self.bytes.len());
            // End the chunk on a character boundary when one is near.
            let mut back = 0;
            while back < 3
                && chunk_end > end
                && chunk_end < self.bytes.len()
                && (self.bytes[chunk_end] & 0xC0) == 0x80
            {
                chunk_end -= 1;
                back += 1;
            }
            let chunk = &self.bytes[self.valid_to..chunk_end];
            if simdutf8::basic::from_utf8(chunk).is_ok() {
                self.valid_to = chunk_end;
                continue;
            }
            match simdutf8::compat::from_utf8(chunk) {
                Ok(_) => self.valid_to = chunk_end,
                Err(e) => {
                    // A character cut by the chunk's end is read again with
                    // the next chunk; anything else is invalid.
                    let cut = e.error_len().is_none() && chunk_end < self.bytes.len();
                    self.valid_to += e.valid_up_to();
                    self.invalid_utf8 = !cut;
                }
            }
        }
        true
    }

    /// `bytes[start..end]` as text. The caller has checked
    /// `utf8_until(end)` and both ends are character boundaries (they follow
    /// or precede an ASCII byte).
    fn text(&self, start: usize, end: usize) -> &'a str {
        debug_assert!(end <= self.valid_to);
        let b = &self.bytes[start..end];
        debug_assert!(std::str::from_utf8(b).is_ok());
        // SAFETY: `bytes[..valid_to]` was validated as UTF-8 by `utf8_until`
        // and the slice starts and ends on character boundaries, so it is
        // valid UTF-8 on its own.
        unsafe { std::str::from_utf8_unchecked(b) }
    }

    /// The normalised form of a speaker id, validating it the first time.
    fn speaker(&mut self, raw: &'a [u8]) -> Result<usize, String> {
        if let Some(k) = self.speakers.iter().position(|s| s.encoded == raw) {
            return Ok(k);
        }
        let id = if raw.is_empty() {
            String::new()
        } else {
            check_encoded("speaker-id", raw, false)?;
            decoded(ascii(raw)).into_owned()
        };
        if self.speakers.len() == 16 {
            self.speakers.clear();
        }
        self.speakers.push(KnownSpeaker { encoded: raw, normalised: speaker::normalise(&id) });
        Ok(self.speakers.len() - 1)
    }

    /// Parses one frame at `at`; `Err(reason)` when it is not valid.
    fn frame(&mut self, at: usize, line: u64, frames: &[Frame<'a>]) -> Result<(Frame<'a>, u64), String> {
        let bytes = self.bytes;
        let i = &bytes[at..];
        let truncated = |_| "truncated or malformed frame".to_owned();
        let (i, _) = separator(i).map_err(|_: nom::Err<()>| "expected an empty separator line".to_owned())?;
        let (i, hash) = anchor_line(i).map_err(|_| "expected `<a id=\"source-HASH8\"></a>`".to_owned())?;
        let (i, source) =
            source_line(i).map_err(|_| "expected `<!-- source:PROVIDER/THREAD/MESSAGE -->`".to_owned())?;
        let (i, role) =
            role_line(i).map_err(|_| "expected `<!-- role:user|assistant|system -->`".to_owned())?;
        let (i, pending) = pending_line(i).map_err(truncated)?;
        let (i, speaker) = speaker_line(i).map_err(truncated)?;
        let (i, n) = record_lines_line(i).map_err(|_| "expected `<!-- record-lines:N -->`".to_owned())?;
        let header_lines = 5 + u64::from(pending) + u64::from(speaker.is_some());

        // The source id: three canonical parts, the file's own provider/thread.
        let source_text = ascii(source);
        let mut parts = source.split(|&b| b == b'/');
        let (Some(p), Some(t), Some(m), None) = (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(format!("source id {source_text:?} is not provider/thread/message"));
        };
        if let Some(e) = &self.expect_error {
            return Err(e.clone());
        }
        match &self.expect {
            Some((ep, et)) => {
                if ep.as_bytes() != p || et.as_bytes() != t {
                    return Err(format!(
                        "source id {source_text:?} names another conversation than this file's ({ep}/{et})"
                    ));
                }
            }
            None => {
                check_encoded("provider", p, true)?;
                check_encoded("thread", t, true)?;
                self.expect = Some((ascii(p).to_owned(), ascii(t).to_owned()));
            }
        }
        check_encoded("message", m, false)?;
        let want = anchor_hash_bytes(source);
        let mut got = [0u8; 4];
        for (k, pair) in hash.chunks(2).enumerate() {
            let v = |c: u8| if c.is_ascii_digit() { c - b'0' } else { c - b'a' + 10 };
            got[k] = (v(pair[0]) << 4) | v(pair[1]);
        }
        if got != want {
            return Err(format!("anchor hash {} does not match source id {source_text:?}", ascii(hash)));
        }
        let key = (u64::from(u32::from_be_bytes(want)) << 32) | frames.len() as u64;

        // The speaker-id value.
        let known = match speaker {
            None => None,
            Some(raw) => Some(self.speaker(raw)?),
        };

        // N: decimal, no leading zero, 1..=1,000,000.
        if n[0] == b'0' {
            return Err("record-lines has a leading zero (or is zero)".to_owned());
        }
        let n = n.iter().fold(0usize, |acc, &d| acc * 10 + usize::from(d - b'0'));
        if n > MAX_RECORD_LINES {
            return Err(format!("record-lines {n} exceeds {MAX_RECORD_LINES}"));
        }

        // Exactly N lines, each ending in LF.
        let mut lfs = memchr::memchr_iter(b'\n', i);
        let end = lfs.nth(n - 1).ok_or_else(|| format!("truncated record: fewer than {n} complete lines"))?;
        let start = bytes.len() - i.len();
        if !self.utf8_until(start + end) {
            return Err("record is not valid UTF-8".to_owned());
        }
        let record = self.text(start, start + end);

        // [TIMESTAMP] LABEL: BODY
        let rest = record.strip_prefix('[').ok_or("record does not start with `[`")?;
        let close = memchr::memchr(b']', rest.as_bytes()).ok_or("record timestamp is not closed by `]`")?;
        let ts = &rest[..close];
        if !timestamp::is_valid(ts) {
            return Err(format!("record timestamp {ts:?} is not RFC 3339 UTC with `Z`"));
        }
        let rest = rest[close + 1..].strip_prefix(' ').ok_or("expected a space after the timestamp")?;
        let colon = memchr::memchr(b':', rest.as_bytes()).ok_or("record has no `LABEL: ` header")?;
        let label = &rest[..colon];
        let body = rest[colon + 1..].strip_prefix(' ').ok_or("expected `: ` after the label")?;
        let speaker_display = match known {
            None => {
                if label != role.as_str() {
                    return Err(format!("speakerless record's label {label:?} is not its role"));
                }
                None
            }
            Some(k) => match stored_display(label, &self.speakers[k].normalised) {
                Some(d) => d,
                None => {
                    return Err(format!(
                        "label {label:?} is not label(display, id) for speaker-id {:?}",
                        ascii(speaker.unwrap_or_default())
                    ))
                }
            },
        };

        let consumed = (bytes.len() - i.len()) - at + end + 1;
        let frame = Frame {
            offset: at,
            line,
            len: consumed,
            source_text,
            role,
            pending,
            speaker_id_encoded: speaker.map(ascii),
            speaker_display,
            label,
            timestamp: ts,
            body,
        };
        self.keys.push(key);
        Ok((frame, header_lines + n as u64))
    }
}

/// The display a stored label implies, given the normalised id `i`, if the
/// pair is valid (see [`Speaker::from_stored`]).
fn stored_display<'l>(label: &'l str, i: &str) -> Option<Option<&'l str>> {
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
    let mut parsed = Parsed { frames: Vec::new(), valid_len: 0, error: None };
    let Ok((_, _)) = marker(bytes) else {
        parsed.error = Some(Diagnostic {
            offset: 0,
            line: 1,
            reason: format!("file does not start with the line `{MARKER}`"),
        });
        return parsed;
    };
    let expect = expect.map(|e| (pct::encode(e.provider), pct::encode(e.thread)));
    let expect_error = expect.as_ref().and_then(|(p, t)| {
        check_encoded("provider", p.as_bytes(), true)
            .and_then(|()| check_encoded("thread", t.as_bytes(), true))
            .err()
            .map(|e| format!("this file's own name is not a valid conversation: {e}"))
    });
    let mut parser = Parser {
        bytes,
        valid_to: 0,
        invalid_utf8: false,
        expect,
        expect_error,
        keys: Vec::with_capacity(bytes.len() / 400),
        speakers: Vec::new(),
    };
    parsed.frames.reserve(bytes.len() / 400);
    let mut at = MARKER.len() + 1;
    let mut line = 2u64;
    while at < bytes.len() {
        match parser.frame(at, line, &parsed.frames) {
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
    if let Some(k) = first_duplicate(&parsed.frames, parser.keys) {
        let f = parsed.frames[k];
        parsed.frames.truncate(k);
        parsed.valid_len = f.offset;
        parsed.error = Some(Diagnostic {
            offset: f.offset,
            line: f.line,
            reason: format!("duplicate source id {:?}", f.source_text),
        });
    }
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
