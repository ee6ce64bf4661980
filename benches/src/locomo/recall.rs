//! What per-turn recall shows for a LoCoMo question: its lines, how many
//! repeat an earlier line's text, and the evidence turns they show.
//!
//! *Unfolded* is the top five hits of search over records and blocks, as
//! recall showed them before folding; *folded* is
//! `scriptorium::recall::recall_lines`. Each line's text is normalised
//! (lowercase, runs of letters and digits; a block's attribution, up to
//! ` said: `, and its quotation marks left out) — checks of their own, not
//! the folding rules:
//!
//! * a line *repeats* an earlier one when their texts are the same, or one
//!   holds the other (at least four words long) as a run of whole words —
//!   a quotation of a record shown beside it, the same paragraph in two
//!   files, the same message twice;
//! * a line *shares a sentence* with an earlier one when a sentence of at
//!   least four words stands in both — a looser count, which also takes
//!   two different messages that say one thing alike.
//!
//! A line shows the turns of its record, or those its block cites, and
//! those of every place folded into it.

use std::collections::{HashMap, HashSet};

use scriptorium::recall::fold::{Line, Piece};

/// Recall lines over many questions.
#[derive(Debug, Clone, Copy, Default)]
pub struct RecallMeasured {
    /// Lines shown.
    pub lines: usize,
    /// Lines that repeat an earlier line's text.
    pub repeats: usize,
    /// Lines that share a sentence with an earlier line.
    pub shared: usize,
    /// Sum over questions of the share of evidence the lines show.
    pub found: f64,
}

impl RecallMeasured {
    /// Adds `other` to `self`.
    pub fn add(&mut self, other: &RecallMeasured) {
        self.lines += other.lines;
        self.repeats += other.repeats;
        self.shared += other.shared;
        self.found += other.found;
    }

    /// Measures one question's lines: each its text and the evidence turns
    /// it shows.
    pub fn of(lines: &[(String, Vec<String>)], evidence: &[String]) -> RecallMeasured {
        let mut seen: HashSet<String> = HashSet::new();
        let mut texts: Vec<String> = Vec::new();
        let (mut repeats, mut shared) = (0, 0);
        for (text, _) in lines {
            let mine = sentences(text);
            if mine.iter().any(|s| seen.contains(s)) {
                shared += 1;
            }
            seen.extend(mine);
            let all = words(said(text));
            if texts.iter().any(|t| *t == all || holds(t, &all) || holds(&all, t)) {
                repeats += 1;
            }
            texts.push(all);
        }
        let shown: HashSet<&str> = lines.iter().flat_map(|(_, t)| t).map(String::as_str).collect();
        let found = evidence.iter().filter(|e| shown.contains(e.as_str())).count();
        RecallMeasured {
            lines: lines.len(),
            repeats,
            shared,
            found: found as f64 / evidence.len().max(1) as f64,
        }
    }
}

/// What a line says: its text without a block's attribution.
fn said(text: &str) -> &str {
    let text = text.split_once(" said: ").map_or(text, |(_, t)| t);
    text.split_once(" said (not verbatim): ").map_or(text, |(_, t)| t)
}

/// Lowercase runs of letters and digits, one space between them.
fn words(text: &str) -> String {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// True when `outer` holds `inner`, four words or more, as whole words.
fn holds(outer: &str, inner: &str) -> bool {
    inner.split(' ').count() >= 4 && format!(" {outer} ").contains(&format!(" {inner} "))
}

/// The sentences of a line's text of four words or more, normalised.
fn sentences(text: &str) -> Vec<String> {
    said(text)
        .split(['.', '!', '?', '“', '”', '\n'])
        .map(words)
        .filter(|s| s.split(' ').count() >= 4)
        .collect()
}

/// A folded recall line as its text and the turns it shows, given each
/// block's cited turns (`(path, block id)` → dia_ids) and a source id's
/// dia_id.
pub fn folded(
    line: &Line,
    cites: &HashMap<(&str, &str), Vec<String>>,
    dia_id: impl Fn(&str) -> String,
) -> (String, Vec<String>) {
    let turns_of = |place: &str| match place.split_once("#^") {
        Some((path, id)) => cites.get(&(path, id)).cloned().unwrap_or_default(),
        None => vec![dia_id(place)],
    };
    let mut turns: Vec<String> = line.piece.place().as_deref().map(turns_of).unwrap_or_default();
    for p in &line.also {
        turns.extend(turns_of(p));
    }
    let text = match &line.piece {
        Piece::Block { text, .. } => text.clone(),
        Piece::Record { content, .. } => content.clone(),
    };
    (text, turns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_sentence_is_a_repeat_and_evidence_is_counted_once() {
        let lines = [
            ("Ada [id 1] said: “I lead the launch of the tracker.”".to_owned(), vec!["D1:1".to_owned()]),
            ("Morning all. I lead the launch of the tracker! More.".to_owned(), vec!["D1:1".to_owned()]),
            ("Something else entirely, said nobody".to_owned(), vec!["D2:2".to_owned()]),
        ];
        let m = RecallMeasured::of(&lines, &["D1:1".to_owned(), "D3:3".to_owned()]);
        assert_eq!((m.lines, m.repeats, m.shared), (3, 1, 1));
        assert!((m.found - 0.5).abs() < 1e-9);
        let alike = [
            ("Thanks, Jon! Appreciate the kind words. Sorry to hear it.".to_owned(), vec![]),
            ("Thanks Jon! Appreciate the kind words. <3".to_owned(), vec![]),
        ];
        let m = RecallMeasured::of(&alike, &["D1:1".to_owned()]);
        assert_eq!((m.lines, m.repeats, m.shared), (2, 0, 1));
        assert_eq!(m.found, 0.0);
    }
}
