//! The wall tier: Unix time without a system call, that stays true.
//!
//! [`unix_nanos`] converts the counter with the wall clock's *line*: the
//! line through the last sample of (counter, `CLOCK_REALTIME`), with the
//! slope of the most recent rate measurement (see `timekeeper`). One
//! consistent load of three words, the counter, a compare, a multiply and an
//! add. Packages that compute "wall time at start + monotonic time since"
//! drift away from the system clock forever after an NTP step, a manual
//! `date -s`, or a suspend. fastnow re-anchors the line every *resync
//! interval* (default 1 s, see [`set_wall_resync_interval`]): at each
//! anchor the line goes through `CLOCK_REALTIME` exactly, and between
//! anchors it advances at the rate `CLOCK_MONOTONIC` had over the last
//! second, which is the rate NTP gives `CLOCK_REALTIME` too. So slews and
//! frequency corrections are followed within about two seconds, and the
//! error at any read is at most the rate change since the last measurement
//! times the time since the anchor (500 ppm × 1 s = 500 µs right after a
//! 500 ppm correction; well under a microsecond otherwise). Steps are
//! followed at the next anchor — within one interval, or within a few
//! milliseconds while the upkeep thread runs, which the kernel wakes when
//! the clock is set.
//!
//! **Going backwards.** Like `SystemTime`, `unix_nanos()` is not monotonic:
//! when the system clock is stepped back it follows, and each re-anchoring
//! may correct the extrapolation by the error of one interval. Use the
//! precise tier to measure intervals, and the wall tier to say *when*.
//!
//! **Range.** Unix nanoseconds in a `u64` cover 1970 to 2554: a system clock
//! set before 1970 reads as 0 and one set after 2554 as `u64::MAX`. Near
//! either end (within 2^41 ns, 36 minutes), on the OS source, and during a
//! process's first millisecond, the wall tier reads `CLOCK_REALTIME`
//! instead of extrapolating, with the same saturation.
//!
//! **Async-signal safety.** [`unix_nanos`], [`UnixTime::now`] and
//! [`system_time`] may be called from a signal handler.

use crate::scale::Line;
use crate::timekeeper::{word, Clocks, Due, Timekeeper, MODE_COUNTER, MODE_NONE, MODE_OS, TK};
use core::sync::atomic::Ordering;
use core::time::Duration;

pub use crate::timekeeper::{resync_wall, set_wall_resync_interval};

/// Default resync interval.
pub const DEFAULT_RESYNC: Duration = Duration::from_secs(1);

/// Nanoseconds since the Unix epoch (1970-01-01 00:00:00 UTC), from the
/// counter and a line re-anchored to `CLOCK_REALTIME` (see the module docs).
///
/// About the cost of [`Instant::now`](crate::Instant::now) (see
/// `BENCHMARKS.md`), versus a vDSO call for `SystemTime::now()`. Returns 0
/// for times before 1970 and `u64::MAX` after 2554.
///
/// ```
/// let ns = fastnow::unix_nanos();
/// let sys = std::time::SystemTime::now()
///     .duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
/// assert!(ns.abs_diff(sys) < 1_000_000_000);
/// ```
#[inline]
pub fn unix_nanos() -> u64 {
    #[cfg(feature = "mock")]
    if let Some(ns) = crate::mock::unix_nanos() {
        return ns;
    }
    TK.unix_nanos()
}

impl<C: Clocks> Timekeeper<C> {
    /// See [`unix_nanos`].
    #[inline(always)]
    pub(crate) fn unix_nanos(&self) -> u64 {
        // The deadline is 0 whenever the line must not be used (not
        // published, OS source, near the ends of the range), so it also
        // stands for the source check, before any counter read.
        let (line, deadline) = self.state.read(|w| {
            (
                Line {
                    offset: w[word::WALL_OFFSET].load(Ordering::Relaxed),
                    slope: w[word::WALL_SLOPE].load(Ordering::Relaxed),
                },
                w[word::WALL_DEADLINE].load(Ordering::Relaxed),
            )
        });
        if deadline == 0 {
            return self.unix_nanos_slow(None);
        }
        let t = self.clocks.counter();
        if t >= deadline {
            return self.unix_nanos_slow(Some(t));
        }
        line.at(t)
    }

    /// Past the deadline (resync, or use the line while another thread
    /// does), or no line to use.
    #[cold]
    #[inline(never)]
    fn unix_nanos_slow(&self, ticks: Option<u64>) -> u64 {
        let state = self.state();
        if state.mode == MODE_NONE {
            self.ensure_published();
        }
        if state.mode == MODE_OS && state.trigger != u64::MAX {
            // The warm-up: a program that only reads the wall tier must end
            // it too, or it would read CLOCK_REALTIME for good.
            let mono = self.clocks.mono();
            if mono >= state.trigger {
                self.update_from_reader(Due::Trigger(mono));
            }
        }
        if let (Some(t), MODE_COUNTER) = (ticks, state.mode) {
            if state.wall_deadline != 0 && t >= state.wall_deadline {
                self.update_from_reader(Due::Wall(t));
            }
            // The freshest line: the one just published, or, while another
            // thread publishes one, the old (still about as good).
            let fresh = self.state();
            if fresh.wall_deadline != 0 {
                return fresh.wall.at(t);
            }
        }
        self.clocks.real()
    }
}

/// A point in Unix time, in nanoseconds since 1970-01-01 00:00:00 UTC.
///
/// A plain number with `SystemTime` conversions; [`UnixTime::now`] reads the
/// wall tier and [`UnixTime::recent`] the coarse tier.
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
/// ```
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

    /// The cached time of the coarse tier ([`recent_unix_nanos`](crate::recent_unix_nanos)).
    #[inline]
    #[must_use]
    pub fn recent() -> UnixTime {
        UnixTime {
            nanos: crate::coarse::recent_unix_nanos(),
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

/// RFC 3339 in UTC with nanoseconds, e.g. `2026-11-23T13:45:07.123456789Z`.
///
/// ```
/// let t = fastnow::UnixTime::from_nanos(1_795_441_069_732_833_442);
/// assert_eq!(t.to_string(), "2026-11-23T13:37:49.732833442Z");
/// assert_eq!(format!("{t:?}"), "UnixTime(2026-11-23T13:37:49.732833442Z)");
/// ```
impl core::fmt::Display for UnixTime {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        crate::rfc3339::write(f, self.nanos, 9)
    }
}

impl core::fmt::Debug for UnixTime {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "UnixTime({self})")
    }
}

/// Fails with [`OutOfRange`](crate::OutOfRange) for times before the epoch
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
    type Error = crate::OutOfRange;
    fn try_from(t: std::time::SystemTime) -> Result<UnixTime, Self::Error> {
        let d = t
            .duration_since(std::time::UNIX_EPOCH)
            .map_err(|_| crate::OutOfRange::BEFORE_EPOCH)?;
        let nanos = u64::try_from(d.as_nanos()).map_err(|_| crate::OutOfRange::AFTER_MAX)?;
        Ok(UnixTime { nanos })
    }
}

/// The system time now, from the wall tier (see [`unix_nanos`]).
#[cfg(feature = "std")]
#[inline]
pub fn system_time() -> std::time::SystemTime {
    UnixTime::now().into()
}
