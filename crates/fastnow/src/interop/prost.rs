//! `UnixTime` and `prost_types::Timestamp` (feature `prost`).

use crate::interop::from_secs_nanos;
use crate::wall::{OutOfRange, UnixTime};
use prost_types::Timestamp;

/// The same instant as a normalised protobuf `Timestamp` (`nanos` in
/// 0..10^9), exactly.
///
/// ```
/// use fastnow::UnixTime;
///
/// let ts = prost_types::Timestamp::from(UnixTime::from_nanos(1_709_210_096_123_456_789));
/// assert_eq!((ts.seconds, ts.nanos), (1_709_210_096, 123_456_789));
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "prost")))]
impl From<UnixTime> for Timestamp {
    fn from(time: UnixTime) -> Timestamp {
        Timestamp {
            // At most 18_446_744_073 seconds and 999_999_999 nanoseconds.
            seconds: time.as_secs() as i64,
            nanos: time.subsec_nanos() as i32,
        }
    }
}

/// The instant `seconds + nanos / 10^9`, exactly, or [`OutOfRange`] before
/// 1970 or after 2554-07-21T23:34:33.709551615Z.
///
/// The protobuf rules want `nanos` in 0..10^9; a `Timestamp` that breaks
/// them is not refused but read for the time its fields add up to, as
/// `Timestamp::normalize` would make it (and as prost's own `SystemTime`
/// conversion reads it). Check `nanos` first where such a message should be
/// rejected.
///
/// ```
/// use fastnow::UnixTime;
/// use prost_types::Timestamp;
///
/// let t = UnixTime::try_from(Timestamp { seconds: 1, nanos: 500_000_000 }).unwrap();
/// assert_eq!(t.as_nanos(), 1_500_000_000);
/// // Not normalised, but the same time.
/// let t2 = UnixTime::try_from(Timestamp { seconds: 2, nanos: -500_000_000 }).unwrap();
/// assert_eq!(t2, t);
/// let before = Timestamp { seconds: -1, nanos: 999_999_999 };
/// assert!(UnixTime::try_from(before).unwrap_err().is_before_epoch());
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "prost")))]
impl TryFrom<Timestamp> for UnixTime {
    type Error = OutOfRange;
    fn try_from(ts: Timestamp) -> Result<UnixTime, OutOfRange> {
        from_secs_nanos(ts.seconds, i64::from(ts.nanos))
    }
}
