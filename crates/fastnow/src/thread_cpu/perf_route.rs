//! The perf route's state: the process's decision, and each thread's route
//! and event.
//!
//! A thread's state changes only by a transition that first claims it —
//! one atomic step from the state it read to `BUSY` — and ends by
//! publishing the next state after every field that state needs is
//! written. A signal handler that reads the clock on the same thread, at
//! any instruction of a transition, finds either the old state (before the
//! claim: it may then make that transition itself, and the interrupted
//! claim fails and reads again) or `BUSY` (it makes the OS call): never a
//! state whose fields are half-changed. A fork at any instruction (from
//! such a handler) leaves the child the thread's state as it was, with the
//! parent's process id in it: the child's next reading, or the interrupted
//! one resuming, sees the id differ and replaces the event with its own.
//! The event's page is kept mapped until the thread exits, even after the
//! thread leaves it for the OS call, because a reading this one interrupted
//! may still be inside its seqlock loop.
//!
//! Where the page offers no user-space time, the process measures once
//! whether the event's own system call (`ON_SYSCALL`: `ioctl` and the page)
//! is cheaper than the OS call, and takes it for every thread if it is;
//! each thread then keeps its event's descriptor, checked at every reading
//! (see `Event::refresh`), closed at thread exit only if it is still the
//! event's, and closed in forked children by their fork handler.

use super::{src, ThreadCpuCosts, ThreadCpuFallback, ThreadCpuSource};
use crate::source::os;
use crate::source::thread_cpu::perf::{self, hooks, Event};
use core::sync::atomic::{
    compiler_fence, AtomicI32, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, Ordering,
};

/// The process-wide decision: not yet, the page route (per thread), the
/// event's system call (per thread), or the OS call for every thread
/// (`REFUSED_WHY` says why).
const UNDECIDED: u8 = 0;
const PAGE: u8 = 1;
const SYSCALL: u8 = 2;
const REFUSED: u8 = 3;
static PROCESS: AtomicU8 = AtomicU8::new(UNDECIDED);
static REFUSED_WHY: AtomicU64 = AtomicU64::new(0);
/// What the process measured when it chose between the system calls
/// (`pack`ed; 0: it did not).
static COSTS: AtomicU64 = AtomicU64::new(0);

/// A thread's state: `UNOPENED` until its first reading; `BUSY` while a
/// reading of the thread is in a transition; then `ON_PAGE`, `ON_SYSCALL`
/// or `ON_OS`.
const UNOPENED: u8 = 0;
const BUSY: u8 = 1;
const ON_PAGE: u8 = 2;
const ON_SYSCALL: u8 = 3;
const ON_OS: u8 = 4;

/// One thread's route and event. Atomics (read and written by the thread
/// alone, with `Relaxed` ordering and compiler fences), because a signal
/// handler of the thread may read them at any point of a transition.
struct PerThread {
    state: AtomicU8,
    /// The event's page (null: none). Mapped until the thread exits or
    /// replaces it; in a forked child, the address its fork handler
    /// reserved (see `perf::reserve`).
    page: AtomicPtr<u8>,
    /// The event's descriptor on the system-call route (-1: none), and the
    /// kernel's id of the event, which tells whether the descriptor still
    /// refers to it.
    fd: AtomicI32,
    id: AtomicU64,
    /// The process the event was opened for (recorded before opening).
    pid: AtomicU32,
    /// The OS clock at the opening minus the event's time then.
    base: AtomicU64,
    /// The last reading (the floor of the next, and where the OS call
    /// continues from should the thread leave the event).
    last: AtomicU64,
    /// Added to OS readings after leaving the event.
    lag: AtomicU64,
    /// Why this thread is on the OS call (`ThreadCpuFallback::to_code`).
    why: AtomicU64,
}

