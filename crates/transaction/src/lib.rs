//! Transactions over a Scriptorium workspace.
//!
//! **Status: being built.** Today this crate holds the workspace layout
//! ([`layout`]: `ensure`, the identity file, moving an old layout's folders
//! aside), the revision ([`revision`], cached), the write lock ([`lock`]),
//! the patch and its checks ([`patch`]: parsing, path rules, tiers, twins
//! and links on disk), and the error type with the stable codes
//! ([`error`]). Still to come: the commit (staging, validation against the
//! current workspace, the crash-safe install with its intent record and
//! recovery), history, promotion and its audit, and the CLI verbs `update`,
//! `status`, `check`, `promote`.
//!
//! **Architecture invariant:** this crate knows nothing about conversations,
//! sessions, models or scheduling. It may depend only on the archive, topic and
//! index layers.
//!
//! Should I use this crate? Agent builders want the `scriptorium` facade.
#![deny(missing_docs)]

pub mod commit;
pub mod disk;
pub mod error;
pub mod install;
pub mod layout;
pub mod lock;
pub mod patch;
pub mod revision;
pub mod validation;
pub mod views;

pub use commit::{Base, Committed, Derived, Promoted, Writer};
pub use error::{Code, Error};
pub use patch::{Edit, Patch, Tier};
