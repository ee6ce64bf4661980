//! The Scriptorium memory writer: how a batch of turns becomes topics.
//!
//! * [`model`]: the [`Model`] trait (chat with tools); [`openai`]: the
//!   OpenAI-compatible HTTP client; [`embed`]: the embeddings client.
//! * [`offline`]: the deterministic extractive baseline, no model needed.
//! * [`agent`]: the bounded tool loop of a model-driven write, and the
//!   dream pass's consolidation; its prompts are `prompts/*.md`.
//! * [`dream`]: the dream pass (`sleep`): its selector, the offline
//!   hygiene, the model's consolidation, the ledger.
//! * [`backfill`]: uncited records through the writer; [`extract`]:
//!   `extract_before_discard`.
//! * [`input`]: turns with their evidence.
//! * [`people`]: people cards: their aliases and limits.
//!
//! **Architecture invariant:** this crate does not decide how or when it is
//! called; the scheduler and the facade do. It depends on the layers below
//! it and on nothing above.
//!
//! Should I use this crate? Agent builders want the `scriptorium` facade.

pub mod agent;
pub mod backfill;
pub mod dream;
pub mod embed;
pub mod extract;
pub mod input;
pub mod model;
pub mod offline;
pub mod openai;
pub mod people;

pub use agent::ModelWriter;
pub use model::{Message, Model, Reply, ToolCall, ToolSpec};
pub use offline::Offline;
pub use openai::OpenAiCompatible;
