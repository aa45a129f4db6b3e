//! A perf `task-clock` event counting the calling thread (`perf_event_open`
//! with pid 0, cpu -1), its first page mapped, read without a system call.
//!
//! The event is held by its mapping alone: the descriptor is closed as soon
//! as the page is mapped (the mapping keeps the event alive and counting),
//! so a thread holds one page of address space and no descriptor — a
//! program's `RLIMIT_NOFILE` budget is touched only during the open, and a
//! program that closes descriptors it did not open cannot pull the event
//! from under fastnow or have its own file closed by it. Unmapping the
//! page releases the event.

use super::page::{self, Snapshot};
use super::ThreadCpuFallback;
use crate::source::{arch, os};

/// `PERF_TYPE_SOFTWARE`, `PERF_COUNT_SW_TASK_CLOCK`, `PERF_FLAG_FD_CLOEXEC`.
const TYPE_SOFTWARE: u32 = 1;
const SW_TASK_CLOCK: u64 = 1;
const FLAG_FD_CLOEXEC: libc::c_ulong = 8;
/// `exclude_kernel` and `exclude_hv` (bits 5 and 6 of the attribute's
/// flags): what `perf_event_paranoid` 2, the usual default, requires of an
/// unprivileged process. They do not change what a task-clock counts (its
/// time is the time the thread is on a CPU, in either mode); they only
/// filter samples, which this event does not take.
const FLAGS_EXCLUDE_KERNEL_HV: u64 = (1 << 5) | (1 << 6);

/// `struct perf_event_attr` up to `PERF_ATTR_SIZE_VER0` (64 bytes): the
/// kernel accepts any published size and zero-fills the rest.
#[repr(C)]
struct Attr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

/// Seqlock retries before a reading falls back (see `page::read`).
const TRIES: u32 = 64;

/// One thread's event: its mapped page, and the process that opened it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Event {
    page: *const u8,
    len: usize,
    pid: u32,
}

impl Event {
    /// Opens a task-clock event for the calling thread and maps its page;
    /// refuses (unmapping it) a page without `cap_user_time`.
    pub(crate) fn open() -> Result<Event, ThreadCpuFallback> {
        #[cfg(any(test, feature = "test-hooks"))]
        match hooks::FAIL_OPEN.load(core::sync::atomic::Ordering::Relaxed) {
            0 => {}
            errno => return Err(ThreadCpuFallback::from_errno(errno)),
        }
        // The page is read with the counter, and RDTSC faults on a thread
        // that `prctl(PR_SET_TSC, PR_TSC_SIGSEGV)` set (the kernel offers
        // `cap_user_time` regardless). A thread that sets it after its
        // first reading is not covered.
        #[cfg(target_arch = "x86_64")]
        if arch::ticks_fault() {
            return Err(ThreadCpuFallback::CounterFaults);
        }
        let attr = Attr {
            kind: TYPE_SOFTWARE,
            size: core::mem::size_of::<Attr>() as u32,
            config: SW_TASK_CLOCK,
            sample_period: 0,
            sample_type: 0,
            read_format: 0,
            flags: FLAGS_EXCLUDE_KERNEL_HV,
            wakeup_events: 0,
            bp_type: 0,
            config1: 0,
        };
        // SAFETY: perf_event_open reads `attr` (a valid, initialised
        // attribute of the size it states) and returns a descriptor or -1;
        // pid 0 and cpu -1 select the calling thread on any CPU, group -1
        // no group.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &attr as *const Attr,
                0 as libc::pid_t,
                -1 as libc::c_int,
                -1 as libc::c_int,
                FLAG_FD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(ThreadCpuFallback::from_errno(errno()));
        }
        let fd = fd as libc::c_int;
        // SAFETY: sysconf has no memory effects.
        let len = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
            .ok()
            .filter(|&n| n >= page::offset::END)
            .unwrap_or(4096);
        // SAFETY: maps the event's first page read-only; no existing memory
        // is affected (the kernel picks the address).
        let page = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        // The mapping holds the event from now on (or nothing does, and
        // closing releases it).
        os::file::close(fd);
        if page == libc::MAP_FAILED {
            return Err(ThreadCpuFallback::NoMemory);
        }
        let event = Event {
            page: page as *const u8,
            len,
            pid: os::pid(),
        };
        match event.snapshot() {
            Some((s, _)) if s.has_user_time() || hooks::accept_without_user_time() => Ok(event),
            _ => {
                event.close();
                Err(ThreadCpuFallback::NoUserTime)
            }
        }
    }

    /// Whether the event was opened by this process (a forked child's
    /// thread inherits the mapping of the parent thread's event, which
    /// counts the parent thread).
    #[inline]
    pub(crate) fn is_this_process(&self) -> bool {
        self.pid == os::pid()
    }

    /// The event's running time now (nanoseconds since it was opened), or
    /// `None` if the page stopped offering `cap_user_time` (the kernel
    /// marked its clock unstable) or kept changing under the read.
    #[inline]
    pub(crate) fn read(&self) -> Option<u64> {
        let (s, cyc) = self.snapshot()?;
        match page::running_nanos(&s, cyc) {
            Some(n) => Some(n),
            // The lifecycle tests on kernels without the time extension:
            // the total at the page's last update (stale, but the event's).
            None if hooks::accept_without_user_time() => Some(s.time_running),
            None => None,
        }
    }

    #[inline]
    fn snapshot(&self) -> Option<(Snapshot, u64)> {
        // SAFETY: the page is mapped (read-only, page-aligned, at least
        // `page::offset::END` bytes) from `open` until `close`, which
        // consumes the event; the per-thread state that holds it never
        // reads it after closing.
        unsafe { page::read(self.page, TRIES, arch::ticks) }
    }

    /// Unmaps the page, which releases the event.
    pub(crate) fn close(self) {
        // SAFETY: `page` and `len` are the mapping `open` made, unmapped
        // once (the event is consumed).
        unsafe { libc::munmap(self.page as *mut libc::c_void, self.len) };
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EINVAL)
}

/// For this workspace's tests: make `open` fail, or accept a page without
/// the time extension (so that the descriptor's life can be tested on a
/// kernel that offers none).
pub(crate) mod hooks {
    #[cfg(any(test, feature = "test-hooks"))]
    use core::sync::atomic::{AtomicBool, AtomicI32, Ordering};

    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) static FAIL_OPEN: AtomicI32 = AtomicI32::new(0);
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) static ACCEPT_WITHOUT_USER_TIME: AtomicBool = AtomicBool::new(false);

    #[inline(always)]
    pub(crate) fn accept_without_user_time() -> bool {
        #[cfg(any(test, feature = "test-hooks"))]
        return ACCEPT_WITHOUT_USER_TIME.load(Ordering::Relaxed);
        #[cfg(not(any(test, feature = "test-hooks")))]
        false
    }
}
