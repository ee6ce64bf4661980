//! Grounded quotations (FORMAT.md §3): a span of three or more words in
//! quotation marks inside a block must appear verbatim, after
//! [`normalise`], in a record the block cites.
//!
//! Finding the spans is one pass over the block; checking them is one pass
//! over each cited record's normalised text for all of a block's
//! quotations at once (an Aho–Corasick automaton), so the work is linear in
//! the block and the records it cites however many quotations it holds.

use std::collections::{HashMap, HashSet};

use aho_corasick::automaton::Automaton;
use aho_corasick::nfa::contiguous::NFA;
use aho_corasick::{Anchored, MatchKind};
use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};
use unicode_segmentation::UnicodeSegmentation;

/// The pairs of quotation marks (opening, closing) that make a span.
pub const MARKS: [(char, char); 4] = [('“', '”'), ('"', '"'), ('«', '»'), ('「', '」')];

/// The fewest words (UAX #29) a span needs to be checked.
pub const MIN_WORDS: usize = 3;

/// True for a character of [`MARKS`].
pub fn is_mark(c: char) -> bool {
    MARKS.iter().any(|&(o, cl)| c == o || c == cl)
}

/// The form both sides are compared in: control (`Cc`) and format (`Cf`)
/// characters that are not white space removed, every run of White_Space
/// one space, trimmed, then NFC. Normalising a substring of a text gives a
/// substring of the normalised text (cut inside a composing sequence aside).
///
/// ```
/// use scriptorium_topic_markdown::quote::normalise;
/// assert_eq!(normalise(" a\u{200B}b \t\n c\u{0007} "), "ab c");
/// assert_eq!(normalise("cafe\u{301}"), "café");
/// ```
pub fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            space = !out.is_empty();
        } else if !(c.is_control() || scriptorium_source_archive::speaker::is_format_char(c)) {
            if space {
                out.push(' ');
                space = false;
            }
            out.push(c);
        }
    }
    if is_nfc_quick(out.chars()) == IsNormalized::Yes {
        out
    } else {
        out.nfc().collect()
    }
}

/// True when `text` holds at least [`MIN_WORDS`] UAX #29 words, counting
/// characters that show nothing (control, format and other
/// default-ignorable characters such as U+200B, U+2060, U+00AD, U+034F,
/// U+3164) as spaces: words glued by invisible characters still count as
/// the words a reader sees, so `Always\u{200B}share\u{200B}the\u{200B}key`
/// is checked (and, normalised, matches no record).
pub fn is_checked(text: &str) -> bool {
    let seen: String = text.chars().map(|c| if shows_nothing(c) { ' ' } else { c }).collect();
    seen.unicode_words().take(MIN_WORDS).count() == MIN_WORDS
}

/// Control, format and default-ignorable characters, and the fillers that
/// render as blank space (Hangul fillers, U+2800 braille blank).
fn shows_nothing(c: char) -> bool {
    c.is_control()
        || scriptorium_source_archive::speaker::is_format_char(c)
        || matches!(c as u32,
            0x00AD | 0x034F | 0x061C | 0x115F | 0x1160 | 0x17B4 | 0x17B5 | 0x180B..=0x180F
            | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F | 0x2800 | 0x3164
            | 0xFE00..=0xFE0F | 0xFEFF | 0xFFA0 | 0xFFF0..=0xFFF8 | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A | 0xE0000..=0xE0FFF)
}

/// A quotation to ground: where its opening mark is and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quotation {
    /// The 0-based file line of its opening mark.
    pub line: usize,
    /// The text between the marks, normalised.
    pub text: String,
}

/// The quotations of three or more words in `lines` (a block's lines as
/// `(0-based file line, text)`, read as one text joined by line ends).
///
/// For each kind of mark on its own, a span starts at an opening mark and
/// ends at the next closing mark of that kind (for `"`, marks pair up in
/// order); an opening mark inside an open span of its kind is text, a
/// closing mark with no open span closes a span that starts where the last
/// span of its kind ended (or at the block's start), and a span still open
/// at the end of the block runs to its end. Spans of different kinds may
/// nest or overlap; each is checked.
pub fn quotations(lines: &[(usize, &str)]) -> Vec<Quotation> {
    let mut out = Vec::new();
    let mut open: [Option<(usize, usize)>; 4] = [None; 4];
    let mut text = String::new();
    let mut line_of: Vec<(usize, usize)> = Vec::with_capacity(lines.len());
    for (k, (line, s)) in lines.iter().enumerate() {
        if k > 0 {
            text.push('\n');
        }
        line_of.push((text.len(), *line));
        text.push_str(s);
    }
    let line_at = |i: usize| {
        let k = line_of.partition_point(|&(start, _)| start <= i);
        line_of[k.saturating_sub(1)].1
    };
    let mut emit = |from: usize, to: usize, at: usize| {
        let raw = &text[from..to];
        if is_checked(raw) {
            out.push(Quotation { line: line_at(at), text: normalise(raw) });
        }
    };
    // Where the last span of each kind ended (or the block's start).
    let mut last_end = [0usize; 4];
    for (i, c) in text.char_indices() {
        if !is_mark(c) {
            continue;
        }
        let after = i + c.len_utf8();
        for (k, &(o, cl)) in MARKS.iter().enumerate() {
            match open[k] {
                Some((from, at)) if c == cl => {
                    emit(from, i, at);
                    open[k] = None;
                    last_end[k] = after;
                }
                None if c == o => open[k] = Some((after, i)),
                None if c == cl => {
                    // A closing mark with nothing open closes what came
                    // since the last span of its kind: a quotation whose
                    // opening mark was left in another block still counts.
                    emit(last_end[k], i, last_end[k]);
                    last_end[k] = after;
                }
                _ => {}
            }
        }
    }
    for (from, at) in open.into_iter().flatten() {
        emit(from, text.len(), at);
    }
    out
}

