//! Topic files: the editable semantic memory of a Scriptorium workspace.
//!
//! **Status: not built yet.** This layer will own the nom parser and exact
//! printer for `topics/**/*.md` (front matter, headings, blocks ending in a
//! `^block-id`, evidence footnotes, links between blocks and files), per-file
//! and cross-file validation given a source resolver, the trust of blocks
//! (all-or-nothing over the sources they cite), and the derived views
//! (`core.md` under a token budget, the timeline, `recent_events.jsonl`,
//! `relations.json`) as pure functions of topics and sources.
//!
//! **Architecture invariant:** this crate reads no files beyond the bytes it is
//! handed. It knows nothing about indexes, locks or models. It may depend only
//! on `scriptorium-source-archive`.
//!
//! Should I use this crate? Agent builders want the `scriptorium` facade.
