//! The calling thread's CPU time: the OS clock on every target (`os_nanos`),
//! and on Linux x86_64 and aarch64 a perf `task-clock` event's mmap page
//! (`perf`, its arithmetic in `page`), which `ThreadCpuInstant` reads when
//! the kernel's page offers the time extension.

#[cfg(any(
    test,
    all(
        feature = "std",
        any(target_os = "linux", target_os = "android"),
        any(target_arch = "x86_64", target_arch = "aarch64")
    )
))]
pub(crate) mod page;
#[cfg(all(
    feature = "std",
    any(target_os = "linux", target_os = "android"),
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
pub(crate) mod perf;
#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
pub(crate) mod raw;

use core::fmt;
use core::sync::atomic::{AtomicU8, Ordering};

/// Where [`ThreadCpuInstant`](crate::ThreadCpuInstant) reads the calling
/// thread's CPU time from ([`ClockInfo::thread_cpu`](crate::ClockInfo::thread_cpu)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ThreadCpuSource {
    /// A perf `task-clock` event counting the thread, read from its mmap
    /// page and the CPU's counter without a system call (Linux, where the
    /// page offers `cap_user_time`).
    PerfPage,
    /// The same event where its page offers no user-space time: one system
    /// call per reading (`ioctl(PERF_EVENT_IOC_RESET)`, which brings the
    /// page up to date), then the page. Taken where the process measured it
    /// cheaper than the OS call ([`ClockInfo::thread_cpu_costs`]); the
    /// thread keeps the event's descriptor.
    ///
    /// [`ClockInfo::thread_cpu_costs`]: crate::ClockInfo::thread_cpu_costs
    PerfIoctl,
    /// The OS's thread CPU clock, one call per reading (named here:
    /// `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`, or `GetThreadTimes` on
    /// Windows).
    Os(&'static str),
    /// No thread clock, only the process's CPU time (WASI runtimes that
    /// offer it; a WASI program without threads has one thread, but the
    /// runtime's own threads may count too). Not the thread's time:
    /// [`measures_thread_cpu_time`](crate::measures_thread_cpu_time) is false.
    ProcessCpu(&'static str),
    /// No CPU clock at all (in a browser, or a WASI runtime that offers
    /// neither clock): every reading is the same instant, so every duration
    /// is zero — never wall time passed off as CPU time.
    Unavailable,
}

impl fmt::Display for ThreadCpuSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ThreadCpuSource::PerfPage => f.write_str("perf task-clock page"),
            ThreadCpuSource::PerfIoctl => {
                f.write_str("perf task-clock event, ioctl(PERF_EVENT_IOC_RESET) and its page")
            }
            ThreadCpuSource::Os(call) => f.write_str(call),
            ThreadCpuSource::ProcessCpu(call) => write!(f, "{call} (the process's CPU time)"),
            ThreadCpuSource::Unavailable => f.write_str("none (every duration is zero)"),
        }
    }
}