std::thread_local! {
    /// No destructor, so readable to the very end of the thread: from a
    /// signal handler, another thread-local's destructor, or a fork handler.
    static THREAD: PerThread = const {
        PerThread {
            state: AtomicU8::new(UNOPENED),
            page: AtomicPtr::new(core::ptr::null_mut()),
            fd: AtomicI32::new(-1),
            id: AtomicU64::new(0),
            pid: AtomicU32::new(0),
            base: AtomicU64::new(0),
            last: AtomicU64::new(0),
            lag: AtomicU64::new(0),
            why: AtomicU64::new(0),
        }
    };
    /// Registered by a thread's first opening; its destructor releases the
    /// thread's event at thread exit.
    static RELEASE: Release = const { Release };
}

struct Release;

impl Drop for Release {
    fn drop(&mut self) {
        THREAD.with(|t| {
            let was = t.state.swap(BUSY, Ordering::Relaxed);
            compiler_fence(Ordering::SeqCst);
            // Readings from later destructors make the OS call, continuing
            // from the event's last reading (or as the thread already did).
            if was == ON_PAGE || was == ON_SYSCALL {
                t.settle_on_os(None);
            } else {
                t.publish(ON_OS);
            }
            t.release_event();
        });
    }
}

#[inline]
pub(super) fn read_nanos() -> u64 {
    if PROCESS.load(Ordering::Relaxed) == REFUSED {
        return src::os_nanos();
    }
    THREAD.with(PerThread::read)
}

pub(super) fn route() -> (
    ThreadCpuSource,
    Option<ThreadCpuFallback>,
    Option<ThreadCpuCosts>,
) {
    let costs = unpack(COSTS.load(Ordering::Relaxed));
    if PROCESS.load(Ordering::Relaxed) == REFUSED {
        let why = ThreadCpuFallback::from_code(REFUSED_WHY.load(Ordering::Relaxed));
        return (src::os_source(), why, costs);
    }
    THREAD.with(|t| match t.state.load(Ordering::Relaxed) {
        ON_PAGE => (ThreadCpuSource::PerfPage, None, costs),
        ON_SYSCALL => (
            ThreadCpuSource::PerfIoctl,
            Some(ThreadCpuFallback::NoUserTime),
            costs,
        ),
        _ => (
            src::os_source(),
            ThreadCpuFallback::from_code(t.why.load(Ordering::Relaxed)),
            costs,
        ),
    })
}

/// `ThreadCpuCosts` in one word (0: none).
fn pack(c: ThreadCpuCosts) -> u64 {
    u64::from(c.os_call_ns.min((1 << 30) - 1))
        | u64::from(c.perf_ioctl_ns) << 32
        | u64::from(c.perf_ioctl_taken) << 31
        | 1 << 30
}

fn unpack(word: u64) -> Option<ThreadCpuCosts> {
    (word != 0).then_some(ThreadCpuCosts {
        os_call_ns: (word as u32) & ((1 << 30) - 1),
        perf_ioctl_ns: (word >> 32) as u32,
        perf_ioctl_taken: word & 1 << 31 != 0,
    })
}

/// Registers `after_fork_in_child` with libc, once, before any thread maps
/// a page (a thread that comes here while another registers waits for it).
fn watch_forks() {
    static WATCH: std::sync::Once = std::sync::Once::new();
    extern "C" fn after_fork_in_child() {
        THREAD.with(|t| perf::reserve(&t.page));
        descriptors::close_all();
    }
    // SAFETY: registers a plain extern "C" function, run in the child on
    // the thread that forked (the only one there), after fork.
    WATCH.call_once(|| unsafe {
        libc::pthread_atfork(None, None, Some(after_fork_in_child));
    });
}

/// The descriptors threads keep on the system-call route, so that a forked
/// child (which inherits them all, each referring to an event of a parent
/// thread) closes them at once, in its fork handler. A fixed table: a
/// process with more threads on the route than it has slots leaves the
/// others' descriptors open in its children (closed at `exec`: they are
/// close-on-exec).
mod descriptors {
    use core::sync::atomic::{AtomicI32, AtomicU64, Ordering};

