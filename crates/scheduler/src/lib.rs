//! When Scriptorium writes memory, and which turns.
//!
//! **Status: not built yet.** This layer will own the session-store trait and
//! its embedded SQLite store, branch-aware written marks, the pending suffix of
//! every branch tip, thresholds and batch selection, forced writes, the idle
//! watcher, the nightly clock, `WriteFailure` with its retry policy, and the
//! writer status.
//!
//! **Architecture invariant:** this crate does not know how a batch becomes
//! topics; it calls a writer through a trait. It may depend only on the layers
//! below it (archive, topics, index, transaction).
//!
//! Should I use this crate? Agent builders want the `scriptorium` facade.
