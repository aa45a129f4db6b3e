//! `UnixTime` and `jiff::Timestamp` (feature `jiff`).

use crate::interop::nanos_from_i128;
use crate::wall::{OutOfRange, UnixTime};

/// The same instant, exactly (a `Timestamp` holds every `UnixTime`).
///
/// ```
/// use fastnow::UnixTime;
///
/// let ts = jiff::Timestamp::from(UnixTime::from_nanos(1_709_210_096_123_456_789));
/// assert_eq!(ts.to_string(), "2024-02-29T12:34:56.123456789Z");
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "jiff")))]
impl From<UnixTime> for jiff::Timestamp {
    fn from(time: UnixTime) -> jiff::Timestamp {
        jiff::Timestamp::from_nanosecond(i128::from(time.as_nanos()))
            .expect("jiff's range (years -9999 to 9999) holds every UnixTime")
    }
}

/// The same instant, exactly, or [`OutOfRange`] before 1970 or after
/// 2554-07-21T23:34:33.709551615Z.
///
/// ```
/// use fastnow::UnixTime;
///
/// let ts: jiff::Timestamp = "2024-02-29T13:34:56.5+01:00".parse().unwrap();
/// assert_eq!(UnixTime::try_from(ts).unwrap().as_nanos(), 1_709_210_096_500_000_000);
/// assert!(UnixTime::try_from(jiff::Timestamp::MIN).unwrap_err().is_before_epoch());
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "jiff")))]
impl TryFrom<jiff::Timestamp> for UnixTime {
    type Error = OutOfRange;
    fn try_from(ts: jiff::Timestamp) -> Result<UnixTime, OutOfRange> {
        nanos_from_i128(ts.as_nanosecond())
    }
}
