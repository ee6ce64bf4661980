//! The parser: frame after frame from the marker on, each checked in full
//! (canonical values, the file's own conversation, the anchor hash, the
//! speaker's label), stopping at the first that is not valid.

use super::duplicates::first_duplicate;
use super::encoded::{ascii, check_encoded, decoded};
use super::frame::{Diagnostic, Expect, Frame, Parsed};
use super::lines::{
    anchor_line, marker, pending_line, record_lines_line, role_line, separator, source_line, speaker_line,
};
use super::MARKER;
use crate::id::anchor_hash_bytes;
use crate::pct;
use crate::record::{Role, MAX_RECORD_LINES};
use crate::speaker;
use crate::timestamp;

/// How many bytes of input are validated as UTF-8 at a time: small enough
/// that a chunk is still in cache when its frames are parsed.
const UTF8_CHUNK: usize = 64 * 1024;

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
        let h = header(&bytes[at..])?;
        let source_text = ascii(h.source);
        let anchor = self.check_source(h.source, source_text, h.hash)?;
        let key = (u64::from(u32::from_be_bytes(anchor)) << 32) | frames.len() as u64;
        let known = match h.speaker {
            None => None,
            Some(raw) => Some(self.speaker(raw)?),
        };
        let n = record_count(h.n)?;
        let start = bytes.len() - h.rest.len();
        let end = self.record_end(h.rest, start, n)?;
        let (timestamp, label, body) = split_record(self.text(start, start + end))?;
        let speaker_display = self.speaker_display(known, label, &h)?;
        let frame = Frame {
            offset: at,
            line,
            len: start - at + end + 1,
            source_text,
            role: h.role,
            pending: h.pending,
            speaker_id_encoded: h.speaker.map(ascii),
            speaker_display,
            label,
            timestamp,
            body,
        };
        self.keys.push(key);
        Ok((frame, h.lines() + n as u64))
    }

    /// Checks the source id (`source`, as text `source_text`): three
    /// canonical parts, the file's own provider/thread, and an anchor `hash`
    /// made from it. Returns the anchor hash.
    fn check_source(&mut self, source: &[u8], source_text: &str, hash: &[u8]) -> Result<[u8; 4], String> {
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
        Ok(want)
    }

    /// Where the `n` record lines of `rest` (which starts at byte `start`)
    /// end: the offset in `rest` of the last one's LF. They must be valid
    /// UTF-8.
    fn record_end(&mut self, rest: &[u8], start: usize, n: usize) -> Result<usize, String> {
        let mut lfs = memchr::memchr_iter(b'\n', rest);
        let end = lfs.nth(n - 1).ok_or_else(|| format!("truncated record: fewer than {n} complete lines"))?;
        if !self.utf8_until(start + end) {
            return Err("record is not valid UTF-8".to_owned());
        }
        Ok(end)
    }

    /// The display the record's `label` gives for the header's speaker
    /// (`known`, its index in `speakers`): a speakerless record's label must
    /// be its role, a trusted one's `label(display, id)`.
    fn speaker_display(
        &self,
        known: Option<usize>,
        label: &'a str,
        h: &Header<'a>,
    ) -> Result<Option<&'a str>, String> {
        match known {
            None => {
                if label != h.role.as_str() {
                    return Err(format!("speakerless record's label {label:?} is not its role"));
                }
                Ok(None)
            }
            Some(k) => stored_display(label, &self.speakers[k].normalised).ok_or_else(|| {
                format!(
                    "label {label:?} is not label(display, id) for speaker-id {:?}",
                    ascii(h.speaker.unwrap_or_default())
                )
            }),
        }
    }
}

/// The header lines of a frame as matched, their values not yet checked.
struct Header<'a> {
    hash: &'a [u8],
    source: &'a [u8],
    role: Role,
    pending: bool,
    /// The encoded `speaker-id` value, when the line is there.
    speaker: Option<&'a [u8]>,
    /// The digits of `record-lines`.
    n: &'a [u8],
    /// The input after the header.
    rest: &'a [u8],
}