/// Why [`ThreadCpuInstant`](crate::ThreadCpuInstant) does not read a perf
/// event's page without a system call on a target that has the route
/// (Linux x86_64 and aarch64, with `std`), and makes one per reading
/// instead — the OS call, or, where the page lacks only `cap_user_time`,
/// possibly the event's own ([`ThreadCpuSource::PerfIoctl`])
/// ([`ClockInfo::thread_cpu_fallback`](crate::ClockInfo::thread_cpu_fallback)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ThreadCpuFallback {
    /// The page does not offer `cap_user_time` (for instance in a VM
    /// whose clock the kernel does not trust to user space, or after the
    /// kernel marked the TSC unstable). Decided for the whole process.
    NoUserTime,
    /// `perf_event_open` was refused (`EPERM`, `EACCES`): a seccomp
    /// filter, a container's policy, or `perf_event_paranoid` above 2.
    /// Decided for the whole process.
    Denied,
    /// The kernel has no perf events (`ENOSYS`, `ENOENT`, `EINVAL`,
    /// `EOPNOTSUPP`). Decided for the whole process.
    Unsupported,
    /// The process was out of descriptors (`EMFILE`, `ENFILE`: the
    /// `RLIMIT_NOFILE` limit) when this thread opened its event. This
    /// thread only, for its lifetime.
    NoDescriptor,
    /// Out of memory, or the page could not be mapped (`ENOMEM`, or
    /// `mmap` failing). This thread only, for its lifetime.
    NoMemory,
    /// Reading the CPU's counter faults on this thread
    /// (`prctl(PR_SET_TSC, PR_TSC_SIGSEGV)`, set by some sandboxes and
    /// record/replay tools). This thread only, for its lifetime.
    CounterFaults,
    /// The thread's event descriptor (kept on the
    /// [`PerfIoctl`](ThreadCpuSource::PerfIoctl) route) stopped answering
    /// for the event: code that did not open it closed it, and perhaps
    /// gave its number to another file (which fastnow leaves alone). This
    /// thread only, for its lifetime.
    DescriptorLost,
    /// Another error (its `errno`). This thread only, for its lifetime.
    Error(i32),
}

/// What the perf route needs of the fallbacks (unused where it is absent).
#[cfg_attr(
    not(all(
        feature = "std",
        any(target_os = "linux", target_os = "android"),
        any(target_arch = "x86_64", target_arch = "aarch64")
    )),
    allow(dead_code)
)]
impl ThreadCpuFallback {
    /// Whether every thread would meet it (the kernel's or the process's
    /// policy), so it is decided once for the process.
    pub(crate) fn process_wide(self) -> bool {
        matches!(
            self,
            ThreadCpuFallback::NoUserTime
                | ThreadCpuFallback::Denied
                | ThreadCpuFallback::Unsupported
        )
    }

    /// The fallback for an `errno` from `perf_event_open` or `mmap`.
    #[cfg(unix)]
    pub(crate) fn from_errno(errno: i32) -> ThreadCpuFallback {
        match errno {
            libc::EPERM | libc::EACCES => ThreadCpuFallback::Denied,
            libc::ENOSYS | libc::ENOENT | libc::EINVAL | libc::EOPNOTSUPP => {
                ThreadCpuFallback::Unsupported
            }
            libc::EMFILE | libc::ENFILE => ThreadCpuFallback::NoDescriptor,
            libc::ENOMEM => ThreadCpuFallback::NoMemory,
            e => ThreadCpuFallback::Error(e),
        }
    }

    /// The fallback as one word, for per-thread and process-wide state
    /// that a signal handler reads (0 is none).
    pub(crate) fn to_code(self) -> u64 {
        match self {
            ThreadCpuFallback::NoUserTime => 1,
            ThreadCpuFallback::Denied => 2,
            ThreadCpuFallback::Unsupported => 3,
            ThreadCpuFallback::NoDescriptor => 4,
            ThreadCpuFallback::NoMemory => 5,
            ThreadCpuFallback::CounterFaults => 6,
            ThreadCpuFallback::Error(e) => 7 | (u64::from(e as u32) << 8),
            ThreadCpuFallback::DescriptorLost => 8,
        }
    }

    pub(crate) fn from_code(code: u64) -> Option<ThreadCpuFallback> {
        Some(match code & 0xff {
            1 => ThreadCpuFallback::NoUserTime,
            2 => ThreadCpuFallback::Denied,
            3 => ThreadCpuFallback::Unsupported,
            4 => ThreadCpuFallback::NoDescriptor,
            5 => ThreadCpuFallback::NoMemory,
            6 => ThreadCpuFallback::CounterFaults,
            7 => ThreadCpuFallback::Error((code >> 8) as u32 as i32),
            8 => ThreadCpuFallback::DescriptorLost,
            _ => return None,
        })
    }
}

