//! The bridges to the kernel's clocks: conversions between fastnow's
//! instants and `CLOCK_MONOTONIC` / `CLOCK_BOOTTIME`, and
//! [`ClockSnapshot`], every clock read together.
//!
//! fastnow's precise timeline is `CLOCK_MONOTONIC` plus an offset that the
//! writer measures at every state update's sample, and its boot timeline
//! `CLOCK_BOOTTIME` plus an offset measured alike (spec/SEMANTICS.md,
//! "Clock snapshot and the kernel's clocks"). A conversion loads the
//! published state and subtracts or adds the offset; it is not on any
//! reading's path.

use crate::boot::BootInstant;
use crate::precise::{fmt_duration, Instant};
use crate::source::os;
use crate::timekeeper::{self, Clock};
use core::fmt;
use core::time::Duration;

/// How many tries [`ClockSnapshot::now`] takes; it keeps the tightest.
pub(crate) const SNAPSHOT_TRIES: u32 = 4;

impl Instant {
    /// This instant as a `CLOCK_MONOTONIC` reading, in nanoseconds: what
    /// `clock_gettime(CLOCK_MONOTONIC)` read at the same moment, within
    /// [`conversion_error`] — the clock of perf's `-k CLOCK_MONOTONIC`,
    /// eBPF's `bpf_ktime_get_ns()` and ftrace's `mono` trace clock.
    ///
    /// The precise timeline is `CLOCK_MONOTONIC` plus an offset fastnow
    /// measures at every state update; this subtracts the offset of the
    /// state published now. The error grows, for an instant far from now,
    /// by 1 ppm of its distance from now (the rate's error): an instant of
    /// an hour ago converts within 3.6 ms.
    ///
    /// **Where the machine has no `CLOCK_MONOTONIC`** the clock is the one
    /// the precise tier follows: `CLOCK_UPTIME_RAW` on Apple platforms (the
    /// clock of `mach_absolute_time`, which stops while the machine
    /// sleeps), `QueryPerformanceCounter` in nanoseconds on Windows, the
    /// runtime's monotonic clock on WASI and `performance.now()` in a
    /// browser.
    ///
    /// **Saturates:** an instant before `CLOCK_MONOTONIC`'s zero (one built
    /// with [`from_nanos`](Instant::from_nanos), or an instant minus more
    /// than the uptime) converts to 0. Not mocked: under a mock clock of
    /// the `mock` feature the process's offset is subtracted all the same.
    ///
    /// ```
    /// let t = fastnow::Instant::now();
    /// let mono = t.to_monotonic_nanos();
    /// let back = fastnow::Instant::from_monotonic_nanos(mono);
    /// // The same instant, unless a state update came between the two
    /// // conversions: then within their errors.
    /// let slack = 2 * fastnow::conversion_error().as_nanos() as u64 + 1_000;
    /// assert!(back.as_nanos().abs_diff(t.as_nanos()) <= slack);
    /// ```
    #[must_use]
    pub fn to_monotonic_nanos(self) -> u64 {
        self.as_nanos()
            .saturating_sub(timekeeper::conversion().mono_offset)
    }

    /// The instant a `CLOCK_MONOTONIC` reading of `nanos` is on the
    /// precise timeline, within [`conversion_error`]: for a perf, eBPF or
    /// ftrace timestamp (see [`to_monotonic_nanos`](Instant::to_monotonic_nanos)).
    /// Saturates at the end of the `u64` range, 438 years past the boot.
    #[must_use]
    pub fn from_monotonic_nanos(nanos: u64) -> Instant {
        Instant::from_nanos(nanos.saturating_add(timekeeper::conversion().mono_offset))
    }
}

