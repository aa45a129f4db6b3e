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
            ThreadCpuSource::Os(call) => f.write_str(call),
            ThreadCpuSource::ProcessCpu(call) => write!(f, "{call} (the process's CPU time)"),
            ThreadCpuSource::Unavailable => f.write_str("none (every duration is zero)"),
        }
    }
}

/// Why [`ThreadCpuInstant`](crate::ThreadCpuInstant) does not read a perf
/// event's page on a target that has the route (Linux x86_64 and aarch64,
/// with `std`), and makes a system call per reading instead
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
    /// Another error (its `errno`). This thread only, for its lifetime.
    Error(i32),
}

impl ThreadCpuFallback {
    /// Whether every thread would meet it (the kernel's or the process's
    /// policy), so it is decided once for the process.
    #[cfg_attr(
        not(all(
            feature = "std",
            any(target_os = "linux", target_os = "android"),
            any(target_arch = "x86_64", target_arch = "aarch64")
        )),
        allow(dead_code)
    )]
    pub(crate) fn process_wide(self) -> bool {
        matches!(
            self,
            ThreadCpuFallback::NoUserTime
                | ThreadCpuFallback::Denied
                | ThreadCpuFallback::Unsupported
        )
    }

    /// The fallback for an `errno` from `perf_event_open` or `mmap`.
    #[cfg_attr(
        not(all(
            feature = "std",
            any(target_os = "linux", target_os = "android"),
            any(target_arch = "x86_64", target_arch = "aarch64")
        )),
        allow(dead_code)
    )]
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
            ThreadCpuFallback::Error(e) => write!(f, "perf_event_open failed (errno {e})"),
        }
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
