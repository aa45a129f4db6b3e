//! The wall tier: Unix time without a system call, that stays true.
//!
//! [`unix_nanos`] extrapolates from an *anchor* pair (counter, `CLOCK_REALTIME`)
//! with the precise tier's calibrated scale: one counter read, a consistent
//! read of the anchor, a multiply. Packages that compute "wall time at start +
//! monotonic time since" drift away from the system clock forever after an
//! NTP step, a manual `date -s`, or a suspend. fastnow instead re-anchors to
//! `CLOCK_REALTIME` every *resync interval* (default 1 s, see
//! [`set_wall_resync_interval`]): the reader whose counter value passes the
//! deadline takes a new pair (one load and a compare on the read path,
//! the same mechanism calibration uses). Between resyncs the value advances
//! at the rate of `CLOCK_MONOTONIC`, which NTP disciplines like the real-time
//! clock, so slews are followed continuously and steps within one interval.
//!
//! **Going backwards.** Like `SystemTime`, `unix_nanos()` is not monotonic: when
//! the system clock is stepped back, the next resync follows it back, and each
//! resync may correct the extrapolation by the drift accumulated over one
//! interval (tens of nanoseconds in steady state; see `BENCHMARKS.md`). Use
//! the precise tier to measure intervals, and the wall tier to say *when*.
//!
//! **Consistency.** Each resync publishes the line through its anchor (an
//! offset and the scale in use) as two words under a sequence lock: a reader
//! that overlaps a resync retries, so it never combines the offset of one
//! anchor with the scale of another. Calibration refinements reach the wall
//! tier at the next resync.
//!
//! On the OS fallback source the counter is not trusted, so `unix_nanos()`
//! reads `CLOCK_REALTIME` directly; so it does when the line cannot represent
//! the time (a counter slower than 1 GHz on x86_64 or about 1 MHz elsewhere,
//! see `LINE_SHIFT`; a counter value worth over 2^63 ns; a system clock set
//! within 18 minutes of 1970).

use crate::detect::{self, COUNTER};
use crate::scale::Scale;
use crate::{arch, calibrate, os};
use core::sync::atomic::{fence, AtomicBool, AtomicU64, Ordering};
use core::time::Duration;

/// `N` words published atomically as a whole: a sequence lock.
///
/// One writer at a time (the caller serialises writers); any number of
/// readers, which never block the writer and retry if they overlapped it.
pub(crate) struct SeqWords<const N: usize> {
    seq: AtomicU64,
    words: [AtomicU64; N],
}

impl<const N: usize> SeqWords<N> {
    pub(crate) const fn new() -> SeqWords<N> {
        SeqWords {
            seq: AtomicU64::new(0),
            words: [const { AtomicU64::new(0) }; N],
        }
    }

    /// The last words written, never some of one write and some of another.
    #[inline(always)]
    pub(crate) fn read(&self) -> [u64; N] {
        loop {
            let before = self.seq.load(Ordering::Acquire);
            let words = core::array::from_fn(|i| self.words[i].load(Ordering::Relaxed));
            // Keeps the data loads above from moving below the re-check.
            fence(Ordering::Acquire);
            // One compare for "not mid-write and unchanged": an odd `before`
            // (a write in progress) rounds down below any later value.
            if self.seq.load(Ordering::Relaxed) == before & !1 {
                return words;
            }
            core::hint::spin_loop();
        }
    }

    /// Publishes new words. Callers must not write concurrently.
    pub(crate) fn write(&self, words: [u64; N]) {
        let seq = self.seq.load(Ordering::Relaxed);
        self.seq.store(seq + 1, Ordering::Relaxed);
        // Readers that see any data store also see the odd sequence.
        fence(Ordering::Release);
        for (slot, w) in self.words.iter().zip(words) {
            slot.store(w, Ordering::Relaxed);
        }
        self.seq.store(seq + 2, Ordering::Release);
    }

    /// Whether anything was ever written.
    pub(crate) fn is_set(&self) -> bool {
        self.seq.load(Ordering::Acquire) >= 2
    }
}

/// A wall clock: an anchor against a reference real-time clock.
///
/// The process uses one (`WALL`, against `CLOCK_REALTIME`); tests build
/// others against a reference they can step.
pub(crate) struct Wall {
    reference: fn() -> u64,
    /// The line through the last anchor, see [`Line`].
    line: SeqWords<2>,
    /// Counter value at which the next reader resyncs; 0 = never synced.
    next_resync: AtomicU64,
    interval_ns: AtomicU64,
    lock: AtomicBool,
    /// Set when a line cannot represent the time (see `resync`): reads go
    /// to the reference.
    use_reference: AtomicBool,
}

/// Default resync interval.
pub const DEFAULT_RESYNC: Duration = Duration::from_secs(1);

