//! `UnixTime` and other crates' types, each behind its feature: serde,
//! jiff, chrono, time, prost. All conversions are exact (every type involved
//! counts whole nanoseconds); those into `UnixTime` fail with [`OutOfRange`]
//! outside its range.

use crate::UnixTime;
use core::fmt;

#[cfg(feature = "chrono")]
mod chrono;
#[cfg(feature = "jiff")]
mod jiff;
#[cfg(feature = "prost")]
mod prost;
#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
pub mod serde;
#[cfg(feature = "time")]
mod time;

/// A time that [`UnixTime`] cannot hold: before the Unix epoch
/// (1970-01-01T00:00:00Z) or after 2554-07-21T23:34:33.709551615Z (the
/// largest u64 of nanoseconds).
///
/// The error of every fallible conversion into [`UnixTime`] from another
/// crate's time type, and of reading RFC 3339 text out of that range.
///
/// ```
/// # #[cfg(feature = "jiff")] {
/// use fastnow::UnixTime;
///
/// let moon_landing: jiff::Timestamp = "1969-07-20T20:17:40Z".parse().unwrap();
/// let err = UnixTime::try_from(moon_landing).unwrap_err();
/// assert!(err.is_before_epoch());
/// assert!(err.to_string().starts_with("time before 1970-01-01T00:00:00Z"));
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OutOfRange {
    after: bool,
}

impl OutOfRange {
    pub(crate) const BEFORE_EPOCH: OutOfRange = OutOfRange { after: false };
    pub(crate) const AFTER_MAX: OutOfRange = OutOfRange { after: true };

    /// The time was before 1970-01-01T00:00:00Z.
    ///
    /// ```
    /// # #[cfg(feature = "chrono")] {
    /// let before = chrono::DateTime::UNIX_EPOCH - chrono::TimeDelta::nanoseconds(1);
    /// let err = fastnow::UnixTime::try_from(before).unwrap_err();
    /// assert!(err.is_before_epoch() && !err.is_after_max());
    /// # }
    /// ```
    #[must_use]
    pub const fn is_before_epoch(&self) -> bool {
        !self.after
    }

    /// The time was after 2554-07-21T23:34:33.709551615Z.
    ///
    /// ```
    /// # #[cfg(feature = "prost")] {
    /// let after = prost_types::Timestamp { seconds: 18_446_744_074, nanos: 0 };
    /// let err = fastnow::UnixTime::try_from(after).unwrap_err();
    /// assert!(err.is_after_max() && !err.is_before_epoch());
    /// # }
    /// ```
    #[must_use]
    pub const fn is_after_max(&self) -> bool {
        self.after
    }
}

impl fmt::Display for OutOfRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let which = if self.after {
            "after 2554-07-21T23:34:33.709551615Z"
        } else {
            "before 1970-01-01T00:00:00Z"
        };
        write!(
            f,
            "time {which}: fastnow::UnixTime holds u64 nanoseconds since the Unix epoch, \
             1970-01-01T00:00:00Z to 2554-07-21T23:34:33.709551615Z; keep times outside \
             that range in a signed type (e.g. jiff::Timestamp, or i128 nanoseconds)"
        )
    }
}

#[cfg(feature = "std")]
impl std::error::Error for OutOfRange {}

/// Signed nanoseconds since the epoch as a `UnixTime`, or why not.
pub(crate) fn nanos_from_i128(nanos: i128) -> Result<UnixTime, OutOfRange> {
    match u64::try_from(nanos) {
        Ok(n) => Ok(UnixTime::from_nanos(n)),
        Err(_) if nanos < 0 => Err(OutOfRange::BEFORE_EPOCH),
        Err(_) => Err(OutOfRange::AFTER_MAX),
    }
}

/// Seconds and nanoseconds counted forward from them (any sign, any size:
/// they are added exactly) as a `UnixTime`, or why not.
#[cfg(any(feature = "chrono", feature = "prost"))]
pub(crate) fn from_secs_nanos(secs: i64, nanos: i64) -> Result<UnixTime, OutOfRange> {
    nanos_from_i128(i128::from(secs) * 1_000_000_000 + i128::from(nanos))
}
