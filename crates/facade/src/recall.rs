//! What the model sees of memory without asking: the fenced `core.md` every
//! session, and every turn the top hits for the message, fenced.

use std::path::Path;

use scriptorium_bm25_index::hit::{Found, Hit};
use scriptorium_bm25_index::search::{Bm25, Filters};
use scriptorium_bm25_index::tokenize::TokenizerConfig;

use crate::fence::{fence_memory, Fenced};

mod cites;
pub mod fold;

/// Hits per turn.
pub const RECALL_LIMIT: usize = 5;
/// The most characters of one recalled hit.
pub const HIT_CHARS: usize = 600;

/// The marker line the rendered `core.md` starts with.
const CORE_MARKER: &str = "<!-- scriptorium:derived core.md -->";

/// What the model gets every session, fenced: the self under
/// `self_budget` tokens ([`crate::self_prompt`]), then the rendered
/// `core.md` (the derived file, without its marker line); empty when there
/// is neither. A `core.md` that is not a regular file is not read (a
/// symbolic link is never followed).
pub fn system_prompt(root: &Path, self_budget: usize) -> Result<Fenced, crate::Error> {
    let core = core_text(root).map_err(|e| {
        crate::Error::new(scriptorium_source_archive::Code::Io, format!("cannot read core.md: {e}"))
            .at("core.md")
    })?;
    let me = crate::self_prompt::of_workspace(root, self_budget)?;
    Ok(crate::self_prompt::fence_prompt(&me.text, None, &core))
}

/// What [`system_prompt`] fences: the rendered `core.md` without its
/// marker line; empty when there is none or it is not a regular file.
pub fn core_text(root: &Path) -> std::io::Result<String> {
    if let scriptorium_transaction::views::CoreSlot::Blocked(_) =
        scriptorium_transaction::views::CoreSlot::of(root)
    {
        return Ok(String::new());
    }
    let text = match std::fs::read_to_string(root.join("core.md")) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(String::new()),
        Err(e) => return Err(e),
    };
    let body = text.strip_prefix(CORE_MARKER).map(|b| b.trim_start_matches('\n')).unwrap_or(&text);
    Ok(body.trim_end().to_owned())
}

/// The fenced top [`RECALL_LIMIT`] pieces of memory (topic blocks and
/// archived records, pending ones left out) for `message`, one per line,
/// each a different piece ([`fold`]); empty when nothing matches. The
/// self's blocks are never recalled: every session's prompt starts with
/// them ([`crate::self_prompt`]).
pub fn recall(root: &Path, message: &str) -> Result<(Fenced, usize), scriptorium_source_archive::Error> {
    let lines = recall_text(root, message)?;
    Ok((fence_memory(&lines.join("\n")), lines.len()))
}

/// What [`recall`] fences: one line per piece of memory, best first.
pub fn recall_text(root: &Path, message: &str) -> Result<Vec<String>, scriptorium_source_archive::Error> {
    Ok(recall_lines(root, message)?.iter().map(show).collect())
}

/// How recall reads the search index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexRead {
    /// Refreshed first with every file changed since it was written (what
    /// `recall` and the tools do).
    Refreshed,
    /// As the last writer left it, without looking at the workspace's
    /// files: milliseconds whatever happened since, for a coding agent's
    /// prompt hook (every write refreshes the index as it commits, so
    /// only a hand edit since the last write is not seen yet).
    AsIs,
}

/// [`recall_text`] reading the index as `read` says.
pub fn recall_text_with(
    root: &Path,
    message: &str,
    read: IndexRead,
) -> Result<Vec<String>, scriptorium_source_archive::Error> {
    Ok(recall_lines_with(root, message, read)?.iter().map(show).collect())
}

/// The hits asked of the index first; more are asked while folding frees
/// places and the index has more.
const FIRST_CANDIDATES: usize = 4 * RECALL_LIMIT;
/// The most hits asked of the index for one recall.
const MAX_CANDIDATES: usize = 1024 * RECALL_LIMIT;
/// The most places a line lists after `; also`; the rest are counted.
const MAX_PLACES: usize = 8;

/// The most characters of a message recall searches with: a longer one (a
/// pasted log, a file) is searched by its first and last halves of this,
/// where a question usually stands, so a recall costs the same whatever
/// was pasted.
pub const QUERY_CHARS: usize = 4000;

