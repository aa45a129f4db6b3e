//! The operating system: its clocks (the portable fallback, and the
//! reference every calibration is measured against) and the few other
//! services fastnow needs.
//!
//! On Unix this is `clock_gettime(CLOCK_MONOTONIC)`: through the vDSO on
//! Linux (no system call), strictly monotonic across threads by the
//! kernel's own guarantee, and disciplined by NTP, so a counter calibrated against it
//! follows the same rate as every other timestamp on the machine.
//!
//! Everything here on Unix is async-signal-safe (POSIX lists
//! `clock_gettime`, `open`, `read`, `close`, `getpid`; glibc's `getenv` takes
//! no lock and allocates nothing), because detection and calibration may run
//! inside a signal handler whose thread was interrupted anywhere.

use core::sync::atomic::{AtomicU32, Ordering};

/// The clock the precise tier reads on the OS source (`ClockInfo`'s
/// `ordered_read` then): the one [`monotonic_nanos`] calls. Go's `Info`
/// names the same clocks.
pub(crate) const MONOTONIC_CLOCK: &str = if cfg!(target_vendor = "apple") {
    "clock_gettime(CLOCK_UPTIME_RAW)"
} else if cfg!(unix) {
    "clock_gettime(CLOCK_MONOTONIC)"
} else if cfg!(windows) {
    "QueryPerformanceCounter"
} else if cfg!(all(target_os = "wasi", target_env = "p2")) {
    "wasi:clocks/monotonic-clock"
} else if cfg!(target_os = "wasi") {
    "clock_time_get(CLOCKID_MONOTONIC)"
} else if cfg!(all(target_family = "wasm", target_os = "unknown")) {
    "performance.now()"
} else {
    "std::time::Instant"
};

/// Where fastnow's precise timeline starts: its readings are
/// [`monotonic_nanos`] plus this, so that an instant can be moved back by
/// 2^62 ns (146 years) plus the machine's uptime before it leaves the `u64`
/// range, as far as code that subtracts a long timeout from
/// `Instant::now()` on a freshly booted machine needs, and forward by
/// 3 × 2^62 ns (438 years) minus the uptime. The timekeeper's first state
/// carries it as its OS offset, and every later state continues the
/// readings of the one before; a mock clock starts a second past it.
pub(crate) const TIMELINE_OFFSET_NS: u64 = 1 << 62;

/// Nanoseconds of the monotonic clock std's `Instant` reads:
/// `CLOCK_MONOTONIC`, or on Apple platforms `CLOCK_UPTIME_RAW` (which, like
/// `mach_absolute_time`, does not count sleep; Apple's `CLOCK_MONOTONIC`
/// does).
#[cfg(unix)]
#[inline]
pub(crate) fn monotonic_nanos() -> u64 {
    #[cfg(target_vendor = "apple")]
    let clock = libc::CLOCK_UPTIME_RAW;
    #[cfg(not(target_vendor = "apple"))]
    let clock = libc::CLOCK_MONOTONIC;
    clock_nanos(clock)
}

/// Nanoseconds of the monotonic clock that also counts the time the machine
/// spent suspended, on the same base as [`monotonic_nanos`] (the two differ
/// by the time suspended): `CLOCK_BOOTTIME` on Linux and Android; on Apple
/// platforms `CLOCK_MONOTONIC_RAW`, the clock of `mach_continuous_time`
/// (`CLOCK_UPTIME_RAW` is `mach_absolute_time`'s). Other Unix systems
/// (FreeBSD's `CLOCK_BOOTTIME` is its uptime clock, which stops in suspend)
/// have none: the monotonic clock. So does a system that refuses the call
/// (a seccomp filter denying it where the vDSO does not serve it): readings
/// then stop counting suspend rather than stop.
#[cfg(unix)]
#[inline]
pub(crate) fn boottime_nanos() -> u64 {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let clock = libc::CLOCK_BOOTTIME;
    #[cfg(target_vendor = "apple")]
    let clock = libc::CLOCK_MONOTONIC_RAW;
    #[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec.
        if unsafe { libc::clock_gettime(clock, &mut ts) } == 0 {
            #[allow(clippy::unnecessary_cast)] // time_t is 32 bits on some targets
            return saturating_nanos(ts.tv_sec as i64, ts.tv_nsec as u32);
        }
    }
    monotonic_nanos()
}

