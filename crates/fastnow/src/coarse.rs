//! The coarse tier: the time as of the last refresh, for one atomic load.
//!
//! [`recent`] and [`recent_unix_nanos`] return the readings cached by
//! [`refresh`] (cache.rs), which the upkeep thread calls every resolution;
//! the first use here starts that thread. What a cached value guarantees is
//! on [`recent`] and in spec/SEMANTICS.md ("Coarse tier").

use crate::cache::{refresh, RECENT_NANOS, RECENT_UNIX};
use crate::precise::Instant;
use crate::timekeeper::{self, Clock};
use crate::wall::{self, UnixTime};
use core::sync::atomic::Ordering;

/// The `Instant` of the last refresh: one atomic load (about what an
/// `AtomicU64` load costs; see `BENCHMARKS.md`).
///
/// The cache is kept fresh in one of two ways:
///
/// - **Upkeep** (with `std`): a background thread that refreshes every
///   *resolution* (default 1 ms). It starts on the first call to `recent()` or
///   `recent_unix_nanos()` — never at load time — unless
///   [`set_auto_upkeep(false)`](crate::set_auto_upkeep) was called first, or
///   explicitly with [`start_upkeep`](crate::start_upkeep);
///   [`stop_upkeep`](crate::stop_upkeep) stops and joins it. While it runs it
///   also does the precise and wall tiers' state updates (rate measurements,
///   wall re-anchoring, the kernel clocksource check), so no reader ever pays
///   for them, and on Linux the kernel wakes it when the system clock is set,
///   so the wall tier follows a step within milliseconds.
/// - **[`refresh`]**: for event loops, the nginx pattern — refresh once per
///   loop iteration (after `epoll_wait` returns), and every `recent()` in
///   that iteration sees the same, cheap time.
///
/// **Guarantees.** A cached value is a reading taken at a refresh, so it is
/// never ahead of the clock it caches: a [`MonotonicInstant`](crate::MonotonicInstant) or
/// [`OrderedInstant`](crate::OrderedInstant) read after `recent()` returned
/// (on any thread that observed it) is at least `recent()`. (A plain
/// [`Instant`] read is not ordered after the load, so it can come out
/// earlier by the CPU's speculation window.) While upkeep runs, a value is
/// at most one resolution plus the upkeep thread's scheduling delay old
/// (measured: see `BENCHMARKS.md`). The cached `Instant` never goes
/// backwards (refreshes from several threads keep the largest). The cached
/// Unix time ([`recent_unix_nanos`]) follows the wall tier, so it moves
/// back when the system clock is stepped back.
///
/// **Without upkeep** (auto-start disabled, upkeep stopped, or `no_std`), the
/// values are those of the last `refresh()` — the first call in the process
/// refreshes, so they are never zero or uninitialised — and they do not
/// advance by themselves.
///
/// **fork.** A child forked while upkeep runs in the parent has no upkeep
/// thread (fork copies only the calling thread). Its first `recent()` or
/// `recent_unix_nanos()` refreshes and starts a new one at the parent's
/// resolution; until then [`upkeep_resolution`](crate::upkeep_resolution)
/// says `None`.
///
/// **Async-signal safety.** [`refresh`] may be called from a signal
/// handler; so may `recent` and [`recent_unix_nanos`], except for their
/// very first call in a process (or in a forked child whose parent ran
/// upkeep), which may start the upkeep thread.
///
/// ```
/// use fastnow::{recent, MonotonicInstant, OrderedInstant};
/// let cached = recent();
/// // Never ahead of the ordered clocks read after it.
/// assert!(cached <= OrderedInstant::now().as_unordered());
/// assert!(cached <= MonotonicInstant::now().as_instant());
/// ```
#[inline]
pub fn recent() -> Instant {
    // Acquire: pairs with the refresh's Release, so readings taken after
    // this load are ordered after the cached reading (see the docs above).
    Instant::from_nanos(timekeeper::or_mock(Clock::Precise, || {
        match RECENT_NANOS.0.load(Ordering::Acquire) {
            0 => first_use().as_nanos(),
            nanos => nanos,
        }
    }))
}

/// Unix nanoseconds of the last refresh: one atomic load, kept fresh as
/// [`recent`] is (see there).
///
/// ```
/// let ns = fastnow::recent_unix_nanos();
/// assert!(ns <= fastnow::unix_nanos());
/// ```
#[inline]
pub fn recent_unix_nanos() -> u64 {
    timekeeper::or_mock(Clock::Wall, || {
        match RECENT_UNIX.0.load(Ordering::Acquire) {
            0 => first_use_unix(),
            ns => ns,
        }
    })
}

/// A test hook run at the start of `first_use` (the `mock` and
/// `__test-hooks` features only; set by `__test::before_first_refresh`): it
/// lets a test install a global mock between a reader's mock check and its
/// first refresh.
#[cfg(all(feature = "mock", feature = "__test-hooks"))]
pub(crate) static BEFORE_FIRST_REFRESH: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

#[cold]
#[inline(never)]
fn first_use() -> Instant {
    #[cfg(all(feature = "mock", feature = "__test-hooks"))]
    if let Some(hook) = BEFORE_FIRST_REFRESH.get() {
        hook();
    }
    let now = refresh();
    // The first use starts the upkeep thread (the coarse tier sits above
    // it); the thread refreshes the cache below both (cache.rs).
    #[cfg(feature = "std")]
    crate::upkeep::auto_start();
    now
}

/// `recent_unix_nanos` when the cache is still unset: refreshes it (and
/// starts upkeep), then returns it. The refresh leaves the cache alone when
/// a global mock was installed after `recent_unix_nanos` checked for one;
/// the mock's time is then the answer, as for any later call — so no path
/// returns the cache's "unset" 0.
#[cold]
#[inline(never)]
fn first_use_unix() -> u64 {
    first_use();
    match RECENT_UNIX.0.load(Ordering::Acquire) {
        // Only a mock leaves the cache unset (refresh stores at least 1):
        // its time is the answer; gone again already, the current time
        // stands in for it.
        0 => timekeeper::or_mock(Clock::Wall, || wall::unix_nanos().max(1)),
        ns => ns,
    }
}

// The coarse tier's two clocks as associated functions too, as quanta and
// coarsetime spell them.

impl Instant {
    /// The time of the coarse tier's last refresh: the same as
    /// [`fastnow::recent()`](recent), which says what it guarantees (one
    /// atomic load, at most about one upkeep resolution old, never ahead of
    /// the ordered clocks read after it; the first call starts the upkeep
    /// thread).
    ///
    /// ```
    /// use fastnow::{Instant, OrderedInstant};
    ///
    /// let cached = Instant::recent();
    /// assert!(cached <= OrderedInstant::now().as_unordered());
    /// assert!(cached <= fastnow::recent());
    /// ```
    #[inline]
    #[must_use]
    pub fn recent() -> Instant {
        recent()
    }
}

impl UnixTime {
    /// The Unix time of the coarse tier's last refresh: the same as
    /// [`recent_unix_nanos`], as a `UnixTime` (see [`recent`] for what it
    /// guarantees; like the wall tier, it moves back when the system clock
    /// is stepped back).
    ///
    /// ```
    /// use fastnow::UnixTime;
    ///
    /// let cached = UnixTime::recent();
    /// assert!(cached <= UnixTime::now());
    /// assert!(cached.as_nanos() <= fastnow::recent_unix_nanos());
    /// ```
    #[inline]
    #[must_use]
    pub fn recent() -> UnixTime {
        UnixTime::from_nanos(recent_unix_nanos())
    }
}
