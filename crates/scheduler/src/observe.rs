//! Observers of recorded turns: what a process wants to know each time a
//! turn enters the session store for the first time (a save nudge, a
//! reflection cadence). A turn already recorded, imported again, is not
//! told twice.

use std::sync::Arc;

use scriptorium_transaction::observe::{Registration, Registry};

use crate::node::Node;

/// One turn newly recorded.
#[derive(Debug, Clone, Copy)]
pub struct Recorded<'a> {
    /// The session it was recorded in.
    pub session: &'a str,
    /// The turn.
    pub node: &'a Node,
}

/// Told of every turn this process records.
pub trait TurnObserver: Send + Sync {
    /// Called once per newly recorded turn, after the store committed it.
    fn recorded(&self, turn: &Recorded<'_>);
}

static OBSERVERS: Registry<dyn TurnObserver> = Registry::new();

/// Registers `observer` for every turn this process records from now on,
/// until the [`Registration`] is dropped.
pub fn register(observer: Arc<dyn TurnObserver>) -> Registration<dyn TurnObserver> {
    OBSERVERS.register(observer)
}

/// Tells every registered observer of `turn`.
pub(crate) fn recorded(turn: &Recorded<'_>) {
    OBSERVERS.each(|o| o.recorded(turn));
}
