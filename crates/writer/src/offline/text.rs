//! Quoting: what a paragraph says was said, exactly or marked not
//! verbatim (FORMAT.md §3, *Grounded quotations*), and labels that cannot
//! break a file.

use scriptorium_topic_markdown::quote;

/// The longest sentence the offline writer keeps, in characters (after
/// normalisation): a longer one is never cut (a cut can drop the condition
/// that reverses an instruction, `… but only if …`), it stays in the
/// archive only. Also where [`inert`] cuts a name.
pub const QUOTE_CHARS: usize = 300;

/// Whether a sentence is short enough to keep whole ([`QUOTE_CHARS`]).
pub fn fits(sentence: &str) -> bool {
    quote::normalise(sentence).chars().count() <= QUOTE_CHARS
}

/// What a paragraph says was said, after `<label> said`: each of `parts`
/// (kept sentences of the turn `content`, each one that [`fits`]) quoted
/// whole, after the normalisation quotations are checked in
/// (`quote::normalise`), when no part holds `[`, `]` or a quotation mark
/// that makes a span (`quote::MARKS`) and each is found in `content` as the
/// check finds quotations (`quote::ungrounded`: on word boundaries, so not
/// a sentence that starts with a combining mark its record attaches to the
/// space before): `: “…” “…”`. Otherwise the parts joined and made
/// [`inert`] (uncut), without quotation marks: ` (not verbatim): …`.
/// Nothing is ever cut.
pub fn said(parts: &[&str], content: &str) -> String {
    let exact: Vec<String> = parts.iter().map(|p| quote::normalise(p)).collect();
    let marked = exact.iter().any(|p| p.contains(|c| matches!(c, '[' | ']') || quote::is_mark(c)));
    let wanted: Vec<&str> = exact.iter().map(String::as_str).collect();
    let quotable = !marked && quote::ungrounded(&wanted, &[&quote::normalise(content)]).is_empty();
    if !quotable {
        return format!(" (not verbatim): {}", inert_uncut(&parts.join(" ")));
    }
    let mut out = String::from(":");
    for p in &exact {
        out.push_str(&format!(" “{p}”"));
    }
    out
}

/// A label with every quotation mark that makes a span written as a
/// `\u{…}` escape, so that no display name opens a quotation in the
/// paragraph it starts.
pub fn unquoted(label: &str) -> String {
    let mut out = String::with_capacity(label.len());
    for c in label.chars() {
        if quote::is_mark(c) {
            out.push_str(&format!("\\u{{{:X}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Text made inert: white space collapsed, control and format characters
/// (NUL, bidi overrides, zero-width joiners) removed, brackets made
/// parentheses, double quotation marks and corner brackets made single
/// quotation marks, cut at [`QUOTE_CHARS`] characters.
pub fn inert(text: &str) -> String {
    inert_uncut(text).chars().take(QUOTE_CHARS).collect()
}

fn inert_uncut(text: &str) -> String {
    quote::normalise(text)
        .chars()
        .map(|c| match c {
            '[' => '(',
            ']' => ')',
            // Quotation marks would let a body open a quotation of words
            // the record does not hold, or close one and forge another.
            '“' | '„' | '‟' | '«' | '「' => '‘',
            '”' | '»' | '」' => '’',
            '"' => '\'',
            c => c,
        })
        .collect()
}

/// The key under which a sentence counts as already written: its inert
/// form (normalised as quotations are checked, brackets and quotation marks
/// neutralised), lowercased.
pub fn key(sentence: &str) -> String {
    inert_uncut(sentence).to_lowercase()
}

/// One sentence a paragraph says was said: by whom (the paragraph's
/// opening attribution or role, as written), its [`key`], and the source
/// its evidence footnote cites.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    /// The attribution (or bare role) the paragraph opens with, as written.
    pub who: String,
    /// The sentence's [`key`].
    pub key: String,
    /// The cited source id (text form), when the file defines the footnote.
    pub source: Option<String>,
}

/// The roles a speakerless paragraph opens with.
const ROLES: [&str; 4] = ["user", "assistant", "system", "tool"];

/// Who a paragraph line says spoke: a bare role, or an attribution, which
/// ends at its first `]` (a normalised display never holds `[` or `]`,
/// FORMAT.md §2.3). `None` for a line that is not a paragraph of that shape.
fn speaker_of(line: &str) -> Option<&str> {
    if let Some(role) =
        ROLES.iter().find(|r| line.strip_prefix(**r).is_some_and(|rest| rest.starts_with(" said")))
    {
        return Some(role);
    }
    let end = line.find(']')? + 1;
    line[end..].starts_with(" said").then(|| &line[..end])
}

/// What the paragraphs of a topic file's `text` say was said: each
/// quotation `“…”`, and each sentence after `said (not verbatim): `, of
/// every line that opens with who spoke (`<attribution or role> said`).
pub fn said_keys(text: &str) -> Vec<Said> {
    let sources: std::collections::HashMap<&str, &str> = text
        .lines()
        .filter_map(|l| {
            let (label, rest) = l.strip_prefix("[^")?.split_once("]: ")?;
            let source = rest.split_once("Sources: [")?.1.split_once("](")?.0;
            Some((label, source))
        })
        .collect();
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(who) = speaker_of(line) else { continue };
        let source = line
            .rsplit_once("[^")
            .and_then(|(_, l)| l.split_once(']'))
            .and_then(|(label, _)| sources.get(label))
            .map(|s| (*s).to_owned());
        let mut keys = Vec::new();
        if let Some((_, words)) = line.split_once(" said (not verbatim): ") {
            let words = words.split("[^").next().unwrap_or(words).trim_end_matches('…');
            keys.extend(crate::offline::statements(words, |_| true).into_iter().map(|(_, s)| key(s)));
        } else {
            let mut rest = line;
            while let Some(open) = rest.find('“') {
                let after = &rest[open + '“'.len_utf8()..];
                let Some(close) = after.find('”') else { break };
                keys.push(key(&after[..close]));
                rest = &after[close + '”'.len_utf8()..];
            }
        }
        out.extend(keys.into_iter().map(|key| Said { who: who.to_owned(), key, source: source.clone() }));
    }
    out
}
