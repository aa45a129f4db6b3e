//! The precise tier: [`Instant`], [`MonotonicInstant`], [`OrderedInstant`].
//!
//! All three hold a raw counter value (*ticks*) and convert to nanoseconds
//! only when a [`Duration`] is asked for, so reading the clock costs the
//! counter read plus one relaxed load and a predictable branch. They differ
//! only in how the counter is read, which decides what they guarantee:
//!
//! | type | read | guarantee |
//! |---|---|---|
//! | [`Instant`] | bare counter (`RDTSC`, `MRS CNTVCT_EL0`) | never goes backwards on one thread; between threads, readings may be out of order by the CPU's speculation window (up to ~1 µs) |
//! | [`MonotonicInstant`] | bare counter raised to a shared high-water mark, or an ordered read once that mark is contended | if reading B happens after reading A (any threads), B ≥ A |
//! | [`OrderedInstant`] | `RDTSCP` (or `LFENCE; RDTSC`), `ISB; MRS` | taken after every load that precedes it in program order, so it is not earlier than an Acquire load before it |
//!
//! On the OS fallback all three read `CLOCK_MONOTONIC` (ticks are
//! nanoseconds), which already gives the strongest of these guarantees.
//!
//! The three share one timeline: a `MonotonicInstant` or `OrderedInstant`
//! converts to an `Instant` for free, and comparing or subtracting them
//! through `Instant` is meaningful.

use crate::calibrate;
use crate::detect::{self, MonotonicMode, COUNTER, COUNTER_ALT, OS};
use crate::{arch, os};
use core::fmt;
use core::ops::{Add, AddAssign, Sub, SubAssign};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use core::time::Duration;

/// The counter, unordered. One relaxed load and a branch over the bare read.
#[inline(always)]
pub(crate) fn read_ticks() -> u64 {
    #[cfg(feature = "mock")]
    if let Some(t) = crate::mock::ticks() {
        return t;
    }
    let state = detect::STATE.load(Ordering::Relaxed);
    // COUNTER and COUNTER_ALT differ only in their lowest bit.
    if state & !1 == COUNTER {
        arch::ticks()
    } else {
        read_ticks_slow(state, false)
    }
}

/// The counter, read after every preceding load.
#[inline(always)]
pub(crate) fn read_ticks_ordered() -> u64 {
    #[cfg(feature = "mock")]
    if let Some(t) = crate::mock::ticks() {
        return t;
    }
    let state = detect::STATE.load(Ordering::Relaxed);
    if state & !1 == COUNTER {
        arch::ticks_ordered(state == COUNTER_ALT)
    } else {
        read_ticks_slow(state, true)
    }
}

/// The OS clock, or the first read of the process (which runs detection).
#[inline(never)]
fn read_ticks_slow(state: u8, ordered: bool) -> u64 {
    let state = if state == OS {
        state
    } else {
        detect::ensure_decided()
    };
    match state {
        OS => os::monotonic_nanos(),
        _ if ordered => arch::ticks_ordered(state == COUNTER_ALT),
        _ => arch::ticks(),
    }
}

/// `later - earlier` as a `Duration`, zero if `earlier` is later.
#[inline(always)]
fn ticks_between(later: u64, earlier: u64) -> Duration {
    #[cfg(feature = "mock")]
    if crate::mock::exact_conversion() {
        return Duration::from_nanos(later.saturating_sub(earlier));
    }
    match later.checked_sub(earlier) {
        Some(delta) => nanos_to_duration(calibrate::nanos_per_tick(later).apply_saturating(delta)),
        None => Duration::ZERO,
    }
}

/// `Duration::from_nanos`, without its division for intervals under a
/// second, which are what hot paths time. The division (a dependent multiply,
/// shift and multiply-subtract) is most of what converting costs.
#[inline(always)]
pub(crate) fn nanos_to_duration(nanos: u64) -> Duration {
    const NANOS_PER_SEC: u64 = 1_000_000_000;
    if nanos < NANOS_PER_SEC {
        Duration::new(0, nanos as u32)
    } else {
        Duration::from_nanos(nanos)
    }
}

/// A `Duration` in ticks, or `None` if it does not fit in 64 bits of ticks.
#[inline]
fn duration_to_ticks(d: Duration) -> Option<u64> {
    let nanos = u64::try_from(d.as_nanos()).ok()?;
    #[cfg(feature = "mock")]
    if crate::mock::exact_conversion() {
        return Some(nanos);
    }
    calibrate::ticks_per_nano().apply(nanos)
}