impl fmt::Display for ThreadCpuFallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ThreadCpuFallback::NoUserTime => {
                f.write_str("the perf page does not offer cap_user_time")
            }
            ThreadCpuFallback::Denied => f.write_str(
                "perf_event_open denied (seccomp, container policy or perf_event_paranoid)",
            ),
            ThreadCpuFallback::Unsupported => f.write_str("the kernel has no perf events"),
            ThreadCpuFallback::NoDescriptor => {
                f.write_str("out of file descriptors when this thread opened its event")
            }
            ThreadCpuFallback::NoMemory => f.write_str("the perf page could not be mapped"),
            ThreadCpuFallback::CounterFaults => {
                f.write_str("prctl(PR_SET_TSC) makes RDTSC fault on this thread")
            }
            ThreadCpuFallback::DescriptorLost => f.write_str(
                "the perf event's descriptor was closed or reused by code that did not open it",
            ),
            ThreadCpuFallback::Error(e) => write!(f, "perf_event_open failed (errno {e})"),
        }
    }
}

/// What the two system-call routes to a thread's CPU time cost where the
/// perf page offers no user-space time, measured side by side by the
/// process's first thread to meet such a page, and which it took
/// ([`ClockInfo::thread_cpu_costs`](crate::ClockInfo::thread_cpu_costs)).
/// The kernel paths differ (the OS call takes the scheduler's lock; the
/// event's request does not), and so does their order from machine to
/// machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ThreadCpuCosts {
    /// `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`, nanoseconds per call
    /// (the median of interleaved rounds).
    pub os_call_ns: u32,
    /// The event's `ioctl` and page ([`ThreadCpuSource::PerfIoctl`]),
    /// nanoseconds per call, measured with the OS call.
    pub perf_ioctl_ns: u32,
    /// Whether the process took the event's route: cheaper by at least
    /// [`ThreadCpuCosts::MARGIN_PERCENT`] in the median and in most rounds
    /// (a descriptor per thread is the price, so a tie keeps the OS call).
    pub perf_ioctl_taken: bool,
}

impl ThreadCpuCosts {
    /// Interleaved rounds measured, each of [`CALLS`](Self::CALLS) calls of
    /// each route (after two calls of each to warm them).
    pub const ROUNDS: usize = 7;
    /// Calls of each route per round.
    pub const CALLS: u32 = 8;
    /// How much cheaper the event's route must be, in the median.
    pub const MARGIN_PERCENT: u32 = 3;
    /// In how many of the rounds it must be cheaper.
    pub const WINS: usize = 5;

    /// The decision from the rounds' costs (nanoseconds per call of each
    /// route, round by round): a pure function of the measurements.
    #[allow(dead_code)] // (where there is no perf route)
    pub(crate) fn choose(os: [u32; Self::ROUNDS], perf: [u32; Self::ROUNDS]) -> ThreadCpuCosts {
        let median = |mut v: [u32; Self::ROUNDS]| {
            v.sort_unstable();
            v[Self::ROUNDS / 2]
        };
        let (os_call_ns, perf_ioctl_ns) = (median(os), median(perf));
        let wins = os.iter().zip(&perf).filter(|(o, p)| p < o).count();
        let cheaper = u64::from(perf_ioctl_ns) * 100
            <= u64::from(os_call_ns) * u64::from(100 - Self::MARGIN_PERCENT);
        ThreadCpuCosts {
            os_call_ns,
            perf_ioctl_ns,
            perf_ioctl_taken: cheaper && wins >= Self::WINS,
        }
    }
}

impl fmt::Display for ThreadCpuCosts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the OS call {} ns, the perf event's ioctl {} ns: {}",
            self.os_call_ns,
            self.perf_ioctl_ns,
            if self.perf_ioctl_taken {
                "the ioctl taken"
            } else {
                "the OS call kept"
            }
        )
    }
}

const UNDECIDED: u8 = 0;
const THREAD: u8 = 1;
const PROCESS: u8 = 2;
const NONE: u8 = 3;