    const SLOTS: usize = 256;
    struct Slot {
        fd: AtomicI32,
        id: AtomicU64,
    }
    #[allow(clippy::declare_interior_mutable_const)] // a template for the table
    const FREE: Slot = Slot {
        fd: AtomicI32::new(-1),
        id: AtomicU64::new(0),
    };
    static TABLE: [Slot; SLOTS] = [FREE; SLOTS];

    /// Records `fd` (the event `id`); false if the table is full.
    pub(super) fn add(fd: i32, id: u64) -> bool {
        TABLE.iter().any(|slot| {
            slot.fd.load(Ordering::Relaxed) == -1
                && slot
                    .fd
                    .compare_exchange(-1, -2, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                && {
                    slot.id.store(id, Ordering::Relaxed);
                    slot.fd.store(fd, Ordering::Release);
                    true
                }
        })
    }

    /// Forgets `fd` (before its owner closes it).
    pub(super) fn remove(fd: i32) {
        if let Some(slot) = TABLE.iter().find(|s| s.fd.load(Ordering::Relaxed) == fd) {
            slot.fd.store(-1, Ordering::Release);
        }
    }

    /// In a forked child: closes every recorded descriptor that still
    /// refers to its event, and empties the table.
    pub(super) fn close_all() {
        for slot in &TABLE {
            let fd = slot.fd.swap(-1, Ordering::Acquire);
            if fd >= 0 {
                super::perf::close_if_event(fd, slot.id.load(Ordering::Relaxed));
            }
        }
    }
}

impl PerThread {
    #[inline]
    fn read(&self) -> u64 {
        let state = self.state.load(Ordering::Relaxed);
        compiler_fence(Ordering::Acquire);
        match state {
            ON_PAGE => self.read_page(),
            ON_SYSCALL => self.read_syscall(),
            ON_OS => self.read_os(),
            UNOPENED => self.open(),
            _ => self.meanwhile(),
        }
    }

    #[inline]
    fn read_os(&self) -> u64 {
        let nanos = src::os_nanos().saturating_add(self.lag.load(Ordering::Relaxed));
        // In a forked child, the thread is a new one: its readings do not
        // continue the parent thread's, and it may open an event of its
        // own. (A transition that a fork interrupted also ends here, in
        // the child, with the parent's process id.)
        compiler_fence(Ordering::SeqCst);
        if self.pid.load(Ordering::Relaxed) != os::pid() {
            return self.forked(ON_OS);
        }
        nanos
    }

    #[inline]
    fn read_page(&self) -> u64 {
        let nanos = Event::at(self.page.load(Ordering::Relaxed)).and_then(|e| e.read());
        self.after_event(ON_PAGE, nanos)
    }

    #[inline]
    fn read_syscall(&self) -> u64 {
        let nanos = Event::at(self.page.load(Ordering::Relaxed))
            .and_then(|e| e.refresh(self.fd.load(Ordering::Relaxed)));
        self.after_event(ON_SYSCALL, nanos)
    }

    /// The rest of a reading of the event on route `route`: `nanos` is the
    /// event's time, or `None` if the route stopped giving it.
    #[inline]
    fn after_event(&self, route: u8, nanos: Option<u64>) -> u64 {
        // Checked after the read: a child forked (in a signal handler) while
        // this reading was under way resumes it here, having read the zeros
        // reserved at the fork, and must not return what it read.
        compiler_fence(Ordering::SeqCst);
        if self.pid.load(Ordering::Relaxed) != os::pid() {
            return self.forked(route);
        }
        let Some(nanos) = nanos else {
            return self.leave_event(route);
        };
        let last = self.last.load(Ordering::Relaxed);
        let nanos = nanos
            .wrapping_add(self.base.load(Ordering::Relaxed))
            .max(last);
        self.last.store(nanos, Ordering::Relaxed);
        compiler_fence(Ordering::SeqCst);
        if self.state.load(Ordering::Relaxed) != route {
            // A signal handler left the event during this reading,
            // continuing from an older last reading than this one.
            return self.left_meanwhile(nanos);
        }
        nanos
    }

