//! The wall tier: Unix time without a system call, that stays true.
//!
//! [`unix_nanos`] is the precise reading plus the wall clock's *offset*,
//! which the timekeeper publishes in its state and measures again against
//! `CLOCK_REALTIME` at every state update, at least once per resync
//! interval (`timekeeper::offsets`); what it guarantees is on
//! [`unix_nanos`] and in spec/SEMANTICS.md ("Wall tier"). The interval is
//! stored and clamped by the timekeeper, whose constants hold its default,
//! floor and maximum; [`DEFAULT_RESYNC`] and [`set_wall_resync_interval`]
//! publish them.

use crate::timekeeper::{self, Clock, DEFAULT_WALL_INTERVAL_NS};
use core::fmt;
use core::time::Duration;

/// The default wall resync interval (see [`set_wall_resync_interval`]).
pub const DEFAULT_RESYNC: Duration = Duration::from_nanos(DEFAULT_WALL_INTERVAL_NS);

/// Nanoseconds since the Unix epoch (1970-01-01 00:00:00 UTC): the precise
/// reading plus an offset re-anchored to `CLOCK_REALTIME`.
///
/// About the cost of [`Instant::now`](crate::Instant::now) (see
/// `BENCHMARKS.md`), versus a vDSO call for `SystemTime::now()`: the
/// precise tier's read (one consistent load of its words, the counter, a
/// range check, a multiply and an add) with the wall offset loaded in the
/// same load, and one more add. The offset is `CLOCK_REALTIME` less the
/// precise reading at the last state update's sample, which brackets both.
/// Packages that compute "wall time at start + monotonic time since" drift
/// away from the system clock forever after an NTP step, a manual
/// `date -s`, or a suspend. fastnow measures the offset again at every
/// state update, and updates come at least once per *resync interval*
/// (default 1 s, see [`set_wall_resync_interval`]): at each anchor the
/// reading is `CLOCK_REALTIME`, and between anchors it advances with the
/// precise clocks, at the rate `CLOCK_MONOTONIC` had over the last second
/// or so, which is the rate NTP gives `CLOCK_REALTIME` too. So slews and
/// frequency corrections are followed within about two seconds, and the
/// error at any read is at most the rate change since the rate in use was
/// measured times the time since the anchor (500 ppm × 1 s = 500 µs right
/// after a 500 ppm correction; well under a microsecond otherwise). Steps
/// are followed at the next anchor — within one interval, or within a few
/// milliseconds while the upkeep thread runs, which the kernel wakes when
/// the clock is set.
///
/// **Going backwards.** Like `SystemTime`, `unix_nanos()` is not monotonic:
/// when the system clock is stepped back it follows, and each re-anchoring
/// may correct the extrapolation by the error of one interval. Use the
/// precise tier to measure intervals, and the wall tier to say *when*.
///
/// **Range.** Unix nanoseconds in a `u64` cover 1970 to 2554: a system clock
/// set before 1970 reads as 0 and one set after 2554 as `u64::MAX`. Near
/// either end (within 2^41 ns, 36 minutes), on the OS source, during a
/// process's first millisecond, and while the precise clocks stand still
/// after a jump of the counter, the wall tier reads `CLOCK_REALTIME`
/// instead of extrapolating, with the same saturation.
///
/// **Async-signal safety.** `unix_nanos`, [`UnixTime::now`] and
/// [`system_time`] may be called from a signal handler.
///
/// ```
/// let ns = fastnow::unix_nanos();
/// let sys = std::time::SystemTime::now()
///     .duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
/// assert!(ns.abs_diff(sys) < 1_000_000_000);
/// ```
#[inline]
pub fn unix_nanos() -> u64 {
    timekeeper::read(Clock::Wall, false)
}

/// Re-anchors the wall tier to `CLOCK_REALTIME` now, e.g. right after the
/// program itself set the system clock. Not async-signal-safe.
pub fn resync_wall() {
    timekeeper::update_now();
}

/// Sets how often the wall tier re-anchors to `CLOCK_REALTIME` (default 1 s).
///
/// Intervals below 1 ms, zero included, are raised to 1 ms, and intervals
/// over 2^40 ns (18 minutes) lowered to 2^40 ns. The wall clock is
/// re-anchored at a state update, and readers update the state at most
/// about once a millisecond whatever the interval, so that reading the
/// precise clocks stays a load. Shorter intervals follow clock steps sooner; each
/// re-anchoring is a state update on the reader that does it (see
/// `BENCHMARKS.md`), or nothing on readers while the upkeep thread runs
/// (which also follows steps within milliseconds by itself; see
/// [`start_upkeep`](crate::start_upkeep)). Not async-signal-safe.
pub fn set_wall_resync_interval(interval: Duration) {
    timekeeper::set_wall_interval(u64::try_from(interval.as_nanos()).unwrap_or(u64::MAX));
}

