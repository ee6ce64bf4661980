//! The tokenizer: Unicode word segmentation (UAX #29), case folding,
//! optional English stemming and stop words, and character bigrams for
//! CJK text. Queries and documents go through the same function.

use std::collections::HashSet;
use std::fmt;
use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};
use unicode_segmentation::UnicodeSegmentation;

/// How text becomes terms. Part of an index's fingerprint: an index built
/// with one configuration is never searched with another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TokenizerConfig {
    /// Reduce English words to their Snowball stem.
    pub stem: bool,
    /// Drop common English stop words.
    pub stop_words: bool,
}

impl Default for TokenizerConfig {
    fn default() -> TokenizerConfig {
        TokenizerConfig { stem: true, stop_words: true }
    }
}

impl TokenizerConfig {
    /// A stable number for the configuration, stored in the index.
    pub fn fingerprint(self) -> u32 {
        // Version 3 of the tokenizer; bump when its output changes.
        (3 << 8) | u32::from(self.stem) | (u32::from(self.stop_words) << 1)
    }
}

impl fmt::Display for TokenizerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "uax29+casefold{}{}+cjk-bigrams",
            if self.stem { "+stem" } else { "" },
            if self.stop_words { "+stop" } else { "" }
        )
    }
}

/// Common English function words: the conventional English stop-word list
/// (pronouns, auxiliaries, articles, conjunctions, prepositions and their
/// contractions). On LoCoMo it lifts recall@5 by about three points over
/// the 33-word Lucene list (`docs/benchmarks.md`).
#[rustfmt::skip]
const STOP_WORDS: &[&str] = &[
    "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "aren't",
    "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can",
    "can't", "cannot", "could", "couldn't", "did", "didn't", "do", "does", "doesn't", "doing", "don't",
    "down", "during", "each", "few", "for", "from", "further", "had", "hadn't", "has", "hasn't", "have",
    "haven't", "having", "he", "he'd", "he'll", "he's", "her", "here", "here's", "hers", "herself", "him",
    "himself", "his", "how", "how's", "i", "i'd", "i'll", "i'm", "i've", "if", "in", "into", "is", "isn't",
    "it", "it's", "its", "itself", "let's", "me", "more", "most", "mustn't", "my", "myself", "no", "nor",
    "not", "of", "off", "on", "once", "only", "or", "other", "ought", "our", "ours", "ourselves", "out",
    "over", "own", "same", "shan't", "she", "she'd", "she'll", "she's", "should", "shouldn't", "so", "some",
    "such", "than", "that", "that's", "the", "their", "theirs", "them", "themselves", "then", "there",
    "there's", "these", "they", "they'd", "they'll", "they're", "they've", "this", "those", "through", "to",
    "too", "under", "until", "up", "very", "was", "wasn't", "we", "we'd", "we'll", "we're", "we've", "were",
    "weren't", "what", "what's", "when", "when's", "where", "where's", "which", "while", "who", "who's",
    "whom", "why", "why's", "with", "won't", "would", "wouldn't", "you", "you'd", "you'll", "you're",
    "you've", "your", "yours", "yourself", "yourselves",
];

/// True for scripts written without spaces between words, indexed as
/// character bigrams: Han, Hiragana, Katakana, Hangul syllables.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x3400..=0x4DBF    // CJK Extension A
        | 0x4E00..=0x9FFF    // CJK Unified Ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF    // CJK Compatibility Ideographs
        | 0x20000..=0x2FFFF) // CJK Extensions B–F
}

/// The longest word, in characters, that is folded and stemmed whole. A
/// longer word becomes the term made of its first `MAX_WORD_CHARS`
/// characters, folded and cut again at `MAX_WORD_CHARS`, neither stemmed nor
/// checked against the stop words: the stemmer's work grows with the
/// square of a word's length, and normalisation with the length of a run of
/// combining marks, so without the cap one hostile word could cost minutes.
/// The same cut applies to queries, so a long word still finds itself (and
/// any other word sharing its first 64 characters).
pub const MAX_WORD_CHARS: usize = 64;

/// `word` cut to at most `max` characters.
fn cut(word: &str, max: usize) -> &str {
    match word.char_indices().nth(max) {
        Some((at, _)) => &word[..at],
        None => word,
    }
}

fn fold(word: &str) -> String {
    if word.is_ascii() {
        word.to_ascii_lowercase()
    } else {
        use unicode_normalization::UnicodeNormalization;
        caseless::default_case_fold_str(&word.nfc().collect::<String>()).nfc().collect()
    }
}

/// A reusable tokenizer.
pub struct Tokenizer {
    config: TokenizerConfig,
    stemmer: Option<Stemmer>,
}

impl fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tokenizer").field("config", &self.config).finish()
    }
}

impl Tokenizer {
    /// A tokenizer for `config`.
    pub fn new(config: TokenizerConfig) -> Tokenizer {
        Tokenizer { config, stemmer: config.stem.then(|| Stemmer::create(Algorithm::English)) }
    }

