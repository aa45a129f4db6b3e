//! A clock for [governor](https://docs.rs/governor)'s rate limiters
//! (feature `governor`): [`FastnowClock`] reads [`Instant`], which
//! implements `governor::clock::Reference`.
//!
//! governor takes its clock as a type parameter, so a limiter on fastnow's
//! clock is built with `RateLimiter::direct_with_clock` (or
//! `keyed_with_clock`, `dashmap_with_clock`…) and a `FastnowClock`. Each
//! check then costs one [`Instant::now`] instead of its default clock's
//! read, and the limiter follows fastnow's mock clock (feature `mock`),
//! so a test drives it by advancing the mock: no sleeping, exact counts.
//!
//! ```
//! use fastnow::governor::FastnowClock;
//! use governor::{Quota, RateLimiter};
//! use std::num::NonZeroU32;
//!
//! let quota = Quota::per_second(NonZeroU32::new(10).unwrap());
//! let limiter = RateLimiter::direct_with_clock(quota, FastnowClock::default());
//! // A burst of 10, then one every 100 ms.
//! let allowed = (0..20).filter(|_| limiter.check().is_ok()).count();
//! assert!(allowed >= 10 && allowed < 20);
//! ```
//!
//! `FastnowClock` is also governor's `ReasonablyRealtime`, which its
//! asynchronous `until_ready` waits need. The feature needs `std`, as
//! governor does (without its `no_std` feature).
//!
//! [`Instant`]: crate::Instant
//! [`Instant::now`]: crate::Instant::now

use crate::precise::Instant;
use core::ops::Add;
use governor::clock::{Clock, Reference};
use governor::nanos::Nanos;

/// A `governor::clock::Clock` that reads [`Instant::now`](crate::Instant::now).
///
/// Its readings are [`fastnow::Instant`](crate::Instant)s: governor's
/// `NotUntil::wait_time_from` and `earliest_possible` take and give them.
/// Like `Instant`, it is monotonic on each thread; a limiter shared by
/// threads tolerates readings a little out of order between threads, as
/// with governor's own clocks (its arithmetic saturates).
///
/// ```
/// use fastnow::governor::FastnowClock;
/// use governor::clock::Clock;
///
/// let clock = FastnowClock::default();
/// let t: fastnow::Instant = clock.now();
/// assert!(t <= fastnow::Instant::now());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FastnowClock;

impl Clock for FastnowClock {
    type Instant = Instant;

    #[inline]
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// governor's marker for clocks that run at real time, which its
/// asynchronous waits (`until_ready`) need.
impl governor::clock::ReasonablyRealtime for FastnowClock {}

/// governor's measurement of time: saturating, as governor requires.
impl Reference for Instant {
    /// `self - earlier`, zero if `earlier` is later.
    #[inline]
    fn duration_since(&self, earlier: Instant) -> Nanos {
        Nanos::new(self.as_nanos().saturating_sub(earlier.as_nanos()))
    }

    /// `self - duration`, or `self` if that would be before the timeline's
    /// zero.
    #[inline]
    fn saturating_sub(&self, duration: Nanos) -> Instant {
        self.as_nanos()
            .checked_sub(duration.as_u64())
            .map_or(*self, Instant::from_nanos)
    }
}

/// `self + nanos` for governor, saturating at the largest instant instead
/// of panicking (governor adds its state's offsets to a limiter's start).
///
/// ```
/// use governor::nanos::Nanos;
///
/// let t = fastnow::Instant::from_nanos(5);
/// assert_eq!(t + Nanos::new(3), fastnow::Instant::from_nanos(8));
/// assert_eq!(t + Nanos::new(u64::MAX), fastnow::Instant::from_nanos(u64::MAX));
/// ```
impl Add<Nanos> for Instant {
    type Output = Instant;

    #[inline]
    fn add(self, nanos: Nanos) -> Instant {
        Instant::from_nanos(self.as_nanos().saturating_add(nanos.as_u64()))
    }
}