pub(crate) static WALL: Wall = Wall::new(os::realtime_nanos, DEFAULT_RESYNC.as_nanos() as u64);

impl Wall {
    pub(crate) const fn new(reference: fn() -> u64, interval_ns: u64) -> Wall {
        Wall {
            reference,
            line: SeqWords::new(),
            next_resync: AtomicU64::new(0),
            interval_ns: AtomicU64::new(interval_ns),
            lock: AtomicBool::new(false),
            use_reference: AtomicBool::new(false),
        }
    }

    #[inline(always)]
    pub(crate) fn unix_nanos(&self) -> u64 {
        // The deadline stays 0 until a resync on the counter source has
        // published a line, so it also stands for the source check: 0 sends
        // the first read, the OS source and the fallback below to the slow
        // path, before any counter read.
        let next_resync = self.next_resync.load(Ordering::Acquire);
        if next_resync == 0 {
            return self.unix_nanos_slow();
        }
        // The line is a snapshot of the anchor and of the scale taken at
        // the resync, so the read path needs no calibration check, no
        // subtraction and no shift: a load of the deadline, a consistent
        // read of three words, the counter, a compare and two independent
        // multiplies. The loads
        // come before the counter read so they overlap it (Intel's
        // microcoded RDTSC holds back what follows it). The deadline was
        // loaded first, with Acquire: it is published (Release) after the
        // line, so a reader that finds it set holds a line at least as new
        // as the one published before it, never the empty one.
        let line = Line(self.line.read());
        let ticks = arch::ticks();
        if ticks >= next_resync {
            return self.unix_nanos_resynced(ticks);
        }
        line.at(ticks)
    }

    /// A resync is due (or none ever ran): take it, or, when another thread
    /// is taking it, use the line in place (valid until the new one lands).
    #[cold]
    #[inline(never)]
    fn unix_nanos_resynced(&self, ticks: u64) -> u64 {
        self.resync(false);
        if self.use_reference.load(Ordering::Relaxed) {
            return (self.reference)();
        }
        Line(self.line.read()).at(ticks)
    }

    #[inline(never)]
    fn unix_nanos_slow(&self) -> u64 {
        if detect::ensure_decided() & !1 != COUNTER {
            return (self.reference)();
        }
        self.unix_nanos_resynced(arch::ticks())
    }

    /// Takes a new anchor. Without `force`, skips if another thread is
    /// already resyncing (unless there is no anchor at all yet).
    pub(crate) fn resync(&self, force: bool) {
        let locked = self
            .lock
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok();
        if !locked {
            if self.line.is_set() && !force {
                return;
            }
            while self
                .lock
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                calibrate::pause();
            }
        }
        let (ticks, unix) = calibrate::sample_against(self.reference);
        let tick_scale = calibrate::ticks_per_nano();
        // The line converts whole counter values, which is exact only while
        // they stand for less than 2^63 ns (292 years) at the counter's rate:
        // always, for a counter that started at boot; and only for counters
        // fast enough for its fixed point (see LINE_SHIFT). And its wrapping sum
        // stands for a time after 1970 only while the anchor is well after
        // it (2^40 ns, 18 minutes, covers any counter value a reader can hold
        // from before the anchor). Otherwise the wall tier reads the
        // reference instead of returning a wrong time.
        let limit = tick_scale.apply_saturating(1 << 63);
        // The scale in use now (refined first if a check is due), frozen
        // into the line until the next resync.
        let line = Line::through(ticks, unix, calibrate::nanos_per_tick(ticks));
        if ticks >= limit || unix < 1 << 40 || line.is_none() {
            self.use_reference.store(true, Ordering::Relaxed);
        } else if let Some(line) = line {
            self.use_reference.store(false, Ordering::Relaxed);
            self.line.write(line.0);
            let interval = tick_scale.apply_saturating(self.interval_ns.load(Ordering::Relaxed));
            let next = ticks.saturating_add(interval.max(1)).min(limit);
            // Release: a reader that sees this value sees the line above.
            self.next_resync.store(next, Ordering::Release);
        }
        self.lock.store(false, Ordering::Release);
    }

    pub(crate) fn set_interval(&self, interval: Duration) {
        let ns = u64::try_from(interval.as_nanos())
            .unwrap_or(u64::MAX)
            .max(1);
        self.interval_ns.store(ns, Ordering::Relaxed);
        // Apply it from the next read on.
        self.next_resync.store(0, Ordering::Relaxed);
    }
}

/// Nanoseconds since the Unix epoch (1970-01-01 00:00:00 UTC), from the
/// counter and an anchor re-synchronised with `CLOCK_REALTIME`.
///
/// About the cost of [`Instant::now`](crate::Instant::now) (see
/// `BENCHMARKS.md`), versus a vDSO call for `SystemTime::now()`. Follows
/// NTP slews continuously and clock steps within one resync interval; can
/// go backwards when the system clock does (see the module docs). Returns 0
/// for times before 1970.
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
    WALL.unix_nanos()
}

