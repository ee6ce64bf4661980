//! JSON as JavaScript writes it: a string cut in the middle of a UTF-16
//! surrogate pair (an emoji split by a truncation) leaves an escape such
//! as `\ud83d` with no partner, which JavaScript writes without complaint
//! and a strict JSON reader refuses. Harness transcripts and hook events
//! come from such writers, so each lone surrogate escape is read as
//! U+FFFD (the replacement character) instead of losing the whole line.

use std::borrow::Cow;

/// `text` with every lone surrogate escape (`\uD800`–`\uDFFF` not forming
/// a high-then-low pair) written `\ufffd`; borrowed when there is none.
///
/// ```
/// use scriptorium_scheduler::import::lone_surrogates_replaced as fix;
/// assert_eq!(fix(r#"{"a":"cut \ud83d"}"#), r#"{"a":"cut \ufffd"}"#);
/// assert_eq!(fix(r#"{"a":"\ud83d\ude00 ok"}"#), r#"{"a":"\ud83d\ude00 ok"}"#);
/// assert_eq!(fix(r#"{"a":"\\ud83d is text"}"#), r#"{"a":"\\ud83d is text"}"#);
/// assert_eq!(fix(r#"{"a":"\ude00\ud800"}"#), r#"{"a":"\ufffd\ufffd"}"#);
/// ```
pub fn lone_surrogates_replaced(text: &str) -> Cow<'_, str> {
    let b = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        let Some(unit) = unit_at(b, i) else {
            // Any other escape: skip it whole (`\\` must not start a new one).
            i += 2;
            continue;
        };
        let lone = match unit {
            0xD800..=0xDBFF => match unit_at(b, i + 6) {
                Some(0xDC00..=0xDFFF) => {
                    i += 12;
                    continue;
                }
                _ => true,
            },
            0xDC00..=0xDFFF => true,
            _ => false,
        };
        if lone {
            let s = out.get_or_insert_with(|| String::with_capacity(text.len()));
            s.push_str(&text[copied..i]);
            s.push_str("\\ufffd");
            copied = i + 6;
        }
        i += 6;
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut s) => {
            s.push_str(&text[copied..]);
            Cow::Owned(s)
        }
    }
}

/// The UTF-16 unit of a `\uXXXX` escape starting at `i`.
fn unit_at(b: &[u8], i: usize) -> Option<u16> {
    if b.get(i) != Some(&b'\\') || b.get(i + 1) != Some(&b'u') {
        return None;
    }
    let hex = std::str::from_utf8(b.get(i + 2..i + 6)?).ok()?;
    u16::from_str_radix(hex, 16).ok()
}
