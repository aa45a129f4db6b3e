//! Clocks for tests: time that moves only when the test says so.
//!
//! With the `mock` feature, every fastnow clock — the three precise types
//! and [`BootInstant`], [`unix_nanos`] and [`UnixTime`], the coarse tier ([`recent`],
//! [`recent_unix_nanos`], [`refresh`]), the tracing timers — reads a manual
//! clock while one is installed, so timeouts and expiry can be tested
//! without sleeping and without flakiness. Two scopes:
//!
//! - [`MockClock::install`]: **this thread only**. Other threads, including
//!   other tests running in parallel, keep real time. Right for code that
//!   runs on the test's thread.
//! - [`GlobalMockClock::install`]: **every thread of the process** — threads
//!   the code under test spawns, thread pools, async runtimes' workers. Tests
//!   that install one are serialised: a second `install` waits until the
//!   first handle is dropped, so two such tests never see each other's time
//!   (and a test that panics releases it while unwinding). The catch is the
//!   point of it: while one is installed, a test on another thread that
//!   installed no mock sees the mock's time too. Keep tests that need real
//!   time in another test binary (each `tests/*.rs` file is a process), or
//!   have them install a mock of their own. A thread-local mock takes
//!   precedence over the global one on its thread.
//!
//! [`ThreadCpuInstant`](crate::ThreadCpuInstant) is not mocked: it reads
//! the thread's CPU time, which a mock cannot set; a test that needs fixed
//! CPU times builds them with `ThreadCpuInstant::from_nanos`.
//!
//! A mock never touches the real clocks' state: `refresh()` under a mock
//! returns the mock's time and leaves the shared cache alone. Instants taken
//! with and without a mock are on different timelines; do not compare them.
//!
//! A mock also simulates suspending the machine: `suspend(d)` moves the
//! Unix time and [`BootInstant`] forward by `d` and leaves the precise
//! clocks where they are, as a real suspend does to `CLOCK_REALTIME`,
//! `CLOCK_BOOTTIME` and `CLOCK_MONOTONIC`. A [`BootInstant`] reading is the
//! mock's monotonic time plus the time suspended so far; `advance` moves
//! both.
//!
//! `advance` only ever moves a mock's time forward: it saturates at the
//! largest reading (`u64::MAX` nanoseconds) instead of panicking or
//! wrapping, and a global mock may be advanced from several threads at once
//! — every advance counts, and no thread sees its readings go back (only
//! `set_unix_nanos` steps the Unix time, as a system clock can be stepped).
//!
//! The feature adds one check to every read — a load of a process-wide
//! count of installed mocks, and, only while one is installed somewhere,
//! a look at this thread's — which is why it is off by default: enable it
//! for tests only (`[dev-dependencies] fastnow = { version = "…", features
//! = ["mock"] }`). Every clock takes the mock's reading at that one place,
//! the timekeeper's read, so none has a path of its own for mocks.
//!
//! ```
//! use fastnow::{mock::MockClock, Instant};
//! use std::time::Duration;
//!
//! let clock = MockClock::install();
//! let start = Instant::now();
//! let deadline = start + Duration::from_secs(30);
//! clock.advance(Duration::from_secs(29));
//! assert!(Instant::now() < deadline);
//! clock.advance(Duration::from_secs(1));
//! assert_eq!(start.elapsed(), Duration::from_secs(30));
//! assert!(Instant::now() >= deadline);
//! ```
//!
//! [`unix_nanos`]: crate::unix_nanos
//! [`UnixTime`]: crate::UnixTime
//! [`recent`]: crate::recent
//! [`recent_unix_nanos`]: crate::recent_unix_nanos
//! [`refresh`]: crate::refresh
//! [`BootInstant`]: crate::BootInstant

use crate::source::os::TIMELINE_OFFSET_NS;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// A mock's two clocks. Atomics, so a global mock can be read from any
/// thread while the test advances it.
struct State {
    mono_ns: AtomicU64,
    unix_ns: AtomicU64,
    /// The time suspended so far: what `BootInstant` adds to `mono_ns`.
    suspended_ns: AtomicU64,
}

/// Where a new mock starts: one second of monotonic time, on the timeline
/// real instants use (2^62 ns ahead of the monotonic clock, so that a
/// mocked instant reaches back as far as a real one; see
/// `Instant::as_nanos`), and 2001-09-09T01:46:40Z (10^9 s) of Unix time.
const START_MONO_NS: u64 = TIMELINE_OFFSET_NS + 1_000_000_000;
const START_UNIX_NS: u64 = 1_000_000_000_000_000_000;

impl State {
    const fn new() -> State {
        State {
            mono_ns: AtomicU64::new(START_MONO_NS),
            unix_ns: AtomicU64::new(START_UNIX_NS),
            suspended_ns: AtomicU64::new(0),
        }
    }