// ---------------------------------------------------------------------------
// MonotonicInstant's two strategies.
//
// Making a bare counter read strictly monotonic across threads takes either
// an ordering instruction (the reader's counter read waits for its earlier
// loads, as the kernel's vDSO does) or a shared write (every reading raises a
// high-water mark that later readers take the max with). Which is cheaper
// depends on the core. On AMD Zen the locked compare-and-swap overlaps the
// counter read's own latency, so the mark costs almost nothing over
// `Instant::now()` while `RDTSCP`/`LFENCE` double it; on Intel cores the
// compare-and-swap waits for the microcoded `RDTSC` and adds more than an
// ordered read does (BENCHMARKS.md has both). And once several cores use the
// mark, its cache line bounces and each call costs a cross-core transfer.
//
// So MonotonicInstant times both on this core when the clock is first read
// (3 × 32 calls of each, a few microseconds, inside detection) and starts on
// the cheaper one; from the high-water mark it moves, once and for good, to
// ordered reads after the mark has seen `SWITCH_AFTER` lost compare-and-swaps.
//
// Why the switch is safe without a grace period: MODE only ever goes from
// HIGH_WATER to ORDERED. If reading A happens before reading B, B's load of
// MODE happens after A's, so by coherence B sees ORDERED if A did. The cases
// left are HW→HW (B's load of the mark sees A's write or a later, larger
// one) and ordered B after any A: every value A can return is a counter
// value read before A returned (its own, or one another thread published
// before A loaded it); B's ordered read executes after B's Acquire load, so
// after A returned; and the kernel has verified that the counters of all
// cores agree (the condition for choosing the counter), so B reads more.
// Switching back would need every reader in flight to have finished, which
// a preemptible thread cannot promise, so there is no way back.
// ---------------------------------------------------------------------------

const HIGH_WATER: u8 = 0;
const ORDERED: u8 = 1;
/// Lost compare-and-swaps before MonotonicInstant switches to ordered reads.
const SWITCH_AFTER: u32 = 256;

static MODE: AtomicU8 = AtomicU8::new(HIGH_WATER);
/// Cleared by test harnesses that must exercise the high-water strategy
/// under contention; read only on the contended (cold) path.
static SWITCH_ALLOWED: AtomicBool = AtomicBool::new(true);

/// The shared mark and its contention count on a cache line of their own.
#[repr(align(128))]
struct Mark {
    ticks: AtomicU64,
    lost: AtomicU32,
}
static MARK: Mark = Mark {
    ticks: AtomicU64::new(0),
    lost: AtomicU32::new(0),
};

/// Called once by detection, before any reading is returned. The OS clock is
/// already strictly monotonic across threads, so it never needs the mark.
pub(crate) fn start(state: u8) {
    let hold = !SWITCH_ALLOWED.load(Ordering::Relaxed);
    if state == OS || (!hold && ordered_reads_are_cheaper(state == COUNTER_ALT)) {
        MODE.store(ORDERED, Ordering::Relaxed);
    }
}

/// Whether an ordered counter read costs less, on this core, than a bare
/// read plus the high-water mark's compare-and-swap: the fastest of three
/// batches of 32 calls each, timed with ordered reads of the counter itself.
fn ordered_reads_are_cheaper(alt: bool) -> bool {
    const CALLS: usize = 32;
    let (mut high_water, mut ordered) = (u64::MAX, u64::MAX);
    for _ in 0..3 {
        let t0 = arch::ticks_ordered(alt);
        for _ in 0..CALLS {
            // The mark itself: the values written are real readings, which
            // is all the mark's invariant asks.
            let ticks = arch::ticks();
            let seen = MARK.ticks.load(Ordering::Relaxed);
            if ticks > seen {
                let _ =
                    MARK.ticks
                        .compare_exchange(seen, ticks, Ordering::Relaxed, Ordering::Relaxed);
            }
        }
        let t1 = arch::ticks_ordered(alt);
        for _ in 0..CALLS {
            core::hint::black_box(arch::ticks_ordered(alt));
        }
        let t2 = arch::ticks_ordered(alt);
        high_water = high_water.min(t1.wrapping_sub(t0));
        ordered = ordered.min(t2.wrapping_sub(t1));
    }
    ordered < high_water
}

