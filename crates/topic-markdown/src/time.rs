//! Evidence times: `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:SS[.f](Z|±HH:MM)`
//! (FORMAT.md §3). A time falls on its UTC day; a bare date counts as
//! 00:00:00Z when ordering.

use scriptorium_source_archive::timestamp::days_in_month;

/// A parsed evidence time: the instant in UTC, for ordering and days.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Instant {
    /// Seconds since 1970-01-01T00:00:00Z (negative before).
    pub seconds: i64,
    /// Nanoseconds within the second (from the fraction, zero-padded).
    pub nanos: u32,
}

fn num(b: &[u8]) -> Option<i64> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0i64, |a, &d| a * 10 + i64::from(d - b'0')))
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number since 1970-01-01.
pub(crate) fn civil_from_days(z: i64) -> (i64, i64, i64) {
    scriptorium_source_archive::timestamp::civil_from_days(z)
}

/// Parses an evidence time; `None` when it is not one of the two forms.
///
/// ```
/// use scriptorium_topic_markdown::time::parse;
/// assert!(parse("2024-03-15").is_some());
/// assert!(parse("2024-03-16T09:30:00Z").is_some());
/// assert!(parse("2024-03-16T09:30:00.5+02:00").is_some());
/// assert!(parse("2024-03-15/2024-03-16").is_none());
/// ```
pub fn parse(s: &str) -> Option<Instant> {
    let b = s.as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, m, d) = (num(&b[0..4])?, num(&b[5..7])?, num(&b[8..10])?);
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    let day = days_from_civil(y, m, d);
    if b.len() == 10 {
        return Some(Instant { seconds: day * 86_400, nanos: 0 });
    }
    if b.len() < 20 || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (hh, mm, ss) = (num(&b[11..13])?, num(&b[14..16])?, num(&b[17..19])?);
    if hh > 23 || mm > 59 || ss > 59 {
        return None;
    }
    let mut rest = &b[19..];
    let mut nanos = 0u32;
    if rest.first() == Some(&b'.') {
        let n = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        // Any number of fraction digits; nanoseconds keep the first nine.
        let mut v = num(&rest[1..1 + n.min(9)])? as u32;
        for _ in n.min(9)..9 {
            v *= 10;
        }
        nanos = v;
        rest = &rest[1 + n..];
    }
    let offset = match rest {
        b"Z" => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let (oh, om) = (num(&[*h1, *h2])?, num(&[*m1, *m2])?);
            if oh > 23 || om > 59 {
                return None;
            }
            let o = oh * 3600 + om * 60;
            if *sign == b'+' {
                o
            } else {
                -o
            }
        }
        _ => return None,
    };
    Some(Instant { seconds: day * 86_400 + hh * 3600 + mm * 60 + ss - offset, nanos })
}

impl Instant {
    /// The UTC day this instant falls on, as `(year, month, day)`.
    pub fn utc_day(self) -> (i64, i64, i64) {
        civil_from_days(self.seconds.div_euclid(86_400))
    }
}

#[cfg(test)]
mod tests {
    //! Time vectors.
    use super::*;

    #[test]
    fn days_and_offsets() {
        assert_eq!(parse("1970-01-01").unwrap().seconds, 0);
        assert_eq!(parse("2024-03-15").unwrap().utc_day(), (2024, 3, 15));
        // 01:00 at +02:00 is the previous UTC day.
        assert_eq!(parse("2024-03-15T01:00:00+02:00").unwrap().utc_day(), (2024, 3, 14));
        assert_eq!(parse("2024-03-15T23:30:00-01:00").unwrap().utc_day(), (2024, 3, 16));
        assert!(parse("2024-03-15T00:00:00.1Z").unwrap() > parse("2024-03-15").unwrap());
        for bad in [
            "2023-02-29",
            "2024-3-15",
            "2024-03-15T25:00:00Z",
            "2024-03-15T10:00:00",
            "2024-03-15 10:00:00Z",
            "",
        ] {
            assert!(parse(bad).is_none(), "{bad}");
        }
        for z in [-1_000_000i64, -1, 0, 1, 19_000, 2_000_000] {
            let (y, m, d) = civil_from_days(z);
            assert_eq!(days_from_civil(y, m, d), z);
        }
    }
}