    /// A reading while the thread's state is in a transition (a signal
    /// handler that interrupted one): the OS call, raised to the thread's
    /// last reading and recorded, so that the state the transition
    /// publishes starts at or above it. In a forked child before the
    /// transition took the child's process id, the thread's readings are
    /// the parent's, and the OS call alone is the answer.
    #[cold]
    #[inline(never)]
    fn meanwhile(&self) -> u64 {
        let os = src::os_nanos();
        if self.pid.load(Ordering::Relaxed) != os::pid() {
            return os;
        }
        let nanos = os.max(self.last.load(Ordering::Relaxed));
        self.last.fetch_max(nanos, Ordering::Relaxed);
        nanos
    }

    /// A reading of the event (`nanos`) that a signal handler's departure
    /// from the event overtook: the OS route's offset is raised so that the
    /// readings after this one continue from it too.
    #[cold]
    #[inline(never)]
    fn left_meanwhile(&self, nanos: u64) -> u64 {
        let os = src::os_nanos();
        self.lag
            .fetch_max(nanos.saturating_sub(os), Ordering::Relaxed);
        nanos
    }

    /// Claims the thread's state from `from`; false if a signal handler got
    /// there first (then the caller reads again, in the new state).
    #[inline]
    fn claim(&self, from: u8) -> bool {
        let claimed = self
            .state
            .compare_exchange(from, BUSY, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok();
        compiler_fence(Ordering::SeqCst);
        claimed
    }

    /// Publishes `state`, after every field it needs.
    #[inline]
    fn publish(&self, state: u8) {
        compiler_fence(Ordering::SeqCst);
        self.state.store(state, Ordering::Relaxed);
    }

    #[cold]
    #[inline(never)]
    fn open(&self) -> u64 {
        if !self.claim(UNOPENED) {
            return self.read();
        }
        hooks::step(hooks::CLAIMED_OPEN);
        self.open_claimed()
    }

    /// Opens an event for the thread, whose state this reading claimed.
    fn open_claimed(&self) -> u64 {
        // Recorded before the event exists: a fork from here on leaves the
        // child an event recorded as the parent's, which it replaces.
        let pid = os::pid();
        self.pid.store(pid, Ordering::Relaxed);
        compiler_fence(Ordering::SeqCst);
        // A thread past its thread-locals' destructors cannot register the
        // one that releases the event: it stays on the OS call.
        if RELEASE.try_with(|_| ()).is_err() {
            return self.settle_on_os(None);
        }
        watch_forks();
        let (event, user_time) = match Event::open(&self.page, Some(&self.fd)) {
            Ok(opened) => opened,
            Err(why) => return self.refused(why),
        };
        if os::pid() != pid {
            // Forked (in a signal handler) during the opening: the event
            // may be the parent thread's. What is mapped at the page's
            // address in this child is the child's own, and the descriptor
            // the child's copy; release them and open again.
            self.release_event();
            return self.open_claimed();
        }
        let route = match user_time {
            true => ON_PAGE,
            false => match self.take_syscall(event) {
                Some(route) => route,
                None => {
                    self.release_event();
                    return self.refused(ThreadCpuFallback::NoUserTime);
                }
            },
        };
        let fd = self.fd.load(Ordering::Relaxed);
        let read = |e: Event| match route {
            ON_PAGE => e.read(),
            _ => e.refresh(fd),
        };
        // The event's time and the OS's, back to back: the offset that
        // puts the event's readings on the OS clock's timeline.
        let at_open = read(event).unwrap_or(0);
        let os = src::os_nanos();
        hooks::step(hooks::SAMPLED);
        self.base.store(os.wrapping_sub(at_open), Ordering::Relaxed);
        // At or above what signal handlers read meanwhile.
        let start = os.max(self.last.fetch_max(os, Ordering::Relaxed));
        hooks::step(hooks::PUBLISHING);
        self.publish(route);
        let decided = if route == ON_PAGE { PAGE } else { SYSCALL };
        let _ = PROCESS.compare_exchange(UNDECIDED, decided, Ordering::Relaxed, Ordering::Relaxed);
        start
    }

    /// An event whose page offers no user-space time, its descriptor kept:
    /// whether the thread takes the system-call route (`Some(ON_SYSCALL)`),
    /// deciding for the process if it has not decided. On `Some`, the
    /// descriptor is recorded for forked children.
    fn take_syscall(&self, event: Event) -> Option<u8> {
        let fd = self.fd.load(Ordering::Relaxed);
        let Some(id) = perf::event_id(fd) else {
            // Closed under us already (by code that closes descriptors it
            // did not open): the number is not ours to close.
            self.fd.store(-1, Ordering::Relaxed);
            return None;
        };
        self.id.store(id, Ordering::Relaxed);
        if PROCESS.load(Ordering::Relaxed) != SYSCALL {
            let mine = measure(event, fd)?;
            let mine = hooks::choice().map_or(mine, |taken| ThreadCpuCosts {
                perf_ioctl_taken: taken,
                ..mine
            });
            // The first thread to finish measuring decides for all (two
            // threads may measure at once, and see different costs).
            let costs =
                match COSTS.compare_exchange(0, pack(mine), Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) => mine,
                    Err(first) => unpack(first).unwrap_or(mine),
                };
            if !costs.perf_ioctl_taken {
                return None;
            }
            PROCESS.store(SYSCALL, Ordering::Relaxed);
        }
        descriptors::add(fd, id);
        Some(ON_SYSCALL)
    }