/// The OS clock that counts the time suspended, where the OS has one apart
/// from [`monotonic_nanos`]'s (see [`boottime_nanos`]); `None` elsewhere.
#[inline]
pub(crate) fn boot_clock() -> Option<u64> {
    #[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
    return Some(boottime_nanos());
    #[cfg(not(any(target_os = "linux", target_os = "android", target_vendor = "apple")))]
    None
}

/// `CLOCK_TAI` on Linux and Android: `CLOCK_REALTIME` plus the kernel's TAI
/// offset, which is 0 unless something set it (`adjtimex`; chrony and
/// ptp4l do, NTP daemons may not); `None` elsewhere.
/// `None` too where the kernel refuses the clock (before Linux 3.10).
#[inline]
pub(crate) fn tai_nanos() -> Option<u64> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; an unknown clock is
        // refused with EINVAL, which gives `None`.
        if unsafe { libc::clock_gettime(libc::CLOCK_TAI, &mut ts) } != 0 {
            return None;
        }
        #[allow(clippy::unnecessary_cast)] // time_t is 32 bits on some targets
        return Some(saturating_nanos(ts.tv_sec as i64, ts.tv_nsec as u32));
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    None
}

/// Nanoseconds since the Unix epoch from `CLOCK_REALTIME`: 0 for a clock set
/// before 1970, `u64::MAX` for one set after 2554 (the range of a `u64` of
/// nanoseconds), never a wrapped value.
#[cfg(unix)]
#[inline]
pub(crate) fn realtime_nanos() -> u64 {
    clock_nanos(libc::CLOCK_REALTIME)
}

#[cfg(unix)]
#[inline]
#[allow(clippy::unnecessary_cast)] // time_t is 32 bits on some targets
fn clock_nanos(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; both clocks exist on every
    // Unix fastnow supports, so the call cannot fail (POSIX: EINVAL only for
    // an unknown clock, EFAULT only for a bad pointer).
    unsafe { libc::clock_gettime(clock, &mut ts) };
    saturating_nanos(ts.tv_sec as i64, ts.tv_nsec as u32)
}

/// `secs` seconds and `nanos` nanoseconds since the epoch, clamped to the
/// range of a `u64` of nanoseconds.
#[cfg(unix)]
pub(crate) const fn saturating_nanos(secs: i64, nanos: u32) -> u64 {
    if secs < 0 {
        return 0;
    }
    match (secs as u64).checked_mul(1_000_000_000) {
        Some(ns) => ns.saturating_add(nanos as u64),
        None => u64::MAX,
    }
}

/// The platform's clocks where fastnow has no Unix call for them: std's
/// (Windows: `QueryPerformanceCounter` and `GetSystemTimePreciseAsFileTime`;
/// WASI: `clock_time_get`, or on preview 2 `wasi:clocks`' monotonic and wall
/// clocks), or in a browser `performance.now()` and `Date.now()`, where
/// std's panic.
#[cfg(not(unix))]
mod platform {
    #[cfg(all(target_family = "wasm", target_os = "unknown"))]
    pub(super) use web_time::{Instant, SystemTime, UNIX_EPOCH};

    #[cfg(all(
        feature = "std",
        not(all(target_family = "wasm", target_os = "unknown"))
    ))]
    pub(super) use std::time::{Instant, SystemTime, UNIX_EPOCH};
}

#[cfg(all(not(unix), feature = "std"))]
pub(crate) fn monotonic_nanos() -> u64 {
    // The monotonic clock, counted from the first call in this process.
    use std::sync::OnceLock;
    static BASE: OnceLock<platform::Instant> = OnceLock::new();
    let base = *BASE.get_or_init(platform::Instant::now);
    u64::try_from(platform::Instant::now().duration_since(base).as_nanos()).unwrap_or(u64::MAX)
}

/// Where fastnow has no Unix call, the monotonic clock: on Windows that is
/// `QueryPerformanceCounter`, which already counts the time the machine
/// spent asleep or hibernating (as the interrupt time does); WASI and the
/// browser have no clock that tells suspend apart.
#[cfg(all(not(unix), feature = "std"))]
pub(crate) fn boottime_nanos() -> u64 {
    monotonic_nanos()
}

