//! The corpora both engines index: LoCoMo's dialogue turns replicated `S`
//! times, and the generated corpus of [`crate::corpus`]. Documents are laid
//! out as a segment numbers them (units by path, documents by anchor), and
//! the corpus order (replica 0, then replica 1 …) is kept as the order
//! tantivy receives them in.

use scriptorium_bm25_index::format::checksum;
use scriptorium_bm25_index::segment::{Document, Kind, Span, Stamp, Unit};
use scriptorium_bm25_index::speaker;
use scriptorium_bm25_index::workspace::parse_day;
use scriptorium_source_archive::json::{to_line, RecordView};
use scriptorium_source_archive::{v2, SourceRecord};

use crate::{corpus, locomo};

/// A corpus ready for both engines.
#[derive(Debug, Clone)]
pub struct Collection {
    /// Its name in reports: `locomo x10`, `synthetic 1000000`.
    pub name: String,
    /// The units, in the order the segment numbers them; a document's
    /// number is its position in [`Collection::docs`].
    pub units: Vec<Unit>,
    /// Document numbers in corpus order: the order tantivy indexes them in.
    pub feed: Vec<u32>,
    /// Per document number, what it is a copy of (the LoCoMo turn; for the
    /// generated corpus, the document itself): replicas count as the same
    /// answer when the engines' results are compared.
    pub identity: Vec<u32>,
    /// The questions asked.
    pub queries: Vec<String>,
    /// The archive files the documents' texts live in (path under the
    /// workspace, bytes): an index reads its hits back from them. Empty for
    /// the generated corpus, whose texts the index stores.
    pub archives: Vec<(String, Vec<u8>)>,
}

impl Collection {
    /// Every dialogue turn of the vendored LoCoMo development file as one
    /// document, `scale` times over (replica `r` of conversation `c` is the
    /// unit `sources/locomo/_v2/<c>-r<r>.md`), and every question of the
    /// file.
    pub fn locomo(scale: usize) -> Collection {
        let transcripts = locomo::transcripts();
        let turns: usize = transcripts.iter().map(|t| t.nodes.len()).sum();
        let mut units = Vec::with_capacity(transcripts.len() * scale);
        let mut archives = Vec::with_capacity(units.capacity());
        for r in 0..scale {
            for t in &transcripts {
                let mut docs = Vec::with_capacity(t.nodes.len());
                let mut path = String::new();
                let mut file = format!("{}\n", v2::MARKER).into_bytes();
                for node in &t.nodes {
                    let mut copy = node.clone();
                    copy.thread = format!("{}-r{r}", node.thread);
                    let record = copy.record().expect("a LoCoMo turn is a valid record");
                    path = record.id().v2_path();
                    let mut doc = turn_document(&record, node.speaker_display.as_deref().unwrap_or(""));
                    let offset = file.len();
                    v2::write_frame(&record, &mut file);
                    let frame = &file[offset..];
                    doc.span =
                        Some(Span { offset: offset as u64, len: frame.len() as u32, hash: checksum(frame) });
                    docs.push(doc);
                }
                archives.push((path.clone(), file));
                units.push(Unit {
                    kind: Kind::Source,
                    path,
                    stamp: Stamp::default(),
                    deps: Vec::new(),
                    docs,
                });
            }
        }
        let (units, feed, identity) = arrange(units, |i| (i % turns) as u32);
        let queries = locomo_questions();
        Collection { name: format!("locomo x{scale}"), units, feed, identity, queries, archives }
    }

    /// `n` documents of the generated corpus ([`corpus::docs`], 1,000 to a
    /// thread file) and its 1,000 questions.
    pub fn synthetic(n: usize) -> Collection {
        let (units, feed, identity) = arrange(corpus::units(&corpus::docs(n)), |i| i as u32);
        let queries = corpus::queries(1_000);
        Collection { name: format!("synthetic {n}"), units, feed, identity, queries, archives: Vec::new() }
    }

    /// The documents, by document number.
    pub fn docs(&self) -> Vec<&Document> {
        self.units.iter().flat_map(|u| u.docs.iter()).collect()
    }

    /// The number of documents.
    pub fn len(&self) -> usize {
        self.feed.len()
    }

    /// True when there is no document.
    pub fn is_empty(&self) -> bool {
        self.feed.is_empty()
    }
}

