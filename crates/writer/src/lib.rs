//! The Scriptorium memory writer.
//!
//! **Status: not built yet.** This layer will own the model trait and its
//! clients (an OpenAI-compatible HTTP client and a deterministic offline
//! writer), the prompts, the bounded tool loop, turning model output into one
//! transaction, reorganize (`sleep`), backfill and `extract_before_discard`.
//!
//! **Architecture invariant:** this crate does not decide how or when it is
//! called; the scheduler and the facade do. It may depend on every layer below
//! it and on nothing above.
//!
//! Should I use this crate? Agent builders want the `scriptorium` facade.
