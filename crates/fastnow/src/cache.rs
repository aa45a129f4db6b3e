//! The coarse tier's cache: the readings of the last [`refresh`], each in
//! an atomic on a cache line of its own (so refreshing one never evicts the
//! other, nor anything of the caller's). Below both the coarse tier's
//! readers (coarse.rs), whose first use starts the upkeep thread, and that
//! thread (upkeep.rs), which refreshes it.

use crate::precise::{Instant, MonotonicInstant};
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
    #[cfg(feature = "mock")]
    if let Some(t) = crate::mock::nanos() {
        // A mock's time is its own: the cache is the process's.
        return Instant::from_nanos(t);
    }
    // A MonotonicInstant reading, so that whatever reads the cache and then
    // a MonotonicInstant gets a later one; keep the largest, as refreshes
    // from several threads may store out of order.
    let now = MonotonicInstant::now().as_nanos().max(1);
    // Never 0 (the "unset" value), even at the epoch.
    let unix = wall::unix_nanos().max(1);
    #[cfg(feature = "mock")]
    if let Some(t) = crate::mock::nanos() {
        // A global mock installed since the check above: what was just
        // read may be its time, which must not enter the process's cache.
        return Instant::from_nanos(t);
    }
    let prev = RECENT_NANOS.0.fetch_max(now, Ordering::Release);
    RECENT_UNIX.0.store(unix, Ordering::Release);
    Instant::from_nanos(prev.max(now))
}

/// Default upkeep resolution.
pub const DEFAULT_RESOLUTION: core::time::Duration = core::time::Duration::from_millis(1);
