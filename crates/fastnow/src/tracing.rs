//! Timers for `tracing-subscriber`'s fmt layer (feature `tracing`).
//!
//! The default timer of `tracing_subscriber::fmt` asks the system for the time
//! on every event. [`WallTime`] stamps events from the wall tier
//! ([`unix_nanos`](crate::unix_nanos)); [`RecentWallTime`] from the coarse
//! tier ([`recent_unix_nanos`](crate::recent_unix_nanos): one atomic load, at
//! the upkeep's resolution). Both print RFC 3339 in UTC with microseconds,
//! e.g. `2026-11-22T23:42:43.123456Z`.
//!
//! ```
//! tracing_subscriber::fmt().with_timer(fastnow::tracing::WallTime).init();
//! ```

use core::fmt;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::FormatTime;

/// Stamps events from [`unix_nanos`](crate::unix_nanos).
#[derive(Clone, Copy, Debug, Default)]
pub struct WallTime;

/// Stamps events from [`recent_unix_nanos`](crate::recent_unix_nanos).
#[derive(Clone, Copy, Debug, Default)]
pub struct RecentWallTime;

impl FormatTime for WallTime {
    fn format_time(&self, w: &mut Writer<'_>) -> fmt::Result {
        write_rfc3339(w, crate::unix_nanos())
    }
}

impl FormatTime for RecentWallTime {
    fn format_time(&self, w: &mut Writer<'_>) -> fmt::Result {
        write_rfc3339(w, crate::recent_unix_nanos())
    }
}

/// Writes Unix nanoseconds as `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
pub fn write_rfc3339(w: &mut impl fmt::Write, unix_nanos: u64) -> fmt::Result {
    let secs = unix_nanos / 1_000_000_000;
    let micros = (unix_nanos % 1_000_000_000) / 1_000;
    let (year, month, day) = civil_date(secs / 86_400);
    let sod = secs % 86_400;
    write!(
        w,
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{micros:06}Z",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01.
///
/// Works in 400-year eras (146,097 days each) counted from 0000-03-01, so a
/// leap day falls at the end of each era-year and months are uniform
/// 153-day groups of five; then shifts back to a January-first year.
fn civil_date(days_since_epoch: u64) -> (u64, u64, u64) {
    const DAYS_0000_03_01_TO_EPOCH: u64 = 719_468;
    let z = days_since_epoch + DAYS_0000_03_01_TO_EPOCH;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = era * 400 + year_of_era + (month <= 2) as u64;
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::prelude::v1::*;

    fn fmt(nanos: u64) -> String {
        let mut s = String::new();
        write_rfc3339(&mut s, nanos).unwrap();
        s
    }

    #[test]
    fn known_dates() {
        assert_eq!(fmt(0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(
            fmt(951_782_400 * 1_000_000_000),
            "2000-02-29T00:00:00.000000Z"
        );
        assert_eq!(
            fmt(1_000_000_000 * 1_000_000_000 + 123_456_789),
            "2001-09-09T01:46:40.123456Z"
        );
        assert_eq!(
            fmt(1_709_210_096 * 1_000_000_000),
            "2024-02-29T12:34:56.000000Z"
        );
        assert_eq!(
            fmt(4_102_444_799 * 1_000_000_000),
            "2099-12-31T23:59:59.000000Z"
        );
        assert_eq!(
            fmt(4_107_542_400 * 1_000_000_000),
            "2100-03-01T00:00:00.000000Z"
        );
        assert_eq!(fmt(u64::MAX), "2554-07-21T23:34:33.709551Z");
    }

    /// Every day from 1970 to 2200 follows the previous one in the calendar.
    #[test]
    fn consecutive_days() {
        let leap = |y: u64| y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
        let mut prev = civil_date(0);
        for d in 1..84_000 {
            let (y, m, day) = civil_date(d);
            let (py, pm, pd) = prev;
            let month_len = match pm {
                2 if leap(py) => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            let expected = if pd < month_len {
                (py, pm, pd + 1)
            } else if pm < 12 {
                (py, pm + 1, 1)
            } else {
                (py + 1, 1, 1)
            };
            assert_eq!((y, m, day), expected, "day {d}");
            prev = (y, m, day);
        }
    }
}