#[cfg(all(not(unix), feature = "std"))]
pub(crate) fn realtime_nanos() -> u64 {
    match platform::SystemTime::now().duration_since(platform::UNIX_EPOCH) {
        Ok(d) => u64::try_from(d.as_nanos()).unwrap_or(u64::MAX),
        Err(_) => 0,
    }
}

#[cfg(all(not(unix), not(feature = "std")))]
compile_error!(
    "fastnow without the `std` feature needs a Unix target (it reads the OS clock through libc)"
);

/// This process's id, which a [`ProcessLock`] records.
///
/// Cached: on a VM whose caches went cold (as they do between the state
/// updates a second apart) a system call costs more than the whole update
/// may cost a reader (BENCHMARKS.md, "Cold calls"). A child forked with
/// libc's `fork()` gets the cache cleared by a `pthread_atfork` handler,
/// registered with the first call, so its first use asks again.
/// (Registration takes glibc's fork-handler lock: a first fastnow reading
/// inside a signal handler that interrupted `fork()` itself would wait for
/// it. Fork paths that bypass libc — a raw `clone` system call — run no
/// handler and keep the parent's pid cached.)
#[cfg(unix)]
#[inline]
pub(crate) fn pid() -> u32 {
    match PID.load(Ordering::Relaxed) {
        0 => fetch_pid(),
        pid => pid,
    }
}

#[cfg(unix)]
static PID: AtomicU32 = AtomicU32::new(0);

#[cfg(unix)]
#[cold]
fn fetch_pid() -> u32 {
    use core::sync::atomic::AtomicBool;
    static WATCHING: AtomicBool = AtomicBool::new(false);
    extern "C" fn forked() {
        PID.store(0, Ordering::Relaxed);
    }
    if !WATCHING.swap(true, Ordering::AcqRel) {
        // SAFETY: `forked` is a valid extern "C" fn for the life of the
        // process; it only stores to an atomic, as a fork child handler may.
        unsafe { libc::pthread_atfork(None, None, Some(forked)) };
    }
    // SAFETY: getpid has no arguments and cannot fail.
    let pid = unsafe { libc::getpid() } as u32;
    PID.store(pid, Ordering::Relaxed);
    pid
}

#[cfg(windows)]
pub(crate) fn pid() -> u32 {
    std::process::id()
}

/// Elsewhere (WASI, a browser) there is no fork, and no process id to ask
/// for (std's `process::id` panics there): every lock holder is this process.
#[cfg(not(any(unix, windows)))]
pub(crate) fn pid() -> u32 {
    1
}

/// Lets another thread run (a writer we wait for). Not for read paths.
pub(crate) fn yield_now() {
    #[cfg(feature = "std")]
    std::thread::yield_now();
    #[cfg(not(feature = "std"))]
    core::hint::spin_loop();
}

/// What taking a [`ProcessLock`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Taken {
    /// It was free.
    Free,
    /// It was held by a thread of another process: this process is a child
    /// forked while that thread wrote. Its private bookkeeping may be
    /// half-updated.
    FromParent,
}

/// A lock that a forked child can take over: the timekeeper's writers'
/// lock, and the upkeep thread's slot.
///
/// It holds the pid of the process that took it rather than a flag: after
/// `fork()` the child has a copy of memory but only the forking thread, so
/// a lock taken by any other thread of the parent can never be released
/// there; a pid other than the caller's own marks exactly that case, and
/// the lock is taken over (the taker is told, so it can distrust what the
/// lock guarded).
pub(crate) struct ProcessLock(AtomicU32);

impl ProcessLock {
    pub(crate) const fn new() -> ProcessLock {
        ProcessLock(AtomicU32::new(0))
    }

