//! Transactions over a Scriptorium workspace.
//!
//! **Status: not built yet.** This layer will own the workspace layout and its
//! migration, the revision, the cross-process write lock
//! (`.scriptorium/write.lock`), staging and whole-workspace validation of a
//! patch, atomic multi-file install with crash recovery, authority tiers,
//! pending trust and promotion audit, history, and rebuilding derived views and
//! the index after an install.
//!
//! **Architecture invariant:** this crate knows nothing about conversations,
//! sessions, models or scheduling. It may depend only on the archive, topic and
//! index layers.
//!
//! Should I use this crate? Agent builders want the `scriptorium` facade.
