//! The coarse tier's cache: the readings of the last [`refresh`], each in
//! an atomic on a cache line of its own (so refreshing one never evicts the
//! other, nor anything of the caller's). Below both the coarse tier's
//! readers (coarse.rs), whose first use starts the upkeep thread, and that
//! thread (upkeep.rs), which refreshes it.

use crate::precise::Instant;
use crate::timekeeper::{self, Clock};
use crate::wall;
use core::sync::atomic::{AtomicU64, Ordering};

#[repr(align(128))]
pub(crate) struct Cached(pub(crate) AtomicU64);

// The upkeep's fork hook unsets them in a child.
pub(crate) static RECENT_NANOS: Cached = Cached(AtomicU64::new(0));
pub(crate) static RECENT_UNIX: Cached = Cached(AtomicU64::new(0));

/// Reads the clocks and updates the cached values; returns the new `Instant`.
///
/// ```
/// // An event loop: one refresh per iteration, cheap reads inside it.
/// fastnow::set_auto_upkeep(false);
/// for _ in 0..3 {
///     let now = fastnow::refresh();
///     assert_eq!(fastnow::recent(), now);
/// }
/// ```
pub fn refresh() -> Instant {
    refresh_as(Refresher::Program)
}

/// Who refreshes the cache: the program (`refresh`, the coarse tier's
/// first use), or the upkeep thread, whose writes of `MonotonicInstant`'s
/// mark never count as the program's contention.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refresher {
    Program,
    Upkeep,
}

/// `refresh`, made by `who`.
pub(crate) fn refresh_as(who: Refresher) -> Instant {
    // A reading that every MonotonicInstant read after the cache is loaded
    // is at or above (`precise::reading_for_cache`); keep the largest, as
    // refreshes from several threads may store out of order.
    let now = crate::precise::reading_for_cache(who == Refresher::Upkeep).max(1);
    // Never 0 (the "unset" value), even at the epoch.
    let unix = wall::unix_nanos().max(1);
    // Stored after the readings, through the mock's check: under a mock
    // (one installed since the readings too) they may be its time, which
    // is its own, while the cache is the process's.
    let nanos = timekeeper::or_mock(Clock::Precise, || {
        let prev = RECENT_NANOS.0.fetch_max(now, Ordering::Release);
        RECENT_UNIX.0.store(unix, Ordering::Release);
        prev.max(now)
    });
    Instant::from_nanos(nanos)
}

/// Default upkeep resolution.
pub const DEFAULT_RESOLUTION: core::time::Duration = core::time::Duration::from_millis(1);