    /// Takes the lock if it is free (or held by a parent process's thread);
    /// never waits. Async-signal-safe.
    pub(crate) fn try_lock(&self) -> Option<Taken> {
        let me = pid();
        match self
            .0
            .compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed)
        {
            Ok(_) => Some(Taken::Free),
            Err(owner) if owner != me => self
                .0
                .compare_exchange(owner, me, Ordering::Acquire, Ordering::Relaxed)
                .ok()
                .map(|_| Taken::FromParent),
            Err(_) => None,
        }
    }

    /// Takes the lock, waiting for the holder. Not for read paths.
    pub(crate) fn lock(&self) -> Taken {
        loop {
            if let Some(taken) = self.try_lock() {
                return taken;
            }
            yield_now();
        }
    }

    pub(crate) fn unlock(&self) {
        self.0.store(0, Ordering::Release);
    }

    /// Marks the lock held by a thread of another process, as a child
    /// forked while a thread of its parent held it sees it.
    #[cfg(test)]
    pub(crate) fn hold_in_another_process(&self) {
        let other = pid().wrapping_add(1).max(1);
        self.0.store(other, Ordering::Relaxed);
    }

    /// Whether a thread of this process holds it now.
    #[cfg(test)]
    pub(crate) fn is_held_here(&self) -> bool {
        self.0.load(Ordering::Relaxed) == pid()
    }
}

/// Calls `f` with the value of environment variable `name` (`None` when
/// unset), without copying or allocating.
#[cfg(unix)]
pub(crate) fn with_env<R>(name: &core::ffi::CStr, f: impl FnOnce(Option<&[u8]>) -> R) -> R {
    // SAFETY: `name` is NUL-terminated. glibc and musl return a pointer into
    // the environment block, valid until the environment is modified; it is
    // used only inside this call. A program that calls setenv concurrently
    // with reading the environment races with every getenv, fastnow's
    // included: POSIX puts that on the program.
    let value = unsafe { libc::getenv(name.as_ptr()) };
    if value.is_null() {
        return f(None);
    }
    // SAFETY: getenv returned a non-null pointer to a NUL-terminated string.
    f(Some(unsafe { core::ffi::CStr::from_ptr(value) }.to_bytes()))
}

#[cfg(all(not(unix), feature = "std"))]
pub(crate) fn with_env<R>(name: &core::ffi::CStr, f: impl FnOnce(Option<&[u8]>) -> R) -> R {
    let value = name.to_str().ok().and_then(std::env::var_os);
    f(value.as_ref().map(|v| v.as_encoded_bytes()))
}

/// A small file read without allocating (sysfs attributes), into `buf`.
#[cfg(unix)]
pub(crate) mod file {
    /// An open file, with the identity (device, inode) it had when opened.
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct OpenFile {
        fd: i32,
        id: (u64, u64),
    }

    fn identity(fd: i32) -> Result<(u64, u64), i32> {
        // SAFETY: a zeroed stat is valid output space; fstat only writes it.
        let mut st: libc::stat = unsafe { core::mem::zeroed() };
        // SAFETY: `st` is a valid, writable stat.
        match unsafe { libc::fstat(fd, &mut st) } {
            0 => Ok((st.st_dev as u64, st.st_ino as u64)),
            _ => Err(errno()),
        }
    }