/// `text` with U+0001 (which [`normalise`] never leaves) at each of its
/// UAX #29 word boundaries, its start and end included. A quotation marked
/// this way is found in a marked record only where it starts and ends on
/// the record's word boundaries: `“safe to share”` is not in `unsafe to
/// share`, nor `“he budget is 5”` in `the budget is 50k`.
///
/// ```
/// use scriptorium_topic_markdown::quote::bounded;
/// assert_eq!(bounded("the key, 50k"), "\u{1}the\u{1} \u{1}key\u{1},\u{1} \u{1}50k\u{1}");
/// ```
pub fn bounded(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 2 + 2);
    out.push('\u{1}');
    for segment in text.split_word_bounds() {
        out.push_str(segment);
        out.push('\u{1}');
    }
    out
}

/// The longest prefix of `text` of at most `max` characters that ends on a
/// word boundary ([`bounded`]'s), for a writer that must cut a quotation
/// and keep it grounded.
///
/// ```
/// use scriptorium_topic_markdown::quote::cut_on_boundary;
/// assert_eq!(cut_on_boundary("the budget is 50k", 12), "the budget ");
/// assert_eq!(cut_on_boundary("the budget", 99), "the budget");
/// ```
pub fn cut_on_boundary(text: &str, max: usize) -> &str {
    let mut end = 0;
    let mut chars = 0;
    for (at, segment) in text.split_word_bound_indices() {
        chars += segment.chars().count();
        if chars > max {
            break;
        }
        end = at + segment.len();
    }
    &text[..end]
}

/// The indexes of the `quotes` that appear in none of `texts` (each already
/// [`normalise`]d), in order, on word boundaries ([`bounded`]). One pass
/// over each text for all quotations.
pub fn ungrounded(quotes: &[&str], texts: &[&str]) -> Vec<usize> {
    let quotes: Vec<String> = quotes.iter().map(|q| bounded(q)).collect();
    let texts: Vec<String> = texts.iter().map(|t| bounded(t)).collect();
    let quotes: Vec<&str> = quotes.iter().map(String::as_str).collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    missing(&quotes, &texts)
}

/// The search behind [`ungrounded`], over texts already [`bounded`].
fn missing(quotes: &[&str], texts: &[&str]) -> Vec<usize> {
    let mut distinct: Vec<&str> = Vec::new();
    let mut slot: HashMap<&str, usize> = HashMap::new();
    let pattern: Vec<usize> = quotes
        .iter()
        .map(|q| {
            *slot.entry(q).or_insert_with(|| {
                distinct.push(q);
                distinct.len() - 1
            })
        })
        .collect();
    let mut found = vec![false; distinct.len()];
    let mut left = distinct.len();
    if left > 0 && !texts.is_empty() {
        match NFA::builder().match_kind(MatchKind::Standard).prefilter(false).build(&distinct) {
            Ok(nfa) => {
                for t in texts {
                    scan(&nfa, t.as_bytes(), &mut found, &mut left);
                    if left == 0 {
                        break;
                    }
                }
            }
            // Too many states for one automaton: one search per quotation.
            Err(_) => {
                for (k, q) in distinct.iter().enumerate() {
                    let f = memchr::memmem::Finder::new(q.as_bytes());
                    found[k] = texts.iter().any(|t| f.find(t.as_bytes()).is_some());
                }
            }
        }
    }
    (0..quotes.len()).filter(|&i| !found[pattern[i]]).collect()
}

/// Marks every pattern of `nfa` that occurs in `text`. A match state lists
/// every pattern ending there, so each distinct match state is read once.
fn scan(nfa: &NFA, text: &[u8], found: &mut [bool], left: &mut usize) {
    let Ok(mut sid) = nfa.start_state(Anchored::No) else { return };
    let mut seen = HashSet::new();
    for &b in text {
        sid = nfa.next_state(Anchored::No, sid, b);
        if nfa.is_match(sid) && seen.insert(sid) {
            for m in 0..nfa.match_len(sid) {
                let p = nfa.match_pattern(sid, m).as_usize();
                if !found[p] {
                    found[p] = true;
                    *left -= 1;
                }
            }
            if *left == 0 {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests;
