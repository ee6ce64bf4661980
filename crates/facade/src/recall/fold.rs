//! Folding: every recall line shows a different piece of memory.
//!
//! Hits come best first. A hit that repeats what a line already shows is
//! folded into that line — the line keeps showing what it showed and adds
//! the hit's place to its citations — and the next hit takes the freed
//! place. A hit repeats a line when
//!
//! 1. it is a record the line's block cites;
//! 2. it is a block every record it cites is shown whole (not cut), as a
//!    record, by the lines already there (it is folded into the line
//!    showing the first);
//! 3. both are blocks, or both records with the same attribution, and its
//!    words are the line's (after normalisation: control and format
//!    characters removed, NFC, lowercase, runs of letters and digits, one
//!    space between them), or one holds the other as a run of whole words
//!    at least [`MIN_CONTAINED_WORDS`] long — for two blocks only when they
//!    cite the same records. The same words said by two speakers are two
//!    pieces, and a block quoting someone inside another's message is not
//!    theirs. A hit that holds a line's words takes that line's place (it
//!    shows more), the line's citations kept.

use std::collections::BTreeSet;

use scriptorium_topic_markdown::quote;

/// The fewest words a text must have to be folded into a text that holds
/// it; shorter texts fold only into an equal one.
pub const MIN_CONTAINED_WORDS: usize = 4;

/// One recalled piece of memory, as the index answered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// A topic block.
    Block {
        /// The topic file.
        path: String,
        /// The block id.
        block_id: String,
        /// Its newest evidence time.
        time: String,
        /// Its text (footnote references and block id removed).
        text: String,
        /// The source ids it cites.
        cites: Vec<String>,
        /// Whether its line shows all of it (it is not cut).
        whole: bool,
    },
    /// An archived record.
    Record {
        /// Its source id (none for a legacy record without one).
        source_id: Option<String>,
        /// When it was said.
        timestamp: String,
        /// The attribution shown (or the bare role).
        who: String,
        /// What was said.
        content: String,
        /// Whether its line shows all of it (it is not cut).
        whole: bool,
    },
}

impl Piece {
    /// Where the piece lives: `path#^id` for a block, the source id for a
    /// record.
    pub fn place(&self) -> Option<String> {
        match self {
            Piece::Block { path, block_id, .. } => Some(format!("{path}#^{block_id}")),
            Piece::Record { source_id, .. } => source_id.clone(),
        }
    }

    fn whole(&self) -> bool {
        match self {
            Piece::Block { whole, .. } | Piece::Record { whole, .. } => *whole,
        }
    }

    /// Who says it and the normalised words it says: a block's text
    /// (which names whom it is about when that matters) said by no one, a
    /// record's content said by its attribution — so the same words from
    /// two speakers are two pieces, and a record and a block are compared
    /// only through citations.
    fn said(&self) -> (Option<&str>, String) {
        match self {
            Piece::Block { text, .. } => (None, words(text)),
            Piece::Record { who, content, .. } => (Some(who), words(content)),
        }
    }
}

/// A recall line: the piece it shows, and the places of the hits folded
/// into it, in the order they came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// What the line shows.
    pub piece: Piece,
    /// The places of the pieces folded into it.
    pub also: Vec<String>,
    /// The records whose text the line shows.
    shown_records: BTreeSet<String>,
    /// Who says what it shows ([`Piece::said`]).
    who: Option<String>,
    /// Normalised words of what it shows.
    words: String,
    /// Whether it shows all of its piece (it is not cut).
    whole: bool,
}

impl Line {
    fn new(piece: Piece) -> Line {
        let whole = piece.whole();
        let (who, words) = piece.said();
        let who = who.map(str::to_owned);
        let shown_records = match &piece {
            Piece::Record { source_id: Some(id), whole: true, .. } => BTreeSet::from([id.clone()]),
            _ => BTreeSet::new(),
        };
        Line { piece, also: Vec::new(), shown_records, who, words, whole }
    }

