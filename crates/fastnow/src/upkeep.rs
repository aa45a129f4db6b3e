//! The upkeep thread: it refreshes the coarse tier every resolution and
//! does the precise and wall tiers' state updates, so that readers only
//! load. Here are its controls, the fork hook that lets a child start a new
//! one, and the watch that wakes it when the system clock is set (Linux).
//! What callers can rely on is on [`start_upkeep`] and in spec/SEMANTICS.md
//! ("Coarse tier", "Processes, signals, threads").

use crate::cache::{refresh, refresh_as, Refresher, DEFAULT_RESOLUTION};
use crate::source::os::{self, ProcessLock, Taken};
use crate::timekeeper;
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

struct Running {
    thread: JoinHandle<()>,
    stop: Arc<Stop>,
    resolution: Duration,
}

/// How [`stop_upkeep`] stops the thread: a flag, and a way to wake the
/// thread from its sleep at once rather than when the sleep ends (on
/// Linux an eventfd that the thread's `ppoll` also waits on; elsewhere
/// the thread parks, and `unpark` wakes it).
struct Stop {
    flag: AtomicBool,
    #[cfg(any(target_os = "linux", target_os = "android"))]
    wake: Option<i32>,
}

impl Stop {
    fn new() -> Stop {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        // SAFETY: eventfd has no memory arguments.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        Stop {
            flag: AtomicBool::new(false),
            // Without one (out of descriptors), the thread sleeps in
            // short spells instead (see `ClockWatch::sleep`).
            #[cfg(any(target_os = "linux", target_os = "android"))]
            wake: (fd >= 0).then_some(fd),
        }
    }

    fn requested(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }

    /// Sets the flag, then wakes the thread: it sees the flag as soon
    /// as it wakes, and a wake that comes before it sleeps is not lost
    /// (the eventfd stays readable; an early `unpark` makes the next
    /// `park` return at once).
    fn request(&self, thread: &std::thread::Thread) {
        self.flag.store(true, Ordering::Release);
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if let Some(fd) = self.wake {
            let one = 1u64;
            // SAFETY: writes 8 bytes from a live u64, as eventfd
            // requires. It cannot block (the counter is far from full).
            unsafe { libc::write(fd, (&one as *const u64).cast(), 8) };
        }
        thread.unpark();
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
impl Drop for Stop {
    fn drop(&mut self) {
        if let Some(fd) = self.wake.take() {
            os::file::close(fd);
        }
    }
}

/// The running upkeep, behind a lock that a forked child can take over
/// (a `Mutex` held by a parent's thread at the fork would stay locked in
/// the child for ever).
struct Slot {
    lock: ProcessLock,
    running: UnsafeCell<Option<Running>>,
}
// SAFETY: `running` is only touched while `lock` is held (see `with`),
// or in the fork child handler, when the child has a single thread.
unsafe impl Sync for Slot {}

static SLOT: Slot = Slot {
    lock: ProcessLock::new(),
    running: UnsafeCell::new(None),
};
static AUTO: AtomicBool = AtomicBool::new(true);
/// The resolution a forked child restarts upkeep at (0: none).
static RESTART_NS: AtomicU64 = AtomicU64::new(0);

/// Runs `f` on the slot, holding its lock: `start_upkeep` and
/// `stop_upkeep` hold it across their whole change (thread started or
/// joined, and the timekeeper told), so each takes effect at once as a
/// whole for every other caller.
fn with<T>(f: impl FnOnce(&mut Option<Running>) -> T) -> T {
    let taken = SLOT.lock.lock();
    if taken == Taken::FromParent {
        // A child forked while a parent's thread changed the slot: what
        // it holds is half written, or the handle of a thread that this
        // process does not have. Forget it (leaked, as the fork handler
        // does); no upkeep runs here.
        // SAFETY: the lock is held, so nothing else touches the slot.
        unsafe { core::ptr::write(SLOT.running.get(), None) };
        timekeeper::set_upkeep(false);
    }
    // SAFETY: the lock is held, so this is the only reference.
    let r = f(unsafe { &mut *SLOT.running.get() });
    SLOT.lock.unlock();
    r
}

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

/// Starts the thread that refreshes the coarse tier every `resolution`
/// and does the precise and wall tiers' state updates (see
/// [`recent`](crate::recent)). Not async-signal-safe.
///
/// ```
/// # #[cfg(not(target_os = "wasi"))] { // (no threads there: `Spawn` error)
/// use std::time::Duration;
/// fastnow::stop_upkeep(); // in case the first recent() auto-started one
/// fastnow::start_upkeep(Duration::from_millis(5)).unwrap();
/// assert!(fastnow::start_upkeep(Duration::from_millis(1)).is_err()); // one at a time
/// assert_eq!(fastnow::upkeep_resolution(), Some(Duration::from_millis(5)));
/// assert!(fastnow::stop_upkeep());
/// # }
/// ```
pub fn start_upkeep(resolution: Duration) -> Result<(), UpkeepError> {
    if resolution.is_zero() {
        return Err(UpkeepError::ZeroResolution);
    }
    #[cfg(unix)]
    fork::register();
    with(|slot| {
        if let Some(running) = slot.as_ref() {
            return Err(UpkeepError::AlreadyRunning {
                resolution: running.resolution,
            });
        }
        refresh();
        let stop = Arc::new(Stop::new());
        let thread_stop = stop.clone();
        // The timekeeper learns of the thread before it runs, so that
        // the thread never runs with readers still doing its updates
        // (nor with the schedule it keeps unset).
        timekeeper::set_upkeep(true);
        RUNNING_NS.store(
            u64::try_from(resolution.as_nanos()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
        let spawned = std::thread::Builder::new()
            .name("fastnow-upkeep".into())
            .spawn(move || run(resolution, &thread_stop));
        let thread = match spawned {
            Ok(thread) => thread,
            Err(e) => {
                RUNNING_NS.store(0, Ordering::Relaxed);
                timekeeper::set_upkeep(false);
                return Err(UpkeepError::Spawn(e));
            }
        };
        *slot = Some(Running {
            thread,
            stop,
            resolution,
        });
        Ok(())
    })
}

fn run(resolution: Duration, stop: &Stop) {
    let resolution_ns = u64::try_from(resolution.as_nanos()).unwrap_or(u64::MAX);
    let mut wake = ClockWatch::new(stop);
    let mut clock_was_set = false;
    while !stop.requested() {
        refresh_as(Refresher::Upkeep);
        let next_turn = timekeeper::upkeep_turn(clock_was_set);
        if clock_was_set {
            // The cached Unix time follows the step at once.
            refresh_as(Refresher::Upkeep);
        }
        let now = os::monotonic_nanos();
        let sleep = resolution_ns.min(next_turn.saturating_sub(now));
        clock_was_set = wake.sleep(Duration::from_nanos(sleep));
    }
}

/// Stops the upkeep thread and waits for it to exit; `false` if none ran.
/// The thread is woken from its sleep, so this returns as soon as the
/// thread finishes the refresh or update it may be in, whatever the
/// resolution. The cached values then stay as last refreshed, and
/// readers do the state updates again. Not async-signal-safe.
///
/// `start_upkeep` and `stop_upkeep` may be called from any threads at
/// once: each takes effect as a whole, one after the other (a start
/// racing a stop either finds the thread running, or starts a new one
/// after the old one exited), and [`upkeep_resolution`] and
/// `clock_info().upkeep` always agree once they return.
pub fn stop_upkeep() -> bool {
    with(|slot| {
        let Some(r) = slot.take() else {
            return false;
        };
        r.stop.request(r.thread.thread());
        // The thread only refreshes and sleeps; it cannot panic short
        // of an abort, so a join error is not expected. It never takes
        // the slot's lock, so joining while holding it cannot deadlock.
        let _ = r.thread.join();
        timekeeper::set_upkeep(false);
        RUNNING_NS.store(0, Ordering::Relaxed);
        true
    })
}

/// The running upkeep's resolution, if one runs.
pub fn upkeep_resolution() -> Option<Duration> {
    with(|slot| slot.as_ref().map(|r| r.resolution))
}

/// Whether the first `recent()` starts upkeep at the default 1 ms
/// resolution (default `true`). Event loops that call [`refresh`]
/// themselves turn it off before their first `recent()`.
///
/// [`refresh`]: crate::refresh
pub fn set_auto_upkeep(enabled: bool) {
    AUTO.store(enabled, Ordering::Relaxed);
}

pub(crate) fn auto_start() {
    let restart = RESTART_NS.swap(0, Ordering::Relaxed);
    if restart != 0 {
        let _ = start_upkeep(Duration::from_nanos(restart));
    } else if AUTO.swap(false, Ordering::Relaxed) {
        // Already running (started explicitly) is fine; a spawn failure
        // leaves the documented no-upkeep behaviour.
        let _ = start_upkeep(DEFAULT_RESOLUTION);
    }
}

/// The running upkeep's resolution, mirrored where a fork handler can
/// read it without the slot (0: none).
static RUNNING_NS: AtomicU64 = AtomicU64::new(0);

/// After `fork()`, in the child: the upkeep thread was not copied. The
/// slot's handle means nothing here: forget it, zero the cache so the next
/// `recent()` refreshes and restarts upkeep at the same resolution, and
/// let readers do the state updates meanwhile.
#[cfg(unix)]
mod fork {
    use super::{RESTART_NS, RUNNING_NS, SLOT};
    use crate::cache::{RECENT_NANOS, RECENT_UNIX};
    use crate::timekeeper;
    use core::sync::atomic::{AtomicBool, Ordering};

    /// Registers the child handler once, when upkeep first starts: only
    /// a running upkeep needs fixing up in a child.
    pub(super) fn register() {
        static DONE: AtomicBool = AtomicBool::new(false);
        if !DONE.swap(true, Ordering::AcqRel) {
            // SAFETY: `child` is a valid `extern "C" fn()` for the life
            // of the process; no prepare or parent handler is needed.
            unsafe { libc::pthread_atfork(None, None, Some(child)) };
        }
    }

    extern "C" fn child() {
        // No upkeep thread was copied, whatever the parent was doing.
        timekeeper::set_upkeep(false);
        let running = RUNNING_NS.swap(0, Ordering::Relaxed);
        if running == 0 {
            return;
        }
        // SAFETY: the child of a fork has exactly one thread, this one,
        // so nothing else can touch the slot. Its value may be half
        // written (a parent thread held the lock at the fork), so it is
        // overwritten without being read or dropped: the handle and the
        // Arc are leaked, which is all a child can do with them.
        unsafe { core::ptr::write(SLOT.running.get(), None) };
        SLOT.lock.unlock();
        RESTART_NS.store(running, Ordering::Relaxed);
        RECENT_NANOS.0.store(0, Ordering::Release);
        RECENT_UNIX.0.store(0, Ordering::Release);
    }
}

/// Sleeps until a deadline, until the kernel says the system clock was
/// set (Linux: a `timerfd` armed with `TFD_TIMER_CANCEL_ON_SET`, whose
/// read fails with `ECANCELED` when `CLOCK_REALTIME` is set), or until
/// `stop_upkeep` wakes it (see [`Stop`]).
struct ClockWatch {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fd: Option<i32>,
    /// The stop request's eventfd (owned by the `Stop`, which outlives
    /// this: the thread holds it until it returns).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    wake: Option<i32>,
}

/// Seconds as a `time_t`, which is 32 bits on some targets (there
/// clamped to 2038); generic so as not to name the type, whose
/// width musl is changing.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn secs<T: TryFrom<i64> + From<i32>>(s: i64) -> T {
    T::try_from(s).unwrap_or(T::from(i32::MAX))
}

#[cfg(any(target_os = "linux", target_os = "android"))]
impl ClockWatch {
    fn new(stop: &Stop) -> ClockWatch {
        // SAFETY: timerfd_create has no memory arguments.
        let fd = unsafe {
            libc::timerfd_create(libc::CLOCK_REALTIME, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC)
        };
        let mut watch = ClockWatch {
            fd: (fd >= 0).then_some(fd),
            wake: stop.wake,
        };
        watch.arm();
        watch
    }

    /// Arms the timer far in the future: it never expires, it only
    /// reports clock changes.
    fn arm(&mut self) {
        let Some(fd) = self.fd else { return };
        let far = secs(1 << 40);
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            // Beyond the kernel's end of time (2262), which it clamps
            // to; not 2038, after which the timer would fire at once.
            it_value: libc::timespec {
                tv_sec: far,
                tv_nsec: 0,
            },
        };
        // SAFETY: `spec` is a valid itimerspec; the old value is not asked for.
        let rc = unsafe {
            libc::timerfd_settime(
                fd,
                libc::TFD_TIMER_ABSTIME | libc::TFD_TIMER_CANCEL_ON_SET,
                &spec,
                core::ptr::null_mut(),
            )
        };
        if rc != 0 {
            // Without the notification, steps are followed at the next
            // resync, as without upkeep.
            self.close();
        }
    }

    fn close(&mut self) {
        if let Some(fd) = self.fd.take() {
            os::file::close(fd);
        }
    }

    /// Sleeps up to `d`; whether the system clock was set meanwhile.
    fn sleep(&mut self, d: Duration) -> bool {
        let (fd, wake) = match (self.fd, self.wake) {
            (None, _) => {
                // No clock notification: a park, which `unpark` ends.
                std::thread::park_timeout(d);
                return false;
            }
            (Some(fd), Some(wake)) => (fd, wake),
            // No eventfd (the process is out of descriptors): nothing
            // can end the poll early, so sleep in short spells, to
            // keep `stop_upkeep` prompt.
            (Some(fd), None) => (fd, -1),
        };
        let d = if wake < 0 {
            d.min(Duration::from_millis(50))
        } else {
            d
        };
        let mut pfds = [fd, wake].map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        });
        let ts = libc::timespec {
            tv_sec: secs(d.as_secs().min(i32::MAX as u64) as i64),
            tv_nsec: d.subsec_nanos() as libc::c_long,
        };
        // SAFETY: two valid pollfds (poll ignores one whose fd is
        // negative); the timeout is a valid timespec; no signal mask
        // change.
        let n = unsafe { libc::ppoll(pfds.as_mut_ptr(), 2, &ts, core::ptr::null()) };
        // A stop request is seen by the caller's loop; the eventfd is
        // left readable, so a later sleep cannot miss it.
        if n <= 0 || pfds[0].revents & libc::POLLIN == 0 {
            return false;
        }
        let mut expirations = 0u64;
        // SAFETY: reads 8 bytes into a live u64, as timerfd requires.
        unsafe { libc::read(fd, (&mut expirations as *mut u64).cast(), 8) };
        // The read failed with ECANCELED (the clock was set), which also
        // disarmed the timer: arm it again.
        self.arm();
        true
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
impl Drop for ClockWatch {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
impl ClockWatch {
    fn new(_stop: &Stop) -> ClockWatch {
        ClockWatch {}
    }

    fn sleep(&mut self, d: Duration) -> bool {
        std::thread::park_timeout(d);
        false
    }
}
