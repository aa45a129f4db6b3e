//! The thread CPU-time clock: [`ThreadCpuInstant`], and which route it
//! takes on the calling thread.
//!
//! Every target has the OS's clock (`source::thread_cpu::os_nanos`). On
//! Linux x86_64 and aarch64 with `std`, a thread's first reading also tries
//! to open a perf `task-clock` event for the thread and keeps it if its
//! page offers `cap_user_time`; from then on a reading is a counter read
//! and a few loads. What decides the route:
//! - A refusal every thread would meet (the page lacks `cap_user_time`,
//!   `perf_event_open` is denied or absent) is remembered for the process:
//!   later readings on any thread make the OS call straight away, without
//!   touching thread-local storage.
//! - A refusal of this thread only (out of descriptors or memory) is
//!   remembered for the thread: it makes the OS call for the rest of its
//!   life, and pays for the failed open once.
//! - The event is the thread's own (thread-local storage with a
//!   destructor, which unmaps the page at thread exit); a forked child's
//!   thread inherits the parent thread's mapping, which counts the parent
//!   thread, so a reading first checks the process id and reopens.
//!
//! The page route and the OS call count the same CPU time from different
//! bookkeeping (the event from its opening, the OS from the thread's start;
//! where the kernel accounts interrupt time apart, the OS clock leaves it
//! out and the event does not). The page route's readings are put on the
//! OS clock's timeline by the offset between the two at the opening, and a
//! thread that has to leave the page (the kernel withdrew `cap_user_time`)
//! continues from its last reading, so the thread's readings never step
//! back.

use crate::precise::nanos_to_duration;
use crate::source::thread_cpu::{self as src, ThreadCpuFallback, ThreadCpuSource};
use core::fmt;
use core::marker::PhantomData;
use core::ops::{Add, AddAssign, Sub, SubAssign};
use core::time::Duration;

/// Whether [`ThreadCpuInstant`] measures the calling thread's CPU time here.
///
/// True on Linux, Android, the BSDs, Apple platforms and Windows (by the
/// perf page or the OS's thread clock), and on a WASI runtime that answers
/// for the thread clock. False in a browser and on WASI runtimes that offer
/// only the process's CPU time or none: [`ThreadCpuInstant`] then reads the
/// process's CPU time, or stands still (every duration zero) — never the
/// wall clock. [`ClockInfo::thread_cpu`](crate::ClockInfo::thread_cpu)
/// names the route.
///
/// ```
/// if !fastnow::measures_thread_cpu_time() {
///     eprintln!("no thread CPU clock here: {}", fastnow::clock_info().thread_cpu);
/// }
/// ```
pub fn measures_thread_cpu_time() -> bool {
    matches!(
        src::os_source(),
        ThreadCpuSource::Os(_) | ThreadCpuSource::PerfPage
    )
}

/// The route the calling thread's readings take, deciding it (with a first
/// reading) if this thread has not read the clock yet, and why the perf
/// page is not used where the target has that route.
pub(crate) fn route() -> (ThreadCpuSource, Option<ThreadCpuFallback>) {
    let _ = read_nanos();
    #[cfg(all(
        feature = "std",
        any(target_os = "linux", target_os = "android"),
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    if let Some(route) = perf_route::route() {
        return route;
    }
    (src::os_source(), None)
}

/// The calling thread's CPU time now, in nanoseconds.
#[inline]
fn read_nanos() -> u64 {
    #[cfg(all(
        feature = "std",
        any(target_os = "linux", target_os = "android"),
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    return perf_route::read_nanos();
    #[cfg(not(all(
        feature = "std",
        any(target_os = "linux", target_os = "android"),
        any(target_arch = "x86_64", target_arch = "aarch64")
    )))]
    src::os_nanos()
}

