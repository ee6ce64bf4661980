//! The background machinery: the idle watcher, its events, and the nightly
//! pass.
//!
//! A session is due when it gained nodes since the watcher last finished
//! with it, has been quiet for the idle time (or the reflection cadence
//! makes its write due, [`Scheduler::steps_due`]), and is not backing off.
//! A due session gets a forced write. On success, or on a failure no retry can fix
//! (refused content, bad configuration or credentials), it is handled until
//! new nodes arrive; the event says which. On a retryable failure (a held
//! lock, an unreachable model) it stays unhandled and is tried again after a
//! backoff that doubles from one minute to an hour.
//!
//! The dream pass ([`Reorganize`]) runs nightly, and on idle: once after
//! the watcher's writes brought something new, when every session has
//! been quiet for the idle time ([`Watcher::idle_if_due`]).

use jiff::tz::TimeZone;
use jiff::Timestamp;
use serde::Serialize;

use crate::clock;
use crate::dream::{Hygiene, Report, Selected};
use crate::error::{Result, WriteFailure};
use crate::store::{SessionStore, WatchState};
use crate::write::{BatchWriter, Scheduler, WriteReport};

/// An event on the sink.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Event {
    /// `memory.ingest_ended` (a watcher write finished, well or for good),
    /// `memory.ingest_deferred` (a retryable failure; tried again later),
    /// `memory.reorganize_ended` or `memory.self_changed` (after either
    /// ended event, when what it wrote changed the self: `changed` names
    /// the self's files, `revision` the revision when known).
    pub event: &'static str,
    /// When.
    pub time: String,
    /// The session, for ingest events.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Whether it succeeded.
    pub ok: bool,
    /// Real turns written.
    pub turns: usize,
    /// Batches written.
    pub batches: usize,
    /// The revision after, when something was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// The failure's code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The failure's reason; for a reorganize pass that succeeded but
    /// changed nothing, why it changed nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Whether the failure is retryable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retryable: Option<bool>,
    /// For a deferred session: not before this time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_at: Option<String>,
    /// For a reorganize pass: the conversations it selected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selected: Option<Vec<Selected>>,
    /// For a reorganize pass: the paths it changed; for a change of the
    /// self: the self's files it changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changed: Option<Vec<String>>,
    /// For a reorganize pass that succeeded: what its offline hygiene did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hygiene: Option<Hygiene>,
    /// For a reorganize pass: why it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
}

/// Why a dream (reorganize) pass ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// Its nightly hour came.
    Nightly,
    /// Every session went quiet after the watcher wrote something new.
    Idle,
    /// Someone asked for it.
    Manual,
}

impl Event {
    fn new(event: &'static str, time: Timestamp, session: Option<&str>) -> Event {
        Event {
            event,
            time: clock::format(time),
            session: session.map(str::to_owned),
            ok: true,
            turns: 0,
            batches: 0,
            revision: None,
            code: None,
            reason: None,
            retryable: None,
            retry_at: None,
            selected: None,
            changed: None,
            hygiene: None,
            origin: None,
        }
    }

    fn failed(mut self, f: &WriteFailure) -> Event {
        self.ok = false;
        self.code = Some(f.code.as_str().to_owned());
        self.reason = Some(f.reason.clone());
        self.retryable = Some(f.retryable);
        self
    }

    fn reorganized(self, r: Report) -> Event {
        Event {
            reason: r.reason.map(|u| u.as_str().to_owned()),
            selected: Some(r.selected),
            changed: Some(r.changed),
            hygiene: Some(r.hygiene),
            ..self
        }
    }

    fn wrote(mut self, r: &WriteReport) -> Event {
        self.turns = r.turns;
        self.batches = r.batches;
        self.revision = r.revision.clone();
        self
    }
}

/// The `memory.self_changed` event for a write or pass that changed
/// `changed` (with `revision` when known), if any of them is the self's.
fn self_changed(
    now: Timestamp,
    session: Option<&str>,
    changed: &[String],
    revision: Option<&str>,
) -> Option<Event> {
    let own: Vec<String> = changed
        .iter()
        .filter(|p| scriptorium_topic_markdown::views::SELF_PATHS.contains(&p.as_str()))
        .cloned()
        .collect();
    (!own.is_empty()).then(|| Event {
        changed: Some(own),
        revision: revision.map(str::to_owned),
        ..Event::new("memory.self_changed", now, session)
    })
}

