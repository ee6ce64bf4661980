//! The peer: tantivy on disk (memory-mapped directory), its `en_stem`
//! tokenizer and default BM25, frequencies without positions, the text
//! stored with its default doc-store compression (lz4), built on all cores
//! and merged into one segment.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use tantivy::collector::TopDocs;
use tantivy::columnar::Column;
use tantivy::indexer::NoMergePolicy;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, Value, FAST};
use tantivy::{doc, DocAddress, Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use scriptorium_bm25_index::segment::Document;

use super::K;

/// The heap tantivy's writer shares among its threads.
const WRITER_HEAP: usize = 1 << 30;

/// An opened tantivy index.
pub struct Peer {
    /// The index.
    pub index: Index,
    reader: IndexReader,
    text: Field,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer").field("text", &self.text).finish()
    }
}

/// A tantivy index built, with its build figures.
#[derive(Debug)]
pub struct Built {
    /// The opened index.
    pub peer: Peer,
    /// Wall time of indexing, committing and merging into one segment.
    pub seconds: f64,
    /// Of which: the forced merge into one segment.
    pub merge_seconds: f64,
    /// Segments after the commit and tantivy's own merges.
    pub segments_before_merge: usize,
}

/// Builds the documents `docs`, given in the order `feed` (document
/// numbers), into a new index in `dir`: the text indexed and stored, the
/// document number as a fast field `ord` (to compare answers).
pub fn build_into(dir: &Path, docs: &[&Document], feed: &[u32]) -> Built {
    std::fs::create_dir_all(dir).expect("the index folder is made");
    let mut schema = Schema::builder();
    let indexing =
        TextFieldIndexing::default().set_tokenizer("en_stem").set_index_option(IndexRecordOption::WithFreqs);
    let text =
        schema.add_text_field("text", TextOptions::default().set_indexing_options(indexing).set_stored());
    let ord = schema.add_u64_field("ord", FAST);
    let index = Index::create_in_dir(dir, schema.build()).expect("a tantivy index");
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let started = Instant::now();
    let mut writer: IndexWriter =
        index.writer_with_num_threads(threads, WRITER_HEAP).expect("a tantivy writer");
    for &n in feed {
        let d = docs[n as usize];
        writer.add_document(doc!(text => d.text.as_str(), ord => u64::from(n))).expect("tantivy takes it");
    }
    writer.commit().expect("tantivy commits");
    writer.wait_merging_threads().expect("tantivy merges");
    let ids = index.searchable_segment_ids().expect("tantivy lists its segments");
    let merging = Instant::now();
    if ids.len() > 1 {
        let mut writer: IndexWriter = index.writer_with_num_threads(1, 64 << 20).expect("a tantivy writer");
        writer.set_merge_policy(Box::new(NoMergePolicy));
        writer.merge(&ids).wait().expect("tantivy merges into one segment");
        writer.garbage_collect_files().wait().expect("tantivy removes merged files");
        writer.wait_merging_threads().expect("tantivy's merges end");
    }
    let merge_seconds = merging.elapsed().as_secs_f64();
    let seconds = started.elapsed().as_secs_f64();
    Built { peer: open_index(index), seconds, merge_seconds, segments_before_merge: ids.len() }
}

/// The index in `dir`, memory-mapped.
pub fn open(dir: &Path) -> Peer {
    open_index(Index::open_in_dir(dir).expect("the tantivy index opens"))
}

fn open_index(index: Index) -> Peer {
    let reader =
        index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into().expect("a tantivy reader");
    let text = index.schema().get_field("text").expect("the text field");
    Peer { index, reader, text }
}

impl Peer {
    /// `q` as tantivy's query: its distinct `en_stem` terms, any of which
    /// makes a candidate (as ours; no query syntax).
    pub fn query(&self, q: &str) -> BooleanQuery {
        let mut analyzer = self.index.tokenizer_for_field(self.text).expect("the text field's tokenizer");
        let mut stream = analyzer.token_stream(q);
        let mut terms: Vec<String> = Vec::new();
        while stream.advance() {
            let t = &stream.token().text;
            if !terms.contains(t) {
                terms.push(t.clone());
            }
        }
        let clauses: Vec<(Occur, Box<dyn Query>)> = terms
            .iter()
            .map(|t| {
                let term = Term::from_field_text(self.text, t);
                let q: Box<dyn Query> = Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs));
                (Occur::Should, q)
            })
            .collect();
        BooleanQuery::new(clauses)
    }

    /// The top [`K`] for `q`.
    pub fn search(&self, q: &str) -> Vec<(f32, DocAddress)> {
        let searcher = self.reader.searcher();
        searcher.search(&self.query(q), &TopDocs::with_limit(K).order_by_score()).expect("tantivy searches")
    }

    /// The top [`K`] for `q` with their stored texts read: their bytes.
    pub fn answer(&self, q: &str) -> usize {
        let searcher = self.reader.searcher();
        let hits = searcher
            .search(&self.query(q), &TopDocs::with_limit(K).order_by_score())
            .expect("tantivy searches");
        hits.iter()
            .map(|(_, at)| {
                let d: TantivyDocument = searcher.doc(*at).expect("a hit is stored");
                d.get_first(self.text).and_then(|v| v.as_str()).map_or(0, str::len)
            })
            .sum()
    }

    /// The `ord` column of the single segment: hit → document number.
    pub fn numbers(&self) -> Column<u64> {
        let searcher = self.reader.searcher();
        assert_eq!(searcher.segment_readers().len(), 1, "the index is merged into one segment");
        searcher.segment_reader(0).fast_fields().u64("ord").expect("the ord column")
    }

    /// The bytes of the segment's files in `dir` by extension (`idx`,
    /// `term`, `fieldnorm`, `store`, `fast`, `pos` …); files of no segment
    /// (`meta.json`, `.managed.json`) under `other`.
    pub fn bytes(&self, dir: &Path) -> BTreeMap<String, u64> {
        let ids = self.index.searchable_segment_ids().expect("tantivy lists its segments");
        let prefixes: Vec<String> = ids.iter().map(|id| id.uuid_string()).collect();
        let mut out = BTreeMap::new();
        for path in crate::page_cache::files_under(dir).expect("the tantivy folder lists") {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let len = std::fs::metadata(&path).map_or(0, |m| m.len());
            let key = match name.split_once('.') {
                Some((stem, ext)) if prefixes.iter().any(|p| p == stem) => ext.to_owned(),
                Some(_) if name.ends_with(".lock") => continue,
                _ => "other".to_owned(),
            };
            *out.entry(key).or_insert(0) += len;
        }
        out
    }
}