#[cfg(all(
    feature = "std",
    any(target_os = "linux", target_os = "android"),
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod perf_route {
    use super::{src, ThreadCpuFallback, ThreadCpuSource};
    use crate::source::thread_cpu::perf::Event;
    use core::cell::Cell;
    use core::sync::atomic::{AtomicU8, Ordering};

    /// The process-wide decision: not yet, the page route (per thread), or
    /// refused for every thread (`REFUSED_WHY` says why).
    const UNDECIDED: u8 = 0;
    const PAGE: u8 = 1;
    const REFUSED: u8 = 2;
    static PROCESS: AtomicU8 = AtomicU8::new(UNDECIDED);
    static REFUSED_WHY: AtomicU8 = AtomicU8::new(0);

    fn encode(why: ThreadCpuFallback) -> u8 {
        match why {
            ThreadCpuFallback::Denied => 1,
            ThreadCpuFallback::Unsupported => 2,
            _ => 0,
        }
    }

    fn decode(code: u8) -> ThreadCpuFallback {
        match code {
            1 => ThreadCpuFallback::Denied,
            2 => ThreadCpuFallback::Unsupported,
            _ => ThreadCpuFallback::NoUserTime,
        }
    }

    /// A thread's state: `UNOPENED` until its first reading; `OPENING`
    /// while that reading opens the event (a signal handler's reading in
    /// between makes the OS call); then `ON_PAGE` or `ON_OS`.
    const UNOPENED: u8 = 0;
    const OPENING: u8 = 1;
    const ON_PAGE: u8 = 2;
    const ON_OS: u8 = 3;

    struct PerThread {
        state: Cell<u8>,
        event: Cell<Option<Event>>,
        /// The OS clock at the opening minus the event's time then.
        base: Cell<u64>,
        /// The last reading from the page (to continue from, should the
        /// thread have to leave it).
        last: Cell<u64>,
        /// Added to OS readings after leaving the page.
        lag: Cell<u64>,
        /// Why this thread is on the OS call.
        why: Cell<Option<ThreadCpuFallback>>,
    }

    impl Drop for PerThread {
        fn drop(&mut self) {
            if let Some(event) = self.event.take() {
                // A forked child's copy of the parent thread's mapping is
                // the child's own to unmap, like any other.
                event.close();
            }
        }
    }

    std::thread_local! {
        static THREAD: PerThread = const {
            PerThread {
                state: Cell::new(UNOPENED),
                event: Cell::new(None),
                base: Cell::new(0),
                last: Cell::new(0),
                lag: Cell::new(0),
                why: Cell::new(None),
            }
        };
    }

    #[inline]
    pub(super) fn read_nanos() -> u64 {
        if PROCESS.load(Ordering::Relaxed) == REFUSED {
            return src::os_nanos();
        }
        // During the thread's own teardown (a reading from another
        // thread-local's destructor), the OS call.
        THREAD
            .try_with(PerThread::read)
            .unwrap_or_else(|_| src::os_nanos())
    }

    pub(super) fn route() -> Option<(ThreadCpuSource, Option<ThreadCpuFallback>)> {
        if PROCESS.load(Ordering::Relaxed) == REFUSED {
            let why = decode(REFUSED_WHY.load(Ordering::Relaxed));
            return Some((src::os_source(), Some(why)));
        }
        THREAD
            .try_with(|t| match t.state.get() {
                ON_PAGE => (ThreadCpuSource::PerfPage, None),
                _ => (src::os_source(), t.why.get()),
            })
            .ok()
    }

    impl PerThread {
        #[inline]
        fn read(&self) -> u64 {
            match self.state.get() {
                ON_PAGE => match self.event.get() {
                    Some(event) if event.is_this_process() => match event.read() {
                        Some(nanos) => {
                            let nanos = nanos.wrapping_add(self.base.get()).max(self.last.get());
                            self.last.set(nanos);
                            nanos
                        }
                        None => self.leave_page(),
                    },
                    _ => self.forked(),
                },
                ON_OS => src::os_nanos().saturating_add(self.lag.get()),
                OPENING => src::os_nanos(),
                _ => self.open(),
            }
        }

        #[cold]
        #[inline(never)]
        fn open(&self) -> u64 {
            self.state.set(OPENING);
            match Event::open() {
                Ok(event) => {
                    // The event's time and the OS's, back to back: the
                    // offset that puts the page's readings on the OS
                    // clock's timeline.
                    let at_open = event.read().unwrap_or(0);
                    let os = src::os_nanos();
                    self.base.set(os.wrapping_sub(at_open));
                    self.last.set(os);
                    self.event.set(Some(event));
                    self.state.set(ON_PAGE);
                    let _ = PROCESS.compare_exchange(
                        UNDECIDED,
                        PAGE,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    );
                    os
                }
                Err(why) => {
                    if why.process_wide() {
                        REFUSED_WHY.store(encode(why), Ordering::Relaxed);
                        PROCESS.store(REFUSED, Ordering::Relaxed);
                    }
                    self.why.set(Some(why));
                    self.state.set(ON_OS);
                    src::os_nanos()
                }
            }
        }

        /// The page stopped offering `cap_user_time`: the OS call from now
        /// on, continuing from the last reading.
        #[cold]
        #[inline(never)]
        fn leave_page(&self) -> u64 {
            if let Some(event) = self.event.take() {
                event.close();
            }
            let os = src::os_nanos();
            self.lag.set(self.last.get().saturating_sub(os));
            self.why.set(Some(ThreadCpuFallback::NoUserTime));
            self.state.set(ON_OS);
            os.saturating_add(self.lag.get())
        }

        /// In a forked child: the inherited page counts the parent's
        /// thread. Unmap it and open this thread's own; readings taken
        /// before the fork belong to the parent's thread and are not
        /// comparable with the child's.
        #[cold]
        #[inline(never)]
        fn forked(&self) -> u64 {
            if let Some(event) = self.event.take() {
                event.close();
            }
            self.last.set(0);
            self.lag.set(0);
            self.why.set(None);
            self.open()
        }
    }

    /// Test hooks: forget the process-wide decision and this thread's
    /// state (unmapping its page), so that the next reading decides again.
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn reset() {
        PROCESS.store(UNDECIDED, Ordering::Relaxed);
        let _ = THREAD.try_with(|t| {
            if let Some(event) = t.event.take() {
                event.close();
            }
            t.state.set(UNOPENED);
            t.why.set(None);
            t.last.set(0);
            t.lag.set(0);
        });
    }
}