/// Where events go: the CLI prints them; a library user subscribes.
pub trait EventSink {
    /// Receives one event.
    fn emit(&mut self, event: &Event);
}

/// A sink that keeps every event (tests, callers that poll).
#[derive(Debug, Clone, Default)]
pub struct Collect(pub Vec<Event>);

impl EventSink for Collect {
    fn emit(&mut self, event: &Event) {
        self.0.push(event.clone());
    }
}

/// The nightly reorganize (the dream pass).
pub trait Reorganize {
    /// Runs the pass; returns what it selected, what it changed and, when
    /// it changed nothing, why.
    fn reorganize(&mut self) -> Result<Report, WriteFailure>;
}

/// The first backoff after a retryable failure, in seconds.
pub const BACKOFF_FIRST_SECS: i64 = 60;
/// The longest backoff, in seconds.
pub const BACKOFF_MAX_SECS: i64 = 3600;

/// The backoff after the `failures`-th retryable failure in a row.
pub fn backoff_secs(failures: u32) -> i64 {
    let doublings = failures.saturating_sub(1).min(16);
    (BACKOFF_FIRST_SECS << doublings).min(BACKOFF_MAX_SECS)
}

/// What one poll did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Poll {
    /// Sessions written (or found to owe nothing) and now handled.
    pub handled: Vec<String>,
    /// Sessions that failed retryably and will be tried again.
    pub deferred: Vec<String>,
    /// Sessions that failed for good (handled, with an `ok: false` event).
    pub failed: Vec<String>,
}

/// The idle watcher.
#[derive(Debug)]
pub struct Watcher<'s, 'a, S: SessionStore + ?Sized> {
    scheduler: &'s Scheduler<'a, S>,
    /// Seconds a session must be quiet before it is written.
    pub idle_secs: i64,
    /// The time zone of the nightly pass.
    pub tz: TimeZone,
    /// The local hour of the nightly pass (0-23; default
    /// [`clock::NIGHTLY_HOUR`]).
    pub nightly_hour: i8,
    /// Whether a write or pass that changes the self is followed by a
    /// `memory.self_changed` event (`memory.self.edit_notice`; default on).
    pub self_notice: bool,
    next_nightly: Option<Timestamp>,
    /// Whether a write since the last dream pass brought something new.
    owed: std::cell::Cell<bool>,
}

impl<'s, 'a, S: SessionStore + ?Sized> Watcher<'s, 'a, S> {
    /// A watcher over the scheduler's store, with the system time zone.
    pub fn new(scheduler: &'s Scheduler<'a, S>, idle_secs: i64) -> Watcher<'s, 'a, S> {
        Watcher {
            scheduler,
            idle_secs,
            tz: TimeZone::system(),
            nightly_hour: clock::NIGHTLY_HOUR,
            self_notice: true,
            next_nightly: None,
            owed: std::cell::Cell::new(false),
        }
    }

    /// Says (`true`) or keeps quiet about (`false`) changes of the self
    /// with `memory.self_changed` events.
    pub fn with_self_notice(mut self, on: bool) -> Watcher<'s, 'a, S> {
        self.self_notice = on;
        self
    }

    /// Uses `tz` for the nightly pass.
    pub fn with_time_zone(mut self, tz: TimeZone) -> Watcher<'s, 'a, S> {
        self.tz = tz;
        self.next_nightly = None;
        self
    }

    /// Runs the nightly pass at local `hour`:00 (clamped to 0-23).
    pub fn with_nightly_hour(mut self, hour: u8) -> Watcher<'s, 'a, S> {
        self.nightly_hour = hour.min(23) as i8;
        self.next_nightly = None;
        self
    }

    /// When the nightly pass runs next (computed on the first call).
    pub fn next_nightly(&mut self) -> Timestamp {
        let now = self.scheduler.clock().now();
        *self.next_nightly.get_or_insert_with(|| clock::next_local(now, &self.tz, self.nightly_hour))
    }

