//! The BM25 index of a Scriptorium workspace (FORMAT.md §7).
//!
//! * [`tokenize`]: Unicode word segmentation, case folding, optional
//!   English stemming and stop words, CJK bigrams.
//! * [`segment`]: an immutable, checksummed segment built in parallel and
//!   opened from any `&[u8]` (a `Vec<u8>` in tests, a memory map in
//!   production) with lazy chunk-wise verification.
//! * [`search`]: top-k BM25 with MaxScore pruning and filters (kind, path
//!   prefix, date range, speaker, pending) over a stack of segments.
//! * [`speaker`]: the speaker keys of records, and a named speaker
//!   resolved to an exact id or the one identity with that name.
//! * [`delta`]: incremental refresh — a new head delta per change, the
//!   newest deltas merged into it from their postings (log-structured),
//!   everything merged into a new base when the deltas grow.
//! * [`workspace`]: the documents of a workspace's topic and archive files,
//!   and the index files under `.scriptorium/index/`.
//!
//! The byte layout is specified in this crate's `README.md`.
//!
//! **Architecture invariant:** this crate knows nothing about how the
//! workspace is written, locks or models. It may depend only on
//! `scriptorium-source-archive` and `scriptorium-topic-markdown`.
//!
//! Should I use this crate? Agent builders want the `scriptorium` facade.
#![deny(missing_docs)]

pub mod check;
pub mod delta;
pub mod format;
pub mod hit;
pub mod search;
pub mod segment;
pub mod speaker;
pub mod tokenize;
pub mod workspace;