/// Which OS clock answers here, decided at the first reading (an OS that
/// answers once answers always: the only errors are an unknown clock and a
/// bad pointer).
static OS_CLOCK: AtomicU8 = AtomicU8::new(UNDECIDED);

/// The calling thread's CPU time in nanoseconds from the OS (see
/// [`os_source`] for what it is on each target; 0 where there is none).
#[inline]
pub(crate) fn os_nanos() -> u64 {
    match OS_CLOCK.load(Ordering::Relaxed) {
        THREAD => imp::thread().unwrap_or(0),
        PROCESS => imp::process().unwrap_or(0),
        NONE => 0,
        _ => os_decide_and_read(),
    }
}

#[cold]
#[inline(never)]
fn os_decide_and_read() -> u64 {
    let (clock, nanos) = if let Some(n) = imp::thread() {
        (THREAD, n)
    } else if let Some(n) = imp::process() {
        (PROCESS, n)
    } else {
        (NONE, 0)
    };
    OS_CLOCK.store(clock, Ordering::Relaxed);
    nanos
}

/// What [`os_nanos`] reads.
pub(crate) fn os_source() -> ThreadCpuSource {
    if OS_CLOCK.load(Ordering::Relaxed) == UNDECIDED {
        let _ = os_nanos();
    }
    match OS_CLOCK.load(Ordering::Relaxed) {
        THREAD => ThreadCpuSource::Os(imp::THREAD_CALL),
        PROCESS => ThreadCpuSource::ProcessCpu(imp::PROCESS_CALL),
        _ => ThreadCpuSource::Unavailable,
    }
}

#[cfg(unix)]
mod imp {
    pub(super) const THREAD_CALL: &str = "clock_gettime(CLOCK_THREAD_CPUTIME_ID)";
    pub(super) const PROCESS_CALL: &str = "clock_gettime(CLOCK_PROCESS_CPUTIME_ID)";

    #[inline]
    pub(super) fn thread() -> Option<u64> {
        clock(libc::CLOCK_THREAD_CPUTIME_ID)
    }

    pub(super) fn process() -> Option<u64> {
        clock(libc::CLOCK_PROCESS_CPUTIME_ID)
    }

    #[inline]
    #[allow(clippy::unnecessary_cast)] // time_t is 32 bits on some targets
    fn clock(clock: libc::clockid_t) -> Option<u64> {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // Linux x86_64 and aarch64: the system call made in place (see
        // `raw`); elsewhere libc's.
        #[cfg(all(
            any(target_os = "linux", target_os = "android"),
            any(target_arch = "x86_64", target_arch = "aarch64")
        ))]
        let ok = super::raw::clock_gettime(clock, &mut ts);
        #[cfg(not(all(
            any(target_os = "linux", target_os = "android"),
            any(target_arch = "x86_64", target_arch = "aarch64")
        )))]
        // SAFETY: `ts` is a valid, writable timespec (the call's only
        // memory effect); a clock the OS lacks is EINVAL, reported.
        let ok = unsafe { libc::clock_gettime(clock, &mut ts) } == 0;
        ok.then(|| crate::source::os::saturating_nanos(ts.tv_sec as i64, ts.tv_nsec as u32))
    }
}

/// `GetThreadTimes`: the thread's kernel plus user time, in the 100 ns
/// units Windows keeps it in. (`QueryThreadCycleTime` is finer but counts
/// cycles at a rate Windows does not state, and Microsoft's documentation
/// says not to convert it to time; fastnow's calibrated counter rate would
/// be a guess about what Windows counts.)
#[cfg(windows)]
mod imp {
    pub(super) const THREAD_CALL: &str = "GetThreadTimes";
    pub(super) const PROCESS_CALL: &str = "GetProcessTimes";

    #[repr(C)]
    #[derive(Default)]
    struct FileTime {
        low: u32,
        high: u32,
    }