/// The fixed point of [`Line`]'s slope, a compile-time constant so the read
/// path shifts by an immediate: on x86_64 the high half of the product, no
/// shift at all (counters faster than 1 GHz, which every invariant TSC is);
/// elsewhere 54 bits (counters faster than about 1 MHz; the Arm generic timer
/// runs at 1 MHz to 1 GHz).
#[cfg(target_arch = "x86_64")]
const LINE_SHIFT: u32 = 64;
#[cfg(not(target_arch = "x86_64"))]
const LINE_SHIFT: u32 = 54;

/// The wall tier's conversion between resyncs: `[offset, slope]`, where Unix
/// nanoseconds at counter value `t` are `offset + (t * slope) >> LINE_SHIFT`
/// (wrapping). A variable shift costs several micro-operations on Intel
/// cores; a constant one costs nothing.
#[derive(Clone, Copy)]
struct Line([u64; 2]);

impl Line {
    /// The line of `scale` through (`ticks`, `unix`), or `None` when the
    /// counter is too slow for `LINE_SHIFT` (the wall tier then reads the
    /// reference clock).
    fn through(ticks: u64, unix: u64, scale: Scale) -> Option<Line> {
        let mult = scale.mult as u128;
        // mult / 2^shift as slope / 2^LINE_SHIFT: exact when shift is the
        // smaller, else dropping bits worth under 2^-LINE_SHIFT per tick.
        let slope = if scale.shift >= LINE_SHIFT {
            mult >> (scale.shift - LINE_SHIFT)
        } else {
            mult << (LINE_SHIFT - scale.shift)
        };
        let slope = u64::try_from(slope).ok()?;
        let through_zero = Line([0, slope]);
        Some(Line([unix.wrapping_sub(through_zero.at(ticks)), slope]))
    }

    /// Unix nanoseconds at counter value `ticks`: the anchor's time plus the
    /// ticks since it, converted, on either side of the anchor (a bare read
    /// can be slightly older than an anchor another thread just published),
    /// within a nanosecond of rounding.
    #[inline(always)]
    fn at(self, ticks: u64) -> u64 {
        let [offset, slope] = self.0;
        let converted = ((ticks as u128 * slope as u128) >> LINE_SHIFT) as u64;
        offset.wrapping_add(converted)
    }
}

/// Sets how often the wall tier re-anchors to `CLOCK_REALTIME` (default 1 s;
/// a zero interval is treated as 1 ns, i.e. every read). Shorter intervals
/// follow clock steps sooner and cost a resync (a few hundred nanoseconds,
/// on one reader) that much more often.
pub fn set_wall_resync_interval(interval: Duration) {
    WALL.set_interval(interval);
}

