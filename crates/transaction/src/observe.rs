//! Observers of installed transactions: what a process wants to know after
//! every change that reached the workspace (its revision, the paths it
//! changed, the tier and who or what made it), e.g. to record it in a
//! history. An observer runs after the install and the derived views, in
//! the writer's process, and cannot undo or fail the change.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

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

/// A process-wide list of observers of one kind (`T` is a `dyn` trait),
/// each registered until its [`Registration`] is dropped.
#[derive(Debug)]
pub struct Registry<T: ?Sized + Send + Sync + 'static> {
    all: RwLock<Vec<(u64, Arc<T>)>>,
    next: AtomicU64,
}

impl<T: ?Sized + Send + Sync + 'static> Registry<T> {
    /// An empty registry (for a `static`).
    pub const fn new() -> Registry<T> {
        Registry { all: RwLock::new(Vec::new()), next: AtomicU64::new(0) }
    }

    /// Registers `observer` until the returned [`Registration`] is dropped.
    pub fn register(&'static self, observer: Arc<T>) -> Registration<T> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.all.write().unwrap_or_else(PoisonError::into_inner).push((id, observer));
        Registration { registry: self, id }
    }

    /// Calls `f` with every registered observer, in registration order
    /// (outside the registry's lock, so an observer may register another).
    pub fn each(&self, mut f: impl FnMut(&T)) {
        let all: Vec<Arc<T>> = self
            .all
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(_, o)| Arc::clone(o))
            .collect();
        for o in all {
            f(&o);
        }
    }
}

impl<T: ?Sized + Send + Sync + 'static> Default for Registry<T> {
    fn default() -> Registry<T> {
        Registry::new()
    }
}

/// Keeps an observer registered; dropping it unregisters the observer.
#[must_use = "the observer is unregistered when this is dropped"]
pub struct Registration<T: ?Sized + Send + Sync + 'static> {
    registry: &'static Registry<T>,
    id: u64,
}

impl<T: ?Sized + Send + Sync + 'static> std::fmt::Debug for Registration<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration").field("id", &self.id).finish()
    }
}

impl<T: ?Sized + Send + Sync + 'static> Drop for Registration<T> {
    fn drop(&mut self) {
        self.registry.all.write().unwrap_or_else(PoisonError::into_inner).retain(|(id, _)| *id != self.id);
    }
}

static OBSERVERS: Registry<dyn Observer> = Registry::new();

/// Registers `observer` for every transaction this process installs from
/// now on, until the [`Registration`] is dropped.
pub fn register(observer: Arc<dyn Observer>) -> Registration<dyn Observer> {
    OBSERVERS.register(observer)
}

/// Tells every registered observer of `t`.
pub(crate) fn notify(t: &Installed<'_>) {
    OBSERVERS.each(|o| o.installed(t));
}