pub(crate) fn monotonic_mode() -> MonotonicMode {
    match MODE.load(Ordering::Relaxed) {
        HIGH_WATER => MonotonicMode::HighWater,
        _ => MonotonicMode::Ordered,
    }
}

#[inline(always)]
fn read_ticks_monotonic() -> u64 {
    #[cfg(feature = "mock")]
    if let Some(t) = crate::mock::ticks() {
        return t;
    }
    // Relaxed orderings suffice: every argument above rests on coherence of a
    // single atomic and on program order after the caller's Acquire load.
    if MODE.load(Ordering::Relaxed) == HIGH_WATER {
        let ticks = read_ticks();
        let seen = MARK.ticks.load(Ordering::Relaxed);
        if ticks <= seen {
            return seen;
        }
        match MARK
            .ticks
            .compare_exchange(seen, ticks, Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(_) => ticks,
            Err(_) => raise_contended(ticks),
        }
    } else {
        read_ticks_ordered()
    }
}

#[cold]
#[inline(never)]
fn raise_contended(ticks: u64) -> u64 {
    if MARK.lost.fetch_add(1, Ordering::Relaxed) + 1 >= SWITCH_AFTER
        && SWITCH_ALLOWED.load(Ordering::Relaxed)
    {
        MODE.store(ORDERED, Ordering::Relaxed);
    }
    MARK.ticks.fetch_max(ticks, Ordering::Relaxed).max(ticks)
}

// ---------------------------------------------------------------------------
// The std-like API, the same for all three types.
// ---------------------------------------------------------------------------

macro_rules! instant_type {
    ($(#[$doc:meta])* $name:ident, $read:path, $label:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name {
            ticks: u64,
        }

        impl $name {
            #[doc = concat!("Reads the clock: ", $label, ".")]
            #[inline(always)]
            #[must_use]
            pub fn now() -> $name {
                $name { ticks: $read() }
            }

            /// Time elapsed since this instant, read from the same clock.
            /// Zero if this instant is in the future.
            #[inline]
            #[must_use]
            pub fn elapsed(&self) -> Duration {
                ticks_between($read(), self.ticks)
            }

            /// Time from `earlier` to `self`; zero if `earlier` is later
            /// (like `std::time::Instant` since Rust 1.60).
            #[inline]
            #[must_use]
            pub fn duration_since(&self, earlier: $name) -> Duration {
                ticks_between(self.ticks, earlier.ticks)
            }

            /// Time from `earlier` to `self`, or `None` if `earlier` is later.
            #[inline]
            #[must_use]
            pub fn checked_duration_since(&self, earlier: $name) -> Option<Duration> {
                if earlier.ticks <= self.ticks {
                    Some(ticks_between(self.ticks, earlier.ticks))
                } else {
                    None
                }
            }

            /// Time from `earlier` to `self`, or zero if `earlier` is later.
            #[inline]
            #[must_use]
            pub fn saturating_duration_since(&self, earlier: $name) -> Duration {
                ticks_between(self.ticks, earlier.ticks)
            }

            /// `self + duration`, or `None` if the result does not fit the
            /// 64-bit tick range (hundreds of years at GHz rates).
            ///
            /// The duration is converted to ticks with the current calibration
            /// and rounded down, so `(t + d) - t` equals `d` within one tick
            /// plus any refinement of the calibration in between (a few ppm
            /// of `d` early in the process, well under 1 ppm later).
            #[inline]
            #[must_use]
            pub fn checked_add(&self, duration: Duration) -> Option<$name> {
                let ticks = self.ticks.checked_add(duration_to_ticks(duration)?)?;
                Some($name { ticks })
            }

            /// `self - duration`, or `None` if the result would be before the
            /// counter's zero (usually the machine's boot).
            #[inline]
            #[must_use]
            pub fn checked_sub(&self, duration: Duration) -> Option<$name> {
                let ticks = self.ticks.checked_sub(duration_to_ticks(duration)?)?;
                Some($name { ticks })
            }

            /// The raw counter value (nanoseconds on the OS fallback).
            #[inline(always)]
            #[must_use]
            pub const fn ticks(&self) -> u64 {
                self.ticks
            }

            /// An instant from a raw counter value of this process's source
            /// (see [`ticks`](Self::ticks)). Values from another process or
            /// machine are only meaningful if it used the same counter.
            #[inline(always)]
            #[must_use]
            pub const fn from_ticks(ticks: u64) -> $name {
                $name { ticks }
            }
        }

        impl Add<Duration> for $name {
            type Output = $name;
            /// # Panics
            /// If the result overflows; use [`checked_add`](Self::checked_add) to handle it.
            #[inline]
            fn add(self, rhs: Duration) -> $name {
                self.checked_add(rhs).expect("overflow when adding duration to instant")
            }
        }

        impl AddAssign<Duration> for $name {
            #[inline]
            fn add_assign(&mut self, rhs: Duration) {
                *self = *self + rhs;
            }
        }

        impl Sub<Duration> for $name {
            type Output = $name;
            /// # Panics
            /// If the result underflows; use [`checked_sub`](Self::checked_sub) to handle it.
            #[inline]
            fn sub(self, rhs: Duration) -> $name {
                self.checked_sub(rhs).expect("overflow when subtracting duration from instant")
            }
        }

        impl SubAssign<Duration> for $name {
            #[inline]
            fn sub_assign(&mut self, rhs: Duration) {
                *self = *self - rhs;
            }
        }

        impl Sub<$name> for $name {
            type Output = Duration;
            /// Same as [`duration_since`](Self::duration_since): zero if `rhs` is later.
            #[inline]
            fn sub(self, rhs: $name) -> Duration {
                self.duration_since(rhs)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name)).field("ticks", &self.ticks).finish()
            }
        }
    };
}

