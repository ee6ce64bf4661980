//! [`Status`]: what `scriptorium status` and `memory_status` report of a
//! workspace, computed once from a [`Snapshot`].

use std::path::Path;

use serde::Serialize;

use scriptorium_bm25_index::tokenize::TokenizerConfig;
use scriptorium_bm25_index::workspace::{self as index_ws, Action};
use scriptorium_scheduler::status::Failure;
use scriptorium_topic_markdown::views::CoreReport;

use crate::error::Result;
pub use scriptorium_transaction::snapshot::ReadOnly;
use scriptorium_transaction::snapshot::Snapshot;

/// A workspace's status.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Status {
    /// The revision.
    pub revision: String,
    /// Topic files, unreadable ones included.
    pub topic_files: usize,
    /// Blocks with an id.
    pub blocks: usize,
    /// Of those, blocks citing a pending source.
    pub pending_blocks: usize,
    /// Archived records.
    pub source_records: usize,
    /// Of those, pending and not promoted.
    pub pending_sources: usize,
    /// Diagnostics of the whole workspace.
    pub diagnostics: usize,
    /// Open conflicts of this machine's sync merges (`check` lists them).
    pub conflicts: usize,
    /// The search index, refreshed in memory if stale.
    pub index: IndexState,
    /// `core.md` as `render` would write it now.
    pub core: CoreReport,
    /// The self as every prompt shows it now (`memory.self.budget`).
    #[serde(rename = "self")]
    pub the_self: crate::self_prompt::SelfReport,
    /// Eligible unmarked turns of the session store; `None` (with
    /// `sessions_error`) when the store cannot be read.
    pub pending_turns: Option<usize>,
    /// Why the session store could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sessions_error: Option<String>,
    /// The writer's latest success and failure.
    pub writer: WriterOutcomes,
    /// The writer's health: the failure streak, the current failure's
    /// fingerprint and what to do about it ([`crate::health`]).
    pub health: crate::health::Health,
    /// The coding-agent hooks' latest failure.
    pub hooks: crate::hooks::failure::HookStatus,
    /// Why the workspace is read as it is on disk, when it cannot be written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only: Option<ReadOnly>,
}

/// The search index as a status shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum IndexState {
    /// It opened (and was refreshed if stale).
    Open {
        /// Documents indexed.
        documents: u32,
        /// What opening it did.
        action: Action,
        /// Bytes of the base segment.
        base_bytes: u64,
        /// Bytes of the delta.
        delta_bytes: u64,
        /// Why a refresh was not saved, if it was not.
        unsaved: Option<String>,
    },
    /// It could not be opened.
    Failed {
        /// Why.
        error: String,
    },
}

/// The writer's latest outcomes (`.scriptorium/status.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WriterOutcomes {
    /// When a batch was last written.
    pub latest_success: Option<String>,
    /// The latest failure.
    pub latest_failure: Option<Failure>,
}

impl Status {
    /// The status of what `snapshot` holds.
    pub fn of(snapshot: &Snapshot) -> Result<Status> {
        let root = snapshot.root();
        let revision = snapshot.revision()?;
        let c = snapshot.checkup()?;
        let ids = || c.checked.blocks.iter().filter(|b| b.id.is_some());
        let archive = &c.archive;
        let pending_sources =
            archive.v2_records().filter(|r| r.is_pending() && !c.promoted.contains(&r.id().text())).count();
        let core = crate::core_report(root, &c.checked)?;
        let the_self = crate::self_prompt::report(root, &c.topics.loaded, &c.checked)?;
        let (pending_turns, sessions_error) = match pending_turns(root) {
            Ok(n) => (Some(n), None),
            Err(e) => (None, Some(e)),
        };
        let stored = scriptorium_scheduler::status::load(root);
        Ok(Status {
            revision,
            topic_files: c.topics.loaded.len() + c.topics.unreadable.len(),
            blocks: ids().count(),
            pending_blocks: ids().filter(|b| b.pending).count(),
            source_records: archive.v2_records().count() + archive.legacy_records().count(),
            pending_sources,
            diagnostics: c.diagnostics.len(),
            conflicts: scriptorium_transaction::sync::conflicts::list(root)?.len(),
            index: IndexState::of(root),
            core,
            the_self,
            pending_turns,
            sessions_error,
            writer: WriterOutcomes {
                latest_success: stored.latest_success.clone(),
                latest_failure: stored.latest_failure.clone(),
            },
            health: crate::health::Health::from_status(root, stored),
            hooks: crate::hooks::failure::status(root),
            read_only: snapshot.read_only(),
        })
    }
}

impl IndexState {
    fn of(root: &Path) -> IndexState {
        match index_ws::open(root, TokenizerConfig::default()) {
            Ok(o) => IndexState::Open {
                documents: o.report.documents,
                action: o.report.action,
                base_bytes: o.report.base_bytes,
                delta_bytes: o.report.delta_bytes,
                unsaved: o.report.unsaved,
            },
            Err(e) => IndexState::Failed { error: e.message().to_owned() },
        }
    }
}

/// Eligible unmarked turns of the session store (0 without one).
fn pending_turns(root: &Path) -> std::result::Result<usize, String> {
    let db = root.join(scriptorium_scheduler::store::SESSIONS_DB);
    let Some(store) = scriptorium_scheduler::SqliteStore::open_existing(&db).map_err(|e| e.to_string())?
    else {
        return Ok(0);
    };
    match scriptorium_transaction::layout::identity(root).map_err(|e| e.to_string())? {
        None => Ok(0),
        Some(ws) => scriptorium_scheduler::pending::pending_turns(&store, &ws.id).map_err(|e| e.to_string()),
    }
}
