//! The legacy archive reader (FORMAT.md §2.6): read-only, nothing trusted.
//!
//! A legacy file `sources/<provider>/<thread>.md` is a sequence of records,
//! each starting at a line `[TIMESTAMP] ROLE: ` (ROLE one of `user`,
//! `assistant`, `system`, `tool`) and running to the line before the next
//! such line. `<a id="source-…"></a>` and `<!-- source:… -->` lines directly
//! before a record line name its anchor and source id (other whole-line
//! comments among or after them, such as legacy speaker comments, are
//! skipped and trusted for nothing; comments with no naming line above them
//! are content). Text before the first
//! record line (a title, say) belongs to no record.
//!
//! Nothing in a legacy file establishes identity: speaker comments and
//! v2-looking frames inside are plain text. The only identity signal is the
//! *speaker hint* of a `user` record whose content begins with
//! `[display (id)] `, always reported as untrusted.
//!
//! Choices where the format is silent: the anchor/source lines that belong to
//! the next record, and then the blank lines that separate two records, are
//! not part of the previous record's content; a timestamp may carry a numeric
//! offset instead of `Z`; a `<!-- source:… -->` value is decoded leniently.

use crate::id::SourceId;
use crate::pct;
use crate::timestamp;

/// The roles a legacy record line may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LegacyRole {
    /// `user`
    User,
    /// `assistant`
    Assistant,
    /// `system`
    System,
    /// `tool`
    Tool,
}

impl LegacyRole {
    /// The role as written.
    pub fn as_str(self) -> &'static str {
        match self {
            LegacyRole::User => "user",
            LegacyRole::Assistant => "assistant",
            LegacyRole::System => "system",
            LegacyRole::Tool => "tool",
        }
    }
}

/// An untrusted speaker hint read from the start of a legacy user record.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SpeakerHint {
    /// The display part of `[display (id)]`.
    pub display: String,
    /// The id part of `[display (id)]`.
    pub id: String,
}

impl SpeakerHint {
    /// `display (id)`.
    pub fn label(&self) -> String {
        format!("{} ({})", self.display, self.id)
    }

    /// How the hint is named where one must be chosen (a speaker filter's
    /// candidates): its label in printable ASCII
    /// ([`crate::speaker::shown_id`]) and `[legacy hint]`, which no trusted
    /// identity's attribution ends in. It is text a message held, never
    /// shown as who spoke.
    pub fn attribution(&self) -> String {
        format!("{} [legacy hint]", crate::speaker::shown_id(&self.label()))
    }
}

/// One record of a legacy file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LegacyRecord {
    /// The source id named by a `<!-- source:… -->` line, if any.
    pub id: Option<SourceId>,
    /// The anchor named by an `<a id="…">` line, if any.
    pub anchor: Option<String>,
    /// The role.
    pub role: LegacyRole,
    /// The timestamp, verbatim.
    pub timestamp: String,
    /// The content: the record line after `ROLE: ` and the lines after it.
    pub content: String,
    /// The untrusted speaker hint (user records only).
    pub hint: Option<SpeakerHint>,
    /// Byte offset of the record line.
    pub offset: usize,
    /// 1-based line of the record line.
    pub line: u64,
}

/// Splits a record line into (timestamp, role, rest of the line).
fn record_line(line: &str) -> Option<(&str, LegacyRole, &str)> {
    let rest = line.strip_prefix('[')?;
    let close = rest.find(']')?;
    let ts = &rest[..close];
    if !timestamp::is_valid_legacy(ts) {
        return None;
    }
    let rest = rest[close + 1..].strip_prefix(' ')?;
    for role in [LegacyRole::User, LegacyRole::Assistant, LegacyRole::System, LegacyRole::Tool] {
        if let Some(after) = rest.strip_prefix(role.as_str()).and_then(|r| r.strip_prefix(':')) {
            if after.is_empty() {
                return Some((ts, role, ""));
            }
            if let Some(content) = after.strip_prefix(' ') {
                return Some((ts, role, content));
            }
        }
    }
    None
}

fn anchor_line(line: &str) -> Option<&str> {
    let v = line.strip_prefix("<a id=\"")?.strip_suffix("\"></a>")?;
    v.starts_with("source-").then_some(v)
}