/// One turn: the speaker's name, a space, the body (the archive puts the
/// attribution first, `Caroline [no id]` for these display-only speakers);
/// the record's JSON line as the payload, which an index stores only for a
/// document without a span in its archive file.
fn turn_document(record: &SourceRecord, speaker: &str) -> Document {
    let id = record.id();
    Document {
        anchor: id.anchor(),
        key: id.text(),
        day: record.timestamp().get(..10).and_then(parse_day),
        pending: false,
        speakers: record.speaker().map(speaker::trusted_keys).unwrap_or_default(),
        text: format!("{speaker} {}", record.content()),
        payload: to_line(&RecordView::of_record(record)),
        span: None,
        time: None,
        aliases: String::new(),
    }
}

/// Every question of the LoCoMo development file, in file order.
fn locomo_questions() -> Vec<String> {
    let text = std::fs::read_to_string(locomo::data_path()).expect("the LoCoMo dev data reads");
    let samples: serde_json::Value = serde_json::from_str(&text).expect("the LoCoMo dev data is JSON");
    samples
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["qa"].as_array().into_iter().flatten())
        .filter_map(|q| q["question"].as_str().map(str::to_owned))
        .collect()
}

/// Units in corpus order, sorted as a segment numbers them; with, per
/// corpus position, the document number, and per document number, the
/// identity `identity_of(corpus position)`.
fn arrange(units: Vec<Unit>, identity_of: impl Fn(usize) -> u32) -> (Vec<Unit>, Vec<u32>, Vec<u32>) {
    let mut at = 0;
    let mut tagged: Vec<(Unit, Vec<usize>)> = Vec::with_capacity(units.len());
    for mut u in units {
        let mut docs: Vec<(Document, usize)> = u.docs.drain(..).zip(at..).collect();
        at += docs.len();
        docs.sort_by(|a, b| a.0.anchor.cmp(&b.0.anchor));
        let positions = docs.iter().map(|d| d.1).collect();
        u.docs = docs.into_iter().map(|d| d.0).collect();
        tagged.push((u, positions));
    }
    tagged.sort_by(|a, b| a.0.kind.cmp(&b.0.kind).then_with(|| a.0.path.cmp(&b.0.path)));
    let mut number = vec![0u32; at];
    let mut identity = Vec::with_capacity(at);
    for &p in tagged.iter().flat_map(|t| t.1.iter()) {
        number[p] = identity.len() as u32;
        identity.push(identity_of(p));
    }
    (tagged.into_iter().map(|t| t.0).collect(), number, identity)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use scriptorium_bm25_index::format::checksum;
    use scriptorium_bm25_index::search::{Ranked, Seg, View};
    use scriptorium_bm25_index::segment::{build, Origin, Segment};
    use scriptorium_bm25_index::tokenize::TokenizerConfig;

    use super::Collection;

    #[test]
    fn document_numbers_are_the_segments_and_replicas_share_an_identity() {
        let c = Collection::locomo(2);
        let turns = c.len() / 2;
        let config = TokenizerConfig::default();
        let bytes = build(c.units.clone(), config, None);
        let view =
            View::new(Segment::open(Arc::new(bytes), config).expect("it opens"), None).expect("a view");
        let docs = c.docs();
        assert_eq!(view.len() as usize, docs.len());
        for (d, doc) in docs.iter().enumerate() {
            let hit = Ranked { seg: Seg::BASE, doc: d as u32, score: 0.0 };
            let stored = view.stored(&hit).expect("stored");
            assert_eq!(stored.anchor, doc.anchor.as_str());
            // The index keeps the frame's span, and the archive holds it.
            let Origin::Span { span, .. } = stored.origin else { panic!("document {d} stores its text") };
            assert_eq!(Some(span), doc.span);
            let file = &c.archives.iter().find(|a| a.0 == stored.path).expect("its archive file").1;
            let frame = &file[span.offset as usize..span.offset as usize + span.len as usize];
            assert_eq!(checksum(frame), span.hash);
        }
        let mut seen = c.feed.clone();
        seen.sort_unstable();
        assert!(seen.iter().enumerate().all(|(k, &n)| n as usize == k), "the feed is a permutation");
        for i in 0..turns {
            let (a, b) = (c.feed[i] as usize, c.feed[i + turns] as usize);
            assert_ne!(a, b);
            assert_eq!(c.identity[a], c.identity[b]);
            assert_eq!(docs[a].text, docs[b].text);
            assert!(
                docs[b].payload.contains("-r1/") && !docs[a].payload.contains("-r1/"),
                "{}",
                docs[b].payload
            );
        }
        let first = c.feed[0] as usize;
        assert!(docs[first].text.starts_with("Caroline Hey Mel!"), "{}", docs[first].text);
        assert!(docs[first].payload.contains(r#""content":"Hey Mel!"#), "{}", docs[first].payload);
        assert_eq!(c.queries.len(), 999);
    }
}
