//! The three instant types as `std::time::Instant` (feature `std`), for
//! the APIs that take std's type: timeouts, `tokio::time::Instant::from_std`,
//! other crates' deadlines.
//!
//! std's `Instant` is opaque: it cannot be built from a number, only read
//! from its clock and moved by a `Duration`. So a conversion goes through
//! one *anchor*, a pair (std reading, fastnow reading) taken at the first
//! conversion in the process: a fastnow instant `t` becomes the std anchor
//! plus (or minus) `t`'s distance from the fastnow anchor. The anchor is
//! the tightest of [`TRIES`] brackets `fastnow, std, fastnow` (the fastnow
//! reads ordered, so that none is taken early), with the fastnow side
//! matched to the bracket's midpoint; its error is half that bracket's
//! width. Taken once, it never changes, so converting is exact arithmetic:
//! the same instant always converts to the same std instant, and the
//! difference of two converted instants is their fastnow difference.
//!
//! The anchor is read from the real clocks even under a mock (a mock's
//! readings are converted as any other value on the timeline).

use crate::precise::{Instant, MonotonicInstant, OrderedInstant};
use crate::timekeeper::{self, Clock};
use core::time::Duration;
use std::sync::OnceLock;
use std::time::Instant as StdInstant;

/// Brackets tried for the anchor; the tightest is kept. A bracket is wide
/// only when the thread was preempted or interrupted inside it, which
/// several in a row rarely are.
const TRIES: usize = 8;

/// The pair every conversion is relative to.
struct Anchor {
    std: StdInstant,
    /// The fastnow reading matched to `std`: its bracket's midpoint.
    nanos: u64,
    /// The bracket's width; the match is good to half of it.
    width: u64,
}

static ANCHOR: OnceLock<Anchor> = OnceLock::new();

fn anchor() -> &'static Anchor {
    ANCHOR.get_or_init(|| {
        let mut best: Option<Anchor> = None;
        for _ in 0..TRIES {
            // Real readings (the timekeeper's, not a mock's), ordered so
            // that neither is taken before the std reading's neighbours.
            let before = timekeeper::read_real(Clock::Precise, true);
            let std = StdInstant::now();
            let after = timekeeper::read_real(Clock::Precise, true);
            let width = after.saturating_sub(before);
            if best.as_ref().map_or(true, |b| width < b.width) {
                best = Some(Anchor {
                    std,
                    nanos: before + width / 2,
                    width,
                });
            }
        }
        // TRIES > 0, so there is a best; the fallback is never built.
        best.unwrap_or_else(|| Anchor {
            std: StdInstant::now(),
            nanos: timekeeper::read_real(Clock::Precise, true),
            width: u64::MAX,
        })
    })
}

/// The width of the anchor's bracket, in nanoseconds (taking the anchor if
/// no conversion has yet): a conversion of a reading taken now is within
/// half of it of std's clock, plus how far fastnow's timeline has moved
/// from std's since (see the [`From`] impls). For this crate's tests.
#[cfg(feature = "__test-hooks")]
pub(crate) fn anchor_width() -> u64 {
    anchor().width
}

/// A point on fastnow's timeline as a std `Instant`: exact relative to the
/// anchor, or the nearest instant std can hold (see [`From`] below).
pub(crate) fn to_std(nanos: u64) -> StdInstant {
    let a = anchor();
    if nanos >= a.nanos {
        let ahead = nanos - a.nanos;
        a.std
            .checked_add(Duration::from_nanos(ahead))
            .unwrap_or_else(|| farthest(a.std, ahead, StdInstant::checked_add))
    } else {
        let behind = a.nanos - nanos;
        a.std
            .checked_sub(Duration::from_nanos(behind))
            .unwrap_or_else(|| farthest(a.std, behind, StdInstant::checked_sub))
    }
}