instant_type!(
    /// A reading of the bare architectural counter: the cheapest clock there is.
    ///
    /// Same API as [`std::time::Instant`](https://doc.rust-lang.org/std/time/struct.Instant.html),
    /// at about 11 ns instead of 29 on current x86 (see `BENCHMARKS.md`).
    ///
    /// **Guarantee:** never goes backwards on one thread. Between threads
    /// the CPU may execute the counter read before earlier loads complete,
    /// so a reading taken *after* seeing another thread's reading can be
    /// smaller by up to the speculation window (about a microsecond). Use
    /// [`MonotonicInstant`] when a later event must never get an earlier
    /// stamp than one it saw.
    ///
    /// ```
    /// use fastnow::Instant;
    /// use std::time::Duration;
    ///
    /// let start = Instant::now();
    /// std::thread::sleep(Duration::from_millis(2));
    /// let took = start.elapsed();
    /// assert!(took >= Duration::from_millis(1));
    ///
    /// let deadline = start + Duration::from_secs(30);
    /// assert!(Instant::now() < deadline);
    /// assert_eq!(start.checked_add(Duration::MAX), None);
    /// ```
    Instant,
    read_ticks,
    "the bare counter"
);

instant_type!(
    /// A reading that is strictly ordered across threads.
    ///
    /// **Guarantee:** if reading B happens after reading A in the sense of
    /// the Rust memory model (same thread later, or after an Acquire load
    /// that saw a Release store made after A, a join, a channel receive…),
    /// then `B >= A`. Tested with 10^8 cross-thread checks (see
    /// `BENCHMARKS.md`).
    ///
    /// Cost: the cheaper, on this core, of two strategies, chosen when the
    /// clock is first read. A counter read plus a compare-and-swap on a
    /// shared word costs about what [`Instant::now`] does on AMD Zen; an
    /// ordered counter read, 1.6–2× [`Instant::now`], is cheaper on Intel
    /// cores. The shared word stops being cheap once several cores write it,
    /// so on contention `MonotonicInstant` switches for good to ordered
    /// reads, which share nothing and cost the same on any number of cores.
    /// [`ClockInfo::monotonic_mode`] tells which strategy is in use;
    /// [`use_ordered_reads`](Self::use_ordered_reads) switches early.
    ///
    /// [`ClockInfo::monotonic_mode`]: crate::ClockInfo::monotonic_mode
    ///
    /// ```
    /// use fastnow::MonotonicInstant;
    ///
    /// let a = MonotonicInstant::now();
    /// let b = std::thread::spawn(MonotonicInstant::now).join().unwrap();
    /// assert!(b >= a); // the spawn and join order the two readings
    /// ```
    MonotonicInstant,
    read_ticks_monotonic,
    "strictly monotonic across threads"
);

