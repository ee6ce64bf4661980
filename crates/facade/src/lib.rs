//! Scriptorium: long-term memory for LLM agents.
//!
//! Every conversation turn is archived verbatim with its trusted speaker; a
//! background writer distils batches of turns into Markdown topic files whose
//! every paragraph cites the archived messages; a BM25 index brings the right
//! paragraphs back into the next conversation.
//!
//! This crate is the facade over the layers: the [`backend::MemoryBackend`]
//! contract and its local and disabled implementations, the fence
//! ([`fence`]), recall ([`recall`]), the `memory_*` tools ([`tools`]),
//! the memory palace, a self-contained HTML page of a workspace
//! ([`palace`]), registering the hooks and tools in a coding agent
//! ([`install`]), configuration ([`config`]), the writer's health with
//! remediation ([`health`]), the choice of writer and
//! promotion ([`writers`]), the `scriptorium` binary and
//! its MCP server;
//! and each layer re-exported as a module (`archive`, `topics`, `index`,
//! `transaction`, `scheduler`, `writer`).
//!
//! **Architecture invariant:** the facade sits on top; no layer crate
//! depends on it.
//!
//! ```
//! use scriptorium::archive::speaker::{attribution, label};
//! // The on-disk label is lossy; what people and models read is not.
//! assert_eq!(label(Some("Ada"), Some("7391")), label(Some("Ada (7391)"), None));
//! assert_eq!(attribution(Some("Ada"), Some("7391")), "Ada [id 7391]");
//! assert_eq!(attribution(Some("Ada (7391)"), None), "Ada (7391) [no id]");
//! ```
#![deny(missing_docs)]

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

pub mod backend;
pub mod config;
pub mod embeddings;
mod error;
pub mod fence;
pub mod health;
pub mod hooks;
pub mod install;
pub mod nudge;
pub mod palace;
pub mod recall;
pub mod search;
pub mod self_prompt;
pub mod sessions;
pub mod status;
pub mod tools;
pub mod writers;

use std::path::Path;

/// The report of `core.md` as `render` would write it now (FORMAT §4.4):
/// its token count and the ids of eligible blocks of `topics/core.md` left
/// out for the budget; `checked` is the whole workspace's check.
pub fn core_report(
    root: &Path,
    checked: &scriptorium_topic_markdown::validate::Checked,
) -> Result<scriptorium_topic_markdown::views::CoreReport, scriptorium_transaction::Error> {
    let budget = scriptorium_transaction::layout::core_budget(root)?;
    let path = root.join("topics/core.md");
    let core = match std::fs::read(&path) {
        Ok(bytes) => scriptorium_transaction::validation::load("topics/core.md", &bytes).ok(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(scriptorium_transaction::Error::io(&e, "cannot read", &path)),
    };
    Ok(scriptorium_topic_markdown::views::render_core(core.as_ref(), checked, budget).report)
}

pub use error::{Error, Result};
pub use scriptorium_source_archive::Code;

pub use scriptorium_transaction::snapshot;

pub use scriptorium_bm25_index as index;
pub use scriptorium_scheduler as scheduler;
pub use scriptorium_source_archive as archive;
pub use scriptorium_topic_markdown as topics;
pub use scriptorium_transaction as transaction;
pub use scriptorium_writer as writer;
