//! Front-matter values with a meaning of their own: a people card's limits
//! (`max_entries`, `max_entry_chars`) and the items of a list such as
//! `aliases`, which cannot hold `,`, `[` or `]` as they are (FORMAT.md §3).

use std::borrow::Cow;

/// The front-matter keys that set a people card's own limits: each, when
/// present, is a whole number of at least 1 (else `BAD_FRONT_MATTER`).
pub const LIMIT_KEYS: [&str; 2] = ["max_entries", "max_entry_chars"];

/// The largest limit a card may set (more is `BAD_FRONT_MATTER`).
pub const MAX_LIMIT: usize = 1_000_000_000;

/// The most characters (decoded) of one file's aliases that search reads
/// ([`searchable`]).
pub const ALIAS_CHARS: usize = 1024;

/// The aliases search reads of `aliases` (as written, in order): each
/// decoded ([`unescape_item`]), the first ones up to [`ALIAS_CHARS`]
/// characters in all; the first that would pass the bound ends the list,
/// so a file's search text stays small however many names it lists.
pub fn searchable<'a>(aliases: &[&'a str]) -> Vec<Cow<'a, str>> {
    let mut out = Vec::new();
    let mut chars = 0;
    for a in aliases {
        let name = unescape_item(a);
        chars += name.chars().count();
        if chars > ALIAS_CHARS {
            break;
        }
        out.push(name);
    }
    out
}

/// A limit as a card writes it: ASCII digits without a leading zero, from
/// 1 to [`MAX_LIMIT`]; `None` for anything else.
///
/// ```
/// use scriptorium_topic_markdown::parse::limit_value;
/// assert_eq!(limit_value("50"), Some(50));
/// assert_eq!(limit_value("0"), None);
/// assert_eq!(limit_value("050"), None);
/// assert_eq!(limit_value("-5"), None);
/// assert_eq!(limit_value("lots"), None);
/// ```
pub fn limit_value(value: &str) -> Option<usize> {
    let b = value.as_bytes();
    if b.is_empty() || b.len() > 10 || b[0] == b'0' || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    value.parse::<usize>().ok().filter(|&n| n <= MAX_LIMIT)
}

/// A value written as one item of a front-matter list: `\`, `,`, `[`, `]`
/// and the ASCII `"` are written `\u{hex}` (lowercase hex), so the list
/// keeps its shape and no quotation mark is left to mislead a reader.
/// [`unescape_item`] gives the value back.
///
/// ```
/// use scriptorium_topic_markdown::parse::{escape_item, unescape_item};
/// assert_eq!(escape_item("Smith, Jo"), "Smith\\u{2c} Jo");
/// assert_eq!(escape_item("Bo \"the boss\""), "Bo \\u{22}the boss\\u{22}");
/// assert_eq!(unescape_item(&escape_item("a\\b, [c]")), "a\\b, [c]");
/// ```
pub fn escape_item(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if matches!(c, '\\' | ',' | '[' | ']' | '"') {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// A list item (or any front-matter value) with its `\u{hex}` escapes
/// (1 to 6 hex digits naming a Unicode scalar value) decoded; anything
/// else, a malformed escape included, is kept as written. Linear in the
/// value's length.
///
/// ```
/// use scriptorium_topic_markdown::parse::unescape_item;
/// assert_eq!(unescape_item("Smith\\u{2c} Jo"), "Smith, Jo");
/// assert_eq!(unescape_item("O\\u{2019}Brien"), "O\u{2019}Brien");
/// assert_eq!(unescape_item("\\u{d800} \\u{} \\u{41"), "\\u{d800} \\u{} \\u{41");
/// ```
pub fn unescape_item(value: &str) -> Cow<'_, str> {
    if !value.contains("\\u{") {
        return Cow::Borrowed(value);
    }
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(k) = rest.find("\\u{") {
        out.push_str(&rest[..k]);
        let after = &rest[k + 3..];
        let digits = after.bytes().take(7).take_while(u8::is_ascii_hexdigit).count();
        let decoded = (1..=6)
            .contains(&digits)
            .then(|| after.as_bytes().get(digits) == Some(&b'}'))
            .filter(|closed| *closed)
            .and_then(|_| u32::from_str_radix(&after[..digits], 16).ok())
            .and_then(char::from_u32);
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &after[digits + 1..];
            }
            None => {
                out.push_str("\\u{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_survives_an_escape_round_trip() {
        for v in ["", "Ada", "a,b", "]", "[x]", "\\u{2c}", "\\", "\"q\"", "José 李", "\\u{"] {
            let e = escape_item(v);
            assert!(!e.contains([',', '[', ']', '"']), "{e}");
            assert_eq!(unescape_item(&e), v);
        }
    }

    #[test]
    fn search_reads_the_first_aliases_within_bounds() {
        assert_eq!(searchable(&["Dave", "dave\\u{2c}k"]), ["Dave", "dave,k"]);
        let many: Vec<String> = (0..600).map(|k| format!("n{k}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        // n0 … n9 are 2 characters, n10 … n99 3, n100 … 4: 20 + 270 + 4 × 183.
        assert_eq!(searchable(&many).len(), 283);
        let long = "x".repeat(ALIAS_CHARS);
        assert_eq!(searchable(&[&long, "Dave"]), [long.as_str()]);
        assert!(searchable(&["Dave", &format!("{long}y"), "Bo"]) == ["Dave"]);
    }

    #[test]
    fn limits_are_whole_numbers_from_one() {
        assert_eq!(limit_value("1"), Some(1));
        assert_eq!(limit_value("1000000000"), Some(MAX_LIMIT));
        for bad in ["", "1000000001", "99999999999", "+1", "1.5", " 1", "１"] {
            assert_eq!(limit_value(bad), None, "{bad:?}");
        }
    }
}