/// A reading of the calling thread's CPU time: the time the OS thread has
/// spent running, in user and kernel mode, which stops while the thread
/// sleeps, waits or is descheduled.
///
/// Same API as [`Instant`](crate::Instant) (and `std::time::Instant`), for
/// the question "how much CPU did this span burn": profilers, tracing spans,
/// benchmark harnesses. Readings of one thread compare and subtract;
/// readings of different threads do not (each thread's clock is its own),
/// so the type is neither `Send` nor `Sync`: an instant cannot be moved or
/// shared to another thread, where `elapsed()` would subtract this thread's
/// time from that one's and return nonsense. (Its
/// [`as_nanos`](Self::as_nanos) value can travel, for a log; an async task
/// that may resume on another thread has no thread CPU time to measure.)
///
/// Where it comes from (see [`ClockInfo::thread_cpu`](crate::ClockInfo::thread_cpu)):
/// - Linux x86_64 and aarch64 with `std`, where the kernel offers it: a
///   perf `task-clock` event of the thread, read from its mapped page and
///   the CPU's counter without a system call (one is opened per thread at
///   its first reading and released at thread exit; see `SEMANTICS.md`).
/// - Otherwise on Unix `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`, a system
///   call on Linux; on Windows `GetThreadTimes`, which Windows updates at
///   its scheduler's tick (about 15.6 ms by default), so short spans read
///   zero or a tick.
/// - WASI preview 1: the runtime's thread clock if it has one, else the
///   process's CPU clock, else none; WASI preview 2 (whose clocks have no
///   CPU clock) and a browser: none. Without a thread clock
///   [`measures_thread_cpu_time`](crate::measures_thread_cpu_time) is false,
///   and with no clock at all every reading is the same instant.
///
/// A reading counts from the start of the thread (on the perf route, from
/// about then: the event's time, offset to the OS clock's at the thread's
/// first reading). Readings taken in a process before it forked are not
/// comparable with the child's: the child's thread is a new one. Not
/// affected by the `mock` feature's clock (CPU time cannot be mocked by
/// setting a time). Async-signal-safe, but for a thread's very first
/// reading on the perf route (which opens the event and registers the
/// thread-local destructor).
///
/// ```
/// use fastnow::ThreadCpuInstant;
/// use std::time::Duration;
///
/// let start = ThreadCpuInstant::now();
/// let sum: u64 = (0..100_000u64).map(std::hint::black_box).sum();
/// std::thread::sleep(Duration::from_millis(5)); // sleeping burns no CPU
/// let cpu = start.elapsed();
/// assert_eq!(sum, 4_999_950_000);
/// println!("{cpu:?} of CPU");
/// assert!(ThreadCpuInstant::now() >= start);
/// ```
///
/// A reading cannot leave its thread:
///
/// ```compile_fail
/// let start = fastnow::ThreadCpuInstant::now();
/// std::thread::spawn(move || start.elapsed()); // not Send
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ThreadCpuInstant {
    nanos: u64,
    /// Neither `Send` nor `Sync`: a reading belongs to its thread.
    _thread: PhantomData<*const ()>,
}