    fn reset(&self) {
        self.mono_ns.store(START_MONO_NS, Ordering::Relaxed);
        self.unix_ns.store(START_UNIX_NS, Ordering::Relaxed);
        self.suspended_ns.store(0, Ordering::Relaxed);
    }

    /// Moves both clocks forward by `by`, saturating at `u64::MAX`
    /// nanoseconds. Each clock moves in one atomic read-modify-write, so
    /// advances from several threads all count (none is lost to another's
    /// store) and no thread ever sees a clock go back.
    fn advance(&self, by: Duration) {
        self.forward(by, [&self.mono_ns, &self.unix_ns]);
    }

    /// A simulated suspend of `by`: the Unix time and the time suspended
    /// move forward (saturating, as `advance`), the monotonic time does not.
    fn suspend(&self, by: Duration) {
        self.forward(by, [&self.suspended_ns, &self.unix_ns]);
    }

    /// The boot timeline: the monotonic time plus the time suspended,
    /// saturating (both only grow, so this never goes back either).
    fn boot_ns(&self) -> u64 {
        let suspended = self.suspended_ns.load(Ordering::Relaxed);
        self.mono_ns
            .load(Ordering::Relaxed)
            .saturating_add(suspended)
    }

    fn forward(&self, by: Duration, clocks: [&AtomicU64; 2]) {
        let ns = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        for clock in clocks {
            // A compare-and-exchange loop rather than `fetch_add`, which
            // would wrap; the closure always returns `Some`, so this cannot
            // fail.
            let _ = clock.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |t| {
                Some(t.saturating_add(ns))
            });
        }
    }
}

std::thread_local! {
    static CURRENT: RefCell<Option<Arc<State>>> = const { RefCell::new(None) };
}

/// How many mocks are installed, on any thread or process-wide: while none
/// is, a read looks no further.
static INSTALLED: AtomicUsize = AtomicUsize::new(0);
/// Whether a global mock is installed; its clocks.
static GLOBAL_ACTIVE: AtomicBool = AtomicBool::new(false);
static GLOBAL: State = State::new();
/// Serialises global mocks: `true` while one is installed.
static GLOBAL_TAKEN: Mutex<bool> = Mutex::new(false);
static GLOBAL_FREED: Condvar = Condvar::new();

/// A manual clock installed on the current thread; see the [module docs](self).
pub struct MockClock {
    state: Arc<State>,
    // Installed on one thread: must be dropped (uninstalled) there.
    _not_send: PhantomData<*const ()>,
}

impl MockClock {
    /// Installs a mock clock on this thread, starting at one second of
    /// monotonic time (its instants hold 2^62 ns more, as real ones do: see
    /// [`Instant::as_nanos`](crate::Instant::as_nanos)) and at
    /// 2001-09-09T01:46:40Z (10^9 s) of Unix time.
    ///
    /// # Panics
    /// If a mock clock is already installed on this thread.
    pub fn install() -> MockClock {
        let state = Arc::new(State::new());
        CURRENT.with(|c| {
            let mut c = c.borrow_mut();
            assert!(
                c.is_none(),
                "a fastnow MockClock is already installed on this thread"
            );
            *c = Some(state.clone());
        });
        INSTALLED.fetch_add(1, Ordering::SeqCst);
        MockClock {
            state,
            _not_send: PhantomData,
        }
    }

    /// Moves both the monotonic and the Unix time forward.
    ///
    /// Saturates: an advance past the largest reading (`u64::MAX`
    /// nanoseconds, on either clock; e.g. by [`Duration::MAX`]) stops that
    /// clock there. It never panics, wraps, or steps back.
    pub fn advance(&self, by: Duration) {
        self.state.advance(by);
    }

    /// Sets the Unix time (as if the system clock were stepped); the
    /// monotonic time is not affected.
    pub fn set_unix_nanos(&self, nanos: u64) {
        self.state.unix_ns.store(nanos, Ordering::Relaxed);
    }

    /// The mock's monotonic time, in nanoseconds (what its instants hold).
    pub fn nanos(&self) -> u64 {
        self.state.mono_ns.load(Ordering::Relaxed)
    }

    /// Simulates suspending the machine for `by`: [`BootInstant`] and the
    /// Unix time move forward by `by`, the precise clocks ([`Instant`] and
    /// the others) and the coarse tier's instants do not, as across a real
    /// suspend. Saturates as [`advance`](Self::advance) does.
    ///
    /// ```
    /// use fastnow::{mock::MockClock, BootInstant, Instant};
    /// use std::time::Duration;
    ///
    /// let clock = MockClock::install();
    /// let (start, boot_start) = (Instant::now(), BootInstant::now());
    /// clock.advance(Duration::from_secs(1));
    /// clock.suspend(Duration::from_secs(60));
    /// assert_eq!(start.elapsed(), Duration::from_secs(1));
    /// assert_eq!(boot_start.elapsed(), Duration::from_secs(61));
    /// ```
    ///
    /// [`BootInstant`]: crate::BootInstant
    /// [`Instant`]: crate::Instant
    pub fn suspend(&self, by: Duration) {
        self.state.suspend(by);
    }

