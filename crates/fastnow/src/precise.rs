//! The precise tier: [`Instant`], [`MonotonicInstant`], [`OrderedInstant`],
//! and `MonotonicInstant`'s choice of strategy.
//!
//! All three hold nanoseconds on one process-wide timeline, converted from
//! the counter *at the read* (`timekeeper::read`). Converting at the read,
//! rather than storing raw ticks and converting intervals later, is what
//! keeps `elapsed()` exact across rate changes: the timeline is one
//! non-decreasing function of the counter, pieced together at take-over
//! points as the rate is re-measured, so an instant taken an hour ago keeps
//! its place whatever NTP does to the rate afterwards. The three differ
//! only in how the counter is read, which decides what they guarantee (see
//! each type); on the OS source all three read `CLOCK_MONOTONIC`, which
//! already gives the strongest of these guarantees.

use crate::source::arch;
use crate::timekeeper::{self, counter_chosen, Clock};
use core::fmt;
#[cfg(any(test, feature = "__test-hooks"))]
use core::sync::atomic::AtomicBool;
use core::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};
use core::time::Duration;

/// Nanoseconds now, from a bare counter read.
#[inline(always)]
pub(crate) fn read_nanos() -> u64 {
    timekeeper::read(Clock::Precise, false)
}

/// Nanoseconds now, from a counter read after every preceding load.
#[inline(always)]
pub(crate) fn read_nanos_ordered() -> u64 {
    timekeeper::read(Clock::Precise, true)
}

/// `Duration::from_nanos`, without its division for intervals under a
/// second, which are what hot paths time.
#[inline(always)]
pub(crate) fn nanos_to_duration(nanos: u64) -> Duration {
    const NANOS_PER_SEC: u64 = 1_000_000_000;
    if nanos < NANOS_PER_SEC {
        Duration::new(0, nanos as u32)
    } else {
        Duration::from_nanos(nanos)
    }
}

/// A `Duration` in nanoseconds, or `None` if it does not fit in 64 bits.
#[inline]
pub(crate) fn duration_nanos(d: Duration) -> Option<u64> {
    u64::try_from(d.as_nanos()).ok()
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
// ordered read does (BENCHMARKS.md, "Two CPUs", has both). And once several
// cores use the mark, its cache line bounces and each call costs a
// cross-core transfer.
//
// So the first MonotonicInstant reading times both on this core (3 × 32
// calls of each, a few microseconds) and starts on the cheaper one; from the
// high-water mark it moves, once and for good, to ordered reads when the
// mark sees `SWITCH_AFTER` lost compare-and-swaps within a second of the
// timeline (contention: readers on several cores at once). Losses further
// apart are chance collisions, not contention, and start the count again;
// the coarse tier's refresh raises the mark without counting (`note_cached`),
// so the upkeep thread alone never makes it switch.
//
// Why the switch is safe without a grace period: MODE only ever goes from
// HIGH_WATER to ORDERED. If reading A happens before reading B, B's load of
// MODE happens after A's, so by coherence B sees ORDERED if A did. The cases
// left are HW→HW (B's load of the mark sees A's write or a later, larger
// one) and ordered B after any A: every value A can return is a reading
// taken before A returned (its own, or one another thread published before
// A loaded it); B's ordered read executes after B's Acquire load, so after
// A returned, and reads a later counter value (the kernel has verified that
// the counters of all cores agree, the condition for choosing the counter);
// and the timeline is one non-decreasing function of the counter value
// (`timekeeper::state`), so B >= A.
// Switching back would need every reader in flight to have finished, which
// a preemptible thread cannot promise, so there is no way back.
// ---------------------------------------------------------------------------

/// Which strategy [`MonotonicInstant`](crate::MonotonicInstant) uses now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MonotonicMode {
    /// A plain reading raised to a shared high-water mark (one atomic
    /// compare-and-swap). Chosen at its first reading where it is the cheaper
    /// strategy (cores whose compare-and-swap overlaps the counter read, such
    /// as AMD Zen).
    HighWater,
    /// An ordered counter read (or the OS clock); no shared writes, so it
    /// scales to any number of threads. Chosen at its first reading where it
    /// is the cheaper strategy (Intel cores), and for good once the
    /// high-water mark is seen contended.
    Ordered,
    /// No `MonotonicInstant` has been read yet; the first reading times both.
    Undecided,
}

