//! The BM25 index of a Scriptorium workspace.
//!
//! **Status: being built.** Today this crate holds the tokenizer
//! ([`tokenize`]: Unicode word segmentation, case folding, optional English
//! stemming and stop words, CJK bigrams), the index format ([`format`]:
//! versioned, checksummed sections, readable from any `&[u8]`), building an
//! index into bytes and top-k BM25 search with filters ([`index`]; kind,
//! path prefix, date range, speaker, pending). Still to come: documents from
//! a workspace, the parallel build, the memory-mapped file under
//! `.scriptorium/index/` with atomic publication, incremental refresh, and
//! lazy section verification for a cold open that does not read the whole
//! file.
//!
//! **Architecture invariant:** this crate knows nothing about how the
//! workspace is written, locks or models. It may depend only on
//! `scriptorium-source-archive` and `scriptorium-topic-markdown`.
//!
//! Should I use this crate? Agent builders want the `scriptorium` facade.
#![deny(missing_docs)]

pub mod check;
pub mod format;
pub mod index;
pub mod tokenize;