    /// The opening was refused: the OS call, for this thread, or for every
    /// thread if every thread would meet the refusal.
    fn refused(&self, why: ThreadCpuFallback) -> u64 {
        if why.process_wide() {
            REFUSED_WHY.store(why.to_code(), Ordering::Relaxed);
            PROCESS.store(REFUSED, Ordering::Relaxed);
        }
        self.settle_on_os(Some(why))
    }

    /// Publishes the OS call as the thread's route (its state claimed),
    /// continuing from the thread's last reading; `why`, if given, is the
    /// reason to report.
    fn settle_on_os(&self, why: Option<ThreadCpuFallback>) -> u64 {
        if let Some(why) = why {
            self.why.store(why.to_code(), Ordering::Relaxed);
        }
        let os = src::os_nanos();
        hooks::step(hooks::LEAVING);
        let lag = self.last.load(Ordering::Relaxed).saturating_sub(os);
        self.lag.store(lag, Ordering::Relaxed);
        self.publish(ON_OS);
        os.saturating_add(lag)
    }

    /// The event stopped giving its time on route `route` (the page no
    /// longer offers `cap_user_time`; the descriptor no longer refers to
    /// the event): the OS call from now on, continuing from the last
    /// reading. The page stays mapped until the thread exits (an
    /// interrupted reading may be inside its seqlock loop); a descriptor
    /// that is no longer the event's is left alone.
    #[cold]
    #[inline(never)]
    fn leave_event(&self, route: u8) -> u64 {
        if !self.claim(route) {
            return self.read();
        }
        hooks::step(hooks::CLAIMED_LEAVE);
        let why = match route {
            ON_PAGE => ThreadCpuFallback::NoUserTime,
            _ => {
                self.release_descriptor();
                ThreadCpuFallback::DescriptorLost
            }
        };
        self.settle_on_os(Some(why))
    }

    /// In a forked child: the event counts the parent's thread, and its
    /// page was not copied. Release what the child has of it (the zeros its
    /// fork handler reserved at the page's address; its copy of the
    /// descriptor, if the fork handler did not close it) and open the child
    /// thread's own; readings taken before the fork belong to the parent's
    /// thread and are not comparable with the child's.
    #[cold]
    #[inline(never)]
    fn forked(&self, route: u8) -> u64 {
        if !self.claim(route) {
            return self.read();
        }
        hooks::step(hooks::CLAIMED_REOPEN);
        self.release_event();
        self.last.store(0, Ordering::Relaxed);
        self.lag.store(0, Ordering::Relaxed);
        self.why.store(0, Ordering::Relaxed);
        self.open_claimed()
    }