const UNDECIDED: u8 = 0;
const HIGH_WATER: u8 = 1;
const ORDERED: u8 = 2;
/// Lost compare-and-swaps before MonotonicInstant switches to ordered reads.
pub(crate) const SWITCH_AFTER: u32 = 256;

static MODE: AtomicU8 = AtomicU8::new(UNDECIDED);
/// Cleared by test harnesses that must exercise the high-water strategy
/// under contention; read only on the contended (cold) path.
#[cfg(any(test, feature = "__test-hooks"))]
static SWITCH_ALLOWED: AtomicBool = AtomicBool::new(true);

/// Whether `MonotonicInstant` may leave the high-water mark: always, but
/// for a test harness that holds it there.
#[inline]
fn switch_allowed() -> bool {
    #[cfg(any(test, feature = "__test-hooks"))]
    return SWITCH_ALLOWED.load(Ordering::Relaxed);
    #[cfg(not(any(test, feature = "__test-hooks")))]
    true
}

/// The shared mark and its contention count on a cache line of their own:
/// the lost compare-and-swaps since the reading `since` (within a second).
#[repr(align(128))]
struct Mark {
    nanos: AtomicU64,
    lost: AtomicU32,
    since: AtomicU64,
}
static MARK: Mark = Mark {
    nanos: AtomicU64::new(0),
    lost: AtomicU32::new(0),
    since: AtomicU64::new(0),
};
/// How close together `SWITCH_AFTER` losses must come to count as contention.
pub(crate) const CONTENTION_WINDOW_NS: u64 = 1_000_000_000;
/// How stale the mark may be and still be the coarse tier's cached value
/// (`reading_for_cache`).
pub(crate) const MARK_FRESH_NS: u64 = 1_000;

/// The first MonotonicInstant reading picks the strategy. The OS clock is
/// already strictly monotonic across threads, so it never needs the mark.
/// Returns false, deciding nothing, while another thread is publishing the
/// first state (the source is not known yet: the caller reads ordered).
#[cold]
#[inline(never)]
fn choose_strategy() -> bool {
    let hold = !switch_allowed();
    let Some(counter) = counter_chosen() else {
        return false;
    };
    let chosen = if !counter {
        ORDERED
    } else if hold || !ordered_reads_are_cheaper() {
        HIGH_WATER
    } else {
        ORDERED
    };
    // Only the first decision counts (several threads may race here).
    let _ = MODE.compare_exchange(UNDECIDED, chosen, Ordering::Relaxed, Ordering::Relaxed);
    true
}

/// `timekeeper::counter_chosen`, waiting out another thread's
/// detection: for the test harness's controls only, never a read path.
#[cfg(any(test, feature = "__test-hooks"))]
fn counter_chosen_waiting() -> bool {
    loop {
        if let Some(chosen) = counter_chosen() {
            return chosen;
        }
        crate::source::os::yield_now();
    }
}

/// Whether an ordered counter read costs less, on this core, than a bare
/// read plus the high-water mark's compare-and-swap: the fastest of three
/// batches of 32 calls each, timed with ordered reads of the counter itself.
fn ordered_reads_are_cheaper() -> bool {
    const CALLS: usize = 32;
    // A scratch word on a line of its own stands in for the mark.
    #[repr(align(128))]
    struct Scratch(AtomicU64);
    static SCRATCH: Scratch = Scratch(AtomicU64::new(0));
    let (mut high_water, mut ordered) = (u64::MAX, u64::MAX);
    for _ in 0..3 {
        let t0 = arch::ticks_ordered_auto();
        for _ in 0..CALLS {
            let ticks = arch::ticks();
            let seen = SCRATCH.0.load(Ordering::Relaxed);
            if ticks > seen {
                let _ =
                    SCRATCH
                        .0
                        .compare_exchange(seen, ticks, Ordering::Relaxed, Ordering::Relaxed);
            }
        }
        let t1 = arch::ticks_ordered_auto();
        for _ in 0..CALLS {
            core::hint::black_box(arch::ticks_ordered_auto());
        }
        let t2 = arch::ticks_ordered_auto();
        high_water = high_water.min(t1.wrapping_sub(t0));
        ordered = ordered.min(t2.wrapping_sub(t1));
    }
    ordered < high_water
}

