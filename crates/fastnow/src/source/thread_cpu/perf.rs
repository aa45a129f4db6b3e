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
//!
//! The kernel does not copy perf mappings into a forked child (it marks
//! them `VM_DONTCOPY`): the child inherits nothing at the parent's page
//! address, and its own next mapping may be placed there. So a child must
//! never unmap or read that address as the event's. `ThreadCpuInstant`
//! records the process id before it opens an event and checks it after
//! every reading; and for the thread that forked, a fork handler maps a
//! page of zeros at the address in the child (`reserve`), so that the
//! address is fastnow's in the child too: a reading the fork interrupted
//! (from a signal handler) resumes on zeros, never on a hole or on the
//! child's memory, and the child's first reading unmaps the zeros and
//! opens an event of its own.

use super::page::{self, Snapshot};
use super::ThreadCpuFallback;
use crate::source::{arch, os};
use core::sync::atomic::{compiler_fence, AtomicI32, AtomicPtr, AtomicU32, Ordering};

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

/// `MAP_FIXED_NOREPLACE` (Linux 4.17; the same value on x86_64 and
/// aarch64, and absent from the libc crate's Android definitions).
const MAP_FIXED_NOREPLACE: libc::c_int = 0x10_0000;

/// `PERF_EVENT_IOC_RESET` (`_IO('$', 3)`) and `PERF_EVENT_IOC_ID`
/// (`_IOR('$', 7, u64)`).
const IOC_RESET: u32 = 0x2403;
const IOC_ID: u32 = 0x8008_2407;

/// Seqlock retries before a reading falls back (see `page::read`).
const TRIES: u32 = 64;

/// One thread's event: its mapped page (one page long).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Event {
    page: *const u8,
}

impl Event {
    /// Opens a task-clock event for the calling thread and maps its page.
    /// Returns it with whether the page offers `cap_user_time` (then the
    /// descriptor is closed: the mapping holds the event). A page without
    /// it is refused (unmapped, the descriptor closed) unless `keep` is
    /// given: then the descriptor is stored there, for the system-call
    /// route (`refresh`).
    ///
    /// The page's address is stored in `at` as the mapping is made, with
    /// the thread's signals blocked in between, so that no fork (from a
    /// signal handler) falls between the two: from then on a fork finds in
    /// `at` the address the child's fork handler reserves (see `reserve`).
    /// (A descriptor needs no such care: a child forked anywhere has the
    /// same descriptors, and the interrupted code goes on to store or close
    /// its copy.) On failure `at` is null and nothing is left mapped or open.
    pub(crate) fn open(
        at: &AtomicPtr<u8>,
        keep: Option<&AtomicI32>,
    ) -> Result<(Event, bool), ThreadCpuFallback> {
        #[cfg(any(test, feature = "__test-hooks"))]
        if let Some(errno) = hooks::failure(&hooks::FAIL_OPEN) {
            return Err(ThreadCpuFallback::from_errno(errno));
        }
        // The page is read with the counter, and RDTSC faults on a thread
        // that `prctl(PR_SET_TSC, PR_TSC_SIGSEGV)` set (the kernel offers
        // `cap_user_time` regardless). A thread that sets it after its
        // first reading is not covered.
        #[cfg(target_arch = "x86_64")]
        if arch::ticks_fault() {
            return Err(ThreadCpuFallback::CounterFaults);
        }
        #[cfg(any(test, feature = "__test-hooks"))]
        if hooks::SYNTHETIC.load(Ordering::Relaxed) {
            return hooks::synthetic_page(at).map(|event| (event, true));
        }
        let fd = open_task_clock()?;
        hooks::step(hooks::OPENED);
        let page = with_signals_blocked(|| {
            #[cfg(any(test, feature = "__test-hooks"))]
            if let Some(errno) = hooks::failure(&hooks::FAIL_MAP) {
                return Err(errno);
            }
            // SAFETY: maps the event's first page read-only; no existing
            // memory is affected (the kernel picks the address).
            let page = unsafe {
                libc::mmap(
                    core::ptr::null_mut(),
                    page_len(),
                    libc::PROT_READ,
                    libc::MAP_SHARED,
                    fd,
                    0,
                )
            };
            if page == libc::MAP_FAILED {
                return Err(errno());
            }
            at.store(page.cast(), Ordering::Relaxed);
            Ok(page)
        });
        hooks::step(hooks::MAPPED);
        let event = match page {
            Ok(page) => Event {
                page: page as *const u8,
            },
            Err(errno) => {
                os::file::close(fd);
                return Err(match errno {
                    // EPERM past `perf_event_mlock_kb` and RLIMIT_MEMLOCK:
                    // this thread's page would be locked memory over budget.
                    libc::EPERM | libc::EAGAIN | libc::ENOMEM => ThreadCpuFallback::NoMemory,
                    libc::EMFILE | libc::ENFILE => ThreadCpuFallback::NoDescriptor,
                    e => ThreadCpuFallback::Error(e),
                });
            }
        };
        let user_time = matches!(event.snapshot(|| 0), Some((s, _)) if s.has_user_time())
            || hooks::accept_without_user_time();
        let result = match (user_time, keep) {
            (false, Some(keep)) => {
                keep.store(fd, Ordering::Relaxed);
                Ok((event, false))
            }
            (false, None) => {
                os::file::close(fd);
                event.close_in_place(at);
                Err(ThreadCpuFallback::NoUserTime)
            }
            // The mapping holds the event from now on.
            (true, _) => {
                os::file::close(fd);
                Ok((event, true))
            }
        };
        hooks::step(hooks::KEPT_OR_CLOSED);
        result
    }

