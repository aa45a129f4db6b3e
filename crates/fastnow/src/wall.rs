//! The wall tier: Unix time without a system call, that stays true.
//!
//! [`unix_nanos`] extrapolates from an *anchor* pair (counter, `CLOCK_REALTIME`)
//! with the precise tier's calibrated scale: one counter read, a consistent
//! read of the anchor, a multiply. Packages that compute "wall time at start +
//! monotonic time since" drift away from the system clock forever after an
//! NTP step, a manual `date -s`, or a suspend. fastnow instead re-anchors to
//! `CLOCK_REALTIME` every *resync interval* (default 1 s, see
//! [`set_wall_resync_interval`]): the reader whose counter value passes the
//! deadline takes a new pair (one relaxed load and a compare on the read path,
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
//! **Consistency.** The anchor is two words published under a sequence lock:
//! a reader that overlaps a resync retries, so it never combines the counter
//! value of one anchor with the Unix time of another.
//!
//! On the OS fallback source the counter is not trusted, so `unix_nanos()`
//! reads `CLOCK_REALTIME` directly.

use crate::detect::{self, COUNTER};
use crate::scale::Scale;
use crate::{arch, calibrate, os};
use core::sync::atomic::{fence, AtomicBool, AtomicU64, Ordering};
use core::time::Duration;

/// A pair of words published atomically as a whole: a sequence lock.
///
/// One writer at a time (the caller serialises writers); any number of
/// readers, which never block the writer and retry if they overlapped it.
pub(crate) struct SeqPair {
    seq: AtomicU64,
    a: AtomicU64,
    b: AtomicU64,
}

impl SeqPair {
    pub(crate) const fn new() -> SeqPair {
        SeqPair {
            seq: AtomicU64::new(0),
            a: AtomicU64::new(0),
            b: AtomicU64::new(0),
        }
    }

    /// The last pair written, never half of one and half of another.
    #[inline(always)]
    pub(crate) fn read(&self) -> (u64, u64) {
        loop {
            let before = self.seq.load(Ordering::Acquire);
            let a = self.a.load(Ordering::Relaxed);
            let b = self.b.load(Ordering::Relaxed);
            // Keeps the data loads above from moving below the re-check.
            fence(Ordering::Acquire);
            if before & 1 == 0 && self.seq.load(Ordering::Relaxed) == before {
                return (a, b);
            }
            core::hint::spin_loop();
        }
    }

    /// Publishes a new pair. Callers must not write concurrently.
    pub(crate) fn write(&self, a: u64, b: u64) {
        let seq = self.seq.load(Ordering::Relaxed);
        self.seq.store(seq + 1, Ordering::Relaxed);
        // Readers that see either data store also see the odd sequence.
        fence(Ordering::Release);
        self.a.store(a, Ordering::Relaxed);
        self.b.store(b, Ordering::Relaxed);
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
    /// (counter ticks, Unix nanoseconds) at the last resync.
    anchor: SeqPair,
    /// Counter value at which the next reader resyncs; 0 = never synced.
    next_resync: AtomicU64,
    interval_ns: AtomicU64,
    lock: AtomicBool,
}

/// Default resync interval.
pub const DEFAULT_RESYNC: Duration = Duration::from_secs(1);

pub(crate) static WALL: Wall = Wall::new(os::realtime_nanos, DEFAULT_RESYNC.as_nanos() as u64);

impl Wall {
    pub(crate) const fn new(reference: fn() -> u64, interval_ns: u64) -> Wall {
        Wall {
            reference,
            anchor: SeqPair::new(),
            next_resync: AtomicU64::new(0),
            interval_ns: AtomicU64::new(interval_ns),
            lock: AtomicBool::new(false),
        }
    }