impl BootInstant {
    /// This instant as a `CLOCK_BOOTTIME` reading, in nanoseconds, within
    /// [`conversion_error`]: the clock of perf's `-k CLOCK_BOOTTIME`, eBPF's
    /// `bpf_ktime_get_boot_ns()` and ftrace's `boot` trace clock.
    ///
    /// The boot timeline is `CLOCK_BOOTTIME` plus an offset fastnow measures
    /// at every state update, which the boot offset's ratchet may keep a
    /// little ahead of 2^62 (spec/SEMANTICS.md); this subtracts the offset
    /// of the state published now. After a resume the offset is measured
    /// again at the first update: a boot instant read before it converts
    /// within the error that update states.
    ///
    /// **Where the machine has no `CLOCK_BOOTTIME`** the clock is the one
    /// the boot clock follows: `mach_continuous_time` (`CLOCK_MONOTONIC_RAW`)
    /// on Apple platforms, `QueryPerformanceCounter` on Windows (which
    /// counts the time asleep), elsewhere the monotonic clock of
    /// [`Instant::to_monotonic_nanos`].
    ///
    /// **Saturates** at 0, as [`Instant::to_monotonic_nanos`] does.
    #[must_use]
    pub fn to_boottime_nanos(self) -> u64 {
        self.as_nanos()
            .saturating_sub(timekeeper::conversion().boot_offset)
    }

    /// The boot instant of a `CLOCK_BOOTTIME` reading of `nanos`, within
    /// [`conversion_error`]. Saturates at the end of the `u64` range.
    #[must_use]
    pub fn from_boottime_nanos(nanos: u64) -> BootInstant {
        BootInstant::from_nanos(nanos.saturating_add(timekeeper::conversion().boot_offset))
    }
}

/// How far a conversion of an instant read now may be off:
/// [`Instant::to_monotonic_nanos`] from `CLOCK_MONOTONIC` at the instant's
/// moment, and the reverse; for [`BootInstant`] the larger error of the
/// boot conversions.
///
/// Half the bracket of the sample that measured the offset, plus 1 ppm
/// (the rate's error, `conversion_rate_error_ppb` in
/// `spec/vectors/constants.json`) of the time since it: at most a
/// microsecond or so while the clocks are read (every update measures the
/// offset again, at least twice a second, four times with the upkeep). On
/// the OS clock it is 0: the offset is the OS clock's own.
///
/// **When it does not hold:** across a suspend that the counter counts, a
/// counter jump or a migration, until the next update re-bases the
/// timeline (the first reading after it, or the upkeep's turn); while the
/// precise clocks stand still after such a re-base, it includes how far
/// they stand ahead, and an instant read then converts to a
/// `CLOCK_MONOTONIC` value up to that far ahead of its moment; and in the
/// seconds after NTP changed `CLOCK_MONOTONIC`'s rate by more than a ppm,
/// the rate in use may be off by the whole change over the time since the
/// measurement (under a second).
#[must_use]
pub fn conversion_error() -> Duration {
    let c = timekeeper::conversion();
    Duration::from_nanos(c.mono_error.max(c.boot_error))
}

/// fastnow's precise clock and the kernel's clocks, read together: a
/// point at which to line up fastnow's instants with timestamps of other
/// clocks (a trace's, a log's, another process's), or to see how the
/// clocks relate.
///
/// [`ClockSnapshot::now`] reads the precise clock, then the counter and the
/// OS clocks one after the other, then the precise clock again, a few
/// times, and keeps the tightest try: every field was read within
/// [`width`](ClockSnapshot::width) of [`instant`](ClockSnapshot::instant),
/// the middle of that try's two precise readings. Not mocked: it reads the
/// machine's clocks under a mock clock too.
///
/// ```
/// let s = fastnow::ClockSnapshot::now();
/// println!("{s}");
/// // The precise reading converts to CLOCK_MONOTONIC within the bracket
/// // and the conversion's error.
/// let off = s.instant.to_monotonic_nanos().abs_diff(s.monotonic_nanos);
/// assert!(off <= (s.width + s.conversion_error).as_nanos() as u64);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClockSnapshot {
    /// The architectural counter, in its ticks, where the precise clocks
    /// read it; `None` on the OS clock.
    pub counter_ticks: Option<u64>,
    /// fastnow's precise reading.
    pub instant: Instant,
    /// `CLOCK_MONOTONIC`, in nanoseconds (the clock
    /// [`Instant::to_monotonic_nanos`] converts to: `CLOCK_UPTIME_RAW` on
    /// Apple platforms, `QueryPerformanceCounter` on Windows).
    pub monotonic_nanos: u64,
    /// `CLOCK_REALTIME`, in nanoseconds since the Unix epoch (0 before
    /// 1970, saturated after 2554).
    pub realtime_nanos: u64,
    /// `CLOCK_BOOTTIME` (Apple platforms: `mach_continuous_time`'s clock,
    /// `CLOCK_MONOTONIC_RAW`); `None` where the OS has no clock that counts
    /// suspend apart from the monotonic one (Windows'
    /// `QueryPerformanceCounter` counts it already).
    pub boottime_nanos: Option<u64>,
    /// `CLOCK_TAI` (Linux and Android): `CLOCK_REALTIME` plus the kernel's
    /// TAI offset, which is 0 — TAI equal to UTC — unless a time daemon set
    /// it (chrony and ptp4l do). `None` elsewhere.
    pub tai_nanos: Option<u64>,
    /// The time between the two precise readings of the try kept: every
    /// field was read between them.
    pub width: Duration,
    /// What [`conversion_error`] said at the snapshot.
    pub conversion_error: Duration,
}