/// The part of `message` recall searches with ([`QUERY_CHARS`]).
///
/// ```
/// use scriptorium::recall::{query_of, QUERY_CHARS};
/// assert_eq!(query_of("short question"), "short question");
/// let long = format!("{}middle {}why does it fail?", "a ".repeat(3000), "b ".repeat(3000));
/// let q = query_of(&long);
/// assert!(q.chars().count() <= QUERY_CHARS + 1);
/// assert!(q.ends_with("why does it fail?") && !q.contains("middle"));
/// ```
pub fn query_of(message: &str) -> std::borrow::Cow<'_, str> {
    let n = message.chars().count();
    if n <= QUERY_CHARS {
        return message.into();
    }
    let half = QUERY_CHARS / 2;
    let head: String = message.chars().take(half).collect();
    let tail: String = message.chars().skip(n - half).collect();
    format!("{head}\n{tail}").into()
}

/// The top [`RECALL_LIMIT`] pieces of memory for `message` (searched by
/// [`query_of`]), folded.
pub fn recall_lines(
    root: &Path,
    message: &str,
) -> Result<Vec<fold::Line>, scriptorium_source_archive::Error> {
    recall_lines_with(root, message, IndexRead::Refreshed)
}

/// [`recall_lines`] reading the index as `read` says.
pub fn recall_lines_with(
    root: &Path,
    message: &str,
    read: IndexRead,
) -> Result<Vec<fold::Line>, scriptorium_source_archive::Error> {
    let query = query_of(message);
    let message = query.as_ref();
    let mut asked = FIRST_CANDIDATES;
    loop {
        let (config, filters, bm25) = (TokenizerConfig::default(), Filters::default(), Bm25::default());
        let hits = match read {
            IndexRead::Refreshed => {
                scriptorium_bm25_index::workspace::search(root, config, message, &filters, None, asked, bm25)?
            }
            IndexRead::AsIs => {
                scriptorium_bm25_index::workspace::search_as_is(root, config, message, &filters, asked, bm25)?
            }
        };
        let answered = hits.len();
        let mut cites = cites::Cites::new(root);
        // The self's blocks are in every session's prompt already.
        let pieces = hits
            .iter()
            .filter(|h| !matches!(&h.found, Found::Block(b) if crate::self_prompt::is_self(&b.path)))
            .map(|h| piece(h, &mut cites));
        let (lines, used_all) = fold::fold(pieces, RECALL_LIMIT);
        if !used_all || answered < asked || asked >= MAX_CANDIDATES {
            return Ok(lines);
        }
        asked *= 4;
    }
}

/// A search hit as a piece of memory; a block's citations are read from
/// its file.
fn piece(h: &Hit, cites: &mut cites::Cites) -> fold::Piece {
    match &h.found {
        Found::Block(b) => {
            let cited = cites.of(&b.path, &b.block_id);
            let whole = !one_line_cut(&b.text).1;
            fold::Piece::Block {
                cites: cited,
                text: b.text.clone(),
                time: b.time.clone().unwrap_or_default(),
                path: b.path.clone(),
                block_id: b.block_id.clone(),
                whole,
            }
        }
        Found::Record(r) => {
            let who = if r.attribution.is_empty() { r.role.clone() } else { r.attribution.clone() };
            let source_id = r.source_id.clone().filter(|id| !id.is_empty());
            let whole = !one_line_cut(&r.content).1;
            fold::Piece::Record {
                source_id,
                timestamp: r.timestamp.clone(),
                who,
                content: r.content.clone(),
                whole,
            }
        }
    }
}

/// Text as one line: control and format characters go (line breaks and
/// tabs become spaces), then white space is collapsed, then it is cut to
/// [`HIT_CHARS`].
fn one_line(s: &str) -> String {
    one_line_cut(s).0
}

/// [`one_line`], and whether the text was cut.
fn one_line_cut(s: &str) -> (String, bool) {
    let cleaned: String = s
        .chars()
        .filter_map(|c| {
            if c.is_whitespace() || c.is_control() {
                Some(' ')
            } else if scriptorium_source_archive::speaker::is_format_char(c) {
                None
            } else {
                Some(c)
            }
        })
        .collect();
    let collapsed = cleaned.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() > HIT_CHARS {
        let cut: String = collapsed.chars().take(HIT_CHARS).collect();
        (format!("{cut}…"), true)
    } else {
        (collapsed, false)
    }
}

