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
        write_rfc3339(w, crate::wall::unix_nanos())
    }
}

impl FormatTime for RecentWallTime {
    fn format_time(&self, w: &mut Writer<'_>) -> fmt::Result {
        write_rfc3339(w, crate::coarse::recent_unix_nanos())
    }
}

/// Writes Unix nanoseconds as `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
pub fn write_rfc3339(w: &mut impl fmt::Write, unix_nanos: u64) -> fmt::Result {
    crate::interop::rfc3339::write(w, unix_nanos, 6)
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
}