/// A `Duration` in nanoseconds, or `None` if it does not fit in 64 bits.
#[inline]
fn duration_nanos(d: Duration) -> Option<u64> {
    u64::try_from(d.as_nanos()).ok()
}

impl ThreadCpuInstant {
    /// Reads the calling thread's CPU time.
    #[inline]
    #[must_use]
    pub fn now() -> ThreadCpuInstant {
        ThreadCpuInstant::from_nanos(read_nanos())
    }

    /// CPU time the calling thread has used since this instant. Zero if
    /// this instant is in the future.
    #[inline]
    #[must_use]
    pub fn elapsed(&self) -> Duration {
        nanos_to_duration(read_nanos().saturating_sub(self.nanos))
    }

    /// CPU time from `earlier` to `self`; zero if `earlier` is later.
    #[inline]
    #[must_use]
    pub fn duration_since(&self, earlier: ThreadCpuInstant) -> Duration {
        nanos_to_duration(self.nanos.saturating_sub(earlier.nanos))
    }

    /// CPU time from `earlier` to `self`, or `None` if `earlier` is later.
    #[inline]
    #[must_use]
    pub fn checked_duration_since(&self, earlier: ThreadCpuInstant) -> Option<Duration> {
        self.nanos.checked_sub(earlier.nanos).map(nanos_to_duration)
    }

    /// CPU time from `earlier` to `self`, or zero if `earlier` is later.
    #[inline]
    #[must_use]
    pub fn saturating_duration_since(&self, earlier: ThreadCpuInstant) -> Duration {
        self.duration_since(earlier)
    }

    /// `self + duration`, or `None` past 2^64 − 1 ns (584 years of CPU
    /// time); exact, as `(t + d) - t == d`.
    #[inline]
    #[must_use]
    pub fn checked_add(&self, duration: Duration) -> Option<ThreadCpuInstant> {
        let nanos = self.nanos.checked_add(duration_nanos(duration)?)?;
        Some(ThreadCpuInstant::from_nanos(nanos))
    }

    /// `self - duration`, or `None` before the thread's zero.
    #[inline]
    #[must_use]
    pub fn checked_sub(&self, duration: Duration) -> Option<ThreadCpuInstant> {
        let nanos = self.nanos.checked_sub(duration_nanos(duration)?)?;
        Some(ThreadCpuInstant::from_nanos(nanos))
    }