    /// Its configuration.
    pub fn config(&self) -> TokenizerConfig {
        self.config
    }

    /// Appends the terms of `text` to `out`, in order.
    ///
    /// ```
    /// use scriptorium_bm25_index::tokenize::{Tokenizer, TokenizerConfig};
    /// let t = Tokenizer::new(TokenizerConfig::default());
    /// let mut terms = Vec::new();
    /// t.terms("The budgets were RUNNING over; 東京都", &mut terms);
    /// assert_eq!(terms, ["budget", "run", "東京", "京都"]);
    /// ```
    pub fn terms(&self, text: &str, out: &mut Vec<String>) {
        self.each_term(text, &mut |t| out.push(t.to_owned()));
    }

    /// Calls `emit` with each term of `text`, in order.
    pub fn each_term(&self, text: &str, emit: &mut dyn FnMut(&str)) {
        self.each_word(text, &mut |word, whole| {
            if whole {
                emit(word);
            } else if let Some(t) = self.term_of(word) {
                emit(&t);
            }
        });
    }

    /// The term of a folded word: `None` for a stop word, else its stem
    /// (or the word itself without stemming).
    pub fn term_of<'w>(&self, folded: &'w str) -> Option<std::borrow::Cow<'w, str>> {
        if self.config.stop_words && is_stop_word(folded) {
            return None;
        }
        match &self.stemmer {
            Some(s) => Some(s.stem(folded)),
            None => Some(std::borrow::Cow::Borrowed(folded)),
        }
    }

    /// Calls `emit(word, whole)` for each word of `text` in order, case
    /// folded; `whole` is true for CJK bigrams and for words cut at
    /// [`MAX_WORD_CHARS`] (already terms), false for a word that
    /// [`Tokenizer::term_of`] turns into its term. Nothing is allocated per
    /// word, so a caller may cache terms by folded word. The work per word is
    /// bounded by the cap: the whole call is linear in the length of `text`.
    pub fn each_word(&self, text: &str, emit: &mut dyn FnMut(&str, bool)) {
        // UAX #29 makes every ideograph its own word: adjacent CJK words are
        // joined into one run before bigrams are taken.
        let mut run = String::new();
        let mut run_end = usize::MAX;
        let mut folded = String::new();
        for (at, whole_word) in text.unicode_word_indices() {
            let word = cut(whole_word, MAX_WORD_CHARS);
            let long = word.len() < whole_word.len();
            folded.clear();
            if word.is_ascii() {
                folded.push_str(word);
                folded.make_ascii_lowercase();
            } else {
                folded.push_str(cut(&fold(word), MAX_WORD_CHARS));
                if folded.chars().any(is_cjk) {
                    if at != run_end && !run.is_empty() {
                        self.cjk(&std::mem::take(&mut run), &mut |t| emit(t, true));
                    }
                    run.push_str(&folded);
                    run_end = at + whole_word.len();
                    continue;
                }
            }
            if !run.is_empty() {
                self.cjk(&std::mem::take(&mut run), &mut |t| emit(t, true));
            }
            emit(&folded, long);
        }
        if !run.is_empty() {
            self.cjk(&run, &mut |t| emit(t, true));
        }
    }

    /// At most `max` characters of `text` around the first word whose term
    /// is one of `terms` (the start of the text when none is), on one line:
    /// control characters, format characters (bidi controls, zero-width
    /// characters) and U+2028/U+2029 become spaces.
    ///
    /// ```
    /// use scriptorium_bm25_index::tokenize::{Tokenizer, TokenizerConfig};
    /// let t = Tokenizer::new(TokenizerConfig::default());
    /// let s = t.snippet("a long preamble, then the Budgets line", &["budget".to_owned()], 20);
    /// assert_eq!(s, "hen the Budgets line");
    /// ```
    pub fn snippet(&self, text: &str, terms: &[String], max: usize) -> String {
        let found = self.first_match(text, terms);
        let total = text.chars().count();
        let at = found.map_or(0, |b| text[..b].chars().count());
        let mut start = at.saturating_sub(max / 4);
        if total - start < max {
            start = total.saturating_sub(max);
        }
        let hidden = |c: char| {
            c.is_control()
                || scriptorium_source_archive::speaker::is_format_char(c)
                || matches!(c, '\u{2028}' | '\u{2029}')
        };
        text.chars().skip(start).take(max).map(|c| if hidden(c) { ' ' } else { c }).collect()
    }

    /// Whether a word of `text` has one of `terms` (as [`Tokenizer::snippet`]
    /// looks for it).
    pub fn mentions(&self, text: &str, terms: &[String]) -> bool {
        self.first_match(text, terms).is_some()
    }

    /// The byte offset of the first word of `text` whose term is one of
    /// `terms` (a CJK word also when it and the next make one).
    fn first_match(&self, text: &str, terms: &[String]) -> Option<usize> {
        let mut found = None;
        let mut words = text.unicode_word_indices().peekable();
        let mut own = Vec::new();
        while let Some((at, word)) = words.next() {
            own.clear();
            self.terms(word, &mut own);
            let mut hit = own.iter().any(|t| terms.contains(t));
            if !hit && word.chars().any(is_cjk) {
                if let Some(&(next_at, next)) = words.peek() {
                    if next_at == at + word.len() {
                        let pair = fold(&format!("{word}{next}"));
                        hit = terms.iter().any(|t| pair.contains(t.as_str()) && t.chars().count() > 1);
                    }
                }
            }
            if hit {
                found = Some(at);
                break;
            }
        }
        found
    }

    /// CJK runs become overlapping character bigrams (a lone character is
    /// its own term); other characters in the word stay whole.
    fn cjk(&self, word: &str, emit: &mut dyn FnMut(&str)) {
        let chars: Vec<char> = word.chars().collect();
        let mut buf = String::new();
        let mut k = 0;
        while k < chars.len() {
            let start = k;
            let cjk = is_cjk(chars[k]);
            while k < chars.len() && is_cjk(chars[k]) == cjk {
                k += 1;
            }
            let run = &chars[start..k];
            if cjk && run.len() > 1 {
                for w in run.windows(2) {
                    buf.clear();
                    buf.extend(w);
                    emit(&buf);
                }
            } else {
                buf.clear();
                buf.extend(run);
                emit(&buf);
            }
        }
    }
}

