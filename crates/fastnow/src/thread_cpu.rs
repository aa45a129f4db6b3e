//! The thread CPU-time clock: [`ThreadCpuInstant`], and which route it
//! takes on the calling thread.
//!
//! Every target has the OS's clock (`source::thread_cpu::os_nanos`). On
//! Linux x86_64 and aarch64 with `std`, a thread's first reading also tries
//! to open a perf `task-clock` event for the thread and keeps it if its
//! page offers `cap_user_time`; from then on a reading is a counter read
//! and a few loads. What decides the route:
//! - A page without `cap_user_time` (most VMs) leaves two system calls: the
//!   OS call, and the event's own (an `ioctl` that brings its page up to
//!   date, then the page), which reach the kernel's accounting by
//!   different paths and cost differently from machine to machine. The
//!   process's first thread to meet such a page measures both, a few calls
//!   each, interleaved, and the process takes the event's only where it is
//!   clearly cheaper (`ThreadCpuCosts::choose`): each thread then keeps its
//!   event's descriptor, which is checked at every reading.
//! - A refusal every thread would meet (the page lacks `cap_user_time` and
//!   the OS call was the cheaper, `perf_event_open` is denied or absent) is
//!   remembered for the process: later readings on any thread make the OS
//!   call straight away, without touching thread-local storage.
//! - A refusal of this thread only (out of descriptors or memory) is
//!   remembered for the thread: it makes the OS call for the rest of its
//!   life, and pays for the failed open once.
//! - The event is the thread's own (thread-local storage, released at
//!   thread exit). The kernel does not copy perf mappings into a forked
//!   child, so a reading checks the process id and, in a child, replaces
//!   the parent thread's event with one of its own, never touching memory
//!   at the parent's page address that is not fastnow's (see
//!   `thread_cpu/perf_route.rs` for how every transition stays safe against
//!   a signal handler or a fork at any instruction).
//!
//! The page route and the OS call count the same CPU time from different
//! bookkeeping (the event from its opening, the OS from the thread's start;
//! where the kernel accounts interrupt time apart, the OS clock leaves it
//! out and the event does not). The page route's readings are put on the
//! OS clock's timeline by the offset between the two at the opening, and a
//! thread that has to leave the page (the kernel withdrew `cap_user_time`)
//! continues from its last reading, so the thread's readings never step
//! back.

use crate::source::thread_cpu::{self as src, ThreadCpuCosts, ThreadCpuFallback, ThreadCpuSource};
use core::fmt;
use core::marker::PhantomData;

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
        ThreadCpuSource::Os(_) | ThreadCpuSource::PerfPage | ThreadCpuSource::PerfIoctl
    )
}

/// The route the calling thread's readings take, deciding it (with a first
/// reading) if this thread has not read the clock yet, and why the perf
/// page is not used where the target has that route.
pub(crate) fn route() -> (
    ThreadCpuSource,
    Option<ThreadCpuFallback>,
    Option<ThreadCpuCosts>,
) {
    let _ = read_nanos();
    #[cfg(all(
        feature = "std",
        any(target_os = "linux", target_os = "android"),
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    return perf_route::route();
    #[cfg(not(all(
        feature = "std",
        any(target_os = "linux", target_os = "android"),
        any(target_arch = "x86_64", target_arch = "aarch64")
    )))]
    (src::os_source(), None, None)
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
mod perf_route;

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
///   Where the page offers no user-space time, the same event through one
///   system call (`ioctl`) per reading, if the process measured that
///   cheaper than the OS call
///   ([`ClockInfo::thread_cpu_costs`](crate::ClockInfo::thread_cpu_costs));
///   the thread then keeps the event's descriptor (a program that closes it
///   sends the thread to the OS call, and keeps its own file untouched).
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