impl Header<'_> {
    /// How many lines the header spans (the separator included).
    fn lines(&self) -> u64 {
        5 + u64::from(self.pending) + u64::from(self.speaker.is_some())
    }
}

/// Matches the header lines at the start of `i`.
fn header(i: &[u8]) -> Result<Header<'_>, String> {
    let truncated = |_| "truncated or malformed frame".to_owned();
    let (i, _) = separator(i).map_err(|_: nom::Err<()>| "expected an empty separator line".to_owned())?;
    let (i, hash) = anchor_line(i).map_err(|_| "expected `<a id=\"source-HASH8\"></a>`".to_owned())?;
    let (i, source) =
        source_line(i).map_err(|_| "expected `<!-- source:PROVIDER/THREAD/MESSAGE -->`".to_owned())?;
    let (i, role) = role_line(i).map_err(|_| "expected `<!-- role:user|assistant|system -->`".to_owned())?;
    let (i, pending) = pending_line(i).map_err(truncated)?;
    let (i, speaker) = speaker_line(i).map_err(truncated)?;
    let (rest, n) = record_lines_line(i).map_err(|_| "expected `<!-- record-lines:N -->`".to_owned())?;
    Ok(Header { hash, source, role, pending, speaker, n, rest })
}

/// The value of `record-lines`: decimal, no leading zero, 1..=1,000,000.
fn record_count(n: &[u8]) -> Result<usize, String> {
    if n[0] == b'0' {
        return Err("record-lines has a leading zero (or is zero)".to_owned());
    }
    let n = n.iter().fold(0usize, |acc, &d| acc * 10 + usize::from(d - b'0'));
    if n > MAX_RECORD_LINES {
        return Err(format!("record-lines {n} exceeds {MAX_RECORD_LINES}"));
    }
    Ok(n)
}

/// `[TIMESTAMP] LABEL: BODY` split into its timestamp, label and body.
fn split_record(record: &str) -> Result<(&str, &str, &str), String> {
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
    Ok((ts, label, body))
}

/// The display a stored label implies, given the normalised id `i`, if the
/// pair is valid (see [`Speaker::from_stored`](crate::speaker::Speaker::from_stored)).
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

/// Parses `bytes` as exactly one frame, as it stands in a file for the
/// conversation `expect` (the bytes [`Frame::offset`] .. `+ len` of a frame
/// [`parse_prefix`] gave); `None` unless they are one valid frame and
/// nothing else. The frame's `offset` is 0 and its `line` 2. What a frame
/// is (its record) depends on its own bytes only, so it equals the frame
/// parsed in its file.
pub fn parse_frame<'a>(bytes: &'a [u8], expect: Expect<'_>) -> Option<Frame<'a>> {
    let expect = (pct::encode(expect.provider), pct::encode(expect.thread));
    check_encoded("provider", expect.0.as_bytes(), true).ok()?;
    check_encoded("thread", expect.1.as_bytes(), true).ok()?;
    let mut parser = Parser {
        bytes,
        valid_to: 0,
        invalid_utf8: false,
        expect: Some(expect),
        expect_error: None,
        keys: Vec::with_capacity(1),
        speakers: Vec::new(),
    };
    let (frame, _) = parser.frame(0, 2, &[]).ok()?;
    (frame.len == bytes.len()).then_some(frame)
}

/// Parses a whole v2 file strictly: every byte must belong to a valid frame.
pub fn parse<'a>(bytes: &'a [u8], expect: Option<Expect<'_>>) -> Result<Vec<Frame<'a>>, Diagnostic> {
    let parsed = parse_prefix(bytes, expect);
    match parsed.error {
        None => Ok(parsed.frames),
        Some(d) => Err(d),
    }
}