    #[inline(always)]
    pub(crate) fn unix_nanos(&self) -> u64 {
        let state = detect::STATE.load(Ordering::Relaxed);
        if state & !1 != COUNTER {
            return self.unix_nanos_slow();
        }
        // Everything the conversion needs is loaded before the counter is
        // read, so the loads overlap the counter read instead of queueing
        // behind it (Intel's microcoded RDTSC holds back what follows it).
        // Any published anchor extrapolates correctly to a later counter
        // value; a due resync or refinement takes the cold path.
        //
        // The two "next" markers are loaded first, with Acquire: they are
        // published (Release) after the anchor and the scale they guard, so
        // a reader that finds neither due also holds an anchor and a scale
        // at least as new as the ones published before them, never the
        // empty ones of a process that has not calibrated yet.
        let next_resync = self.next_resync.load(Ordering::Acquire);
        let next_check = calibrate::next_check();
        let (anchor_ticks, anchor_unix) = self.anchor.read();
        let scale = calibrate::nanos_per_tick_in_use();
        let ticks = arch::ticks();
        // One unsigned compare keeps the fast path to counter values in
        // [anchor, first due marker): nothing is due, and the value is not
        // older than the anchor (which a bare read can be, when another
        // thread has just published the anchor). A branch for each case
        // costs almost a nanosecond on Intel cores.
        let span = next_resync.min(next_check).saturating_sub(anchor_ticks);
        let since_anchor = ticks.wrapping_sub(anchor_ticks);
        if since_anchor >= span {
            return self.unix_nanos_maintained(ticks);
        }
        anchor_unix.saturating_add(scale.apply_saturating(since_anchor))
    }

    /// A resync or a calibration refinement is due, or the counter value is
    /// older than the anchor: run what is due, then convert with what it
    /// published.
    #[cold]
    #[inline(never)]
    fn unix_nanos_maintained(&self, ticks: u64) -> u64 {
        let scale = calibrate::nanos_per_tick(ticks);
        if ticks >= self.next_resync.load(Ordering::Relaxed) {
            self.resync(false);
        }
        let (anchor_ticks, anchor_unix) = self.anchor.read();
        extrapolate(anchor_ticks, anchor_unix, scale, ticks)
    }

    #[inline(never)]
    fn unix_nanos_slow(&self) -> u64 {
        if detect::ensure_decided() & !1 == COUNTER {
            self.unix_nanos()
        } else {
            (self.reference)()
        }
    }

    /// Takes a new anchor. Without `force`, skips if another thread is
    /// already resyncing (unless there is no anchor at all yet).
    pub(crate) fn resync(&self, force: bool) {
        let locked = self
            .lock
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok();
        if !locked {
            if self.anchor.is_set() && !force {
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
        self.anchor.write(ticks, unix);
        let interval =
            calibrate::ticks_per_nano().apply_saturating(self.interval_ns.load(Ordering::Relaxed));
        // Release: a reader that sees this value sees the anchor above.
        self.next_resync
            .store(ticks.saturating_add(interval.max(1)), Ordering::Release);
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

/// Unix nanoseconds at `ticks`, from an anchor pair. A reader can hold a
/// counter value slightly older than an anchor another thread just
/// published: it extrapolates backwards then.
#[inline(always)]
fn extrapolate(anchor_ticks: u64, anchor_unix: u64, scale: Scale, ticks: u64) -> u64 {
    if ticks >= anchor_ticks {
        anchor_unix.saturating_add(scale.apply_saturating(ticks - anchor_ticks))
    } else {
        anchor_unix.saturating_sub(scale.apply_saturating(anchor_ticks - ticks))
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

    /// Readers racing a writer that publishes (k, !k) never see a mixed pair
    /// and never see k go backwards. Bounded by time, not iterations.
    #[test]
    fn seqpair_is_never_torn_nor_stale() {
        let pair = Arc::new(SeqPair::new());
        pair.write(0, !0);
        let stop = Arc::new(AtomicBool::new(false));
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let (pair, stop) = (pair.clone(), stop.clone());
                std::thread::spawn(move || {
                    let (mut last, mut reads) = (0u64, 0u64);
                    while !stop.load(Ordering::Relaxed) {
                        let (k, not_k) = pair.read();
                        assert_eq!(not_k, !k, "torn pair");
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
            pair.write(k, !k);
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
        let close = |expected: u64| {
            let got = wall.unix_nanos();
            let diff = got.abs_diff(expected);
            assert!(diff < 2_000_000, "off by {diff} ns");
        };
        close(stepped_realtime());
        if detect::ensure_decided() & !1 != COUNTER {
            return; // OS source: reads the reference directly, nothing to follow.
        }
        let step = 10_000_000_000i64;
        OFFSET_NS.store(step, Ordering::Relaxed);
        wall.resync(true); // make the deadline deterministic: a fresh anchor...
        OFFSET_NS.store(2 * step, Ordering::Relaxed); // ...then a step after it
        close(os::realtime_nanos() + step as u64); // not followed yet
        std::thread::sleep(interval + Duration::from_millis(5));
        close(os::realtime_nanos() + 2 * step as u64); // followed
        OFFSET_NS.store(-step, Ordering::Relaxed); // backwards step
        std::thread::sleep(interval + Duration::from_millis(5));
        close(os::realtime_nanos() - step as u64);
    }
}