impl ThreadCpuInstant {
    /// Reads the calling thread's CPU time.
    #[inline]
    #[must_use]
    pub fn now() -> ThreadCpuInstant {
        ThreadCpuInstant::from_nanos(read_nanos())
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

crate::precise::instant_arithmetic!(
    ThreadCpuInstant,
    read_nanos,
    /// CPU time the calling thread has used since this instant. Zero if
    /// this instant is in the future.
    ,
    /// CPU time from `earlier` to `self`; zero if `earlier` is later.
    ,
    /// `self + duration`, or `None` past 2^64 − 1 ns (584 years of CPU
    /// time); exact, as `(t + d) - t == d`.
    ,
    /// `self - duration`, or `None` before the thread's zero.
);

/// `ThreadCpuInstant(1.5ms of CPU)`: the CPU time the thread had used at
/// the reading, printed as Go's `time.Duration` prints it. (`as_nanos`
/// gives the number itself.)
impl fmt::Debug for ThreadCpuInstant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ThreadCpuInstant(")?;
        crate::precise::fmt_duration(f, self.nanos)?;
        f.write_str(" of CPU)")
    }
}

/// Test hooks for the perf route (the `__test-hooks` feature).
#[cfg(all(
    feature = "__test-hooks",
    feature = "std",
    any(target_os = "linux", target_os = "android"),
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
pub(crate) mod hooks {
    use crate::source::thread_cpu::perf::hooks as perf;
    use core::sync::atomic::Ordering::Relaxed;

    pub(crate) use super::perf_route::{reset, withdraw_user_time};
    pub(crate) use perf::NAMES as STEPS;

    /// Makes the perf event's opening fail with `errno` (0: no more).
    pub(crate) fn fail_open(errno: i32) {
        perf::set_failure(&perf::FAIL_OPEN, errno, u32::MAX);
    }

    /// Makes `perf_event_open` fail with `errno`, `times` times.
    pub(crate) fn fail_syscall(errno: i32, times: u32) {
        perf::set_failure(&perf::FAIL_SYSCALL, errno, times);
    }

    /// Makes the event's `mmap` fail with `errno`, `times` times.
    pub(crate) fn fail_map(errno: i32, times: u32) {
        perf::set_failure(&perf::FAIL_MAP, errno, times);
    }

    /// Accepts a page without `cap_user_time`, reading its last total.
    pub(crate) fn accept_without_user_time(accept: bool) {
        perf::ACCEPT_WITHOUT_USER_TIME.store(accept, Relaxed);
    }

    /// Maps a synthetic page (see `perf::hooks::synthetic_page`) instead
    /// of opening a perf event.
    pub(crate) fn synthetic_pages(on: bool) {
        perf::SYNTHETIC.store(on, Relaxed);
    }

    /// Makes the choice between the system-call routes (`Some(true)`: the
    /// event's; `None`: measure).
    pub(crate) fn choose_syscall(choice: Option<bool>) {
        let word = match choice {
            None => 0,
            Some(true) => 1,
            Some(false) => 2,
        };
        perf::CHOICE.store(word, Relaxed);
    }

    /// Runs `hook` at each step of an opening or a reading on the perf
    /// route (`None`: no more).
    pub(crate) fn at_step(hook: Option<fn(u8)>) {
        perf::set_step(hook);
    }

    /// A task-clock event for the calling thread that fastnow does not
    /// hold: its descriptor.
    pub(crate) fn task_clock_descriptor() -> Option<i32> {
        crate::source::thread_cpu::perf::open_task_clock().ok()
    }
}

/// Test hooks: no perf route on this target, nothing to do.
#[cfg(all(
    feature = "__test-hooks",
    not(all(
        feature = "std",
        any(target_os = "linux", target_os = "android"),
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))
))]
pub(crate) mod hooks {
    pub(crate) const STEPS: [&str; 0] = [];
    pub(crate) fn fail_open(_: i32) {}
    pub(crate) fn fail_syscall(_: i32, _: u32) {}
    pub(crate) fn fail_map(_: i32, _: u32) {}
    pub(crate) fn accept_without_user_time(_: bool) {}
    pub(crate) fn synthetic_pages(_: bool) {}
    pub(crate) fn choose_syscall(_: Option<bool>) {}
    pub(crate) fn at_step(_: Option<fn(u8)>) {}
    pub(crate) fn task_clock_descriptor() -> Option<i32> {
        None
    }
    pub(crate) fn reset() {}
    pub(crate) fn withdraw_user_time() {}
}