    /// The event whose page `open` mapped at `page` (kept by its owner as a
    /// plain address, to be read from a signal handler); `None` for null.
    #[inline]
    pub(crate) fn at(page: *const u8) -> Option<Event> {
        (!page.is_null()).then_some(Event { page })
    }

    /// The event's running time now (nanoseconds since it was opened), or
    /// `None` if the page stopped offering `cap_user_time` (the kernel
    /// marked its clock unstable) or kept changing under the read.
    #[inline]
    pub(crate) fn read(&self) -> Option<u64> {
        let (s, cyc) = self.snapshot(arch::ticks)?;
        match page::running_nanos(&s, cyc) {
            Some(n) => Some(n),
            // The lifecycle tests on kernels without the time extension:
            // the total at the page's last update (stale, but the event's).
            None if hooks::accept_without_user_time() => Some(s.time_running),
            None => None,
        }
    }

    /// The event's running time now, where the page offers no user-space
    /// time: the kernel is asked, through the event's descriptor `fd`, to
    /// bring the page up to date (`PERF_EVENT_IOC_RESET`, which also zeroes
    /// the event's count, unused here), and the page is read after. One
    /// system call, which does what a `read()` of the descriptor does and
    /// writes the page. `None` if the descriptor is no longer this event's
    /// (see `page::refreshed_nanos`).
    ///
    /// Why not `read()`: the descriptor may have been closed by code that
    /// did not open it, and its number given to a file of the program's
    /// own. A `read()` would then take bytes from that file, or wait
    /// forever on an empty pipe or socket. This request, on anything but a
    /// perf event, fails at once (`ENOTTY`: `'$'` requests are perf's) and
    /// touches nothing; on another perf event of the program, it zeroes
    /// that event's count once, and the page (this event's) does not move,
    /// which gives it away.
    #[inline]
    pub(crate) fn refresh(&self, fd: i32) -> Option<u64> {
        // SAFETY: the page is mapped, readable and 8-byte aligned (see
        // `snapshot`); the lock word is naturally aligned within it.
        let lock = unsafe { &*(self.page.add(page::offset::LOCK) as *const AtomicU32) };
        let before = lock.load(Ordering::Acquire);
        if super::raw::ioctl(fd, IOC_RESET, None) != 0 {
            return None;
        }
        let (s, _) = self.snapshot(|| 0)?;
        page::refreshed_nanos(before, &s)
    }

    #[inline]
    fn snapshot(&self, ticks: impl Fn() -> u64) -> Option<(Snapshot, u64)> {
        // SAFETY: the page is mapped (read-only, page-aligned, at least
        // `page::offset::END` bytes) from `open` until `close_in_place`,
        // which its owner calls only while no reading of its thread can be
        // under way (a claimed state, thread exit, or outside any reading
        // in the test hooks); in a forked child the address holds the page
        // of zeros the child's fork handler reserved (see `reserve`), or
        // its owner has cleared it.
        unsafe {
            page::read(self.page, TRIES, || {
                hooks::step(hooks::IN_SEQLOCK);
                ticks()
            })
        }
    }

