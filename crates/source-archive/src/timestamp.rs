//! Record timestamps: `YYYY-MM-DDTHH:MM:SS[.fraction]Z` (FORMAT.md §2.4).

fn digits(b: &[u8]) -> Option<u32> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0u32, |acc, &d| acc * 10 + u32::from(d - b'0')))
}

/// Days in `month` (1–12) of the proleptic Gregorian `year`.
pub fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Checks `YYYY-MM-DDTHH:MM:SS` at the start of `b`; returns the rest.
fn date_time(b: &[u8]) -> Option<&[u8]> {
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    if b[16] != b':' {
        return None;
    }
    let year = digits(&b[0..4])?;
    let month = digits(&b[5..7])?;
    let day = digits(&b[8..10])?;
    let hour = digits(&b[11..13])?;
    let minute = digits(&b[14..16])?;
    let second = digits(&b[17..19])?;
    let ok = (1..=12).contains(&month)
        && day >= 1
        && i64::from(day) <= days_in_month(i64::from(year), i64::from(month))
        && hour <= 23
        && minute <= 59
        && second <= 59;
    ok.then_some(&b[19..])
}

/// Skips an optional `.fraction` of 1–9 digits.
fn fraction(b: &[u8]) -> Option<&[u8]> {
    match b.first() {
        Some(b'.') => {
            let n = b[1..].iter().take_while(|c| c.is_ascii_digit()).count();
            (1..=9).contains(&n).then(|| &b[1 + n..])
        }
        _ => Some(b),
    }
}

/// True iff `s` is a v2 record timestamp: RFC 3339 in UTC with an uppercase
/// `T` and a `Z` suffix, seconds 00–59, 1–9 fraction digits, a real date.
///
/// ```
/// use scriptorium_source_archive::timestamp::is_valid;
/// assert!(is_valid("2026-08-09T10:12:30.250Z"));
/// assert!(!is_valid("2026-02-30T10:12:30Z"));
/// assert!(!is_valid("2026-08-09t10:12:30Z"));
/// assert!(!is_valid("2026-08-09T10:12:30+00:00"));
/// ```
pub fn is_valid(s: &str) -> bool {
    let rest = date_time(s.as_bytes()).and_then(fraction);
    rest == Some(b"Z")
}

/// The legacy form: like [`is_valid`], but a numeric offset `±HH:MM` is
/// accepted in place of `Z`. Legacy files are read, never written.
pub fn is_valid_legacy(s: &str) -> bool {
    match date_time(s.as_bytes()).and_then(fraction) {
        Some(b"Z") => true,
        Some([b'+' | b'-', h1, h2, b':', m1, m2]) => {
            matches!(digits(&[*h1, *h2]), Some(h) if h <= 23)
                && matches!(digits(&[*m1, *m2]), Some(m) if m <= 59)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    //! Timestamp grammar vectors.
    use super::*;

    #[test]
    fn vectors() {
        for ok in [
            "2026-08-09T10:11:12Z",
            "2024-02-29T00:00:00Z",
            "2026-08-09T23:59:59.123456789Z",
            "0001-01-01T00:00:00.1Z",
        ] {
            assert!(is_valid(ok), "{ok}");
            assert!(is_valid_legacy(ok), "{ok}");
        }
        for bad in [
            "",
            "2026-08-09",
            "2026-08-09T10:11:12",
            "2026-08-09T10:11:12z",
            "2026-08-09 10:11:12Z",
            "2023-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-00-01T00:00:00Z",
            "2026-01-00T00:00:00Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T00:60:00Z",
            "2026-01-01T00:00:60Z",
            "2026-01-01T00:00:00.Z",
            "2026-01-01T00:00:00.1234567890Z",
            "2026-01-01T00:00:00ZZ",
            "+026-01-01T00:00:00Z",
            "2026-01-01T00:00:00+00:00",
        ] {
            assert!(!is_valid(bad), "{bad}");
        }
        assert!(is_valid_legacy("2026-01-01T00:00:00+02:00"));
        assert!(!is_valid_legacy("2026-01-01T00:00:00+2:00"));
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` for `secs` seconds since the Unix epoch (UTC).
pub fn format_unix(secs: i64) -> String {
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let rem = secs.rem_euclid(86_400);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem / 60 % 60, rem % 60)
}

/// The (year, month, day) of a day number since 1970-01-01 (proleptic
/// Gregorian).
pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { yoe + era * 400 + 1 } else { yoe + era * 400 }, m, d)
}

/// The current time as [`format_unix`] writes it.
pub fn now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    format_unix(secs)
}

#[cfg(test)]
mod format_tests {
    //! Formatting agrees with the validator and with known dates.
    use super::*;

    #[test]
    fn known_instants() {
        assert_eq!(format_unix(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_unix(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(format_unix(1_786_270_272), "2026-08-09T10:11:12Z");
        assert!(is_valid(&now()));
    }
}