/// A whole-line HTML comment other than a source line (a legacy speaker
/// comment, say): part of the block that precedes a record line, never of
/// any record's content, and never a source of identity.
fn other_comment_line(line: &str) -> bool {
    line.starts_with("<!--") && line.ends_with("-->") && source_line(line).is_none()
}

fn source_line(line: &str) -> Option<Option<SourceId>> {
    let v = line.strip_prefix("<!-- source:")?.strip_suffix(" -->")?;
    let mut parts = v.split('/');
    let id = match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(p), Some(t), Some(m), None) => {
            let p = pct::decode_lenient(p);
            let t = pct::decode_lenient(t);
            let m = pct::decode_lenient(m);
            match (p, t, m) {
                (Some(p), Some(t), Some(m)) => SourceId::new(&p, &t, &m).ok(),
                _ => None,
            }
        }
        _ => None,
    };
    Some(id)
}

/// Reads `[display (id)] ` at the start of a user record's content.
pub fn speaker_hint(content: &str) -> Option<SpeakerHint> {
    let rest = content.strip_prefix('[')?;
    let close = rest.find(']')?;
    if !rest[close + 1..].starts_with(' ') {
        return None;
    }
    let inner = rest[..close].strip_suffix(')')?;
    let open = inner.rfind(" (")?;
    let (display, id) = (&inner[..open], &inner[open + 2..]);
    if display.trim().is_empty() || id.trim().is_empty() || display.contains('\n') {
        return None;
    }
    Some(SpeakerHint { display: display.to_owned(), id: id.to_owned() })
}