/// A fast hasher for short strings (FxHash), for the fixed stop-word set
/// only: it is not keyed, so maps whose keys come from untrusted text use
/// std's keyed hasher instead.
#[derive(Default, Clone, Copy)]
pub(crate) struct Fx(u64);

impl std::hash::Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
            self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }

    fn write_u8(&mut self, b: u8) {
        self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) type FxBuild = std::hash::BuildHasherDefault<Fx>;

fn is_stop_word(word: &str) -> bool {
    static SET: OnceLock<HashSet<&'static str, FxBuild>> = OnceLock::new();
    SET.get_or_init(|| STOP_WORDS.iter().copied().collect()).contains(word)
}

#[cfg(test)]
mod tests {
    //! Tokenizer vectors.
    use super::*;

    fn terms(config: TokenizerConfig, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        Tokenizer::new(config).terms(text, &mut out);
        out
    }

    #[test]
    fn stop_words_are_sorted() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn vectors() {
        let plain = TokenizerConfig { stem: false, stop_words: false };
        assert_eq!(
            terms(plain, "Ada's budget: 50k, e-mail ÉCOLE Straße"),
            ["ada's", "budget", "50k", "e", "mail", "école", "strasse"]
        );
        assert_eq!(terms(TokenizerConfig::default(), "the cats are running"), ["cat", "run"]);
        assert_eq!(terms(plain, "日本"), ["日本"]);
        assert_eq!(terms(plain, "日"), ["日"]);
        assert_eq!(terms(plain, "서울에서"), ["서울", "울에", "에서"]);
        assert!(terms(plain, "  \u{200B} ").is_empty());
        assert_ne!(TokenizerConfig::default().fingerprint(), plain.fingerprint());
    }

    #[test]
    fn long_words_are_cut_at_the_cap_and_not_stemmed() {
        let stem = TokenizerConfig::default();
        // 64 characters are a word like any other: stemmed.
        let at_cap = format!("{}ings", "ba".repeat(MAX_WORD_CHARS / 2 - 2));
        assert_eq!(at_cap.len(), MAX_WORD_CHARS);
        let stemmed = terms(stem, &at_cap);
        assert_eq!(stemmed.len(), 1);
        assert!(at_cap.starts_with(&stemmed[0]) && stemmed[0].len() < MAX_WORD_CHARS, "{stemmed:?}");
        // One more and the first 64 characters are the term, verbatim.
        assert_eq!(terms(stem, &format!("{at_cap}s")), [at_cap]);
        // A million-character word is one term of 64 characters.
        let huge = "Y".repeat(1_000_000);
        assert_eq!(
            terms(stem, &format!("a {huge} budgets")),
            ["y".repeat(MAX_WORD_CHARS), "budget".to_owned()]
        );
        // Folding happens after the cut and is cut again: `ß` folds to `ss`.
        let sharp = "ß".repeat(MAX_WORD_CHARS + 1);
        assert_eq!(terms(stem, &sharp), ["s".repeat(MAX_WORD_CHARS)]);
        // A base letter carrying a million combining marks is one short term.
        let marks = format!("a{}", "\u{301}\u{316}".repeat(500_000));
        let got = terms(stem, &marks);
        assert_eq!(got.len(), 1);
        assert!(got[0].chars().count() <= MAX_WORD_CHARS);
        // A stop word only counts when it is a whole word.
        assert!(terms(stem, "the").is_empty());
    }
}