/// Re-anchors the wall tier to `CLOCK_REALTIME` now, e.g. right after the
/// program itself changed the system time.
pub fn resync_wall() {
    if detect::ensure_decided() & !1 == COUNTER {
        WALL.resync(true);
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
/// let t = UnixTime::now();
/// let sys: SystemTime = t.into();
/// assert_eq!(UnixTime::try_from(sys).unwrap(), t);
/// assert_eq!(UnixTime::from_nanos(1_500_000_000).as_secs(), 1);
/// assert!(t.checked_add(Duration::MAX).is_none());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
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

#[cfg(feature = "std")]
impl From<UnixTime> for std::time::SystemTime {
    fn from(t: UnixTime) -> std::time::SystemTime {
        std::time::UNIX_EPOCH + t.since_epoch()
    }
}

/// Fails for times before the epoch or after year 2554.
#[cfg(feature = "std")]
impl TryFrom<std::time::SystemTime> for UnixTime {
    type Error = std::time::SystemTimeError;
    fn try_from(t: std::time::SystemTime) -> Result<UnixTime, Self::Error> {
        let d = t.duration_since(std::time::UNIX_EPOCH)?;
        // Past 2554 the nanoseconds do not fit u64: saturate, which is what
        // a u64 Unix time can say about such a date.
        Ok(UnixTime {
            nanos: u64::try_from(d.as_nanos()).unwrap_or(u64::MAX),
        })
    }
}

/// The system time now, from the wall tier (see [`unix_nanos`]).
#[cfg(feature = "std")]
#[inline]
pub fn system_time() -> std::time::SystemTime {
    UnixTime::now().into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::sync::atomic::AtomicI64;
    use std::prelude::v1::*;
    use std::sync::Arc;
    use std::time::Instant as StdInstant;

    /// The line gives the anchor's time plus the converted ticks since it,
    /// on both sides of the anchor, within the one nanosecond that flooring
    /// two conversions instead of one can add, at any realistic rate and
    /// counter value, including references younger than the counter.
    #[test]
    fn line_extrapolates_like_the_anchor() {
        let mut x: u64 = 88172645463325252;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..200_000 {
            let hz = 1_000_000 + next() % 6_000_000_000;
            let scale = Scale::nanos_per_tick(hz).unwrap();
            // The domain `resync` admits: counter values worth under 2^63 ns.
            let limit = Scale::ticks_per_nano(hz).unwrap().apply_saturating(1 << 63);
            let anchor_ticks = (next() >> (next() % 40)) % limit;
            let anchor_unix = next() >> (2 + next() % 40);
            let Some(line) = Line::through(anchor_ticks, anchor_unix, scale) else {
                assert!(hz <= 1_000_000_000 >> (64 - LINE_SHIFT), "refused {hz} Hz");
                continue;
            };
            let delta = next() >> (20 + next() % 40);
            for ticks in [
                anchor_ticks.wrapping_add(delta),
                anchor_ticks.saturating_sub(delta),
            ] {
                let exact = if ticks >= anchor_ticks {
                    anchor_unix as i128 + scale.apply_saturating(ticks - anchor_ticks) as i128
                } else {
                    anchor_unix as i128 - scale.apply_saturating(anchor_ticks - ticks) as i128
                };
                if exact < 0 || ticks >= limit {
                    continue; // before 1970, or past the line's domain
                }
                let got = line.at(ticks) as i128;
                assert!(
                    (got - exact).abs() <= 1,
                    "hz={hz} anchor=({anchor_ticks}, {anchor_unix}) t={ticks}: {got} vs {exact}"
                );
            }
        }
    }

    /// Readers racing a writer that publishes (k, !k) never see a mixed pair
    /// and never see k go backwards. Bounded by time, not iterations.
    #[test]
    fn seqwords_are_never_torn_nor_stale() {
        let pair = Arc::new(SeqWords::<3>::new());
        pair.write([0, !0, 0]);
        let stop = Arc::new(AtomicBool::new(false));
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let (pair, stop) = (pair.clone(), stop.clone());
                std::thread::spawn(move || {
                    let (mut last, mut reads) = (0u64, 0u64);
                    while !stop.load(Ordering::Relaxed) {
                        let [k, not_k, k_again] = pair.read();
                        assert!(not_k == !k && k_again == k, "torn: {k} {not_k} {k_again}");
                        assert!(k >= last, "went back from {last} to {k}");
                        last = k;
                        reads += 1;
                    }
                    reads
                })
            })
            .collect();
        let deadline = StdInstant::now() + std::time::Duration::from_millis(300);
        let mut k = 0;
        while StdInstant::now() < deadline {
            k += 1;
            pair.write([k, !k, k]);
        }
        stop.store(true, Ordering::Relaxed);
        for r in readers {
            assert!(r.join().unwrap() > 0);
        }
        assert!(k > 1000, "writer made only {k} writes");
    }

    static OFFSET_NS: AtomicI64 = AtomicI64::new(0);
    fn stepped_realtime() -> u64 {
        (os::realtime_nanos() as i64 + OFFSET_NS.load(Ordering::Relaxed)) as u64
    }

    /// Steps the reference clock (never the machine's): the wall clock keeps
    /// its anchor until the resync deadline, then follows, forwards and back.
    #[test]
    fn follows_reference_steps_within_one_interval() {
        let interval = Duration::from_millis(20);
        let wall = Wall::new(stepped_realtime, interval.as_nanos() as u64);
        // The expectation is read on both sides of the reading, so a thread
        // descheduled in between (under qemu, next to the other tests) does
        // not count against the wall clock; a missed or wrongly followed step
        // is 10 s off either way.
        let close = |expected: &dyn Fn() -> u64| {
            let before = expected();
            let got = wall.unix_nanos();
            let after = expected();
            assert!(
                got + 2_000_000 >= before && got <= after + 2_000_000,
                "{got} outside [{before}, {after}] ± 2 ms"
            );
        };
        close(&stepped_realtime);
        if detect::ensure_decided() & !1 != COUNTER {
            return; // OS source: reads the reference directly, nothing to follow.
        }
        let step = 10_000_000_000i64;
        OFFSET_NS.store(step, Ordering::Relaxed);
        wall.resync(true); // make the deadline deterministic: a fresh anchor...
        OFFSET_NS.store(2 * step, Ordering::Relaxed); // ...then a step after it
        close(&|| os::realtime_nanos() + step as u64); // not followed yet
        std::thread::sleep(interval + Duration::from_millis(5));
        close(&|| os::realtime_nanos() + 2 * step as u64); // followed
        OFFSET_NS.store(-step, Ordering::Relaxed); // backwards step
        std::thread::sleep(interval + Duration::from_millis(5));
        close(&|| os::realtime_nanos() - step as u64);
    }
}