    /// The mock's boot time, in nanoseconds (what its
    /// [`BootInstant`](crate::BootInstant)s hold): its monotonic time plus
    /// the time suspended.
    pub fn boot_nanos(&self) -> u64 {
        self.state.boot_ns()
    }
}

impl Drop for MockClock {
    fn drop(&mut self) {
        // `try_with`: a handle dropped during thread-local destruction.
        let _ = CURRENT.try_with(|c| *c.borrow_mut() = None);
        INSTALLED.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A manual clock for every thread of the process; see the
/// [module docs](self). `Send` and `Sync`: advance it from any thread.
///
/// ```
/// # #[cfg(not(target_os = "wasi"))] { // (no threads there)
/// use fastnow::{mock::GlobalMockClock, Instant};
/// use std::time::Duration;
///
/// let clock = GlobalMockClock::install();
/// let start = Instant::now();
/// // Code under test on another thread sees the same clock.
/// let deadline = std::thread::spawn(move || start + Duration::from_secs(5)).join().unwrap();
/// clock.advance(Duration::from_secs(5));
/// assert!(std::thread::spawn(move || Instant::now() >= deadline).join().unwrap());
/// # }
/// ```
pub struct GlobalMockClock {
    _private: (),
}

impl GlobalMockClock {
    /// Installs the process-wide mock (starting where [`MockClock`]s do),
    /// waiting while another one is installed.
    pub fn install() -> GlobalMockClock {
        // A test that panicked while holding the lock still unlocked it;
        // the flag it guards is always consistent.
        let mut taken = GLOBAL_TAKEN.lock().unwrap_or_else(|p| p.into_inner());
        while *taken {
            taken = GLOBAL_FREED.wait(taken).unwrap_or_else(|p| p.into_inner());
        }
        *taken = true;
        GLOBAL.reset();
        INSTALLED.fetch_add(1, Ordering::SeqCst);
        GLOBAL_ACTIVE.store(true, Ordering::SeqCst);
        GlobalMockClock { _private: () }
    }

    /// Moves both the monotonic and the Unix time forward; callable from
    /// any number of threads at once: every advance counts, and no thread
    /// sees either clock go back (each moves in one atomic step).
    ///
    /// Saturates as [`MockClock::advance`] does: it never panics, wraps, or
    /// steps back.
    pub fn advance(&self, by: Duration) {
        GLOBAL.advance(by);
    }

    /// Sets the Unix time (as if the system clock were stepped).
    pub fn set_unix_nanos(&self, nanos: u64) {
        GLOBAL.unix_ns.store(nanos, Ordering::Relaxed);
    }

    /// The mock's monotonic time, in nanoseconds.
    pub fn nanos(&self) -> u64 {
        GLOBAL.mono_ns.load(Ordering::Relaxed)
    }

    /// Simulates suspending the machine, as [`MockClock::suspend`] does;
    /// callable from any thread.
    pub fn suspend(&self, by: Duration) {
        GLOBAL.suspend(by);
    }

    /// The mock's boot time, in nanoseconds (see [`MockClock::boot_nanos`]).
    pub fn boot_nanos(&self) -> u64 {
        GLOBAL.boot_ns()
    }
}

impl Drop for GlobalMockClock {
    fn drop(&mut self) {
        GLOBAL_ACTIVE.store(false, Ordering::SeqCst);
        INSTALLED.fetch_sub(1, Ordering::SeqCst);
        let mut taken = GLOBAL_TAKEN.lock().unwrap_or_else(|p| p.into_inner());
        *taken = false;
        GLOBAL_FREED.notify_one();
    }
}

/// A mock's readings of the three kinds of clock.
pub(crate) struct Readings {
    /// Monotonic: what the precise clocks and the coarse tier's instants read.
    pub(crate) mono: u64,
    /// The boot timeline: the monotonic time plus the time suspended.
    pub(crate) boot: u64,
    /// Unix time: what the wall tier and its cached value read.
    pub(crate) unix: u64,
}

/// The readings of the mock that applies to this thread, if one does: its
/// own mock, else the global one. One load while no mock is installed.
#[inline(always)]
pub(crate) fn readings() -> Option<Readings> {
    if INSTALLED.load(Ordering::Relaxed) == 0 {
        return None;
    }
    installed_readings()
}

#[inline(never)]
fn installed_readings() -> Option<Readings> {
    let of = |s: &State| Readings {
        mono: s.mono_ns.load(Ordering::Relaxed),
        boot: s.boot_ns(),
        unix: s.unix_ns.load(Ordering::Relaxed),
    };
    let local = CURRENT
        .try_with(|c| c.borrow().as_deref().map(of))
        .ok()
        .flatten();
    if local.is_some() {
        return local;
    }
    GLOBAL_ACTIVE.load(Ordering::Relaxed).then(|| of(&GLOBAL))
}
