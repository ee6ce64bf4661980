//! A deterministic search corpus for the index benchmarks and the peer
//! scripts: conversational records over a Zipf-distributed vocabulary of
//! 60,000 pseudo-words (plus the common English words that real messages
//! are made of), 100 speakers, three years of dates, 1,000 records per
//! thread; and questions of three to eight words drawn like real ones
//! (mostly mid-frequency content words, some function words).

use scriptorium_bm25_index::segment::{Document, Kind, Stamp, Unit};
use scriptorium_bm25_index::speaker;
use scriptorium_source_archive::speaker::Speaker;

use crate::Rng;

/// One record of the corpus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Doc {
    /// The archive path of its thread.
    pub path: String,
    /// Its anchor.
    pub anchor: String,
    /// The speaker's id.
    pub speaker: String,
    /// Days since 1970-01-01.
    pub day: i32,
    /// The text: speaker label, a space, the body.
    pub text: String,
}

const COMMON: &[&str] = &[
    "the", "i", "you", "to", "and", "a", "it", "is", "that", "of", "in", "we", "my", "for", "was", "so",
    "have", "on", "me", "but", "this", "with", "just", "be", "are", "do", "what", "at", "can", "not", "yeah",
    "like", "your", "about", "all", "they", "get", "if", "go", "really", "how", "when", "did", "one", "will",
    "there", "out", "up", "know", "good", "time", "think", "great", "love", "going",
];

const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ten", "ar", "vel", "sto", "ne", "ri", "pa", "dor", "u", "shi", "gra", "be", "lum",
    "fe", "ho", "zin", "tra", "co", "mer", "li", "van", "ek", "so", "pla", "nu", "tor", "dea",
];

/// The vocabulary, most frequent first.
pub fn vocabulary(n: usize) -> Vec<String> {
    let mut rng = Rng::new(0x005e_ed0f_70c5);
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<String> = COMMON.iter().map(|s| (*s).to_owned()).collect();
    seen.extend(out.iter().cloned());
    while out.len() < n {
        let parts = rng.range(2, 5);
        let w: String = (0..parts).map(|_| SYLLABLES[rng.range(0, SYLLABLES.len())]).collect();
        if seen.insert(w.clone()) {
            out.push(w);
        }
    }
    out
}

/// Zipf (s = 1) sampling over `n` ranks by inverse CDF.
#[derive(Debug, Clone)]
pub struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    /// Ranks `0..n`.
    pub fn new(n: usize) -> Zipf {
        let mut cdf = Vec::with_capacity(n);
        let mut total = 0.0;
        for k in 1..=n {
            total += 1.0 / k as f64;
            cdf.push(total);
        }
        for c in &mut cdf {
            *c /= total;
        }
        Zipf { cdf }
    }

    /// A rank.
    pub fn sample(&self, rng: &mut Rng) -> usize {
        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        self.cdf.partition_point(|&c| c < u).min(self.cdf.len() - 1)
    }
}

/// The words of the corpus.
pub const VOCABULARY: usize = 60_000;
/// Records per thread file.
pub const PER_THREAD: usize = 1_000;
/// Distinct speakers.
pub const SPEAKERS: usize = 100;
/// The first day of the corpus (2023-01-01) and how many days it spans.
pub const FIRST_DAY: i32 = 19_358;
/// Days covered.
pub const DAYS: i32 = 3 * 365;

/// `n` records.
pub fn docs(n: usize) -> Vec<Doc> {
    let vocab = vocabulary(VOCABULARY);
    let zipf = Zipf::new(vocab.len());
    let mut rng = Rng::new(0xd0c5);
    (0..n)
        .map(|i| {
            let len = rng.range(4, 40);
            let speaker = rng.range(0, SPEAKERS);
            let mut text = format!("Person{speaker} ({speaker})");
            for _ in 0..len {
                text.push(' ');
                text.push_str(&vocab[zipf.sample(&mut rng)]);
            }
            Doc {
                path: format!("sources/bench/_v2/t{:05}.md", i / PER_THREAD),
                anchor: format!("source-{i:08x}"),
                speaker: speaker.to_string(),
                day: FIRST_DAY + rng.range(0, DAYS as usize) as i32,
                text,
            }
        })
        .collect()
}

/// `n` questions.
pub fn queries(n: usize) -> Vec<String> {
    let vocab = vocabulary(VOCABULARY);
    let zipf = Zipf::new(vocab.len());
    let mut rng = Rng::new(0x9e5);
    (0..n)
        .map(|_| {
            let len = rng.range(3, 9);
            let words: Vec<&str> = (0..len)
                .map(|_| {
                    if rng.range(0, 4) == 0 {
                        COMMON[rng.range(0, COMMON.len())]
                    } else {
                        // Content words: skip the head of the distribution.
                        loop {
                            let r = zipf.sample(&mut rng);
                            if r >= 200 {
                                break vocab[r].as_str();
                            }
                        }
                    }
                })
                .collect();
            words.join(" ")
        })
        .collect()
}

/// The records as index units, one per thread file, with the speaker keys
/// a v2 record carries (id, display `Person<id>`, label).
pub fn units(docs: &[Doc]) -> Vec<Unit> {
    let mut out: Vec<Unit> = Vec::new();
    for d in docs {
        if out.last().is_none_or(|u| u.path != d.path) {
            out.push(Unit {
                kind: Kind::Source,
                path: d.path.clone(),
                stamp: Stamp::default(),
                deps: Vec::new(),
                docs: Vec::new(),
            });
        }
        let display = format!("Person{}", d.speaker);
        let speakers = Speaker::from_transport(Some(&d.speaker), Some(&display))
            .map(|s| speaker::trusted_keys(&s))
            .unwrap_or_default();
        if let Some(unit) = out.last_mut() {
            unit.docs.push(Document {
                anchor: d.anchor.clone(),
                key: String::new(),
                day: Some(d.day),
                pending: false,
                speakers,
                text: d.text.clone(),
                payload: String::new(),
                span: None,
                time: None,
                aliases: String::new(),
            });
        }
    }
    out
}