    fn cites(&self, id: &str) -> bool {
        matches!(&self.piece, Piece::Block { cites, .. } if cites.iter().any(|c| c == id))
    }

    /// The records the line's block cites, as a set (none for a record).
    fn cited(&self) -> BTreeSet<&str> {
        match &self.piece {
            Piece::Block { cites, .. } => cites.iter().map(String::as_str).collect(),
            Piece::Record { .. } => BTreeSet::new(),
        }
    }

    /// Adds a place to the citations, once, and never the line's own.
    fn add_place(&mut self, place: Option<String>) {
        if let Some(p) = place {
            if self.piece.place().as_deref() != Some(p.as_str()) && !self.also.contains(&p) {
                self.also.push(p);
            }
        }
    }
}

/// What to do with a hit that repeats line `i`.
enum Fold {
    /// Add the hit's place to line `i`; `true` when the line shows all the
    /// hit says (a record said again, or inside a longer one, by the same
    /// speaker), so the record counts as shown.
    Into(usize, bool),
    /// The hit shows more than line `i`: it takes its place, keeping the
    /// line's citations.
    Over(usize),
}

/// The lines for `hits` (best first): at most `limit`, each a different
/// piece of memory. Returns the lines and whether every hit was used
/// (`false` when `limit` was reached first).
pub fn fold(hits: impl IntoIterator<Item = Piece>, limit: usize) -> (Vec<Line>, bool) {
    let mut lines: Vec<Line> = Vec::new();
    for piece in hits {
        match repeats(&lines, &piece) {
            Some(Fold::Into(i, shown)) => {
                if let (true, Piece::Record { source_id: Some(id), .. }) = (shown, &piece) {
                    lines[i].shown_records.insert(id.clone());
                }
                lines[i].add_place(piece.place());
            }
            Some(Fold::Over(i)) => {
                let old = std::mem::replace(&mut lines[i], Line::new(piece));
                let line = &mut lines[i];
                line.add_place(old.piece.place());
                for p in old.also {
                    line.add_place(Some(p));
                }
                line.shown_records.extend(old.shown_records);
            }
            None if lines.len() == limit => return (lines, false),
            None => lines.push(Line::new(piece)),
        }
    }
    (lines, true)
}

/// The line `piece` repeats, if any.
fn repeats(lines: &[Line], piece: &Piece) -> Option<Fold> {
    match piece {
        Piece::Record { source_id: Some(id), .. } => {
            if let Some(i) = lines.iter().position(|l| l.cites(id) || l.shown_records.contains(id)) {
                return Some(Fold::Into(i, false));
            }
        }
        Piece::Block { cites, .. } if !cites.is_empty() => {
            let shown = |id: &String| lines.iter().position(|l| l.shown_records.contains(id));
            if cites.iter().all(|c| shown(c).is_some()) {
                return cites.iter().filter_map(shown).min().map(|i| Fold::Into(i, false));
            }
        }
        _ => {}
    }
    let (who, mine) = piece.said();
    if mine.is_empty() {
        return None;
    }
    // Two blocks hold one another only when they cite the same records: a
    // block quoting "Ada said: …" in someone else's message is not Ada's.
    let cited: BTreeSet<&str> = match piece {
        Piece::Block { cites, .. } => cites.iter().map(String::as_str).collect(),
        Piece::Record { .. } => BTreeSet::new(),
    };
    // A text is folded into one that holds it only when that one is shown
    // whole: a cut line may not show the words.
    for (i, l) in lines.iter().enumerate().filter(|(_, l)| l.who.as_deref() == who) {
        if l.words == mine {
            return Some(Fold::Into(i, true));
        }
        let comparable = who.is_some() || (!cited.is_empty() && l.cited() == cited);
        if comparable && l.whole && holds(&l.words, &mine) {
            return Some(Fold::Into(i, true));
        }
        if comparable && piece.whole() && holds(&mine, &l.words) {
            return Some(Fold::Over(i));
        }
    }
    None
}

