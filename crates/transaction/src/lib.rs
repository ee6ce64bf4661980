//! Transactions over a Scriptorium workspace: the only way anything under
//! `topics/` or `sources/` changes.
//!
//! * [`commit::Committer`] holds the cross-process write lock ([`lock`]),
//!   recovers an interrupted install, and commits a [`patch::Patch`]:
//!   checked paths and tier, the base revision ([`revision`]), staged
//!   archive appends and edits, validation whose cost follows the change
//!   ([`validation`]), the crash-safe install ([`install`]), then the search
//!   index and the derived views ([`views`]). It also promotes pending
//!   sources (an audit line, nothing rewritten).
//! * [`layout`] creates the workspace and moves an old layout aside.
//! * Every write of the install goes through [`disk::Disk`], whose
//!   [`disk::Faults`] plan lets tests crash or fail any call.
//! * [`error::Error`] carries the stable codes of FORMAT.md §5.
//!
//! ```no_run
//! use std::time::Duration;
//! use scriptorium_transaction::{patch, Base, Tier, Committer};
//!
//! let root = std::path::Path::new("/tmp/memory");
//! let json = r#"{"base_revision":"…","edits":[{"op":"append","path":"topics/a.md","content":"…"}]}"#;
//! let p = patch::parse(json, Tier::Paired)?; // shape, paths, tier: before the lock
//! let mut writer = Committer::open(root, Duration::from_secs(1))?; // LOCKED after 1 s
//! let done = writer.commit(&p, Tier::Paired, Base::Check)?; // CONFLICT, VALIDATION_FAILED, …
//! println!("{} {:?}", done.revision, done.changed);
//! # Ok::<(), scriptorium_transaction::Error>(())
//! ```
//!
//! **Architecture invariant:** this crate knows nothing about conversations,
//! sessions, models or scheduling. It may depend only on the archive, topic and
//! index layers.
//!
//! Should I use this crate? Agent builders want the `scriptorium` facade.
#![deny(missing_docs)]

pub mod commit;
mod core_md;
pub mod derive;
pub mod disk;
pub mod error;
pub mod history;
pub mod install;
pub mod layout;
pub mod lock;
pub mod observe;
pub mod patch;
pub mod revision;
pub mod snapshot;
pub mod sync;
mod topic_facts;
mod topic_index;
mod topic_layers;
mod topic_table;
pub mod validation;
pub mod views;

pub use commit::{Base, Committed, Committer, Derived, Promoted};
pub use core_md::CoreMigration;
pub use error::{Code, Error};
pub use patch::{Edit, Patch, Tier};