impl ClockSnapshot {
    /// Reads every clock together (see the type's docs). Costs a few
    /// microseconds: four tries of six clock reads.
    #[must_use]
    pub fn now() -> ClockSnapshot {
        let conversion = timekeeper::conversion();
        let mut best: Option<ClockSnapshot> = None;
        for _ in 0..SNAPSHOT_TRIES {
            let before = timekeeper::read_real(Clock::Precise, true);
            let counter_ticks = timekeeper::counter_ticks();
            let monotonic_nanos = os::monotonic_nanos();
            let realtime_nanos = os::realtime_nanos();
            let boottime_nanos = os::boot_clock();
            let tai_nanos = os::tai_nanos();
            let after = timekeeper::read_real(Clock::Precise, true);
            let width = after.saturating_sub(before);
            let s = ClockSnapshot {
                counter_ticks,
                instant: Instant::from_nanos(before + width / 2),
                monotonic_nanos,
                realtime_nanos,
                boottime_nanos,
                tai_nanos,
                width: Duration::from_nanos(width),
                conversion_error: Duration::from_nanos(
                    conversion.mono_error.max(conversion.boot_error),
                ),
            };
            match best {
                Some(b) if b.width <= s.width => {}
                _ => best = Some(s),
            }
        }
        best.expect("at least one try")
    }
}

/// `counter 123 ticks, Instant(12.5s after boot), CLOCK_MONOTONIC
/// 12.500000040s, CLOCK_REALTIME 1767225600.000000001s, CLOCK_BOOTTIME
/// 12.500000050s, CLOCK_TAI 1767225637.000000060s, within 80ns (conversions
/// ±1.2µs)`: the clocks present, in seconds with every nanosecond.
impl fmt::Display for ClockSnapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = |ns: u64| (ns / 1_000_000_000, ns % 1_000_000_000);
        if let Some(t) = self.counter_ticks {
            write!(f, "counter {t} ticks, ")?;
        }
        let (s, ns) = secs(self.monotonic_nanos);
        write!(f, "{:?}, CLOCK_MONOTONIC {s}.{ns:09}s", self.instant)?;
        let (s, ns) = secs(self.realtime_nanos);
        write!(f, ", CLOCK_REALTIME {s}.{ns:09}s")?;
        if let Some((s, ns)) = self.boottime_nanos.map(secs) {
            write!(f, ", CLOCK_BOOTTIME {s}.{ns:09}s")?;
        }
        if let Some((s, ns)) = self.tai_nanos.map(secs) {
            write!(f, ", CLOCK_TAI {s}.{ns:09}s")?;
        }
        f.write_str(", within ")?;
        fmt_duration(f, self.width.as_nanos() as u64)?;
        f.write_str(" (conversions ±")?;
        fmt_duration(f, self.conversion_error.as_nanos() as u64)?;
        f.write_str(")")
    }
}
