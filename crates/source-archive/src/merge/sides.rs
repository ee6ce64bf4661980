//! The two sides of a merge, parsed: each must parse to its end, and the
//! frames both hold byte for byte from the start are parsed once.
//!
//! Ours is parsed whole. Of theirs, only what follows the last frame of
//! ours inside the bytes both files start with is parsed, behind a copy of
//! the marker line; whether one of those frames repeats an id of the shared
//! part, which that parse cannot see, is checked against ours' frames.
//! When ours and the part of theirs it does not share are each over a
//! megabyte, both are parsed whole, at the same time, on two threads.

use std::collections::HashMap;

use super::{Key, Piece};
use crate::code::Code;
use crate::error::{Error, Result};
use crate::v2::{self, Diagnostic, Expect, Frame};

/// Both sides after the frames they start with byte for byte.
pub(super) struct Sides<'a> {
    /// The length of the marker line and the frames both sides start with.
    pub(super) common: usize,
    /// Our frames after `common`.
    pub(super) ours: Vec<Piece<'a>>,
    /// Their frames after `common`.
    pub(super) theirs: Vec<Piece<'a>>,
}

/// The length of the longest common prefix of `a` and `b`.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const CHUNK: usize = 4096;
    let n = a.len().min(b.len());
    let mut at = 0;
    while at + CHUNK <= n && a[at..at + CHUNK] == b[at..at + CHUNK] {
        at += CHUNK;
    }
    at + a[at..n].iter().zip(&b[at..n]).take_while(|(x, y)| x == y).count()
}

/// The refusal of a side that does not parse to its end.
fn refusal(path: &str, which: &str, offset: usize, line: u64, reason: &str) -> Error {
    Error::new(
        Code::ValidationFailed,
        format!(
            "{path}: {which} does not parse to its end (byte {offset}, line {line}: {reason}); a damaged archive file is never merged"
        ),
    )
    .with_path(path)
    .with_offset(offset as u64)
    .with_line(line)
}

/// The piece of `frame`, parsed from `parsed` (a copy of `bytes[from..]`
/// behind `shift` bytes of marker line), borrowing from `bytes`.
fn piece<'a>(bytes: &'a [u8], parsed: &[u8], frame: &Frame<'_>, from: usize, shift: usize) -> Piece<'a> {
    let rebase = |s: &str| {
        let at = s.as_ptr() as usize - parsed.as_ptr() as usize - shift + from;
        std::str::from_utf8(&bytes[at..at + s.len()]).expect("a parsed frame's text is UTF-8")
    };
    let (id, timestamp) = (rebase(frame.source_text), rebase(frame.timestamp));
    let at = frame.offset - shift + from;
    Piece { id, bytes: &bytes[at..at + frame.len], key: Key::of(timestamp, id) }
}

/// How many bytes of theirs, not shared with ours, make it worth parsing
/// the two sides on two threads.
const PARALLEL: usize = 1 << 20;

/// The sides from a whole parse of each, `same` being the length of the
/// bytes they start with.
fn whole<'a>(
    path: &str,
    (ours, o): (&'a [u8], &v2::Parsed<'_>),
    (theirs, t): (&'a [u8], &v2::Parsed<'_>),
    same: usize,
) -> Result<Sides<'a>> {
    if let Some(d) = &o.error {
        return Err(refusal(path, "ours", d.offset, d.line, &d.reason));
    }
    if let Some(d) = &t.error {
        return Err(refusal(path, "theirs", d.offset, d.line, &d.reason));
    }
    let k = o.frames.partition_point(|f| f.offset + f.len <= same);
    let common = k.checked_sub(1).map_or(v2::MARKER.len() + 1, |k| o.frames[k].offset + o.frames[k].len);
    let kt = t.frames.partition_point(|f| f.offset + f.len <= common);
    Ok(Sides {
        common,
        ours: o.frames[k..].iter().map(|f| piece(ours, ours, f, 0, 0)).collect(),
        theirs: t.frames[kt..].iter().map(|f| piece(theirs, theirs, f, 0, 0)).collect(),
    })
}

/// Both sides parsed whole on two threads, or `None` when no thread could
/// be started.
fn parse_both<'a>(
    path: &str,
    ours: &'a [u8],
    theirs: &'a [u8],
    expect: Expect<'_>,
    same: usize,
) -> Option<Result<Sides<'a>>> {
    std::thread::scope(|s| {
        let spawned = std::thread::Builder::new().spawn_scoped(s, || v2::parse_prefix(theirs, Some(expect)));
        let handle = spawned.ok()?;
        let o = v2::parse_prefix(ours, Some(expect));
        let t = handle.join().ok()?;
        Some(whole(path, (ours, &o), (theirs, &t), same))
    })
}

/// Parses both sides of the v2 file at `path`.
pub(super) fn parse<'a>(
    path: &str,
    ours: &'a [u8],
    theirs: &'a [u8],
    expect: Expect<'_>,
) -> Result<Sides<'a>> {
    let same = common_prefix(ours, theirs);
    if ours.len() >= PARALLEL && theirs.len().saturating_sub(same) >= PARALLEL {
        if let Some(sides) = parse_both(path, ours, theirs, expect, same) {
            return sides;
        }
    }
    let o = v2::parse_prefix(ours, Some(expect));
    if let Some(d) = &o.error {
        return Err(refusal(path, "ours", d.offset, d.line, &d.reason));
    }
    let k = o.frames.partition_point(|f| f.offset + f.len <= same);
    let Some(last) = k.checked_sub(1).map(|k| &o.frames[k]) else {
        let t = v2::parse_prefix(theirs, Some(expect));
        return whole(path, (ours, &o), (theirs, &t), same);
    };
    let ours_rest = o.frames[k..].iter().map(|f| piece(ours, ours, f, 0, 0)).collect();
    let common = last.offset + last.len;
    let shift = v2::MARKER.len() + 1;
    let mut tail = Vec::with_capacity(shift + theirs.len() - common);
    tail.extend_from_slice(v2::MARKER.as_bytes());
    tail.push(b'\n');
    tail.extend_from_slice(&theirs[common..]);
    let t = v2::parse_prefix(&tail, Some(expect));
    if let Some(Diagnostic { offset, line, reason }) = &t.error {
        let lines = memchr::memchr_iter(b'\n', &theirs[..common]).count() as u64;
        return Err(refusal(path, "theirs", offset - shift + common, line - 1 + lines, reason));
    }
    let rest: Vec<Piece<'a>> = t.frames.iter().map(|f| piece(theirs, &tail, f, common, shift)).collect();
    if !rest.is_empty() {
        let ids: HashMap<&str, &Piece<'_>> = rest.iter().map(|p| (p.id, p)).collect();
        if let Some(twin) = o.frames[..k].iter().find_map(|f| ids.get(f.source_text)) {
            let at = twin.bytes.as_ptr() as usize - theirs.as_ptr() as usize;
            let line = 1 + memchr::memchr_iter(b'\n', &theirs[..at]).count() as u64;
            let reason = format!("duplicate source id {:?}", twin.id);
            return Err(refusal(path, "theirs", at, line, &reason));
        }
    }
    Ok(Sides { common, ours: ours_rest, theirs: rest })
}