    impl FileTime {
        fn nanos(&self) -> u64 {
            ((u64::from(self.high) << 32) | u64::from(self.low)).saturating_mul(100)
        }
    }

    extern "system" {
        fn GetCurrentThread() -> *mut core::ffi::c_void;
        fn GetThreadTimes(
            thread: *mut core::ffi::c_void,
            creation: *mut FileTime,
            exit: *mut FileTime,
            kernel: *mut FileTime,
            user: *mut FileTime,
        ) -> i32;
    }

    #[inline]
    pub(super) fn thread() -> Option<u64> {
        let (mut creation, mut exit) = (FileTime::default(), FileTime::default());
        let (mut kernel, mut user) = (FileTime::default(), FileTime::default());
        // SAFETY: GetCurrentThread returns a pseudo-handle valid in the
        // calling thread, with the access GetThreadTimes needs; the four
        // pointers are valid, writable FILETIMEs (its only memory effect).
        // kernel32 is always linked by std on Windows.
        let ok = unsafe {
            GetThreadTimes(
                GetCurrentThread(),
                &mut creation,
                &mut exit,
                &mut kernel,
                &mut user,
            )
        } != 0;
        ok.then(|| kernel.nanos().saturating_add(user.nanos()))
    }

    /// Not used: GetThreadTimes exists on every Windows std supports.
    pub(super) fn process() -> Option<u64> {
        None
    }
}

/// WASI preview 1 has both CPU clocks in its `clock_time_get`; runtimes
/// may answer `ENOTSUP` for either. Asked directly (std offers neither).
#[cfg(all(target_os = "wasi", not(target_env = "p2")))]
mod imp {
    pub(super) const THREAD_CALL: &str = "clock_time_get(THREAD_CPUTIME_ID)";
    pub(super) const PROCESS_CALL: &str = "clock_time_get(PROCESS_CPUTIME_ID)";

    #[link(wasm_import_module = "wasi_snapshot_preview1")]
    extern "C" {
        #[link_name = "clock_time_get"]
        fn clock_time_get(id: u32, precision: u64, time: *mut u64) -> u16;
    }

    fn clock(id: u32) -> Option<u64> {
        let mut t = 0u64;
        // SAFETY: the import writes one u64 through a valid pointer and
        // returns an errno (0 on success).
        (unsafe { clock_time_get(id, 1, &mut t) } == 0).then_some(t)
    }

    /// A wasip1 program has no threads of its own (std cannot spawn one),
    /// but the thread clock is still the one to ask first.
    pub(super) fn thread() -> Option<u64> {
        clock(3)
    }

    pub(super) fn process() -> Option<u64> {
        clock(2)
    }
}

/// A browser (and any other target): no CPU clock.
#[cfg(not(any(unix, windows, all(target_os = "wasi", not(target_env = "p2")))))]
mod imp {
    pub(super) const THREAD_CALL: &str = "none";
    pub(super) const PROCESS_CALL: &str = "none";

    pub(super) fn thread() -> Option<u64> {
        None
    }

    pub(super) fn process() -> Option<u64> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::ThreadCpuFallback;
    use proptest::prelude::*;

    proptest! {
        /// Every fallback survives its one-word form (the errno of `Error`
        /// included, negative ones too), and no fallback is the word 0.
        #[test]
        fn fallback_codes_round_trip(errno: i32, kind in 0usize..8) {
            let why = [
                ThreadCpuFallback::NoUserTime,
                ThreadCpuFallback::Denied,
                ThreadCpuFallback::Unsupported,
                ThreadCpuFallback::NoDescriptor,
                ThreadCpuFallback::NoMemory,
                ThreadCpuFallback::CounterFaults,
                ThreadCpuFallback::DescriptorLost,
                ThreadCpuFallback::Error(errno),
            ][kind];
            prop_assert_ne!(why.to_code(), 0);
            prop_assert_eq!(ThreadCpuFallback::from_code(why.to_code()), Some(why));
        }
    }