/// Reads every record of a legacy file. Never fails and never panics;
/// invalid UTF-8 is read lossily.
pub fn parse(bytes: &[u8]) -> Vec<LegacyRecord> {
    let text = String::from_utf8_lossy(bytes);
    // (offset, line text) for every line, without its LF.
    let mut lines: Vec<(usize, &str)> = Vec::new();
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', text.as_bytes()) {
        lines.push((start, &text[start..end]));
        start = end + 1;
    }
    if start < text.len() {
        lines.push((start, &text[start..]));
    }
    let strip_cr = |l: &str| l.strip_suffix('\r').unwrap_or(l).to_owned();
    let headers: Vec<usize> = (0..lines.len()).filter(|&k| record_line(lines[k].1).is_some()).collect();
    let mut naming_starts = Vec::with_capacity(headers.len());
    let mut records = Vec::with_capacity(headers.len());
    for (h, &k) in headers.iter().enumerate() {
        let (offset, line) = lines[k];
        let Some((ts, role, first)) = record_line(line) else { continue };
        // Lines directly before the record line that name it: anchor and
        // source lines, with any other whole-line comments among or after
        // them (legacy speaker comments). Comments above the first naming
        // line stay in the previous record.
        let floor = if h == 0 { 0 } else { headers[h - 1] + 1 };
        let mut run = k;
        while run > floor {
            let l = strip_cr(lines[run - 1].1);
            if anchor_line(&l).is_some() || source_line(&l).is_some() || other_comment_line(&l) {
                run -= 1;
            } else {
                break;
            }
        }
        let naming_start = (run..k)
            .find(|&j| {
                let l = strip_cr(lines[j].1);
                anchor_line(&l).is_some() || source_line(&l).is_some()
            })
            .unwrap_or(k);
        let (mut id, mut anchor) = (None, None);
        for line in &lines[naming_start..k] {
            let l = strip_cr(line.1);
            if let Some(src) = source_line(&l) {
                id = id.or(src);
            } else if let Some(a) = anchor_line(&l) {
                anchor = anchor.or_else(|| Some(a.to_owned()));
            }
        }
        naming_starts.push(naming_start);
        records.push((k, ts, role, first, id, anchor, offset));
    }
    let mut out = Vec::with_capacity(records.len());
    for (h, (k, ts, role, first, id, anchor, offset)) in records.into_iter().enumerate() {
        // Content runs to the line before the next record line, minus the
        // next record's naming lines and the blank lines before them.
        let mut end = naming_starts.get(h + 1).copied().unwrap_or(lines.len());
        while end > k + 1 && lines[end - 1].1.trim().is_empty() {
            end -= 1;
        }
        let mut content = first.to_owned();
        for (_, l) in &lines[k + 1..end] {
            content.push('\n');
            content.push_str(l);
        }
        let hint = (role == LegacyRole::User).then(|| speaker_hint(&content)).flatten();
        let anchor = anchor.or_else(|| id.as_ref().map(SourceId::anchor));
        out.push(LegacyRecord {
            id,
            anchor,
            role,
            timestamp: ts.to_owned(),
            content,
            hint,
            offset,
            line: k as u64 + 1,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    //! Legacy reader vectors.
    use super::*;

    const FILE: &str = "# Session sess-7f2a\n\n\
<a id=\"source-9047c191\"></a>\n\
<!-- source:openprogram/sess-7f2a/msg_2f9b -->\n\
[2024-03-15T10:00:00Z] user: [Dave (42)] I prefer short answers\n\
second line\n\
\n\
<a id=\"source-a26d0031\"></a>\n\
<!-- source:openprogram/sess-7f2a/msg_3a01 -->\n\
<!-- speaker-id:7391 -->\n\
[2024-03-15T10:00:05Z] assistant: Noted.\n\
<!-- record-lines:1 -->\n\
[2024-03-15T10:00:06Z] tool: ok\n\
[2024-03-15T10:00:07+02:00] system: [Ada (7391)] not a hint\n";

    #[test]
    fn reads_records() {
        let recs = parse(FILE.as_bytes());
        assert_eq!(recs.len(), 4);
        let r = &recs[0];
        assert_eq!(r.id.as_ref().unwrap().text(), "openprogram/sess-7f2a/msg_2f9b");
        assert_eq!(r.anchor.as_deref(), Some("source-9047c191"));
        assert_eq!(r.content, "[Dave (42)] I prefer short answers\nsecond line");
        assert_eq!(r.hint, Some(SpeakerHint { display: "Dave".into(), id: "42".into() }));
        assert_eq!(r.line, 5);
        // A speaker comment in a legacy file is plain text and trusts nothing.
        let r = &recs[1];
        assert_eq!(r.role, LegacyRole::Assistant);
        assert_eq!(r.id.as_ref().unwrap().message(), "msg_3a01");
        assert_eq!(r.content, "Noted.\n<!-- record-lines:1 -->");
        assert_eq!(recs[2].id, None);
        // A comment above the first naming line stays in the previous record.
        let text =
            "[2026-01-01T00:00:00Z] user: a\n<!-- speaker-id:7391 -->\n[2026-01-01T00:00:01Z] user: b\n";
        assert_eq!(parse(text.as_bytes())[0].content, "a\n<!-- speaker-id:7391 -->");
        assert_eq!(recs[2].role, LegacyRole::Tool);
        // Only user records carry a hint.
        assert_eq!(recs[3].hint, None);
        assert_eq!(recs[3].timestamp, "2024-03-15T10:00:07+02:00");
    }

    #[test]
    fn hints() {
        assert_eq!(speaker_hint("[Ada (7391)] hi").unwrap().label(), "Ada (7391)");
        assert_eq!(speaker_hint("[Ada (7391)] hi").unwrap().attribution(), "Ada (7391) [legacy hint]");
        assert_eq!(
            speaker_hint("[Ad[a\u{200b} (7391)] hi").unwrap().attribution(),
            "Ad\\u{5b}a\\u{200b} (7391) [legacy hint]"
        );
        assert_eq!(speaker_hint("[Ada (7391)]hi"), None);
        assert_eq!(speaker_hint("[Ada] hi"), None);
        assert_eq!(speaker_hint("[ (7391)] hi"), None);
        assert_eq!(speaker_hint("x [Ada (7391)] hi"), None);
    }

    #[test]
    fn never_panics_on_odd_input() {
        for input in ["", "\n", "[", "[2024-03-15T10:00:00Z] user:", "\u{FEFF}[2024-03-15T10:00:00Z] user: x"]
        {
            let _ = parse(input.as_bytes());
        }
        assert_eq!(parse(b"[2024-03-15T10:00:00Z] user:").len(), 1);
        assert_eq!(parse(b"\xff\xfe[2024-03-15T10:00:00Z] user: x\n").len(), 0);
    }
}