    /// Unmaps the page, which releases the event, and then clears `at`
    /// (which holds its address). In that order: a fork in between leaves
    /// the child a page it reserved itself (one page at most, never used),
    /// where the other order would let the child's code map something at
    /// the address before the unmapping, which would take it away.
    ///
    /// Only in a process where the page is fastnow's: the one that mapped
    /// it, or a forked child, whose fork handler reserved the address again.
    pub(crate) fn close_in_place(self, at: &AtomicPtr<u8>) {
        // SAFETY: `page` is a one-page mapping of this process that
        // belongs to fastnow (above), unmapped once: its owner calls this
        // only while no reading of its thread can be using it.
        unsafe { libc::munmap(self.page as *mut libc::c_void, page_len()) };
        compiler_fence(Ordering::SeqCst);
        at.store(core::ptr::null_mut(), Ordering::Relaxed);
    }
}

/// `perf_event_open` for the calling thread's task clock: its descriptor.
/// Interrupted by a signal (it may wait for a concurrent `exec`), it is
/// tried again, a few times.
pub(crate) fn open_task_clock() -> Result<libc::c_int, ThreadCpuFallback> {
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
    // SAFETY: perf_event_open reads `attr` (a valid, initialised attribute
    // of the size it states) and returns a descriptor or -1; pid 0 and cpu
    // -1 select the calling thread on any CPU, group -1 no group.
    let call = || unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const Attr,
            0 as libc::pid_t,
            -1 as libc::c_int,
            -1 as libc::c_int,
            FLAG_FD_CLOEXEC,
        )
    };
    let mut tries = 0;
    loop {
        #[cfg(any(test, feature = "__test-hooks"))]
        let injected = hooks::failure(&hooks::FAIL_SYSCALL);
        #[cfg(not(any(test, feature = "__test-hooks")))]
        let injected = None;
        let errno = match injected {
            Some(errno) => errno,
            None => match call() {
                fd if fd >= 0 => return Ok(fd as libc::c_int),
                _ => errno(),
            },
        };
        match errno {
            libc::EINTR if tries < 3 => tries += 1,
            e => return Err(ThreadCpuFallback::from_errno(e)),
        }
    }
}

/// Runs `f` with every signal blocked on the calling thread (none of its
/// handlers can run, so none can fork, in the middle of `f`).
fn with_signals_blocked<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: zeroed sigset_t values are valid storage; sigfillset and
    // pthread_sigmask only write them; the old mask is restored below.
    unsafe {
        let (mut all, mut old): (libc::sigset_t, libc::sigset_t) =
            (core::mem::zeroed(), core::mem::zeroed());
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let r = f();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, core::ptr::null_mut());
        r
    }
}

/// Maps a private read-only page of zeros at `hint`, which nothing may
/// occupy (`MAP_FIXED_NOREPLACE`); its address (elsewhere, on a kernel
/// older than 4.17, which takes the flag as a hint).
fn zeros(hint: *mut u8) -> Option<*mut u8> {
    // SAFETY: a new private anonymous mapping; the kernel refuses rather
    // than replace an existing mapping.
    let p = unsafe {
        libc::mmap(
            hint.cast(),
            page_len(),
            libc::PROT_READ,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
            -1,
            0,
        )
    };
    (p != libc::MAP_FAILED).then_some(p.cast())
}

/// Maps zeros exactly at `page` if nothing is mapped there; whether it did.
fn zeros_at(page: *mut u8) -> bool {
    match zeros(page) {
        Some(p) if p == page => true,
        Some(elsewhere) => {
            // SAFETY: the page just mapped, by this call, elsewhere.
            unsafe { libc::munmap(elsewhere.cast(), page_len()) };
            false
        }
        None => false,
    }
}

/// In a forked child, for the thread that forked: makes `at`'s address
/// fastnow's in the child too. The kernel copies no perf mapping, so the
/// event's page is a hole in the child, which a reading of the parent
/// interrupted by the fork (in a signal handler) would resume on, and which
/// the child's own next mapping could take; zeros are mapped there instead
/// (read as a page without the time extension, they send such a reading to
/// its slow path, which sees the new process id). If the address cannot be
/// reserved (something is there already: another fork handler's mapping),
/// `at` is cleared, and the child never touches it.
pub(crate) fn reserve(at: &AtomicPtr<u8>) {
    let page = at.load(Ordering::Relaxed);
    if !page.is_null() && !zeros_at(page) {
        at.store(core::ptr::null_mut(), Ordering::Relaxed);
    }
}