    /// Closes the thread's descriptor if it still refers to the event (its
    /// state claimed, or the thread exiting), and forgets it.
    fn release_descriptor(&self) {
        let fd = self.fd.load(Ordering::Relaxed);
        if fd >= 0 {
            descriptors::remove(fd);
            perf::close_if_event(fd, self.id.load(Ordering::Relaxed));
            self.fd.store(-1, Ordering::Relaxed);
        }
    }

    /// Releases the thread's descriptor and unmaps its page, if it has them
    /// (its state claimed, or the thread exiting).
    fn release_event(&self) {
        self.release_descriptor();
        if let Some(event) = Event::at(self.page.load(Ordering::Relaxed)) {
            event.close_in_place(&self.page);
        }
    }
}

/// The two system-call routes measured side by side on the calling thread
/// (`ThreadCpuCosts::ROUNDS` rounds, the order alternating), and the
/// choice; `None` if the event's route failed meanwhile.
fn measure(event: Event, fd: i32) -> Option<ThreadCpuCosts> {
    let perf = || event.refresh(fd).map(core::hint::black_box).is_some();
    let os = || {
        core::hint::black_box(src::os_nanos());
        true
    };
    let per_call = |f: &dyn Fn() -> bool| -> Option<u32> {
        let start = os::monotonic_nanos();
        for _ in 0..ThreadCpuCosts::CALLS {
            if !f() {
                return None;
            }
        }
        let took = os::monotonic_nanos().saturating_sub(start);
        Some(u32::try_from(took / u64::from(ThreadCpuCosts::CALLS)).unwrap_or(u32::MAX))
    };
    // Warm both paths.
    for _ in 0..2 {
        if !(perf() && os()) {
            return None;
        }
    }
    let (mut os_ns, mut perf_ns) = ([0; ThreadCpuCosts::ROUNDS], [0; ThreadCpuCosts::ROUNDS]);
    for round in 0..ThreadCpuCosts::ROUNDS {
        if round % 2 == 0 {
            os_ns[round] = per_call(&os)?;
            perf_ns[round] = per_call(&perf)?;
        } else {
            perf_ns[round] = per_call(&perf)?;
            os_ns[round] = per_call(&os)?;
        }
    }
    Some(ThreadCpuCosts::choose(os_ns, perf_ns))
}

/// Test hooks: forget the process-wide decision and this thread's state
/// (releasing its event), so that the next reading decides again.
#[cfg(any(test, feature = "__test-hooks"))]
pub(crate) fn reset() {
    PROCESS.store(UNDECIDED, Ordering::Relaxed);
    COSTS.store(0, Ordering::Relaxed);
    THREAD.with(|t| {
        t.state.store(BUSY, Ordering::Relaxed);
        compiler_fence(Ordering::SeqCst);
        t.release_event();
        for field in [&t.last, &t.lag, &t.why, &t.base] {
            field.store(0, Ordering::Relaxed);
        }
        t.publish(UNOPENED);
    });
}

/// Test hooks: withdraws `cap_user_time` from the calling thread's page, a
/// synthetic one (see `perf::hooks::synthetic_page`).
#[cfg(feature = "__test-hooks")]
pub(crate) fn withdraw_user_time() {
    THREAD.with(|t| {
        if let Some(event) = Event::at(t.page.load(Ordering::Relaxed)) {
            hooks::withdraw_user_time(event);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The costs survive their one word, and no costs are the word 0.
        #[test]
        fn costs_round_trip(os in 0u32..1 << 30, perf: u32, taken: bool) {
            let c = ThreadCpuCosts { os_call_ns: os, perf_ioctl_ns: perf, perf_ioctl_taken: taken };
            prop_assert_ne!(pack(c), 0);
            prop_assert_eq!(unpack(pack(c)), Some(c));
        }
    }
}
