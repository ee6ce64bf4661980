//! The tokenizer: Unicode word segmentation (UAX #29), case folding,
//! optional English stemming and stop words, and character bigrams for
//! CJK text. Queries and documents go through the same function.

use std::fmt;

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
        // Version 2 of the tokenizer; bump when its output changes.
        (2 << 8) | u32::from(self.stem) | (u32::from(self.stop_words) << 1)
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
        // UAX #29 makes every ideograph its own word: adjacent CJK words are
        // joined into one run before bigrams are taken.
        let mut run = String::new();
        let mut run_end = usize::MAX;
        for (at, word) in text.unicode_word_indices() {
            let folded = fold(word);
            if folded.chars().any(is_cjk) {
                if at != run_end && !run.is_empty() {
                    self.cjk(&std::mem::take(&mut run), out);
                }
                run.push_str(&folded);
                run_end = at + word.len();
                continue;
            }
            if !run.is_empty() {
                self.cjk(&std::mem::take(&mut run), out);
            }
            if self.config.stop_words && STOP_WORDS.binary_search(&folded.as_str()).is_ok() {
                continue;
            }
            match &self.stemmer {
                Some(s) => out.push(s.stem(&folded).into_owned()),
                None => out.push(folded),
            }
        }
        if !run.is_empty() {
            self.cjk(&run, out);
        }
    }

    /// At most `max` characters of `text` around the first word whose term
    /// is one of `terms` (the start of the text when none is), on one line:
    /// control characters become spaces.
    ///
    /// ```
    /// use scriptorium_bm25_index::tokenize::{Tokenizer, TokenizerConfig};
    /// let t = Tokenizer::new(TokenizerConfig::default());
    /// let s = t.snippet("a long preamble, then the Budgets line", &["budget".to_owned()], 20);
    /// assert_eq!(s, "hen the Budgets line");
    /// ```
    pub fn snippet(&self, text: &str, terms: &[String], max: usize) -> String {
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
        let total = text.chars().count();
        let at = found.map_or(0, |b| text[..b].chars().count());
        let mut start = at.saturating_sub(max / 4);
        if total - start < max {
            start = total.saturating_sub(max);
        }
        text.chars().skip(start).take(max).map(|c| if c.is_control() { ' ' } else { c }).collect()
    }

    /// CJK runs become overlapping character bigrams (a lone character is
    /// its own term); other characters in the word stay whole.
    fn cjk(&self, word: &str, out: &mut Vec<String>) {
        let chars: Vec<char> = word.chars().collect();
        let mut k = 0;
        while k < chars.len() {
            if is_cjk(chars[k]) {
                let start = k;
                while k < chars.len() && is_cjk(chars[k]) {
                    k += 1;
                }
                let run = &chars[start..k];
                if run.len() == 1 {
                    out.push(run[0].to_string());
                } else {
                    for w in run.windows(2) {
                        out.push(w.iter().collect());
                    }
                }
            } else {
                let start = k;
                while k < chars.len() && !is_cjk(chars[k]) {
                    k += 1;
                }
                out.push(chars[start..k].iter().collect());
            }
        }
    }
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
}
