//! `UNGROUNDED_QUOTE`: every quotation of three or more words in a block
//! must appear verbatim in a record the block cites (FORMAT.md §3).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use super::{diag, dir_of, join, SourceResolver};
use crate::diag::{Code, Diagnostic};
use crate::parse::{inline_spans, is_evidence_label, Block, Inline, SourceLink, TopicFile};
use crate::quote::{self, is_mark};

/// The normalised content of every record asked for, read once per check.
pub(super) struct Texts<'r> {
    resolver: &'r dyn SourceResolver,
    cache: HashMap<(String, String, String), Option<String>>,
}

impl<'r> Texts<'r> {
    pub(super) fn new(resolver: &'r dyn SourceResolver) -> Texts<'r> {
        Texts { resolver, cache: HashMap::new() }
    }

    fn key(&mut self, dir: &str, s: &SourceLink) -> Option<(String, String, String)> {
        let path = join(dir, &s.path)?;
        let key = (s.id.clone(), path, s.anchor.clone());
        if !self.cache.contains_key(&key) {
            let text = self.resolver.content(&key.0, &key.1, &key.2).map(|c| quote::normalise(&c));
            self.cache.insert(key.clone(), text);
        }
        Some(key)
    }
}

/// The block being checked and where it is.
pub(super) struct Place<'a> {
    pub(super) path: &'a str,
    pub(super) file: &'a TopicFile,
    pub(super) block: &'a Block,
    pub(super) id: Option<&'a str>,
}

/// The block's lines as quotations are read from them: footnote references
/// (as the parser finds them) and the trailing ` ^id` left out.
fn lines<'a>(place: &Place<'a>) -> Vec<(usize, Cow<'a, str>)> {
    let (file, b) = (place.file, place.block);
    (b.first_line..=b.last_line)
        .map(|k| {
            let mut line = file.line(k);
            if k == b.last_line {
                if let Some(id) = place.id {
                    line = line.strip_suffix(id).and_then(|l| l.strip_suffix(" ^")).unwrap_or(line);
                }
            }
            if file.is_fenced(k) || !line.contains("[^") {
                return (k, Cow::Borrowed(line));
            }
            let mut kept = String::with_capacity(line.len());
            let mut from = 0;
            for span in inline_spans(line) {
                if let Inline::Footnote(_) = span.item {
                    kept.push_str(&line[from..span.range.start]);
                    from = span.range.end;
                }
            }
            kept.push_str(&line[from..]);
            (k, Cow::Owned(kept))
        })
        .collect()
}

/// The lines of the ordinary (not evidence) footnote definitions the block
/// refers to.
fn ordinary_notes(place: &Place<'_>) -> Vec<usize> {
    let wanted: HashSet<&str> =
        place.block.refs.iter().map(|r| r.label.as_str()).filter(|l| !is_evidence_label(l)).collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let mut lines: Vec<usize> = place
        .file
        .definitions
        .iter()
        .filter(|d| d.evidence.is_none() && wanted.contains(d.label.as_str()))
        .map(|d| d.line)
        .collect();
    lines.sort_unstable();
    lines.dedup();
    lines
}

/// Reports every quotation of the block found in none of the records it
/// cites (`cited`: the sources of its evidence footnotes); true when there
/// is none.
pub(super) fn check_block(
    texts: &mut Texts<'_>,
    place: &Place<'_>,
    cited: &[&SourceLink],
    out: &mut Vec<Diagnostic>,
) -> bool {
    let b = place.block;
    let file = place.file;
    let notes = ordinary_notes(place);
    let marked = |k: usize| file.line(k).chars().any(is_mark);
    if !(b.first_line..=b.last_line).any(marked) && !notes.iter().any(|&k| marked(k)) {
        return true;
    }
    let lines = lines(place);
    let borrowed: Vec<(usize, &str)> = lines.iter().map(|(k, l)| (*k, l.as_ref())).collect();
    let mut quotes = quote::quotations(&borrowed);
    // An ordinary footnote the block refers to is read with it (`core.md`
    // is shown with its definitions): its quotations need the block's
    // records too. Each definition is its own text.
    for k in notes {
        let line = file.line(k);
        let body = line.split_once("]:").map_or(line, |(_, body)| body);
        quotes.extend(quote::quotations(&[(k, body)]));
    }
    if quotes.is_empty() {
        return true;
    }
    let dir = dir_of(place.path);
    let mut keys: Vec<(String, String, String)> = cited.iter().filter_map(|s| texts.key(dir, s)).collect();
    keys.sort();
    keys.dedup();
    let records: Vec<&str> = keys.iter().filter_map(|k| texts.cache[k].as_deref()).collect();
    let wanted: Vec<&str> = quotes.iter().map(|q| q.text.as_str()).collect();
    let missing = quote::ungrounded(&wanted, &records);
    for &i in &missing {
        let q = &quotes[i];
        let mut shown: String = q.text.chars().take(60).collect();
        if shown.len() < q.text.len() {
            shown.push('…');
        }
        let message = match records.len() {
            0 => format!("the quotation {shown:?} has no cited record to be found in"),
            n => format!(
                "the quotation {shown:?} is not verbatim in the {n} record{} the block cites",
                if n == 1 { "" } else { "s" }
            ),
        };
        out.push(diag(Code::UngroundedQuote, place.path, q.line, place.id, message));
    }
    missing.is_empty()
}