    use super::ThreadCpuCosts;
    const R: usize = ThreadCpuCosts::ROUNDS;

    proptest! {
        /// The decision depends on the rounds as pairs, not on their order.
        #[test]
        fn choice_ignores_the_order_of_rounds(
            pairs in proptest::array::uniform7((1u32..100_000, 1u32..100_000)),
            rotate in 0usize..R,
        ) {
            let split = |p: [(u32, u32); R]| (p.map(|x| x.0), p.map(|x| x.1));
            let (os, perf) = split(pairs);
            let mut moved = pairs;
            moved.rotate_left(rotate);
            moved.swap(0, R - 1);
            let (os2, perf2) = split(moved);
            prop_assert_eq!(ThreadCpuCosts::choose(os, perf), ThreadCpuCosts::choose(os2, perf2));
        }

        /// Measured in other units (every cost times k), the same decision.
        #[test]
        fn choice_ignores_the_scale(
            os in proptest::array::uniform7(1u32..100_000),
            perf in proptest::array::uniform7(1u32..100_000),
            k in 1u32..40,
        ) {
            let a = ThreadCpuCosts::choose(os, perf).perf_ioctl_taken;
            let b = ThreadCpuCosts::choose(os.map(|x| x * k), perf.map(|x| x * k)).perf_ioctl_taken;
            prop_assert_eq!(a, b);
        }

        /// A cheaper event route never loses a choice it won.
        #[test]
        fn cheaper_never_loses(
            os in proptest::array::uniform7(1u32..100_000),
            perf in proptest::array::uniform7(1u32..100_000),
            cut in proptest::array::uniform7(0u32..100_000),
        ) {
            let cheaper = core::array::from_fn(|i| perf[i] - cut[i].min(perf[i] - 1));
            if ThreadCpuCosts::choose(os, perf).perf_ioctl_taken {
                prop_assert!(ThreadCpuCosts::choose(os, cheaper).perf_ioctl_taken);
            }
        }

        /// Taken only if cheaper by the margin in the median and cheaper in
        /// most rounds; reported medians are the rounds' medians.
        #[test]
        fn taken_only_when_clearly_cheaper(
            os in proptest::array::uniform7(1u32..100_000),
            perf in proptest::array::uniform7(1u32..100_000),
        ) {
            let c = ThreadCpuCosts::choose(os, perf);
            let median = |mut v: [u32; R]| { v.sort(); v[R / 2] };
            prop_assert_eq!((c.os_call_ns, c.perf_ioctl_ns), (median(os), median(perf)));
            let wins = (0..R).filter(|&i| perf[i] < os[i]).count();
            if c.perf_ioctl_taken {
                prop_assert!(wins >= ThreadCpuCosts::WINS);
                prop_assert!(f64::from(c.perf_ioctl_ns) <= 0.97 * f64::from(c.os_call_ns) + 1e-9);
            }
            // Cheaper by a third in every round: always taken.
            if (0..R).all(|i| perf[i] * 3 <= os[i] * 2) {
                prop_assert!(c.perf_ioctl_taken);
            }
        }
    }

    #[test]
    fn the_measured_cases() {
        // This guest's order (the OS call cheaper), the other one, a tie,
        // and a route cheaper in the median but in too few rounds.
        let take = |os, perf| ThreadCpuCosts::choose(os, perf).perf_ioctl_taken;
        assert!(!take([514; R], [560; R]));
        assert!(take([514; R], [346; R]));
        assert!(!take([514; R], [514; R]));
        assert!(!take([500; R], [499; R]), "1 ns is inside the margin");
        assert!(!take(
            [500, 500, 500, 500, 300, 300, 300],
            [400, 400, 400, 400, 900, 900, 900]
        ));
    }

    #[test]
    fn code_zero_is_no_fallback() {
        assert_eq!(ThreadCpuFallback::from_code(0), None);
    }
}