    /// One pass over every session: writes each due one (forced).
    pub fn poll(&self, writer: &mut dyn BatchWriter, sink: &mut dyn EventSink) -> Result<Poll> {
        let store = self.scheduler.store();
        let ws = self.scheduler.workspace();
        let mut out = Poll::default();
        let mut wrote = false;
        for info in store.sessions()? {
            let now = self.scheduler.clock().now();
            let mut state = store.watch_state(&info.id, ws)?;
            let quiet = now.as_second().saturating_sub(info.active_at) >= self.idle_secs;
            if info.seq <= state.handled_seq || now.as_second() < state.retry_at {
                continue;
            }
            if !quiet && !self.scheduler.steps_due(&info.id)? {
                continue;
            }
            let result = self.scheduler.write_one(writer, &info.id, true);
            self.scheduler.note(&result, false);
            wrote = true;
            match result {
                Ok(report) => {
                    state = WatchState { handled_seq: info.seq, failures: 0, retry_at: 0 };
                    store.set_watch_state(&info.id, ws, &state)?;
                    if report.batches > 0 {
                        self.owed.set(true);
                        sink.emit(&Event::new("memory.ingest_ended", now, Some(&info.id)).wrote(&report));
                        let revision = report.revision.as_deref();
                        let own = self_changed(now, Some(&info.id), &report.changed, revision);
                        if let Some(e) = own.filter(|_| self.self_notice) {
                            sink.emit(&e);
                        }
                    }
                    out.handled.push(info.id);
                }
                Err(f) if f.retryable => {
                    state.failures = state.failures.saturating_add(1);
                    state.retry_at = now.as_second().saturating_add(backoff_secs(state.failures));
                    store.set_watch_state(&info.id, ws, &state)?;
                    let mut e = Event::new("memory.ingest_deferred", now, Some(&info.id)).failed(&f);
                    e.retry_at = Some(scriptorium_source_archive::timestamp::format_unix(state.retry_at));
                    tracing::warn!(session = ?info.id, retry_at = e.retry_at.as_deref(), "write deferred");
                    sink.emit(&e);
                    out.deferred.push(info.id);
                }
                Err(f) => {
                    state = WatchState { handled_seq: info.seq, failures: 0, retry_at: 0 };
                    store.set_watch_state(&info.id, ws, &state)?;
                    sink.emit(&Event::new("memory.ingest_ended", now, Some(&info.id)).failed(&f));
                    out.failed.push(info.id);
                }
            }
        }
        if wrote {
            self.scheduler.record_pending();
        }
        Ok(out)
    }

    /// Runs the nightly pass if its time has come; returns whether it ran.
    pub fn nightly_if_due(&mut self, hook: &mut dyn Reorganize, sink: &mut dyn EventSink) -> bool {
        let due = self.next_nightly();
        let now = self.scheduler.clock().now();
        if now < due {
            return false;
        }
        self.reorganize_now(Origin::Nightly, hook, sink);
        self.next_nightly = Some(clock::next_local(now, &self.tz, self.nightly_hour));
        true
    }

    /// Runs the pass on idle: when a write of this watcher brought
    /// something new since the last pass and every session has been quiet
    /// for the idle time (none deferred or owing). Returns whether it ran.
    pub fn idle_if_due(&self, hook: &mut dyn Reorganize, sink: &mut dyn EventSink) -> Result<bool> {
        if !self.owed.get() {
            return Ok(false);
        }
        let store = self.scheduler.store();
        let now = self.scheduler.clock().now().as_second();
        for info in store.sessions()? {
            let quiet = now.saturating_sub(info.active_at) >= self.idle_secs;
            let handled = store.watch_state(&info.id, self.scheduler.workspace())?.handled_seq >= info.seq;
            if !quiet || !handled {
                return Ok(false);
            }
        }
        self.reorganize_now(Origin::Idle, hook, sink);
        Ok(true)
    }

    /// Runs the reorganize pass now, with its event.
    pub fn reorganize_now(&self, origin: Origin, hook: &mut dyn Reorganize, sink: &mut dyn EventSink) {
        self.owed.set(false);
        let now = self.scheduler.clock().now();
        let mut e = Event::new("memory.reorganize_ended", now, None);
        e.origin = Some(origin);
        match hook.reorganize() {
            Ok(report) => {
                let own = self_changed(now, None, &report.changed, None).filter(|_| self.self_notice);
                sink.emit(&e.reorganized(report));
                if let Some(own) = own {
                    sink.emit(&own);
                }
            }
            Err(f) => sink.emit(&e.failed(&f)),
        }
    }
}