/// The kernel's id of the perf event `fd` refers to (`PERF_EVENT_IOC_ID`),
/// or `None` if it refers to none. Unique among the system's events, so it
/// tells whether a descriptor kept by number is still the one opened.
pub(crate) fn event_id(fd: i32) -> Option<u64> {
    let mut id = 0u64;
    (super::raw::ioctl(fd, IOC_ID, Some(&mut id)) == 0).then_some(id)
}

/// Closes `fd` if it still refers to the event `id` (a program may have
/// closed it and reused the number for a file of its own, which must not
/// be closed under it).
pub(crate) fn close_if_event(fd: i32, id: u64) {
    if fd >= 0 && event_id(fd) == Some(id) {
        os::file::close(fd);
    }
}

/// The length of the mapping: one page.
fn page_len() -> usize {
    // SAFETY: sysconf has no memory effects.
    usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
        .ok()
        .filter(|&n| n >= page::offset::END)
        .unwrap_or(4096)
}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EINVAL)
}

/// For this workspace's tests: make `open` fail, accept a page without the
/// time extension (so that the event's life can be tested on a kernel that
/// offers none), map a synthetic page instead of a perf event's, and run a
/// function at each step of an opening or a reading (to fork or raise a
/// signal there). Without the hooks every function here is a no-op.
pub(crate) mod hooks {
    #[cfg(any(test, feature = "__test-hooks"))]
    use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};

    /// Injected failures: an errno in the low 32 bits and how many more
    /// times to fail in the high 32 (`u32::MAX`: always); 0 for none.
    /// `FAIL_OPEN` fails the whole opening before anything is done,
    /// `FAIL_SYSCALL` the `perf_event_open` call, `FAIL_MAP` the `mmap`.
    #[cfg(any(test, feature = "__test-hooks"))]
    pub(crate) static FAIL_OPEN: AtomicU64 = AtomicU64::new(0);
    #[cfg(any(test, feature = "__test-hooks"))]
    pub(crate) static FAIL_SYSCALL: AtomicU64 = AtomicU64::new(0);
    #[cfg(any(test, feature = "__test-hooks"))]
    pub(crate) static FAIL_MAP: AtomicU64 = AtomicU64::new(0);
    #[cfg(any(test, feature = "__test-hooks"))]
    pub(crate) static ACCEPT_WITHOUT_USER_TIME: AtomicBool = AtomicBool::new(false);
    #[cfg(any(test, feature = "__test-hooks"))]
    pub(crate) static SYNTHETIC: AtomicBool = AtomicBool::new(false);
    /// The choice between the system-call routes, made for the tests
    /// (0: measured; 1: the event's; 2: the OS call).
    #[cfg(any(test, feature = "__test-hooks"))]
    pub(crate) static CHOICE: core::sync::atomic::AtomicU8 = core::sync::atomic::AtomicU8::new(0);

    /// The choice the tests made, if they made one.
    #[inline(always)]
    pub(crate) fn choice() -> Option<bool> {
        #[cfg(any(test, feature = "__test-hooks"))]
        match CHOICE.load(Ordering::Relaxed) {
            1 => return Some(true),
            2 => return Some(false),
            _ => {}
        }
        None
    }

    /// A `fn(u8)` run at each step (0: none).
    #[cfg(any(test, feature = "__test-hooks"))]
    pub(crate) static STEP: AtomicUsize = AtomicUsize::new(0);

    /// The steps, in the order a thread's first reading meets them.
    pub(crate) const CLAIMED_OPEN: u8 = 0;
    pub(crate) const OPENED: u8 = 1;
    pub(crate) const MAPPED: u8 = 2;
    pub(crate) const KEPT_OR_CLOSED: u8 = 3;
    pub(crate) const SAMPLED: u8 = 4;
    pub(crate) const PUBLISHING: u8 = 5;
    pub(crate) const IN_SEQLOCK: u8 = 6;
    pub(crate) const CLAIMED_REOPEN: u8 = 7;
    pub(crate) const CLAIMED_LEAVE: u8 = 8;
    pub(crate) const LEAVING: u8 = 9;
    /// Their names, by number.
    #[cfg_attr(not(feature = "__test-hooks"), allow(dead_code))]
    pub(crate) const NAMES: [&str; 10] = [
        "claimed the thread's state for its first opening",
        "perf_event_open returned a descriptor",
        "mmap returned the page",
        "closed the descriptor, or kept it for the system-call route",
        "took the event's and the OS clock's first readings",
        "wrote the thread's fields, before publishing its state",
        "inside the page's seqlock window",
        "claimed the state to replace a parent's event in a forked child",
        "claimed the state to leave the page",
        "took the OS reading to leave the page from",
    ];

    /// Makes `hook` fail `times` more times (`u32::MAX`: always) with
    /// `errno` (0: never).
    #[cfg(any(test, feature = "__test-hooks"))]
    pub(crate) fn set_failure(hook: &AtomicU64, errno: i32, times: u32) {
        let word = match errno {
            0 => 0,
            e => u64::from(e as u32) | (u64::from(times) << 32),
        };
        hook.store(word, Ordering::Relaxed);
    }

    /// The errno `hook` fails with now, if it does (counting it).
    #[cfg(any(test, feature = "__test-hooks"))]
    pub(crate) fn failure(hook: &AtomicU64) -> Option<i32> {
        let word = hook.load(Ordering::Relaxed);
        let (errno, times) = (word as u32 as i32, (word >> 32) as u32);
        if word == 0 || times == 0 {
            return None;
        }
        if times != u32::MAX {
            hook.store(word - (1 << 32), Ordering::Relaxed);
        }
        Some(errno)
    }

    #[inline(always)]
    pub(crate) fn accept_without_user_time() -> bool {
        #[cfg(any(test, feature = "__test-hooks"))]
        return ACCEPT_WITHOUT_USER_TIME.load(Ordering::Relaxed);
        #[cfg(not(any(test, feature = "__test-hooks")))]
        false
    }

    /// Runs the step hook, if one is set.
    #[inline(always)]
    pub(crate) fn step(step: u8) {
        #[cfg(any(test, feature = "__test-hooks"))]
        match STEP.load(Ordering::Relaxed) {
            0 => {}
            // SAFETY: only `set_step` stores here, and only `fn(u8)`s.
            f => unsafe { core::mem::transmute::<usize, fn(u8)>(f)(step) },
        }
        let _ = step;
    }

    #[cfg(any(test, feature = "__test-hooks"))]
    pub(crate) fn set_step(hook: Option<fn(u8)>) {
        STEP.store(hook.map_or(0, |f| f as usize), Ordering::Relaxed);
    }

    /// An anonymous, writable page laid out as a perf page that offers
    /// `cap_user_time`, one nanosecond per counter tick from now (a clock of
    /// its own, not the thread's CPU time): what the page route reads on a
    /// kernel without the time extension, in the tests of its transitions.
    /// Recorded in `at` and released like a perf event's page.
    #[cfg(any(test, feature = "__test-hooks"))]
    pub(crate) fn synthetic_page(
        at: &AtomicPtr<u8>,
    ) -> Result<super::Event, super::ThreadCpuFallback> {
        use super::page::{offset, CAP_USER_TIME};
        // SAFETY: a new private anonymous mapping; no existing memory is
        // affected.
        let page = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                super::page_len(),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if page == libc::MAP_FAILED {
            return Err(super::ThreadCpuFallback::NoMemory);
        }
        let bytes = page as *mut u8;
        // SAFETY: every write is inside the new page, at a field's aligned
        // offset.
        unsafe {
            (bytes.add(offset::CAPABILITIES) as *mut u64).write(CAP_USER_TIME);
            (bytes.add(offset::TIME_MULT) as *mut u32).write(1);
            (bytes.add(offset::TIME_OFFSET) as *mut u64)
                .write(crate::source::arch::ticks().wrapping_neg());
        }
        at.store(bytes, Ordering::Relaxed);
        Ok(super::Event { page: bytes })
    }

    /// Withdraws `cap_user_time` from a synthetic page, as the kernel does
    /// from a perf page when it stops trusting the counter.
    #[cfg(any(test, feature = "__test-hooks"))]
    pub(crate) fn withdraw_user_time(event: super::Event) {
        let caps = event.page.wrapping_add(super::page::offset::CAPABILITIES) as *mut u64;
        // SAFETY: a synthetic page is writable and mapped until its event is
        // closed; the caller passes its thread's current event. A volatile
        // write, as the kernel's would be, to a field readers read volatile.
        unsafe { caps.write_volatile(0) };
    }
}
