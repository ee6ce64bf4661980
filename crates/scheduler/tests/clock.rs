//! The nightly pass's next local 03:00, across daylight-saving changes.

use jiff::tz::TimeZone;
use jiff::Timestamp;
use scriptorium_scheduler::clock::{next_local, next_nightly};

fn at(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn ny() -> TimeZone {
    TimeZone::get("America/New_York").unwrap()
}

#[test]
fn an_ordinary_night() {
    // 22:00 local (EST, UTC-5) → 03:00 the next day = 08:00Z.
    assert_eq!(next_nightly(at("2026-01-15T03:00:00Z"), &ny()), at("2026-01-15T08:00:00Z"));
    // Exactly at 03:00 local: the next one is a day later.
    assert_eq!(next_nightly(at("2026-01-15T08:00:00Z"), &ny()), at("2026-01-16T08:00:00Z"));
    // One second before.
    assert_eq!(next_nightly(at("2026-01-15T07:59:59Z"), &ny()), at("2026-01-15T08:00:00Z"));
}

#[test]
fn spring_forward_and_fall_back_in_new_york() {
    // 2026-03-08: 02:00 EST jumps to 03:00 EDT; 03:00 EDT = 07:00Z, 23 hours after
    // the previous night's 03:00 EST (08:00Z).
    let before = at("2026-03-07T08:00:00Z");
    let next = next_nightly(before, &ny());
    assert_eq!(next, at("2026-03-08T07:00:00Z"));
    assert_eq!(next.as_second() - before.as_second(), 23 * 3600);
    // 2026-11-01: 02:00 EDT falls back to 01:00 EST; 03:00 EST = 08:00Z, 25 hours later.
    let before = at("2026-10-31T07:00:00Z");
    let next = next_nightly(before, &ny());
    assert_eq!(next, at("2026-11-01T08:00:00Z"));
    assert_eq!(next.as_second() - before.as_second(), 25 * 3600);
}

#[test]
fn a_zone_whose_changes_happen_at_three() {
    // Clocks go 03:00 → 04:00 on the last Sunday of March and 04:00 → 03:00 on
    // the last Sunday of October (UTC+2 standard, UTC+3 summer).
    let tz = TimeZone::posix("XST-2XDT,M3.5.0/3,M10.5.0/4").unwrap();
    // 2026-03-29: 03:00 does not exist; the pass runs at the end of the gap,
    // 04:00 summer time = 01:00Z.
    assert_eq!(next_nightly(at("2026-03-28T22:00:00Z"), &tz), at("2026-03-29T01:00:00Z"));
    // 2026-10-25: 03:00 happens twice (00:00Z and 01:00Z); the first one, once.
    let first = next_nightly(at("2026-10-24T22:00:00Z"), &tz);
    assert_eq!(first, at("2026-10-25T00:00:00Z"));
    let then = next_nightly(first, &tz);
    assert_eq!(then, at("2026-10-26T01:00:00Z"), "not again in the repeated hour");
}

#[test]
fn southern_hemisphere_and_utc() {
    let syd = TimeZone::get("Australia/Sydney").unwrap();
    // 2026-04-05: AEDT (UTC+11) ends at 03:00 local, which becomes 02:00 AEST;
    // the clock first reads 03:00 an hour later, 03:00 AEST = 17:00Z on the 4th.
    let t = next_nightly(at("2026-04-04T12:00:00Z"), &syd);
    assert_eq!(t, at("2026-04-04T17:00:00Z"));
    assert_eq!(next_nightly(t, &syd), at("2026-04-05T17:00:00Z"));
    assert_eq!(next_local(at("2026-05-01T02:59:00Z"), &TimeZone::UTC, 3), at("2026-05-01T03:00:00Z"));
}