    /// Nanoseconds of CPU time of the thread that took the reading (about
    /// `CLOCK_THREAD_CPUTIME_ID`'s value; see the type's docs for the perf
    /// route). Only differences between readings of one thread mean
    /// anything.
    #[inline(always)]
    #[must_use]
    pub const fn as_nanos(&self) -> u64 {
        self.nanos
    }

    /// An instant from [`as_nanos`](Self::as_nanos) of a reading of this
    /// thread.
    #[inline(always)]
    #[must_use]
    pub const fn from_nanos(nanos: u64) -> ThreadCpuInstant {
        ThreadCpuInstant {
            nanos,
            _thread: PhantomData,
        }
    }
}

impl Add<Duration> for ThreadCpuInstant {
    type Output = ThreadCpuInstant;
    /// # Panics
    /// If the result overflows; use [`checked_add`](Self::checked_add) to handle it.
    #[inline]
    fn add(self, rhs: Duration) -> ThreadCpuInstant {
        self.checked_add(rhs)
            .expect("overflow when adding duration to instant")
    }
}

impl AddAssign<Duration> for ThreadCpuInstant {
    #[inline]
    fn add_assign(&mut self, rhs: Duration) {
        *self = *self + rhs;
    }
}

impl Sub<Duration> for ThreadCpuInstant {
    type Output = ThreadCpuInstant;
    /// # Panics
    /// If the result underflows; use [`checked_sub`](Self::checked_sub) to handle it.
    #[inline]
    fn sub(self, rhs: Duration) -> ThreadCpuInstant {
        self.checked_sub(rhs)
            .expect("overflow when subtracting duration from instant")
    }
}

impl SubAssign<Duration> for ThreadCpuInstant {
    #[inline]
    fn sub_assign(&mut self, rhs: Duration) {
        *self = *self - rhs;
    }
}

impl Sub<ThreadCpuInstant> for ThreadCpuInstant {
    type Output = Duration;
    /// Same as [`duration_since`](Self::duration_since): zero if `rhs` is later.
    #[inline]
    fn sub(self, rhs: ThreadCpuInstant) -> Duration {
        self.duration_since(rhs)
    }
}

impl fmt::Debug for ThreadCpuInstant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadCpuInstant")
            .field("nanos", &self.nanos)
            .finish()
    }
}

/// Test hooks for the perf route (the `test-hooks` feature).
#[cfg(feature = "test-hooks")]
pub(crate) mod hooks {
    /// Makes the perf event's opening fail with `errno` (0: no more).
    pub(crate) fn fail_open(errno: i32) {
        #[cfg(all(
            feature = "std",
            any(target_os = "linux", target_os = "android"),
            any(target_arch = "x86_64", target_arch = "aarch64")
        ))]
        crate::source::thread_cpu::perf::hooks::FAIL_OPEN
            .store(errno, core::sync::atomic::Ordering::Relaxed);
        let _ = errno;
    }

    /// Accepts a page without `cap_user_time`, reading its last total.
    pub(crate) fn accept_without_user_time(accept: bool) {
        #[cfg(all(
            feature = "std",
            any(target_os = "linux", target_os = "android"),
            any(target_arch = "x86_64", target_arch = "aarch64")
        ))]
        crate::source::thread_cpu::perf::hooks::ACCEPT_WITHOUT_USER_TIME
            .store(accept, core::sync::atomic::Ordering::Relaxed);
        let _ = accept;
    }

    /// Forgets the process's decision and the calling thread's state.
    pub(crate) fn reset() {
        #[cfg(all(
            feature = "std",
            any(target_os = "linux", target_os = "android"),
            any(target_arch = "x86_64", target_arch = "aarch64")
        ))]
        super::perf_route::reset();
    }
}