/// The farthest instant from `base` that `step` reaches within `limit`
/// nanoseconds, when `step(base, limit)` itself fails: the instant std
/// cannot go past in that direction (the platform's range of
/// `std::time::Instant` is not documented, so it is searched for; what
/// `step` reaches shrinks towards `base`, so a bisection finds it).
#[cold]
fn farthest(
    base: StdInstant,
    limit: u64,
    step: fn(&StdInstant, Duration) -> Option<StdInstant>,
) -> StdInstant {
    // Invariant: `step` reaches `lo` nanoseconds and not `hi`.
    let (mut lo, mut hi) = (0u64, limit);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if step(&base, Duration::from_nanos(mid)).is_some() {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    step(&base, Duration::from_nanos(lo)).unwrap_or(base)
}

macro_rules! into_std {
    ($($name:ident),*) => {$(
        #[doc = concat!("The `std::time::Instant` of a [`", stringify!($name), "`] (feature `std`).")]
        ///
        /// Relative to one pair of readings, fastnow's and std's, taken
        /// at the first conversion in the process (the tightest of a few
        /// brackets): the same instant always converts to the same std
        /// instant, and differences are kept exactly
        /// (`std(b) - std(a) == b - a`, to the nanosecond where std's
        /// `Instant` counts nanoseconds).
        ///
        /// **Error bound.** A reading converted lands, on std's clock,
        /// within half the anchor bracket's width (a fraction of a
        /// microsecond, unless the thread was preempted in every bracket)
        /// of when it was taken, plus however far fastnow's timeline has
        /// drifted from std's clock since the anchor. fastnow's timeline
        /// advances at the rate of the clock std's `Instant` reads
        /// (`CLOCK_MONOTONIC` on Linux), as it measures that rate: a change
        /// of the rate (NTP slewing the clock) is followed within about two
        /// seconds, and what those seconds were off stays in the
        /// difference, as do the few hundred nanoseconds that a change of
        /// source moves fastnow's readings forward. So the bound grows
        /// slowly with the process's age: the conversion suits deadlines
        /// and timeouts, not comparing nanoseconds across the two clocks
        /// (`std::time::Instant::now() - t.into()` for a fresh `t` measures
        /// the current offset).
        ///
        /// **Range.** Never panics. An instant std cannot represent (its
        /// range is the platform's: on Unix every fastnow instant fits; on
        /// Windows, where std's `Instant` counts from boot, one from before
        /// boot does not) converts to the nearest one it can, the earliest
        /// or the latest: order is kept, the distance is not.
        ///
        /// **Mocks.** The conversion is a function of the value, not a
        /// clock: it does not look for a mock. A mocked reading converts to
        /// the std instant at which fastnow's real timeline has the same
        /// value, one mock second per std second apart; std's clock does
        /// not follow the mock. A mock starts one second after the OS monotonic
        /// clock's zero (see `fastnow::mock`), so its early readings convert
        /// to std instants in the past by about that clock's current value
        /// (on Linux, the time since boot, not counting suspend), and a
        /// mock advanced beyond that value converts to instants in std's
        /// future: which one a mocked reading lands on depends on how long
        /// the machine has been up, so compare converted mocked readings
        /// with each other, not with std's clock. The first conversion's
        /// anchor is read from the real clocks, mock or not.
        ///
        /// Not async-signal-safe the first time in a process (taking the
        /// anchor may wait on another thread taking it); afterwards it only
        /// loads the anchor and adds.
        ///
        /// ```
        #[doc = concat!("use fastnow::", stringify!($name), ";")]
        /// use std::time::Duration;
        ///
        #[doc = concat!("let start = ", stringify!($name), "::now();")]
        /// let deadline = start + Duration::from_secs(30);
        /// let std_deadline: std::time::Instant = deadline.into();
        /// assert_eq!(
        ///     std_deadline - std::time::Instant::from(start),
        ///     Duration::from_secs(30)
        /// );
        /// assert!(std_deadline > std::time::Instant::now());
        /// ```
        #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
        impl From<$name> for StdInstant {
            #[inline]
            fn from(t: $name) -> StdInstant {
                to_std(t.as_nanos())
            }
        }
    )*};
}

into_std!(Instant, MonotonicInstant, OrderedInstant);

#[cfg(test)]
mod tests {
    use super::*;

    /// `farthest` finds the last step that succeeds, on a step with a
    /// known range, whatever the limit.
    #[test]
    fn farthest_is_the_edge_of_the_range() {
        let base = StdInstant::now();
        // A stand-in for a platform whose instants end 1,000,003 ns on.
        fn limited(base: &StdInstant, d: Duration) -> Option<StdInstant> {
            (d <= Duration::from_nanos(1_000_003)).then(|| *base + d)
        }
        for limit in [1_000_004, 1_000_005, 2_000_000, u64::MAX] {
            let edge = farthest(base, limit, limited);
            assert_eq!(edge - base, Duration::from_nanos(1_000_003), "{limit}");
        }
        // Nothing reachable but `base` itself.
        fn none(base: &StdInstant, d: Duration) -> Option<StdInstant> {
            d.is_zero().then_some(*base)
        }
        assert_eq!(farthest(base, u64::MAX, none), base);
    }
}