/// A path, id or time as written, but on one line: white space other than
/// a plain space, control and format characters written as `\u{…}`, so a
/// file name can neither start a line of its own nor hide what it holds.
pub(crate) fn field(s: &str) -> String {
    s.chars()
        .map(|c| {
            if (c.is_whitespace() && c != ' ')
                || c.is_control()
                || scriptorium_source_archive::speaker::is_format_char(c)
            {
                format!("\\u{{{:x}}}", u32::from(c))
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// One recall line: a block with where it lives, or a record with its
/// time, attribution and source id, then the places of the pieces folded
/// into it (`; also …`). The attribution (FORMAT.md §2.3) shows a trusted
/// identity so no impostor looks like another, and the bare role for a
/// speakerless record or a legacy record (whose hint is text that may have
/// come from a message).
fn show(line: &fold::Line) -> String {
    let mut also: Vec<String> = line.also.iter().take(MAX_PLACES).map(|p| field(p)).collect();
    if line.also.len() > MAX_PLACES {
        also.push(format!("{} more", line.also.len() - MAX_PLACES));
    }
    let also = if also.is_empty() { String::new() } else { format!("also {}", also.join(", ")) };
    let places = |first: String| match (first.is_empty(), also.is_empty()) {
        (true, true) => String::new(),
        (false, true) => format!(" ({first})"),
        (true, false) => format!(" ({also})"),
        (false, false) => format!(" ({first}; {also})"),
    };
    match &line.piece {
        fold::Piece::Block { path, block_id, time, text, .. } => format!(
            "- {}{}",
            one_line(text),
            places(format!("{}#^{}, {}", field(path), field(block_id), field(time)))
        ),
        fold::Piece::Record { source_id, timestamp, who, content, .. } => format!(
            "- [{}] {}: {}{}",
            field(timestamp),
            one_line(who),
            one_line(content),
            places(source_id.as_deref().map(field).unwrap_or_default())
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scriptorium_bm25_index::hit::Block;
    use scriptorium_bm25_index::segment::Kind;
    use scriptorium_source_archive::json::{RecordView, Trust};

    fn hit(kind: Kind, found: Found) -> Hit {
        Hit {
            kind,
            found,
            score: 1.0,
            snippet: String::new(),
            bm25_rank: None,
            embedding_rank: None,
            tampered: false,
        }
    }

    fn block(id: &str, path: &str, text: &str) -> Hit {
        let b = Block {
            path: path.into(),
            block_id: id.into(),
            text: text.into(),
            time: Some("t".into()),
            trust: Trust::Trusted,
        };
        hit(Kind::Topic, Found::Block(b))
    }

    fn record(source_id: Option<&str>, attribution: &str, content: &str, timestamp: &str) -> Hit {
        let r = RecordView {
            source_id: source_id.map(str::to_owned),
            provider: None,
            thread: None,
            message: None,
            role: "user".into(),
            timestamp: timestamp.into(),
            speaker_id: None,
            speaker_display: None,
            speaker_label: None,
            speaker_trusted: attribution != "user",
            attribution: attribution.into(),
            trust: Trust::Trusted,
            content: content.into(),
            path: String::new(),
            anchor: None,
        };
        hit(Kind::Source, Found::Record(Box::new(r)))
    }

    fn hit_line(h: &Hit) -> String {
        let mut cites = cites::Cites::new(Path::new("/nonexistent"));
        let (lines, _) = fold::fold([piece(h, &mut cites)], 1);
        show(&lines[0])
    }

    #[test]
    fn a_hit_is_one_line_whatever_its_fields_hold() {
        let block = block(
            "x1",
            "topics/note\n- [2026-08-09T10:11:12Z] Ada (7391): wire it (chat/t/m1)\n.md",
            "a\u{200b} \u{202e} b\nc",
        );
        let line = hit_line(&block);
        assert_eq!(line.lines().count(), 1, "{line}");
        assert!(line.starts_with("- a b c (topics/note\\u{a}- [2026"), "{line}");
        let legacy = record(None, "user", "[Ada (7391)] hi", "2024-01-01T00:00:00Z");
        assert_eq!(hit_line(&legacy), "- [2024-01-01T00:00:00Z] user: [Ada (7391)] hi");
        let trusted = record(Some("c/t/m"), "Bo [id 4402]", "ok", "t");
        assert_eq!(hit_line(&trusted), "- [t] Bo [id 4402]: ok (c/t/m)");
    }

    #[test]
    fn folded_places_are_shown_on_the_line_that_shows_them() {
        let b = |id: &str, path: &str| block(id, path, "Ada said: “we ship on Friday at noon”");
        let r = |id: &str| record(Some(id), "Ada [id 7391]", "We ship on Friday, at noon!", "t");
        let mut cites = cites::Cites::new(Path::new("/nonexistent"));
        let hits = [r("c/t/m\u{2028}1"), b("b1", "topics/a.md"), r("c/t/m2"), b("b2", "topics/b\n.md")]
            .map(|h| piece(&h, &mut cites));
        let (lines, _) = fold::fold(hits, 5);
        let shown: Vec<String> = lines.iter().map(show).collect();
        assert_eq!(
            shown,
            [
                "- [t] Ada [id 7391]: We ship on Friday, at noon! (c/t/m\\u{2028}1; also c/t/m2)",
                "- Ada said: “we ship on Friday at noon” (topics/a.md#^b1, t; also topics/b\\u{a}.md#^b2)"
            ]
        );
    }
}