pub(crate) fn monotonic_mode() -> MonotonicMode {
    match MODE.load(Ordering::Relaxed) {
        HIGH_WATER => MonotonicMode::HighWater,
        ORDERED => MonotonicMode::Ordered,
        _ => MonotonicMode::Undecided,
    }
}

/// Nanoseconds now, made strictly monotonic across threads by the strategy
/// in use (see above); a mock's, under a mock clock.
#[inline(always)]
fn read_nanos_monotonic() -> u64 {
    timekeeper::or_mock(Clock::Precise, monotonic_reading)
}

/// A reading of the machine's clocks by the strategy in use.
#[inline(always)]
fn monotonic_reading() -> u64 {
    // Relaxed orderings suffice: every argument above rests on coherence of a
    // single atomic and on program order after the caller's Acquire load.
    loop {
        match MODE.load(Ordering::Relaxed) {
            HIGH_WATER => {
                let nanos = timekeeper::read_real(Clock::Precise, false);
                let seen = MARK.nanos.load(Ordering::Relaxed);
                if nanos <= seen {
                    return seen;
                }
                return match MARK.nanos.compare_exchange(
                    seen,
                    nanos,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => nanos,
                    Err(_) => raise_contended(nanos),
                };
            }
            ORDERED => return timekeeper::read_real(Clock::Precise, true),
            _ => {
                if !choose_strategy() {
                    return timekeeper::read_real(Clock::Precise, true);
                }
            }
        }
    }
}

#[cold]
#[inline(never)]
fn raise_contended(nanos: u64) -> u64 {
    // The count restarts where the last window began more than a second
    // ago (racing threads may each restart it: the count is a rate, and
    // contention makes hundreds of losses a millisecond).
    let since = MARK.since.load(Ordering::Relaxed);
    let lost = if nanos.saturating_sub(since) > CONTENTION_WINDOW_NS {
        MARK.since.store(nanos, Ordering::Relaxed);
        MARK.lost.store(1, Ordering::Relaxed);
        1
    } else {
        MARK.lost.fetch_add(1, Ordering::Relaxed) + 1
    };
    if lost >= SWITCH_AFTER && switch_allowed() {
        MODE.store(ORDERED, Ordering::Relaxed);
    }
    MARK.nanos.fetch_max(nanos, Ordering::Relaxed).max(nanos)
}

/// A reading for the coarse tier's cache, which every `MonotonicInstant`
/// read after the cache is loaded is at or above, and which never makes the
/// strategy switch (the refreshing thread is the upkeep's, not the
/// program's contention) nor chooses it (the program's first reading does).
///
/// On ordered reads, an ordered reading: later ones are at or above it by
/// their order. On the high-water mark, while the program keeps the mark
/// fresh (within `MARK_FRESH_NS` of an ordered reading taken now) the mark itself,
/// a reading already taken, with no write to its line (a write there every
/// refresh was a lost compare-and-swap for the program's readers, or the
/// refresh's own, often enough to look like contention); otherwise the
/// ordered reading, raised into the mark first (`refresh_mark`: the write
/// takes back the loss it may cost a reader). Before the first
/// `MonotonicInstant` reading, the ordered reading, raised into the mark
/// too, so that a strategy chosen later starts at or above it.
pub(crate) fn reading_for_cache(upkeep: bool) -> u64 {
    // The machine's reading, never a mock's: the mark is the process's.
    let nanos = timekeeper::read_real(Clock::Precise, true);
    match MODE.load(Ordering::Relaxed) {
        ORDERED => nanos,
        HIGH_WATER => {
            let seen = MARK.nanos.load(Ordering::Relaxed);
            if seen.saturating_add(MARK_FRESH_NS) >= nanos {
                seen
            } else {
                refresh_mark(nanos, upkeep)
            }
        }
        _ => refresh_mark(nanos, upkeep),
    }
}

