//! The coarse tier: the time as of the last refresh, for one atomic load.
//!
//! [`recent`] and [`recent_unix_nanos`] return cached readings, each in an
//! atomic on a cache line of its own (so refreshing one never evicts the
//! other, nor anything of the caller's). Reading costs a plain load: about
//! what an `AtomicU64` load costs (see `BENCHMARKS.md`).
//!
//! The cache is kept fresh in one of two ways:
//!
//! - **Upkeep** (with `std`): a background thread that refreshes every
//!   *resolution* (default 1 ms). It starts on the first call to `recent()` or
//!   `recent_unix_nanos()` — never at load time — unless
//!   [`set_auto_upkeep(false)`](set_auto_upkeep) was called first, or
//!   explicitly with [`start_upkeep`]; [`stop_upkeep`] stops and joins it.
//! - **[`refresh`]**: for event loops, the nginx pattern — refresh once per
//!   loop iteration (after `epoll_wait` returns), and every `recent()` in
//!   that iteration sees the same, cheap time.
//!
//! **Guarantees.** A cached value is a reading taken at the last refresh, so
//! it is never ahead of the clock it caches. While upkeep runs, it is at most
//! one resolution plus the upkeep thread's scheduling delay old (measured:
//! see `BENCHMARKS.md`). The cached `Instant` never goes backwards (refreshes
//! from several threads keep the largest). The cached Unix time follows the
//! wall tier, so it moves back when the system clock is stepped back.
//!
//! **Without upkeep** (auto-start disabled, upkeep stopped, or `no_std`), the
//! values are those of the last `refresh()` — the first call in the process
//! refreshes, so they are never zero or uninitialised — and they do not
//! advance by themselves.

use crate::precise::Instant;
use crate::wall;
use core::sync::atomic::{AtomicU64, Ordering};

#[repr(align(128))]
struct Cached(AtomicU64);

static RECENT_TICKS: Cached = Cached(AtomicU64::new(0));
static RECENT_UNIX: Cached = Cached(AtomicU64::new(0));

/// The `Instant` of the last refresh: one atomic load.
///
/// ```
/// let t = fastnow::recent();
/// assert!(t <= fastnow::Instant::now());
/// ```
#[inline]
pub fn recent() -> Instant {
    #[cfg(feature = "mock")]
    if let Some(t) = crate::mock::ticks() {
        return Instant::from_ticks(t);
    }
    let ticks = RECENT_TICKS.0.load(Ordering::Relaxed);
    if ticks == 0 {
        return first_use();
    }
    Instant::from_ticks(ticks)
}

/// Unix nanoseconds of the last refresh: one atomic load.
///
/// ```
/// let ns = fastnow::recent_unix_nanos();
/// assert!(ns <= fastnow::unix_nanos());
/// ```
#[inline]
pub fn recent_unix_nanos() -> u64 {
    #[cfg(feature = "mock")]
    if let Some(ns) = crate::mock::unix_nanos() {
        return ns;
    }
    let ns = RECENT_UNIX.0.load(Ordering::Relaxed);
    if ns == 0 {
        first_use();
        return RECENT_UNIX.0.load(Ordering::Relaxed);
    }
    ns
}

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
    let now = Instant::now();
    // Keep the largest: refreshes from several threads may carry counter
    // readings taken in a slightly different order than they store them.
    let prev = RECENT_TICKS.0.fetch_max(now.ticks(), Ordering::Relaxed);
    RECENT_UNIX.0.store(wall::unix_nanos(), Ordering::Relaxed);
    Instant::from_ticks(prev.max(now.ticks()))
}

#[cold]
#[inline(never)]
fn first_use() -> Instant {
    let now = refresh();
    #[cfg(feature = "std")]
    upkeep::auto_start();
    now
}

#[cfg(feature = "std")]
pub use upkeep::{set_auto_upkeep, start_upkeep, stop_upkeep, upkeep_resolution, UpkeepError};

/// Default upkeep resolution.
pub const DEFAULT_RESOLUTION: core::time::Duration = core::time::Duration::from_millis(1);

#[cfg(feature = "std")]
mod upkeep {
    use super::{refresh, DEFAULT_RESOLUTION};
    use core::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use std::thread::JoinHandle;
    use std::time::Duration;

