//! `UnixTime` and the `time` crate's `OffsetDateTime` and `UtcDateTime`
//! (feature `time`).

use crate::interop::nanos_from_i128;
use crate::wall::{OutOfRange, UnixTime};
use time::{OffsetDateTime, UtcDateTime};

/// The same instant at offset UTC, exactly (an `OffsetDateTime` holds every
/// `UnixTime`).
///
/// ```
/// use fastnow::UnixTime;
///
/// let dt = time::OffsetDateTime::from(UnixTime::from_nanos(1_709_210_096_123_456_789));
/// assert_eq!(dt.offset(), time::UtcOffset::UTC);
/// assert_eq!((dt.year(), dt.hour(), dt.nanosecond()), (2024, 12, 123_456_789));
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "time")))]
impl From<UnixTime> for OffsetDateTime {
    fn from(time: UnixTime) -> OffsetDateTime {
        UtcDateTime::from(time).into()
    }
}

/// The same instant, at any offset, exactly, or [`OutOfRange`] before 1970
/// or after 2554-07-21T23:34:33.709551615Z.
///
/// ```
/// use fastnow::UnixTime;
/// use time::{Duration, OffsetDateTime, UtcOffset};
///
/// let dt = OffsetDateTime::UNIX_EPOCH.to_offset(UtcOffset::from_hms(-8, 0, 0).unwrap());
/// assert_eq!(UnixTime::try_from(dt).unwrap(), UnixTime::EPOCH);
/// let before = OffsetDateTime::UNIX_EPOCH - Duration::nanoseconds(1);
/// assert!(UnixTime::try_from(before).unwrap_err().is_before_epoch());
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "time")))]
impl TryFrom<OffsetDateTime> for UnixTime {
    type Error = OutOfRange;
    fn try_from(dt: OffsetDateTime) -> Result<UnixTime, OutOfRange> {
        nanos_from_i128(dt.unix_timestamp_nanos())
    }
}

/// The same instant, exactly (a `UtcDateTime` holds every `UnixTime`).
///
/// ```
/// use fastnow::UnixTime;
///
/// let dt = time::UtcDateTime::from(UnixTime::from_nanos(1));
/// assert_eq!(dt, time::UtcDateTime::UNIX_EPOCH + time::Duration::nanoseconds(1));
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "time")))]
impl From<UnixTime> for UtcDateTime {
    fn from(time: UnixTime) -> UtcDateTime {
        UtcDateTime::from_unix_timestamp_nanos(i128::from(time.as_nanos()))
            .expect("time's range (years -9999 to 9999) holds every UnixTime")
    }
}

/// The same instant, exactly, or [`OutOfRange`] before 1970 or after
/// 2554-07-21T23:34:33.709551615Z.
///
/// ```
/// use fastnow::UnixTime;
///
/// let dt = time::UtcDateTime::UNIX_EPOCH + time::Duration::seconds(1);
/// assert_eq!(UnixTime::try_from(dt).unwrap().as_nanos(), 1_000_000_000);
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "time")))]
impl TryFrom<UtcDateTime> for UnixTime {
    type Error = OutOfRange;
    fn try_from(dt: UtcDateTime) -> Result<UnixTime, OutOfRange> {
        nanos_from_i128(dt.unix_timestamp_nanos())
    }
}
