//! Time, injected: the scheduler asks a [`Clock`], so tests run instantly
//! and deterministically; and the nightly pass's next local 03:00.

use jiff::civil::Time;
use jiff::tz::{Disambiguation, TimeZone};
use jiff::Timestamp;

/// A source of the current time.
pub trait Clock {
    /// Now.
    fn now(&self) -> Timestamp;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A timestamp as the archive writes them: `YYYY-MM-DDTHH:MM:SSZ`.
pub fn format(t: Timestamp) -> String {
    scriptorium_source_archive::timestamp::format_unix(t.as_second())
}

/// The hour of the nightly pass, local time.
pub const NIGHTLY_HOUR: i8 = 3;

/// The first local `hour`:00 strictly after `now` in `tz`.
///
/// Daylight-saving time: a local time that does not exist that day (the
/// clocks jump over it) runs at the first instant after the gap; one that
/// happens twice (the clocks go back) runs at the first of the two. Either
/// way the pass runs once a local day.
pub fn next_local(now: Timestamp, tz: &TimeZone, hour: i8) -> Timestamp {
    let today = now.to_zoned(tz.clone()).date();
    let at = |d: jiff::civil::Date| {
        let dt = d.to_datetime(Time::constant(hour, 0, 0, 0));
        tz.to_ambiguous_zoned(dt).disambiguate(Disambiguation::Compatible).map(|z| z.timestamp())
    };
    let mut day = today;
    for _ in 0..4 {
        if let Ok(t) = at(day) {
            if t > now {
                return t;
            }
        }
        match day.tomorrow() {
            Ok(d) => day = d,
            Err(_) => break,
        }
    }
    // Only at the end of the representable range: run a day from now.
    now.checked_add(jiff::SignedDuration::from_hours(24)).unwrap_or(now)
}

/// The next nightly pass (local 03:00) after `now` in `tz`.
pub fn next_nightly(now: Timestamp, tz: &TimeZone) -> Timestamp {
    next_local(now, tz, NIGHTLY_HOUR)
}
