//! [uhlc](https://docs.rs/uhlc) fed by fastnow (feature `uhlc`):
//! [`wall_clock`], a physical clock for `uhlc::HLCBuilder::with_clock` that
//! reads the wall tier, and the conversions between
//! [`hlc::Timestamp`](crate::hlc::Timestamp) and `uhlc::NTP64`.
//!
//! uhlc (Zenoh's hybrid logical clock) takes its physical clock as a plain
//! function returning an `NTP64`; its default, `system_time_clock`, reads
//! `SystemTime::now()`. With [`wall_clock`] each of its stamps reads
//! [`unix_nanos`](crate::unix_nanos) instead, and follows the `mock`
//! feature's clocks in tests. The clock's own cost is then the smaller
//! part of a stamp: uhlc takes a lock for every one (`BENCHMARKS.md`
//! compares it with [`hlc::Hlc`](crate::hlc::Hlc), which does not).
//!
//! ```
//! use uhlc::HLCBuilder;
//!
//! let hlc = HLCBuilder::new().with_clock(fastnow::uhlc::wall_clock).build();
//! let (a, b) = (hlc.new_timestamp(), hlc.new_timestamp());
//! assert!(b > a);
//! let ns = a.get_time().as_nanos();
//! assert!(ns.abs_diff(fastnow::unix_nanos()) < 1_000_000_000);
//! ```

use crate::hlc::Timestamp;
use ::uhlc::NTP64;

const NANOS_PER_SEC: u64 = 1_000_000_000;

/// The wall tier's time ([`unix_nanos`](crate::unix_nanos)) as uhlc's
/// `NTP64`: seconds since the Unix epoch in the upper 32 bits and the
/// fraction of the second in units of 2^-32 s in the lower 32, truncated,
/// exactly as uhlc converts a `Duration` since the epoch
/// (`NTP64::from(Duration)`).
///
/// An `NTP64` ends at 2106-02-07T06:28:15Z plus a fraction; a wall clock
/// set past that reads as the largest `NTP64` (where uhlc's own conversion
/// panics).
///
/// ```
/// use std::time::Duration;
///
/// let t = fastnow::uhlc::wall_clock();
/// let ns = fastnow::unix_nanos();
/// assert!(Duration::from_nanos(ns).saturating_sub(t.to_duration()) < Duration::from_secs(1));
/// ```
#[inline]
pub fn wall_clock() -> NTP64 {
    ntp64_of_nanos(crate::unix_nanos())
}

/// Unix nanoseconds as an `NTP64`, saturating past its end.
#[inline]
pub(crate) fn ntp64_of_nanos(unix_nanos: u64) -> NTP64 {
    let secs = unix_nanos / NANOS_PER_SEC;
    if secs > u64::from(u32::MAX) {
        return NTP64(u64::MAX);
    }
    // 2^32 / 10^9 = 2^23 / 5^9: the fraction fits in a u64 after the shift.
    let frac = ((unix_nanos % NANOS_PER_SEC) << 23) / 1_953_125;
    NTP64((secs << 32) | frac)
}

/// The same 64 bits: a fastnow stamp is an NTP-format time (Unix epoch,
/// as uhlc's) whose last 16 bits count events, so as an `NTP64` it is a
/// time within 15.26 µs after its physical part, and stamps and `NTP64`s
/// keep their order. uhlc's own stamps put their counter in the last 4
/// bits; both are ordered as integers.
///
/// ```
/// use fastnow::hlc::Timestamp;
///
/// let t = Timestamp::new(1_500_000_000, 7);
/// let ntp = uhlc::NTP64::from(t);
/// assert_eq!(ntp.as_u64(), t.to_u64());
/// assert_eq!(ntp.as_secs(), 1);
/// assert_eq!(Timestamp::from(ntp), t);
/// ```
impl From<Timestamp> for NTP64 {
    fn from(t: Timestamp) -> NTP64 {
        NTP64(t.to_u64())
    }
}

/// The same 64 bits (see `From<Timestamp> for NTP64`): an `NTP64` from
/// uhlc, a stamp of uhlc's included, orders among fastnow's stamps by its
/// time; its [`logical`](Timestamp::logical) part is then the last 16 bits
/// of the fraction, uhlc's 4-bit counter among them.
///
/// ```
/// use fastnow::hlc::Timestamp;
///
/// let ntp = uhlc::NTP64(3 << 32); // three seconds after the epoch
/// assert_eq!(Timestamp::from(ntp).physical_nanos(), 3_000_000_000);
/// ```
impl From<NTP64> for Timestamp {
    fn from(t: NTP64) -> Timestamp {
        Timestamp::from_u64(t.as_u64())
    }
}