/// A point in Unix time, in nanoseconds since 1970-01-01 00:00:00 UTC.
///
/// A plain number with `SystemTime` conversions; [`UnixTime::now`] reads the
/// wall tier and [`UnixTime::recent`] the coarse tier. It displays and
/// parses ([`FromStr`](core::str::FromStr)) as RFC 3339 text in UTC.
///
/// ```
/// use fastnow::UnixTime;
/// use std::time::{Duration, SystemTime};
///
/// let t = UnixTime::from_nanos(1_795_441_069_732_833_400);
/// let sys: SystemTime = t.into();
/// assert_eq!(UnixTime::try_from(sys).unwrap(), t);
/// assert_eq!(UnixTime::from_nanos(1_500_000_000).as_secs(), 1);
/// assert!(t.checked_add(Duration::MAX).is_none());
/// assert_eq!(t.to_string(), "2026-11-23T13:37:49.732833400Z");
/// assert_eq!("2026-11-23T14:37:49.7328334+01:00".parse(), Ok(t));
/// ```
// Its `Display`, `Debug` and `FromStr` (RFC 3339 text) are in
// `interop::rfc3339`, and `UnixTime::recent` is the coarse tier's, so that
// this file imports neither.
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UnixTime {
    nanos: u64,
}

impl UnixTime {
    /// The Unix epoch.
    pub const EPOCH: UnixTime = UnixTime { nanos: 0 };

    /// Now, from the wall tier ([`unix_nanos`]).
    #[inline]
    #[must_use]
    pub fn now() -> UnixTime {
        UnixTime {
            nanos: unix_nanos(),
        }
    }

    /// A time `nanos` nanoseconds after the epoch.
    #[must_use]
    pub const fn from_nanos(nanos: u64) -> UnixTime {
        UnixTime { nanos }
    }

    /// Nanoseconds since the epoch.
    #[must_use]
    pub const fn as_nanos(&self) -> u64 {
        self.nanos
    }

    /// Whole seconds since the epoch.
    #[must_use]
    pub const fn as_secs(&self) -> u64 {
        self.nanos / 1_000_000_000
    }

    /// The nanoseconds past the whole second.
    #[must_use]
    pub const fn subsec_nanos(&self) -> u32 {
        (self.nanos % 1_000_000_000) as u32
    }

    /// Time since the epoch as a `Duration`.
    #[must_use]
    pub const fn since_epoch(&self) -> Duration {
        Duration::from_nanos(self.nanos)
    }

    /// `self - earlier`, or `None` if `earlier` is later.
    #[must_use]
    pub fn checked_duration_since(&self, earlier: UnixTime) -> Option<Duration> {
        self.nanos
            .checked_sub(earlier.nanos)
            .map(crate::precise::nanos_to_duration)
    }

    /// `self + duration`, or `None` past year 2554 (u64 nanoseconds).
    #[must_use]
    pub fn checked_add(&self, duration: Duration) -> Option<UnixTime> {
        let d = u64::try_from(duration.as_nanos()).ok()?;
        self.nanos.checked_add(d).map(UnixTime::from_nanos)
    }

    /// `self - duration`, or `None` before the epoch.
    #[must_use]
    pub fn checked_sub(&self, duration: Duration) -> Option<UnixTime> {
        let d = u64::try_from(duration.as_nanos()).ok()?;
        self.nanos.checked_sub(d).map(UnixTime::from_nanos)
    }
}

/// Exact where `SystemTime` counts nanoseconds (Unix); on Windows, whose
/// `SystemTime` counts 100 ns intervals, the last two digits are dropped.
#[cfg(feature = "std")]
impl From<UnixTime> for std::time::SystemTime {
    fn from(t: UnixTime) -> std::time::SystemTime {
        std::time::UNIX_EPOCH + t.since_epoch()
    }
}

/// Fails with [`OutOfRange`] for times before the epoch
/// or after 2554-07-21T23:34:33.709551615Z, like every conversion into
/// `UnixTime`.
///
/// ```
/// use fastnow::UnixTime;
/// use std::time::{Duration, UNIX_EPOCH};
/// assert!(UnixTime::try_from(UNIX_EPOCH - Duration::from_micros(1)).unwrap_err().is_before_epoch());
/// // A whole number of 100 ns, the unit of Windows' `SystemTime`.
/// let last = u64::MAX - u64::MAX % 100;
/// let max = UNIX_EPOCH + Duration::from_nanos(last);
/// assert_eq!(UnixTime::try_from(max).unwrap().as_nanos(), last);
/// assert!(UnixTime::try_from(max + Duration::from_micros(1)).unwrap_err().is_after_max());
/// ```
#[cfg(feature = "std")]
impl TryFrom<std::time::SystemTime> for UnixTime {
    type Error = OutOfRange;
    fn try_from(t: std::time::SystemTime) -> Result<UnixTime, Self::Error> {
        let d = t
            .duration_since(std::time::UNIX_EPOCH)
            .map_err(|_| OutOfRange::BEFORE_EPOCH)?;
        let nanos = u64::try_from(d.as_nanos()).map_err(|_| OutOfRange::AFTER_MAX)?;
        Ok(UnixTime { nanos })
    }
}

/// The system time now, from the wall tier (see [`unix_nanos`]).
#[cfg(feature = "std")]
#[inline]
pub fn system_time() -> std::time::SystemTime {
    UnixTime::now().into()
}

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
