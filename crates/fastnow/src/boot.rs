//! [`BootInstant`]: the precise tier's clock, counting the time the machine
//! spent suspended.
//!
//! A reading is the precise reading plus the boot offset the published
//! state carries (`timekeeper::offsets`), loaded in the same state load: one
//! more load than [`Instant::now`](crate::Instant::now), no system call.

use crate::precise::instant_type;
use crate::timekeeper::{self, Clock};
use core::fmt;

/// Nanoseconds on the boot timeline now.
#[inline(always)]
fn read_boot_nanos() -> u64 {
    timekeeper::read(Clock::Boot, false)
}

instant_type!(
    /// A reading of a clock that keeps counting while the machine is
    /// suspended: `CLOCK_BOOTTIME` on Linux and Android, `mach_continuous_time`
    /// on Apple platforms, at the cost of [`Instant`](crate::Instant).
    ///
    /// Same API as [`Instant`](crate::Instant) (and
    /// [`std::time::Instant`](https://doc.rust-lang.org/std/time/struct.Instant.html)).
    /// Use it for timeouts and ages that must include the time a laptop
    /// lid was closed or a phone slept: a lease that expires after 30
    /// minutes of real time, a cache entry's age, a retry after a backoff.
    /// [`Instant`](crate::Instant), like `CLOCK_MONOTONIC` and std's
    /// `Instant` on Linux, stops counting while the machine is suspended.
    ///
    /// **How:** a reading is the [`Instant`](crate::Instant) reading plus an
    /// offset, `CLOCK_BOOTTIME` less the precise timeline, that fastnow
    /// measures again at every state update (at least twice a second while
    /// the clock is read, four times a second while the upkeep thread
    /// runs) and loads with the counter's line. So after a resume the clock
    /// jumps forward by the time suspended at the first update: at once
    /// while the upkeep thread runs on Linux (the kernel wakes it at resume),
    /// otherwise at the first reading that updates, within a second of
    /// reading. The offset is never lowered.
    ///
    /// **Guarantee:** never goes backwards on one thread, like
    /// [`Instant`](crate::Instant). Intervals agree with `CLOCK_BOOTTIME`'s
    /// as [`Instant`](crate::Instant)'s agree with `CLOCK_MONOTONIC`'s.
    ///
    /// **Elsewhere:** on Windows the OS clock, `QueryPerformanceCounter`,
    /// already counts suspend, and this clock follows it; WASI, the browser
    /// and Unix systems without a boot clock (FreeBSD…) have no clock that
    /// tells suspend apart, and there this clock advances as
    /// [`Instant`](crate::Instant) does. Under a mock clock (the `mock`
    /// feature) it reads the mock's time plus the suspends it simulated.
    ///
    /// ```
    /// use fastnow::BootInstant;
    /// use std::time::Duration;
    ///
    /// let lease = BootInstant::now() + Duration::from_secs(30 * 60);
    /// // ... the machine may sleep here ...
    /// assert!(BootInstant::now() < lease);
    /// assert!(BootInstant::now().elapsed() < Duration::from_secs(60));
    /// ```
    BootInstant,
    read_boot_nanos,
    "the bare counter, plus the time suspended",
    /// Nanoseconds on fastnow's boot timeline: the precise timeline (see
    /// [`Instant::as_nanos`](crate::Instant::as_nanos)) plus the time the
    /// machine spent suspended since it booted, so a reading is about
    /// `CLOCK_BOOTTIME` + 2^62 ns (`mach_continuous_time` in nanoseconds
    /// on Apple platforms; elsewhere as `Instant`'s). Only differences
    /// between readings of one process are meaningful (under a mock clock
    /// of the `mock` feature, between readings of that mock), and only
    /// between `BootInstant`s: an `Instant` is on another timeline.
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Instant;
    use core::time::Duration;
    use std::format;

    /// On one thread a boot reading never goes back, and it is never behind
    /// the precise reading taken before it by more than the offset allows
    /// (the offset counts time suspended: never negative outside a time
    /// namespace that sets it so).
    #[test]
    fn readings_move_forward_with_the_precise_ones() {
        let mut last = BootInstant::now();
        for _ in 0..100_000 {
            let now = BootInstant::now();
            assert!(now >= last, "{now:?} < {last:?}");
            last = now;
        }
        // Each boot reading between two precise ones: a thread preempted
        // between the reads widens the bracket instead of failing the test.
        let (i0, b0, i0_after) = (Instant::now(), BootInstant::now(), Instant::now());
        std::thread::sleep(Duration::from_millis(20));
        let (i1, b1, i1_after) = (Instant::now(), BootInstant::now(), Instant::now());
        let (shortest, longest, db) = (i1 - i0_after, i1_after - i0, b1 - b0);
        // Nothing suspends a test machine: both clocks advance alike.
        assert!(
            db + Duration::from_millis(5) > shortest && db < longest + Duration::from_millis(5),
            "{db:?} vs {shortest:?} to {longest:?}"
        );
    }

    #[test]
    fn the_api_is_instants() {
        let t = BootInstant::from_nanos(1 << 62);
        assert_eq!(t.as_nanos(), 1 << 62);
        assert_eq!((t + Duration::from_secs(1)) - t, Duration::from_secs(1));
        assert_eq!(t.checked_add(Duration::MAX), None);
        assert_eq!(t.checked_sub(Duration::from_nanos((1 << 62) + 1)), None);
        assert_eq!(t.duration_since(t + Duration::from_secs(1)), Duration::ZERO);
        assert_eq!(t.checked_duration_since(t + Duration::from_nanos(1)), None);
        assert_eq!(
            format!("{t:?}"),
            format!("BootInstant(0s after {})", crate::precise::TIMELINE_ZERO)
        );
    }
}