/// Raises the mark to `nanos` for the coarse tier's refresh and returns the
/// mark. Each write of the mark the upkeep thread's refresh makes may cost
/// one of the program's threads, in the instant between its load of the
/// mark and its compare-and-swap, one lost compare-and-swap that is not the
/// program's contention: that refresh (`upkeep`) takes one loss off the
/// count for each write. With a single reading thread the count then never
/// exceeds one, however often the upkeep writes and however long the
/// reader's instant (an emulator's is long). A refresh the program makes
/// is its own contention, and counts.
fn refresh_mark(nanos: u64, upkeep: bool) -> u64 {
    let seen = MARK.nanos.fetch_max(nanos, Ordering::Relaxed);
    if upkeep && seen < nanos {
        // (`Err`: the count is 0 already.)
        let _ = MARK
            .lost
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |l| l.checked_sub(1));
    }
    seen.max(nanos)
}

// ---------------------------------------------------------------------------
// The std-like API, the same for all three types.
// ---------------------------------------------------------------------------

macro_rules! instant_type {
    ($(#[$doc:meta])* $name:ident, $read:path, $label:literal) => {
        instant_type!(
            $(#[$doc])* $name, $read, $label,
            /// Nanoseconds on fastnow's timeline, which advances at
            /// `CLOCK_MONOTONIC`'s rate and counts from 2^62 ns (146 years)
            /// before its zero (about when the machine booted): a reading is
            /// about `CLOCK_MONOTONIC` + 2^62 ns (`CLOCK_UPTIME_RAW` on
            /// Apple platforms; elsewhere the monotonic clock std reads,
            /// from the process's first reading). The offset lets an instant
            /// be moved back a century without leaving the `u64` range. Only
            /// differences between readings of one process are meaningful
            /// (under a mock clock of the `mock` feature, which keeps the
            /// same offset, between readings of that mock).
        );
    };
    // The same, with the docs of `as_nanos` (which say what the timeline is).
    ($(#[$doc:meta])* $name:ident, $read:path, $label:literal, $(#[$nanos_doc:meta])*) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name {
            nanos: u64,
        }

        impl $name {
            #[doc = concat!("Reads the clock: ", $label, ".")]
            #[inline(always)]
            #[must_use]
            pub fn now() -> $name {
                $name { nanos: $read() }
            }

            $(#[$nanos_doc])*
            #[inline(always)]
            #[must_use]
            pub const fn as_nanos(&self) -> u64 {
                self.nanos
            }

            /// An instant from [`as_nanos`](Self::as_nanos) of this process.
            #[inline(always)]
            #[must_use]
            pub const fn from_nanos(nanos: u64) -> $name {
                $name { nanos }
            }
        }

        $crate::precise::instant_arithmetic!(
            $name,
            $read,
            /// Time elapsed since this instant, read from the same clock.
            /// Zero if this instant is in the future.
            ,
            /// Time from `earlier` to `self`; zero if `earlier` is later
            /// (like `std::time::Instant` since Rust 1.60).
            ,
            /// `self + duration`, or `None` if the result does not fit the
            /// timeline's 64 bits of nanoseconds (an instant of the running
            /// machine reaches 438 years ahead, less its uptime): exact, as
            /// `(t + d) - t == d`.
            ,
            /// `self - duration`, or `None` if the result would be before the
            /// timeline's zero, 2^62 ns (146 years) before the OS monotonic
            /// clock's (see [`as_nanos`](Self::as_nanos)): an instant of the
            /// running machine reaches back at least 146 years, however
            /// recently the machine booted.
        );

        /// The reading's place on its timeline, for a person:
        /// `Instant(1h2m3.456789012s after boot)` (the time since the zero
        /// of the OS clock the timeline continues, the machine's boot on
        /// Unix systems; on other systems the process's first reading), or
        /// `… before …` for an instant moved back past it, in the units Go's
        /// `time.Duration` prints. Only arithmetic: no reading, no
        /// allocation, no panic. (`as_nanos` gives the number itself.)
        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                crate::precise::fmt_timeline(f, stringify!($name), self.nanos)
            }
        }
    };
}

/// What the timeline's zero is, in `Debug`: the OS clock's own zero, which
/// on Unix systems is the machine's boot (`CLOCK_MONOTONIC`,
/// `CLOCK_UPTIME_RAW`, `CLOCK_BOOTTIME` count from it); elsewhere the
/// process's first reading (the OS clock is counted from there).
pub(crate) const TIMELINE_ZERO: &str = if cfg!(unix) {
    "boot"
} else {
    "the process's first reading"
};

/// `Name(1h2m3.456789012s after boot)`: see the instant types' `Debug`.
pub(crate) fn fmt_timeline(f: &mut fmt::Formatter<'_>, name: &str, nanos: u64) -> fmt::Result {
    let zero = crate::timekeeper::TIMELINE_OFFSET_NS;
    let (d, side) = if nanos >= zero {
        (nanos - zero, "after")
    } else {
        (zero - nanos, "before")
    };
    write!(f, "{name}(")?;
    fmt_duration(f, d)?;
    write!(f, " {side} {TIMELINE_ZERO})")
}

/// `d` nanoseconds as Go's `time.Duration` prints them: `0s`, `950ns`,
/// `1.5µs`, `12.25ms`, `3.000000001s`, `1h2m3.5s` (trailing zeros of the
/// fraction dropped).
pub(crate) fn fmt_duration(f: &mut fmt::Formatter<'_>, d: u64) -> fmt::Result {
    /// `whole.frac` with `digits` digits of `frac`, trailing zeros dropped.
    fn decimal(f: &mut fmt::Formatter<'_>, whole: u64, frac: u64, digits: u32) -> fmt::Result {
        write!(f, "{whole}")?;
        if frac == 0 {
            return Ok(());
        }
        let (mut frac, mut digits) = (frac, digits);
        while frac % 10 == 0 {
            frac /= 10;
            digits -= 1;
        }
        write!(f, ".{frac:0width$}", width = digits as usize)
    }
    const US: u64 = 1_000;
    const MS: u64 = 1_000_000;
    const S: u64 = 1_000_000_000;
    match d {
        0 => f.write_str("0s"),
        _ if d < US => write!(f, "{d}ns"),
        _ if d < MS => {
            decimal(f, d / US, d % US, 3)?;
            f.write_str("µs")
        }
        _ if d < S => {
            decimal(f, d / MS, d % MS, 6)?;
            f.write_str("ms")
        }
        _ => {
            let (h, rest) = (d / (3_600 * S), d % (3_600 * S));
            let (m, rest) = (rest / (60 * S), rest % (60 * S));
            if h > 0 {
                write!(f, "{h}h")?;
            }
            if h > 0 || m > 0 {
                write!(f, "{m}m")?;
            }
            decimal(f, rest / S, rest % S, 9)?;
            f.write_str("s")
        }
    }
}

/// What every instant type shares, written once: the std-like arithmetic
/// of a type that holds `nanos: u64` and is made by `from_nanos`, reading
/// `$read` for `elapsed`. The docs that differ between clocks (what
/// elapses, what bounds the range) are given by the caller, in the order
/// `elapsed`, `duration_since`, `checked_add`, `checked_sub`.
macro_rules! instant_arithmetic {
    (
        $name:ident,
        $read:path,
        $(#[$elapsed:meta])* ,
        $(#[$since:meta])* ,
        $(#[$add:meta])* ,
        $(#[$sub:meta])*
    ) => {
        impl $name {
            $(#[$elapsed])*
            #[inline]
            #[must_use]
            pub fn elapsed(&self) -> core::time::Duration {
                $crate::precise::nanos_to_duration($read().saturating_sub(self.nanos))
            }

            $(#[$since])*
            #[inline]
            #[must_use]
            pub fn duration_since(&self, earlier: $name) -> core::time::Duration {
                $crate::precise::nanos_to_duration(self.nanos.saturating_sub(earlier.nanos))
            }

            /// Time from `earlier` to `self`, or `None` if `earlier` is later.
            #[inline]
            #[must_use]
            pub fn checked_duration_since(&self, earlier: $name) -> Option<core::time::Duration> {
                self.nanos
                    .checked_sub(earlier.nanos)
                    .map($crate::precise::nanos_to_duration)
            }

            /// Time from `earlier` to `self`, or zero if `earlier` is later.
            #[inline]
            #[must_use]
            pub fn saturating_duration_since(&self, earlier: $name) -> core::time::Duration {
                self.duration_since(earlier)
            }

            $(#[$add])*
            #[inline]
            #[must_use]
            pub fn checked_add(&self, duration: core::time::Duration) -> Option<$name> {
                let d = $crate::precise::duration_nanos(duration)?;
                Some($name::from_nanos(self.nanos.checked_add(d)?))
            }

            $(#[$sub])*
            #[inline]
            #[must_use]
            pub fn checked_sub(&self, duration: core::time::Duration) -> Option<$name> {
                let d = $crate::precise::duration_nanos(duration)?;
                Some($name::from_nanos(self.nanos.checked_sub(d)?))
            }
        }

        impl core::ops::Add<core::time::Duration> for $name {
            type Output = $name;
            /// # Panics
            /// If the result overflows; use [`checked_add`](Self::checked_add) to handle it.
            #[inline]
            fn add(self, rhs: core::time::Duration) -> $name {
                self.checked_add(rhs).expect("overflow when adding duration to instant")
            }
        }

        impl core::ops::AddAssign<core::time::Duration> for $name {
            #[inline]
            fn add_assign(&mut self, rhs: core::time::Duration) {
                *self = *self + rhs;
            }
        }

        impl core::ops::Sub<core::time::Duration> for $name {
            type Output = $name;
            /// # Panics
            /// If the result underflows; use [`checked_sub`](Self::checked_sub) to handle it.
            #[inline]
            fn sub(self, rhs: core::time::Duration) -> $name {
                self.checked_sub(rhs).expect("overflow when subtracting duration from instant")
            }
        }

        impl core::ops::SubAssign<core::time::Duration> for $name {
            #[inline]
            fn sub_assign(&mut self, rhs: core::time::Duration) {
                *self = *self - rhs;
            }
        }

        impl core::ops::Sub<$name> for $name {
            type Output = core::time::Duration;
            /// Same as [`duration_since`](Self::duration_since): zero if `rhs` is later.
            #[inline]
            fn sub(self, rhs: $name) -> core::time::Duration {
                self.duration_since(rhs)
            }
        }
    };
}

// `BootInstant` (boot.rs) shares the impls, `ThreadCpuInstant`
// (thread_cpu.rs) the arithmetic.
pub(crate) use instant_arithmetic;
pub(crate) use instant_type;

instant_type!(
    /// A reading of the bare architectural counter: the cheapest clock there is.
    ///
    /// Same API as [`std::time::Instant`](https://doc.rust-lang.org/std/time/struct.Instant.html),
    /// at about the cost of the bare counter read, well under std's (see
    /// `BENCHMARKS.md`).
    ///
    /// **Guarantee:** never goes backwards on one thread. Between threads
    /// the CPU may execute the counter read before earlier loads complete,
    /// so a reading taken *after* seeing another thread's reading can be
    /// smaller by up to the speculation window (microseconds). Use
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
    read_nanos,
    "the bare counter"
);

instant_type!(
    /// A reading that is strictly ordered across threads.
    ///
    /// **Guarantee:** if reading B happens after reading A in the sense of
    /// the Rust memory model (same thread later, or after an Acquire load
    /// that saw a Release store made after A, a join, a channel receive…),
    /// then `B >= A`. Tested with 10^8 cross-thread checks (see
    /// `BENCHMARKS.md`). On ordered reads this holds as far as the cores'
    /// counters agree, which the kernel checks before it uses the counter
    /// (a hypervisor can still set virtual CPUs' counters a few ticks apart,
    /// and `CLOCK_MONOTONIC` is then early by as much; spec/SEMANTICS.md).
    ///
    /// Cost: the cheaper, on this core, of two strategies, chosen when the
    /// clock is first read. A counter read plus a compare-and-swap on a
    /// shared word costs about what [`Instant::now`] does on AMD Zen; an
    /// ordered counter read, dearer than [`Instant::now`], is cheaper on
    /// Intel cores (see `BENCHMARKS.md`). The shared word stops being cheap
    /// once several cores write it, so on contention `MonotonicInstant`
    /// switches for good to ordered reads, which share nothing and cost the
    /// same on any number of cores.
    /// [`ClockInfo::monotonic_mode`] tells which strategy is in use;
    /// [`use_ordered_reads`](Self::use_ordered_reads) switches early.
    ///
    /// [`ClockInfo::monotonic_mode`]: crate::ClockInfo::monotonic_mode
    ///
    /// ```
    /// # #[cfg(not(target_os = "wasi"))] { // (no threads there)
    /// use fastnow::MonotonicInstant;
    ///
    /// let a = MonotonicInstant::now();
    /// let b = std::thread::spawn(MonotonicInstant::now).join().unwrap();
    /// assert!(b >= a); // the spawn and join order the two readings
    /// # }
    /// ```
    MonotonicInstant,
    read_nanos_monotonic,
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
    /// assert_eq!(plain.as_nanos(), t.as_nanos());
    /// ```
    OrderedInstant,
    read_nanos_ordered,
    "the counter after all earlier loads"
);

impl MonotonicInstant {
    /// The same reading as a plain [`Instant`] (same timeline, no cost).
    #[inline(always)]
    #[must_use]
    pub const fn as_instant(&self) -> Instant {
        Instant { nanos: self.nanos }
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
    /// reads is safe only with no reader in flight). Not part of the API:
    /// the `__test-hooks` feature's, for this workspace's tests and benches.
    #[cfg(any(test, feature = "__test-hooks"))]
    #[doc(hidden)]
    pub fn __hold_high_water(hold: bool) {
        SWITCH_ALLOWED.store(!hold, Ordering::Relaxed);
        if hold && counter_chosen_waiting() {
            MODE.store(HIGH_WATER, Ordering::Relaxed);
        }
    }
}

impl OrderedInstant {
    /// The same reading as a plain [`Instant`] (same timeline, no cost).
    #[inline(always)]
    #[must_use]
    pub const fn as_unordered(&self) -> Instant {
        Instant { nanos: self.nanos }
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
        let on_mark = counter_chosen_waiting();
        if on_mark {
            assert_eq!(monotonic_mode(), MonotonicMode::HighWater);
        }
        MonotonicInstant::__hold_high_water(false);
        // Where the counter is in use: on the OS clock the strategy is never
        // the mark.
        if on_mark {
            // Losses the upkeep's refresh explains are not contention: each
            // write of the mark it makes may cost a reader one lost
            // compare-and-swap, and takes one off the count. (Before, a refresh
            // every millisecond beside one reading thread could switch it under
            // an emulator, where many refreshes hit a reader between its load
            // and its compare-and-swap.)
            for i in 0..2 * SWITCH_AFTER {
                assert_eq!(
                    monotonic_mode(),
                    MonotonicMode::HighWater,
                    "after {i} refreshes, each followed by the loss it caused"
                );
                let stale = MARK.nanos.load(Ordering::Relaxed) + MARK_FRESH_NS;
                while timekeeper::read_real(Clock::Precise, true) <= stale {
                    core::hint::spin_loop();
                }
                reading_for_cache(true);
                let written = MARK.nanos.load(Ordering::Relaxed);
                assert!(written > stale, "the refresh did not write a stale mark");
                raise_contended(written);
            }
            assert!(MARK.lost.load(Ordering::Relaxed) <= 1);
            // A refresh the program makes is its own contention: it takes
            // nothing off the count.
            raise_contended(MARK.nanos.load(Ordering::Relaxed));
            assert_eq!(monotonic_mode(), MonotonicMode::HighWater, "one more loss");
            let lost = MARK.lost.load(Ordering::Relaxed);
            let stale = MARK.nanos.load(Ordering::Relaxed) + MARK_FRESH_NS;
            while timekeeper::read_real(Clock::Precise, true) <= stale {
                core::hint::spin_loop();
            }
            reading_for_cache(false);
            assert!(MARK.nanos.load(Ordering::Relaxed) > stale);
            assert_eq!(
                MARK.lost.load(Ordering::Relaxed),
                lost,
                "a program's refresh"
            );
        }
        let start = MonotonicInstant::now().as_nanos();
        for i in 0..SWITCH_AFTER as u64 {
            // Each contended raise still publishes its value and returns the max.
            assert!(raise_contended(start + i) >= start + i);
        }
        assert_eq!(monotonic_mode(), MonotonicMode::Ordered);
        assert!(MARK.nanos.load(Ordering::Relaxed) >= start + SWITCH_AFTER as u64 - 1);

        // Ordered reads come from the clock itself now, past every value
        // the mark handed out.
        let marked = MARK.nanos.load(Ordering::Relaxed);
        assert!(MonotonicInstant::now().as_nanos() >= marked);
        assert_eq!(monotonic_mode(), MonotonicMode::Ordered, "no way back");
    }

    /// The duration as `fmt_duration` prints it.
    fn printed(d: u64) -> std::string::String {
        struct P(u64);
        impl fmt::Display for P {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt_duration(f, self.0)
            }
        }
        std::format!("{}", P(d))
    }

    /// Reads back what `fmt_duration` prints, in exact integer arithmetic.
    fn parse(text: &str) -> u64 {
        let (mut total, mut rest) = (0u64, text);
        while !rest.is_empty() {
            let end = rest
                .find(|c: char| !c.is_ascii_digit() && c != '.')
                .unwrap();
            let (number, tail) = rest.split_at(end);
            let (unit, per) = [
                ("ns", 1),
                ("µs", 1_000),
                ("ms", 1_000_000),
                ("s", 1_000_000_000),
                ("m", 60_000_000_000),
                ("h", 3_600_000_000_000),
            ]
            .into_iter()
            .find(|(u, _)| tail.starts_with(u) && !(*u == "m" && tail.starts_with("ms")))
            .unwrap();
            let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
            let mut frac_ns = 0u64;
            let mut scale = per;
            for digit in frac.bytes() {
                scale /= 10;
                frac_ns += u64::from(digit - b'0') * scale;
            }
            total += whole.parse::<u64>().unwrap() * per + frac_ns;
            rest = &tail[unit.len()..];
        }
        total
    }

    #[test]
    fn durations_print_as_go_prints_them() {
        for (d, text) in [
            (0, "0s"),
            (1, "1ns"),
            (999, "999ns"),
            (1_500, "1.5µs"),
            (12_250_000, "12.25ms"),
            (1_000_000_000, "1s"),
            (3_000_000_001, "3.000000001s"),
            (62_000_000_000, "1m2s"),
            (3_723_500_000_000, "1h2m3.5s"),
            (3_600_000_000_000, "1h0m0s"),
            (u64::MAX, "5124095h34m33.709551615s"),
        ] {
            assert_eq!(printed(d), text, "{d}");
        }
    }

    proptest::proptest! {
        /// Whatever the duration, what is printed reads back exactly.
        #[test]
        fn printed_durations_read_back(d in proptest::prelude::any::<u64>()) {
            proptest::prop_assert_eq!(parse(&printed(d)), d);
        }
    }

    /// `{:?}` of an instant says where it is on its timeline, before or
    /// after its zero, for every instant type; the extremes do not panic.
    #[test]
    fn debug_says_the_time_since_the_timeline_zero() {
        let zero = crate::timekeeper::TIMELINE_OFFSET_NS;
        let at = |ns| Instant::from_nanos(ns);
        let after = std::format!("after {TIMELINE_ZERO})");
        assert_eq!(
            std::format!("{:?}", at(zero + 3_723_500_000_000)),
            std::format!("Instant(1h2m3.5s {after}")
        );
        assert_eq!(
            std::format!("{:?}", MonotonicInstant::from_nanos(zero + 1_500)),
            std::format!("MonotonicInstant(1.5µs {after}")
        );
        assert_eq!(
            std::format!("{:?}", OrderedInstant::from_nanos(zero)),
            std::format!("OrderedInstant(0s {after}")
        );
        assert_eq!(
            std::format!(
                "{:?}",
                crate::BootInstant::from_nanos(zero + 60_000_000_000)
            ),
            std::format!("BootInstant(1m0s {after}")
        );
        assert_eq!(
            std::format!("{:?}", at(zero - 5_000_000_000)),
            std::format!("Instant(5s before {TIMELINE_ZERO})")
        );
        assert!(std::format!("{:?}", at(0)).ends_with(&std::format!("before {TIMELINE_ZERO})")));
        assert!(std::format!("{:?}", at(u64::MAX)).starts_with("Instant(3"));
    }
}
