//! Topic files: the editable semantic memory of a Scriptorium workspace.
//!
//! A topic file (`topics/**/*.md`, FORMAT.md §3) is Markdown in which every
//! paragraph — a *block* — ends in a stable ` ^block-id` and cites evidence
//! footnotes whose definitions link the exact archived messages it came
//! from. This crate owns:
//!
//! * [`parse`]: a nom parser and an exact printer (`print(parse(t)) == t`),
//!   strict and lenient;
//! * [`validate`]: per-file and cross-file validation against a
//!   [`validate::SourceResolver`], with stable diagnostic codes ([`diag`]),
//!   and the trust of every block (pending when any citation is);
//! * [`views`]: the derived views — `core.md` under a token budget, the
//!   timeline, `recent_events.jsonl`, `relations.json` — as pure functions;
//! * [`ids`]: new block ids;
//! * [`merge`]: the three-way merge of two versions of one topic file
//!   (block by block, front matter by key, other lines three-way), as a
//!   pure function.
//!
//! **Feature `tokens`** (default): token counting in tiktoken's `o200k_base`
//! and what needs it — `views::count_tokens`, the budgeted `core.md`
//! (`views::render_core`, `views::render`) and `check`. Without it the crate
//! parses, validates and renders every other view, and drags no tokenizer.
//!
//! **What it does not do:** it reads no files beyond the bytes it is handed
//! (callers load topics and build a resolver once), and knows nothing about
//! indexes, locks or models.
//!
//! **Invariants:** printing an unchanged file reproduces its bytes; rendering
//! twice gives identical bytes; pending or invalid blocks reach no view; the
//! rendered `core.md` never exceeds its budget. Tests live in `src/*/tests.rs`
//! and `tests/it/`; the `topic_parse` fuzz target calls [`check`].
//!
//! Should I use this crate? Use it alone to read, check or render topic
//! files; agent builders want the `scriptorium` facade.
//!
//! ```
//! use scriptorium_topic_markdown::parse::TopicFile;
//! let text = "# Dave\n\nDave leads the budget work.[^e-1175dea39c] ^f888f60e\n";
//! let file = TopicFile::parse(text).expect("valid grammar");
//! assert_eq!(file.blocks[0].id.as_deref(), Some("f888f60e"));
//! assert_eq!(file.print(), text);
//! ```
#![deny(missing_docs)]

#[cfg(feature = "tokens")]
pub mod check;
pub mod convert;
pub mod diag;
pub mod files;
pub mod ids;
pub mod merge;
pub mod parse;
pub mod quote;
pub mod time;
pub mod validate;
pub mod views;

pub use diag::{Code, Diagnostic};
pub use parse::TopicFile;
