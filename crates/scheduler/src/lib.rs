//! When Scriptorium writes memory, and which turns.
//!
//! * [`store`]: the session-store trait ([`SessionStore`]) and the embedded
//!   SQLite store ([`SqliteStore`], `.scriptorium/sessions.db`).
//! * [`import`]: our JSONL, OpenAI `messages`, Claude Code sessions, LoCoMo.
//! * [`pending`]: the unmarked suffix of every live tip, and batch cutting
//!   at the token threshold.
//! * [`write`]: [`Scheduler::write`] — batches to a [`BatchWriter`], marks
//!   after success, restart safety.
//! * [`watch`]: the idle watcher, events, the nightly pass; [`clock`]: the
//!   injected clock and the next local 03:00; [`dream`]: what the nightly
//!   (dream) pass reports.
//! * [`limits`]: what a write left out to keep people cards within their
//!   limits.
//! * [`status`]: the writer status in `.scriptorium/status.json`.
//!
//! **Architecture invariant:** this crate does not know how a batch becomes
//! topics; it calls a writer through a trait. It depends only on the layers
//! below it (archive, transaction).
//!
//! Should I use this crate? Agent builders want the `scriptorium` facade.

pub mod clock;
pub mod conflict;
pub mod dream;
pub mod error;
pub mod import;
pub mod limits;
pub mod node;
pub mod observe;
pub mod pending;
pub mod status;
pub mod store;
pub mod watch;
pub mod write;

pub use error::{Code, Error, Result, WriteFailure};
pub use limits::{Limit, LimitHit};
pub use node::{Node, NodeKind, NodeRole};
pub use store::{SessionStore, SqliteStore};
pub use write::{Batch, BatchWriter, Scheduler, WriteReport, Written};
