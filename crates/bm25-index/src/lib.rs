//! The BM25 index of a Scriptorium workspace.
//!
//! **Status: being built.** Today this crate holds the tokenizer
//! ([`tokenize`]): Unicode word segmentation, case folding, optional English
//! stemming and stop words, CJK bigrams. It will own the parallel index
//! build, the memory-mapped on-disk index with checksummed sections, the
//! filters (kind, path prefix, date range, speaker), top-k search, and cache
//! versioning with incremental refresh: one document per eligible topic
//! block and one per source record.
//!
//! **Architecture invariant:** this crate knows nothing about how the
//! workspace is written, locks or models. It may depend only on
//! `scriptorium-source-archive` and `scriptorium-topic-markdown`.
//!
//! Should I use this crate? Agent builders want the `scriptorium` facade.
#![deny(missing_docs)]

pub mod tokenize;
