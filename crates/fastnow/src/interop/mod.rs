//! `UnixTime` and other crates' types, each behind its feature: serde,
//! jiff, chrono, time, prost. All conversions are exact (every type involved
//! counts whole nanoseconds); those into `UnixTime` fail with [`OutOfRange`]
//! outside its range. And the bridges for the instant types: to std's and
//! tokio's `Instant` (features `std`, `tokio`), a clock for governor's
//! rate limiters (feature `governor`), and a physical clock for uhlc's
//! hybrid logical clocks (feature `uhlc`).

use crate::wall::{OutOfRange, UnixTime};

#[cfg(feature = "chrono")]
mod chrono;
#[cfg(feature = "governor")]
#[cfg_attr(docsrs, doc(cfg(feature = "governor")))]
pub mod governor;
#[cfg(feature = "jiff")]
mod jiff;
#[cfg(feature = "prost")]
mod prost;
pub(crate) mod rfc3339;
#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
pub mod serde;
// Not in browsers, where std's `Instant::now` panics (fastnow reads
// `performance.now()` there): no `std::time::Instant` to convert to.
#[cfg(all(
    feature = "std",
    not(all(target_family = "wasm", target_os = "unknown"))
))]
pub(crate) mod std;
#[cfg(feature = "time")]
mod time;
#[cfg(all(
    feature = "tokio",
    not(all(target_family = "wasm", target_os = "unknown"))
))]
mod tokio;
#[cfg(feature = "uhlc")]
#[cfg_attr(docsrs, doc(cfg(feature = "uhlc")))]
pub mod uhlc;

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