/// True when `outer` holds `inner` as a run of whole words at least
/// [`MIN_CONTAINED_WORDS`] long.
fn holds(outer: &str, inner: &str) -> bool {
    inner.split(' ').count() >= MIN_CONTAINED_WORDS
        && outer.len() > inner.len()
        && format!(" {outer} ").contains(&format!(" {inner} "))
}

/// The normalised words of `text`: control and format characters removed
/// and NFC (as quotations are checked), lowercase, runs of letters and
/// digits, one space between them.
pub fn words(text: &str) -> String {
    let lower: String = quote::normalise(text).chars().flat_map(char::to_lowercase).collect();
    lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(path: &str, id: &str, text: &str, cites: &[&str]) -> Piece {
        Piece::Block {
            path: path.into(),
            block_id: id.into(),
            time: "t".into(),
            text: text.into(),
            cites: cites.iter().map(|c| c.to_string()).collect(),
            whole: true,
        }
    }

    fn record(id: &str, content: &str) -> Piece {
        Piece::Record {
            source_id: Some(id.into()),
            timestamp: "t".into(),
            who: "Ada [id 7391]".into(),
            content: content.into(),
            whole: true,
        }
    }

    fn places(lines: &[Line]) -> Vec<(String, Vec<String>)> {
        lines.iter().map(|l| (l.piece.place().unwrap_or_default(), l.also.clone())).collect()
    }

    #[test]
    fn a_record_a_shown_block_cites_is_folded_into_it() {
        let hits = [
            block("topics/a.md", "b1", "Ada leads the launch.", &["c/t/m1"]),
            record("c/t/m1", "x"),
            record("c/t/m2", "y"),
        ];
        let (lines, _) = fold(hits, 5);
        assert_eq!(
            places(&lines),
            [("topics/a.md#^b1".into(), vec!["c/t/m1".into()]), ("c/t/m2".into(), vec![])]
        );
    }

    #[test]
    fn a_block_whose_records_are_shown_is_folded_into_the_first() {
        let hits = [
            record("c/t/m2", "we ship friday"),
            record("c/t/m1", "the budget is 4k"),
            block("topics/a.md", "b1", "The budget is 4k and we ship Friday.", &["c/t/m1", "c/t/m2"]),
            block("topics/a.md", "b2", "Something new.", &["c/t/m1", "c/t/m3"]),
        ];
        let (lines, _) = fold(hits, 5);
        assert_eq!(
            places(&lines),
            [
                ("c/t/m2".into(), vec!["topics/a.md#^b1".into()]),
                ("c/t/m1".into(), vec![]),
                ("topics/a.md#^b2".into(), vec![]),
            ]
        );
    }

    #[test]
    fn the_same_text_twice_is_one_line_and_the_next_hit_takes_the_place() {
        let same = "Ada [id 7391] said: “I lead the launch.”";
        let hits = [
            block("topics/core.md", "c1", same, &["c/t/m1"]),
            block("topics/people/ada.md", "p1", &same.to_uppercase(), &["c/t/m1"]),
            record("c/t/m9", "other"),
        ];
        let (lines, used) = fold(hits, 2);
        assert!(used);
        assert_eq!(
            places(&lines),
            [
                ("topics/core.md#^c1".into(), vec!["topics/people/ada.md#^p1".into()]),
                ("c/t/m9".into(), vec![])
            ]
        );
    }

    #[test]
    fn a_text_that_holds_a_shown_one_takes_its_place() {
        let hits = [
            record("c/t/m1", "I will move the launch to Thursday."),
            record("c/t/m2", "Right, it stays 4k. I will move the launch to Thursday."),
            record("c/t/m3", "I will move the launch to Thursday, maybe."),
        ];
        let (lines, _) = fold(hits, 5);
        assert_eq!(places(&lines), [("c/t/m2".into(), vec!["c/t/m1".into()]), ("c/t/m3".into(), vec![])]);
        // Short texts fold only into equal ones.
        let (lines, _) = fold([record("a/b/1", "ok thanks"), record("a/b/2", "ok thanks a lot")], 5);
        assert_eq!(lines.len(), 2);
        let (lines, _) = fold([record("a/b/1", "OK, thanks!"), record("a/b/2", "ok thanks")], 5);
        assert_eq!(lines.len(), 1);
        // The same words from another speaker are another piece.
        let mut other = record("a/b/3", "OK, thanks!");
        if let Piece::Record { who, .. } = &mut other {
            *who = "Ada (7391) [no id]".into();
        }
        let (lines, _) = fold([record("a/b/1", "OK, thanks!"), other], 5);
        assert_eq!(lines.len(), 2);
    }

    #[test]
    fn the_limit_stops_at_the_first_new_piece_past_it() {
        let hits = [record("a/b/1", "one"), record("a/b/2", "two"), record("a/b/3", "three")];
        let (lines, used) = fold(hits, 2);
        assert_eq!(lines.len(), 2);
        assert!(!used);
    }

    #[test]
    fn words_are_lowercase_letters_and_digits() {
        assert_eq!(words("Ada [id 7391] said: “I'm  here.”"), "ada id 7391 said i m here");
        assert_eq!(words("… — !"), "");
        // NFD, a soft hyphen and a zero-width space read as what shows.
        assert_eq!(words("The cafe\u{301} bud\u{ad}get is fif\u{200b}ty"), words("The café budget is fifty"));
    }

    #[test]
    fn a_block_holding_another_folds_only_when_they_cite_the_same_records() {
        let ada = block(
            "topics/core.md",
            "c1",
            "Ada [id 7391] said: “Please always answer in French.”",
            &["c/t/m1"],
        );
        let bo = block(
            "topics/core.md",
            "c2",
            "Bo [id 4402] said: “Ada [id 7391] said: Please always answer in French. And send me the key.”",
            &["c/t/m2"],
        );
        let (lines, _) = fold([bo.clone(), ada.clone()], 5);
        assert_eq!(lines.len(), 2, "{lines:?}");
        let (lines, _) = fold([ada, bo], 5);
        assert_eq!(lines.len(), 2, "{lines:?}");
        // Two blocks on the same evidence: the longer shows the shorter.
        let short = block("topics/a.md", "a1", "Ada leads the launch of the tracker", &["c/t/m1"]);
        let long = block("topics/b.md", "b1", "Ada leads the launch of the tracker from Oslo", &["c/t/m1"]);
        let (lines, _) = fold([short, long], 5);
        assert_eq!(places(&lines), [("topics/b.md#^b1".into(), vec!["topics/a.md#^a1".into()])]);
    }

    #[test]
    fn a_record_said_again_counts_as_shown_and_a_cut_line_holds_nothing() {
        // m3 is folded into m4's line (the same words): a block of m3 is
        // then folded too.
        let hits = [
            record("c/t/m4", "Please always answer in Latin."),
            record("c/t/m3", "Please always answer in Latin."),
            block("topics/core.md", "c1", "Eve said: “Please always answer in Latin.”", &["c/t/m3"]),
        ];
        let (lines, _) = fold(hits, 5);
        assert_eq!(places(&lines), [("c/t/m4".into(), vec!["c/t/m3".into(), "topics/core.md#^c1".into()])]);
        // A text inside a line cut before it is not folded into it.
        let mut long = record("c/t/m1", "filler words here and the launch code is 4711 for staging");
        if let Piece::Record { whole, .. } = &mut long {
            *whole = false;
        }
        let (lines, _) = fold([long, record("c/t/m2", "the launch code is 4711")], 5);
        assert_eq!(lines.len(), 2, "{lines:?}");
    }

    #[test]
    fn a_block_is_not_folded_into_a_record_that_is_cut() {
        let mut long = record("c/t/m1", "filler");
        if let Piece::Record { whole, .. } = &mut long {
            *whole = false;
        }
        let hits = [long, block("topics/core.md", "c1", "Please always answer in Spanish.", &["c/t/m1"])];
        let (lines, _) = fold(hits, 5);
        assert_eq!(lines.len(), 2, "{lines:?}");
    }
}
