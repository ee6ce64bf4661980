//! The shared helpers of Scriptorium's test binaries: a dev-dependency
//! only, never a dependency of a shipped crate (tidy checks it).
//!
//! * [`sessions`]: scheduler nodes, in-memory stores and batch writers
//!   written for the tests (a counting writer, a store whose marks fail).
//! * [`commits`]: transaction workspaces, records, cited blocks, patches,
//!   and the tree and derived-view snapshots the crash and model tests
//!   compare.
//! * [`writing`]: writer workspaces and inputs, records said by a given
//!   speaker, a scripted [`scriptorium_writer::Model`], person files.
//! * [`replay`]: a scripted chat-completions server on 127.0.0.1 for the
//!   tests of the OpenAI-compatible client.
//!
//! Everything but [`replay`] is re-exported at the root, so a test says
//! `use scriptorium_testkit::*;`. Helpers panic on failure: they are for
//! tests.

pub mod commits;
pub mod replay;
pub mod sessions;
pub mod writing;

pub use commits::*;
pub use sessions::*;
pub use writing::*;