instant_type!(
    /// A counter reading taken after every load that precedes it.
    ///
    /// **Guarantee:** the counter is read only after all earlier loads in
    /// program order have completed (`RDTSCP`, or `LFENCE; RDTSC`; `ISB`
    /// before `MRS CNTVCT_EL0`), so the reading is not earlier than any
    /// value an Acquire load before it observed. Use it to time a region
    /// that begins with a load (a queue pop, a lock acquisition) without the
    /// CPU starting the clock early.
    ///
    /// ```
    /// use fastnow::OrderedInstant;
    ///
    /// let t = OrderedInstant::now();
    /// let plain: fastnow::Instant = t.as_unordered();
    /// assert_eq!(plain.ticks(), t.ticks());
    /// ```
    OrderedInstant,
    read_ticks_ordered,
    "the counter after all earlier loads"
);

impl MonotonicInstant {
    /// The same reading as a plain [`Instant`] (same timeline, no cost).
    #[inline(always)]
    #[must_use]
    pub const fn as_instant(&self) -> Instant {
        Instant { ticks: self.ticks }
    }

    /// Switches every `MonotonicInstant` in the process to ordered counter
    /// reads now instead of waiting for contention to be detected. Worth it
    /// for programs that will read it from many threads at once. There is
    /// no way back (see [`MonotonicMode`]).
    pub fn use_ordered_reads() {
        MODE.store(ORDERED, Ordering::Relaxed);
    }

    /// For test harnesses only: `true` puts `MonotonicInstant` on the
    /// high-water strategy and keeps it there even when it is contended
    /// (slow, still strictly monotonic), so both strategies can be verified
    /// on any core; `false` lets it switch again. Holding must happen before
    /// any other thread reads a `MonotonicInstant` (going back from ordered
    /// reads is safe only with no reader in flight). Not part of the API.
    #[doc(hidden)]
    pub fn __hold_high_water(hold: bool) {
        SWITCH_ALLOWED.store(!hold, Ordering::Relaxed);
        if hold && detect::ensure_decided() != OS {
            MODE.store(HIGH_WATER, Ordering::Relaxed);
        }
    }
}

impl OrderedInstant {
    /// The same reading as a plain [`Instant`] (same timeline, no cost).
    #[inline(always)]
    #[must_use]
    pub const fn as_unordered(&self) -> Instant {
        Instant { ticks: self.ticks }
    }
}

impl From<MonotonicInstant> for Instant {
    #[inline(always)]
    fn from(t: MonotonicInstant) -> Instant {
        t.as_instant()
    }
}

impl From<OrderedInstant> for Instant {
    #[inline(always)]
    fn from(t: OrderedInstant) -> Instant {
        t.as_unordered()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The division-free path under a second and `from_nanos` above agree
    /// with `from_nanos` everywhere, the boundary included.
    #[test]
    fn nanos_to_duration_is_from_nanos() {
        let edges = [0, 1, 999_999_999, 1_000_000_000, 1_000_000_001, u64::MAX];
        // A multiplicative walk over the whole range, plus the edges.
        let mut x: u64 = 1;
        let walk = core::iter::from_fn(|| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            Some(x >> (x % 64))
        });
        for n in edges.into_iter().chain(walk.take(100_000)) {
            assert_eq!(nanos_to_duration(n), Duration::from_nanos(n), "{n}");
        }
    }

    /// Lost compare-and-swaps are what real contention produces; feeding
    /// them directly makes the switch deterministic. Runs in the lib test
    /// binary, whose other tests do not depend on the mode.
    #[test]
    fn contention_switches_to_ordered_reads_for_good() {
        // Whatever the start-up probe chose, begin on the mark.
        MonotonicInstant::__hold_high_water(true);
        if detect::ensure_decided() != OS {
            assert_eq!(monotonic_mode(), MonotonicMode::HighWater);
        }
        MonotonicInstant::__hold_high_water(false);
        let start = MonotonicInstant::now().ticks();
        for i in 0..SWITCH_AFTER as u64 {
            // Each contended raise still publishes its value and returns the max.
            assert!(raise_contended(start + i) >= start + i);
        }
        assert_eq!(monotonic_mode(), MonotonicMode::Ordered);
        assert!(MARK.ticks.load(Ordering::Relaxed) >= start + SWITCH_AFTER as u64 - 1);

        // Ordered reads come from the counter itself now, past every value
        // the mark handed out.
        let marked = MARK.ticks.load(Ordering::Relaxed);
        assert!(MonotonicInstant::now().ticks() >= marked);
        assert_eq!(monotonic_mode(), MonotonicMode::Ordered, "no way back");
    }
}