    struct Running {
        thread: JoinHandle<()>,
        stop: Arc<AtomicBool>,
        resolution: Duration,
    }

    static UPKEEP: Mutex<Option<Running>> = Mutex::new(None);
    static AUTO: AtomicBool = AtomicBool::new(true);

    /// Why [`start_upkeep`] did not start a thread.
    #[derive(Debug)]
    pub enum UpkeepError {
        /// An upkeep thread is already running, at this resolution; stop it first.
        AlreadyRunning {
            /// Its resolution.
            resolution: Duration,
        },
        /// A zero resolution would spin a core; use at least a microsecond.
        ZeroResolution,
        /// The operating system refused to create the thread.
        Spawn(std::io::Error),
    }

    impl core::fmt::Display for UpkeepError {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            match self {
                UpkeepError::AlreadyRunning { resolution } => write!(
                    f,
                    "fastnow upkeep already runs at {resolution:?}; call stop_upkeep() first"
                ),
                UpkeepError::ZeroResolution => {
                    f.write_str("fastnow upkeep resolution must be non-zero")
                }
                UpkeepError::Spawn(e) => write!(f, "cannot start the fastnow upkeep thread: {e}"),
            }
        }
    }

    impl std::error::Error for UpkeepError {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            match self {
                UpkeepError::Spawn(e) => Some(e),
                _ => None,
            }
        }
    }

    fn slot() -> std::sync::MutexGuard<'static, Option<Running>> {
        // A panic while holding the lock cannot leave the Option inconsistent.
        UPKEEP
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Starts the thread that refreshes the coarse tier every `resolution`.
    ///
    /// ```
    /// use std::time::Duration;
    /// fastnow::stop_upkeep(); // in case the first recent() auto-started one
    /// fastnow::start_upkeep(Duration::from_millis(5)).unwrap();
    /// assert!(fastnow::start_upkeep(Duration::from_millis(1)).is_err()); // one at a time
    /// assert_eq!(fastnow::upkeep_resolution(), Some(Duration::from_millis(5)));
    /// assert!(fastnow::stop_upkeep());
    /// ```
    pub fn start_upkeep(resolution: Duration) -> Result<(), UpkeepError> {
        if resolution.is_zero() {
            return Err(UpkeepError::ZeroResolution);
        }
        let mut slot = slot();
        if let Some(running) = slot.as_ref() {
            return Err(UpkeepError::AlreadyRunning {
                resolution: running.resolution,
            });
        }
        refresh();
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = stop.clone();
        let thread = std::thread::Builder::new()
            .name("fastnow-upkeep".into())
            .spawn(move || {
                while !thread_stop.load(Ordering::Acquire) {
                    refresh();
                    std::thread::park_timeout(resolution);
                }
            })
            .map_err(UpkeepError::Spawn)?;
        *slot = Some(Running {
            thread,
            stop,
            resolution,
        });
        Ok(())
    }

    /// Stops the upkeep thread and waits for it to exit; `false` if none ran.
    /// The cached values then stay as last refreshed.
    pub fn stop_upkeep() -> bool {
        let running = slot().take();
        match running {
            Some(r) => {
                r.stop.store(true, Ordering::Release);
                r.thread.thread().unpark();
                // The thread only refreshes and sleeps; it cannot panic short
                // of an abort, so a join error is not expected.
                let _ = r.thread.join();
                true
            }
            None => false,
        }
    }

    /// The running upkeep's resolution, if one runs.
    pub fn upkeep_resolution() -> Option<Duration> {
        slot().as_ref().map(|r| r.resolution)
    }

    /// Whether the first `recent()` starts upkeep at the default 1 ms
    /// resolution (default `true`). Event loops that call [`refresh`]
    /// themselves turn it off before their first `recent()`.
    pub fn set_auto_upkeep(enabled: bool) {
        AUTO.store(enabled, Ordering::Relaxed);
    }

    pub(super) fn auto_start() {
        if AUTO.swap(false, Ordering::Relaxed) {
            // Already running (started explicitly) is fine; a spawn failure
            // leaves the documented no-upkeep behaviour.
            let _ = start_upkeep(DEFAULT_RESOLUTION);
        }
    }
}
