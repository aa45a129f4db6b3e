//! `UnixTime` and `chrono::DateTime` (feature `chrono`).

use crate::interop::from_secs_nanos;
use crate::wall::{OutOfRange, UnixTime};
use chrono::{DateTime, TimeZone, Utc};

/// The same instant, exactly (a `DateTime` holds every `UnixTime`).
///
/// ```
/// use chrono::{DateTime, SecondsFormat, Utc};
/// use fastnow::UnixTime;
///
/// let dt = DateTime::<Utc>::from(UnixTime::from_nanos(1_709_210_096_123_456_789));
/// assert_eq!(dt.to_rfc3339_opts(SecondsFormat::Nanos, true), "2024-02-29T12:34:56.123456789Z");
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "chrono")))]
impl From<UnixTime> for DateTime<Utc> {
    fn from(time: UnixTime) -> DateTime<Utc> {
        // Seconds and nanoseconds, not `from_timestamp_nanos`, whose i64
        // ends in 2262.
        DateTime::from_timestamp(time.as_secs() as i64, time.subsec_nanos())
            .expect("chrono's range (years -262143 to 262142) holds every UnixTime")
    }
}

/// The same instant, in any time zone, exactly, or [`OutOfRange`] before 1970
/// or after 2554-07-21T23:34:33.709551615Z.
///
/// A leap second (which chrono can represent, as a second nanosecond count
/// past 10^9) becomes the first second of the next minute, as in Unix time
/// and `DateTime::timestamp_nanos_opt`.
///
/// ```
/// use chrono::{DateTime, FixedOffset, Utc};
/// use fastnow::UnixTime;
///
/// let dt = DateTime::parse_from_rfc3339("2024-02-29T13:34:56.5+01:00").unwrap();
/// assert_eq!(UnixTime::try_from(dt).unwrap().as_nanos(), 1_709_210_096_500_000_000);
/// let before = DateTime::<Utc>::UNIX_EPOCH - chrono::TimeDelta::nanoseconds(1);
/// assert!(UnixTime::try_from(before).unwrap_err().is_before_epoch());
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "chrono")))]
impl<Tz: TimeZone> TryFrom<DateTime<Tz>> for UnixTime {
    type Error = OutOfRange;
    fn try_from(dt: DateTime<Tz>) -> Result<UnixTime, OutOfRange> {
        from_secs_nanos(dt.timestamp(), i64::from(dt.timestamp_subsec_nanos()))
    }
}