    /// The calling thread's `errno`, read right after the call that failed.
    /// Linux's only: where the errno of a failed open or read decides
    /// anything (the kernel's verdict, `detect::failure`).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub(crate) fn errno() -> i32 {
        #[cfg(target_os = "android")]
        use libc::__errno as errno_at;
        #[cfg(target_os = "linux")]
        use libc::__errno_location as errno_at;
        // SAFETY: the accessor returns the address of the calling thread's
        // errno, valid for the thread's life.
        unsafe { *errno_at() }
    }

    /// Elsewhere no error decides anything: none is told apart.
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    pub(crate) fn errno() -> i32 {
        0
    }

    impl OpenFile {
        /// Opens `path` read-only (close-on-exec); `None` if it cannot be opened.
        pub(crate) fn open(path: &core::ffi::CStr) -> Option<OpenFile> {
            OpenFile::try_open(path).ok()
        }

        /// Opens `path` read-only (close-on-exec), or says why not: the
        /// `errno` of the `open`, or of the `fstat` that takes its identity.
        pub(crate) fn try_open(path: &core::ffi::CStr) -> Result<OpenFile, i32> {
            // SAFETY: `path` is NUL-terminated; open has no other memory effects.
            let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
            if fd < 0 {
                return Err(errno());
            }
            identity(fd).map(|id| OpenFile { fd, id }).inspect_err(|_| {
                // SAFETY: we just opened it.
                unsafe { libc::close(fd) };
            })
        }

        /// Reads from the start of the file into `buf`: the bytes read, or
        /// the `errno` of the `pread`. Whether they are this file's is for
        /// [`is_ours`](Self::is_ours) to say, after the read.
        pub(crate) fn read_at_start(&self, buf: &mut [u8]) -> Result<usize, i32> {
            self.pread(buf, 0)
        }

        /// Reads from byte `offset` of the file into `buf` (a longer file,
        /// such as `/proc/cpuinfo`, a piece at a time); the bytes read, 0 at
        /// the end. The same caveat as `read_at_start`.
        #[cfg_attr(not(target_arch = "powerpc64"), allow(dead_code))]
        pub(crate) fn read_at(&self, buf: &mut [u8], offset: u64) -> Option<usize> {
            self.pread(buf, libc::off_t::try_from(offset).ok()?).ok()
        }

        fn pread(&self, buf: &mut [u8], offset: libc::off_t) -> Result<usize, i32> {
            // SAFETY: `buf` is valid and writable for `buf.len()` bytes. (sysfs
            // and procfs reads do not block, so EINTR is not retried: a
            // failure is a failure.)
            let n = unsafe { libc::pread(self.fd, buf.as_mut_ptr().cast(), buf.len(), offset) };
            if n >= 0 {
                Ok(n as usize)
            } else {
                Err(errno())
            }
        }

        /// Whether the descriptor still refers to the file that was opened
        /// (same device and inode).
        ///
        /// A descriptor kept between reads may not: a program may close
        /// descriptors it did not open (daemons close them all) and be given
        /// the same number for a file of its own, a pid file say. Bytes read
        /// through it then are that file's and must not be trusted. Asked
        /// after a read, a yes means the read was of this file — short of
        /// the other file being closed in between and this very file opened
        /// again at that number, which only another reader of it could do.
        /// (Asked before, the number could be reused between the check and
        /// the read by any `open`.)
        pub(crate) fn is_ours(&self) -> bool {
            identity(self.fd) == Ok(self.id)
        }

        /// The descriptor (tests that hand its number to another file).
        #[cfg(all(
            test,
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "x86")
        ))]
        pub(crate) fn fd(&self) -> i32 {
            self.fd
        }

        /// Closes the file — if the descriptor still refers to it. A program
        /// may close descriptors it did not open (daemons close them all), and
        /// the number may since have been given to a file of its own, which
        /// must not be closed under it.
        pub(crate) fn close_if_ours(self) {
            if self.is_ours() {
                // SAFETY: the descriptor still refers to the file we opened.
                unsafe { libc::close(self.fd) };
            }
        }
    }

    /// Reads a whole small file (once) into `buf`; the bytes read.
    #[cfg_attr(not(target_arch = "riscv64"), allow(dead_code))]
    pub(crate) fn read_once(path: &core::ffi::CStr, buf: &mut [u8]) -> Option<usize> {
        let f = OpenFile::open(path)?;
        let n = f.read_at_start(buf).ok().filter(|_| f.is_ours());
        f.close_if_ours();
        n
    }

    /// Closes a descriptor fastnow owns outright (no one else saw it): the
    /// upkeep thread's timerfd and its stop request's eventfd.
    // The upkeep thread needs std; its timerfd, Linux.
    #[cfg_attr(
        not(all(feature = "std", any(target_os = "linux", target_os = "android"))),
        allow(dead_code)
    )]
    pub(crate) fn close(fd: i32) {
        // SAFETY: `fd` was opened by fastnow and is closed once, by its owner.
        unsafe { libc::close(fd) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_is_exclusive_and_taken_over_from_another_process() {
        let lock = ProcessLock::new();
        assert_eq!(lock.try_lock(), Some(Taken::Free));
        assert!(lock.is_held_here());
        assert_eq!(lock.try_lock(), None, "held by this process");
        lock.unlock();
        // A pid that is not ours: what a child sees after fork.
        lock.0
            .store(pid().wrapping_add(1).max(1), Ordering::Relaxed);
        assert_eq!(lock.try_lock(), Some(Taken::FromParent));
        lock.unlock();
        assert_eq!(lock.lock(), Taken::Free);
        lock.unlock();
    }
}
