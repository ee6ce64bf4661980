//! Observers of installed transactions: what a process wants to know after
//! every change that reached the workspace (its revision, the paths it
//! changed, the tier and who or what made it), e.g. to record it in a
//! history. An observer runs after the install and the derived views, in
//! the writer's process, and cannot undo or fail the change.

use std::path::Path;
use std::sync::{Arc, RwLock};

use serde::Serialize;

use crate::patch::Tier;

/// Who or what made a change.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Provenance {
    /// What wrote it: `archive`, `offline`, `model:<name>`, `update`,
    /// `promote`, `backfill`, `sleep`, `migration`, … (`external` when the
    /// caller did not say).
    pub writer: String,
    /// The session its turns came from, when it wrote turns.
    pub session: Option<String>,
    /// The node ids of the turns it wrote, in order.
    pub turns: Vec<String>,
}

impl Provenance {
    /// A change by `writer`, not from a session.
    pub fn by(writer: impl Into<String>) -> Provenance {
        Provenance { writer: writer.into(), session: None, turns: Vec::new() }
    }

    /// A change by `writer` of `turns` from `session`.
    pub fn of_turns(writer: impl Into<String>, session: &str, turns: Vec<String>) -> Provenance {
        Provenance { writer: writer.into(), session: Some(session.to_owned()), turns }
    }
}

/// One installed transaction.
#[derive(Debug, Clone, Copy)]
pub struct Installed<'a> {
    /// The workspace.
    pub root: &'a Path,
    /// The revision before it.
    pub revision_before: &'a str,
    /// The revision it made current.
    pub revision: &'a str,
    /// The workspace-relative paths it changed, sorted.
    pub changed: &'a [String],
    /// The tier it was written at.
    pub tier: Tier,
    /// Why (the patch's message).
    pub message: &'a str,
    /// Who or what made it.
    pub provenance: &'a Provenance,
}

/// Told of every installed transaction of this process.
pub trait Observer: Send + Sync {
    /// Called once per installed transaction that changed something.
    fn installed(&self, t: &Installed<'_>);
}

type Registered = Vec<(u64, Arc<dyn Observer>)>;

static OBSERVERS: RwLock<Registered> = RwLock::new(Vec::new());
static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Keeps an observer registered; dropping it unregisters the observer.
#[derive(Debug)]
#[must_use = "the observer is unregistered when this is dropped"]
pub struct Registration(u64);

/// Registers `observer` for every transaction this process installs from
/// now on, until the [`Registration`] is dropped.
pub fn register(observer: Arc<dyn Observer>) -> Registration {
    let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut all = OBSERVERS.write().unwrap_or_else(std::sync::PoisonError::into_inner);
    all.push((id, observer));
    Registration(id)
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut all = OBSERVERS.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        all.retain(|(id, _)| *id != self.0);
    }
}

/// Tells every registered observer of `t`.
pub(crate) fn notify(t: &Installed<'_>) {
    let all: Vec<Arc<dyn Observer>> = {
        let all = OBSERVERS.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        all.iter().map(|(_, o)| Arc::clone(o)).collect()
    };
    for o in all {
        o.installed(t);
    }
}
