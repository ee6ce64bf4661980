//! Scriptorium: long-term memory for LLM agents.
//!
//! Every conversation turn is archived verbatim with its trusted speaker; a
//! background writer distils batches of turns into Markdown topic files whose
//! every paragraph cites the archived messages; a BM25 index brings the right
//! paragraphs back into the next conversation.
//!
//! This crate is the facade over the layers. Today it re-exports the archive,
//! topic, index and transaction layers and builds the `scriptorium` binary with its
//! `archive`, `topic check`, `render`, `index build` and `search` verbs; the
//! memory backend contract, recall, the `memory_*` tools and the MCP server
//! arrive with their layers.
//!
//! **Architecture invariant:** the facade sits on top; no layer crate
//! depends on it.
//!
//! ```
//! use scriptorium::archive::speaker::label;
//! assert_eq!(label(Some("Ada"), Some("7391")).as_deref(), Some("Ada (7391)"));
//! ```
#![deny(missing_docs)]

pub use scriptorium_bm25_index as index;
pub use scriptorium_scheduler as scheduler;
pub use scriptorium_source_archive as archive;
pub use scriptorium_topic_markdown as topics;
pub use scriptorium_transaction as transaction;
pub use scriptorium_writer as writer;
