//! The perf route of `ThreadCpuInstant` through the faults of its fault
//! model (spec/SEMANTICS.md, "Thread CPU time"): a fork and a signal at
//! every step of an opening and of a reading — a forked child never touches
//! memory that is not fastnow's (perf mappings are not copied into a child,
//! so the parent's page address is free for the child's own mappings), and
//! a signal handler that reads the clock while its thread is between two
//! states never leaks or unmaps an event — and `perf_event_open` or `mmap`
//! failing with each errno a process meets.
//!
//! Every scenario runs in a re-executed test binary (the route is decided
//! once per process, and the hooks are process-wide), whose test thread
//! opens its event on a perf page the test hooks accept even where the
//! kernel offers no `cap_user_time`.
#![cfg(all(
    any(target_os = "linux", target_os = "android"),
    any(target_arch = "x86_64", target_arch = "aarch64")
))]

mod common;
mod thread_cpu_support;

use fastnow::{__test, ThreadCpuInstant, ThreadCpuSource};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::time::Duration;
use thread_cpu_support::{in_child, in_fork, perf_mappings, run_child};

/// In a re-executed scenario (and not in the test run that re-executes
/// it): opens this thread's event (on any kernel with perf events) and
/// returns its page's addresses; `None`, with the reason printed, where
/// there is none to open.
fn open_on_this_thread() -> Option<(usize, usize)> {
    if !in_child() {
        return None;
    }
    __test::thread_cpu_accept_without_user_time(true);
    let _ = ThreadCpuInstant::now();
    if fastnow::clock_info().thread_cpu != ThreadCpuSource::PerfPage {
        eprintln!("skipped: no perf events in this process");
        return None;
    }
    let maps = perf_mappings();
    assert_eq!(maps.len(), 1, "{maps:x?}");
    Some(maps[0])
}

/// Maps an anonymous, writable page where the kernel chooses (in a child,
/// before fastnow reserves it, the parent's perf page address: the kernel
/// does not copy perf mappings, and the hole is the first fit), and writes
/// 42 in it.
fn map_a_page(len: usize) -> *mut u8 {
    // SAFETY: a new private anonymous mapping, where the kernel chooses.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED);
    let p = p as *mut u8;
    // SAFETY: `p` is the start of the writable page just mapped.
    unsafe { p.write_volatile(42) };
    p
}

/// The child's page still holds 42 and still takes a write.
fn page_intact(p: *mut u8) -> bool {
    // SAFETY: `p` was mapped writable by `map_at`; if fastnow unmapped it or
    // mapped its read-only perf page over it, these accesses fault, and the
    // child dies of SIGSEGV, which the parent reports.
    unsafe {
        let ok = p.read_volatile() == 42;
        p.write_volatile(43);
        ok && p.read_volatile() == 43
    }
}

/// A forked child's first reading leaves the child's own memory alone (a
/// page it mapped just before, which without fastnow's reservation lands at
/// the parent's perf page address), and reads from an event of its own.
#[test]
fn a_childs_first_reading_keeps_its_memory() {
    run_child("child_first_reading_keeps_its_memory");
}

#[test]
#[ignore = "run by a_childs_first_reading_keeps_its_memory in a child process"]
fn child_first_reading_keeps_its_memory() {
    let Some((start, end)) = open_on_this_thread() else {
        return;
    };
    let child = in_fork(20, || {
        let p = map_a_page(end - start);
        let t = ThreadCpuInstant::now();
        if !page_intact(p) {
            return 5;
        }
        let maps = perf_mappings();
        // The child's own event, and not where its page is.
        let own = maps.len() == 1 && maps[0].0 != p as usize;
        let cpu = t.elapsed() < Duration::from_secs(1);
        if own && cpu {
            0
        } else {
            6
        }
    });
    child.unwrap();
    assert_eq!(perf_mappings(), vec![(start, end)], "the parent's page");
}

static AT_EXIT_PAGE: AtomicPtr<u8> = AtomicPtr::new(core::ptr::null_mut());

extern "C" fn check_page_at_exit() {
    let ok = page_intact(AT_EXIT_PAGE.load(Ordering::Relaxed));
    // SAFETY: ends the child here, past the thread-local destructors
    // (glibc's `exit` runs them before the `atexit` handlers).
    unsafe { libc::_exit(if ok { 0 } else { 7 }) };
}

/// A child that never reads the clock and leaves through `exit()` (which
/// runs the thread's thread-local destructors, fastnow's among them) keeps
/// its own memory to the end.
#[test]
fn a_child_that_exits_keeps_its_memory() {
    run_child("child_that_exits_keeps_its_memory");
}

#[test]
#[ignore = "run by a_child_that_exits_keeps_its_memory in a child process"]
fn child_that_exits_keeps_its_memory() {
    let Some((start, end)) = open_on_this_thread() else {
        return;
    };
    let child = in_fork(20, || {
        let p = map_a_page(end - start);
        AT_EXIT_PAGE.store(p, Ordering::Relaxed);
        // SAFETY: registers a plain extern "C" function, then leaves through
        // `exit`, whose last handler `_exit`s.
        unsafe {
            libc::atexit(check_page_at_exit);
            libc::exit(8) // 8 if the handler did not run
        }
    });
    child.unwrap();
}

static HANDLED: AtomicU64 = AtomicU64::new(0);
static HANDLER_READING: AtomicU64 = AtomicU64::new(0);

extern "C" fn read_in_handler(_: libc::c_int) {
    HANDLER_READING.store(ThreadCpuInstant::now().as_nanos(), Ordering::Relaxed);
    HANDLED.fetch_add(1, Ordering::Relaxed);
}

fn install_handler(signal: libc::c_int) {
    // SAFETY: a zeroed sigaction is valid; the handler has the signature
    // sa_handler expects; SA_RESTART keeps interrupted calls going.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = read_in_handler as *const () as usize;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        assert_eq!(libc::sigaction(signal, &sa, std::ptr::null_mut()), 0);
    }
}

/// Arms a one-shot `CLOCK_MONOTONIC` timer that sends SIGUSR1 to this
/// process `micros` from now.
fn signal_in(micros: u64) {
    // SAFETY: a zeroed sigevent is valid; the kernel writes the timer's id
    // to `timer`; the itimerspec is a valid one-shot value.
    unsafe {
        let mut ev: libc::sigevent = std::mem::zeroed();
        ev.sigev_notify = libc::SIGEV_SIGNAL;
        ev.sigev_signo = libc::SIGUSR1;
        let mut timer: libc::timer_t = std::mem::zeroed();
        assert_eq!(
            libc::timer_create(libc::CLOCK_MONOTONIC, &mut ev, &mut timer),
            0
        );
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: 0,
                tv_nsec: (micros * 1_000) as libc::c_long,
            },
        };
        assert_eq!(
            libc::timer_settime(timer, 0, &spec, std::ptr::null_mut()),
            0
        );
    }
}

/// Many forked children, each interrupted by a signal 1 to 39 µs after the
/// fork, while its first reading replaces the parent's event with its own;
/// the handler reads the clock too. Each child ends with exactly one perf
/// mapping (its own: none leaked), and neither reading faults.
#[test]
fn a_signal_during_a_childs_first_reading_leaks_nothing() {
    run_child("child_signal_during_first_reading");
}

#[test]
#[ignore = "run by a_signal_during_a_childs_first_reading_leaks_nothing in a child process"]
fn child_signal_during_first_reading() {
    if open_on_this_thread().is_none() {
        return;
    }
    install_handler(libc::SIGUSR1);
    let children = if std::env::var_os("FASTNOW_TEST_RUNNER").is_some() {
        40 // emulated: slow forks
    } else {
        1_200
    };
    let mut failures = Vec::new();
    for i in 0..children {
        let result = in_fork(20, || {
            signal_in(1 + i % 39);
            let first = ThreadCpuInstant::now().as_nanos();
            // Wait (up to a second) for the signal if it has not come yet.
            let deadline = std::time::Instant::now() + Duration::from_secs(1);
            while HANDLED.load(Ordering::Relaxed) == 0 && std::time::Instant::now() < deadline {
                std::hint::spin_loop();
            }
            let maps = perf_mappings().len();
            let later = ThreadCpuInstant::now().as_nanos();
            let in_handler = HANDLER_READING.load(Ordering::Relaxed);
            match () {
                _ if HANDLED.load(Ordering::Relaxed) == 0 => 9,
                _ if maps != 1 => 10 + maps.min(9) as i32,
                _ if later < first || later < in_handler => 20,
                _ => 0,
            }
        });
        if let Err(e) = result {
            failures.push(format!("child {i} (signal after {} µs): {e}", 1 + i % 39));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {children} children failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------
// A signal, or a fork, at every step of an opening and of a reading.
// ---------------------------------------------------------------------------

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU8};

/// What the step hook does when it meets its step.
const DISARMED: u8 = 0;
const SIGNAL: u8 = 1;
const FORK: u8 = 2;
/// Withdraws `cap_user_time` from the thread's (synthetic) page, then
/// raises the signal: the handler finds unusable a page that the
/// interrupted reading found usable.
const WITHDRAW_AND_SIGNAL: u8 = 3;
const ANY_STEP: u8 = u8::MAX;

static ACTION: AtomicU8 = AtomicU8::new(DISARMED);
static TARGET: AtomicU8 = AtomicU8::new(ANY_STEP);
static REACHED: AtomicBool = AtomicBool::new(false);
static IN_FORKED: AtomicBool = AtomicBool::new(false);
static FORKED_PID: AtomicI32 = AtomicI32::new(0);
static FORKED_PAGE: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());

fn at_step(step: u8) {
    let target = TARGET.load(Ordering::Relaxed);
    if target != ANY_STEP && target != step {
        return;
    }
    let action = ACTION.swap(DISARMED, Ordering::Relaxed);
    if action == DISARMED {
        return;
    }
    REACHED.store(true, Ordering::Relaxed);
    if action == WITHDRAW_AND_SIGNAL {
        __test::thread_cpu_withdraw_user_time();
    }
    if action != FORK {
        // SAFETY: raise delivers SIGUSR1, which has a handler, to this thread.
        unsafe { libc::raise(libc::SIGUSR1) };
        return;
    }
    // SAFETY: fork has no preconditions; the child continues the reading
    // this step interrupted, checks what follows it (`after`) and `_exit`s.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: alarm takes a plain value.
        unsafe { libc::alarm(20) };
        IN_FORKED.store(true, Ordering::Relaxed);
        // The child's own memory, mapped before its readings go on.
        FORKED_PAGE.store(map_a_page(4096), Ordering::Relaxed);
        // And a signal at the child's next step.
        HANDLED.store(0, Ordering::Relaxed);
        TARGET.store(ANY_STEP, Ordering::Relaxed);
        ACTION.store(SIGNAL, Ordering::Relaxed);
    } else {
        FORKED_PID.store(pid, Ordering::Relaxed);
    }
}

/// What must hold once a reading interrupted at a step (`first`, its
/// result) has returned, in the process that took it and in a child forked
/// at the step: the readings that follow never go below it (in the parent)
/// or below what the signal handler read; the thread has `perf_maps` perf
/// mappings, if given; a forked child's own memory is intact. 0, or what
/// failed.
fn after(first: u64, perf_maps: Option<usize>) -> i32 {
    ACTION.store(DISARMED, Ordering::Relaxed);
    let second = ThreadCpuInstant::now().as_nanos();
    thread_cpu_support::burn(Duration::from_millis(1));
    let third = ThreadCpuInstant::now().as_nanos();
    let handler = match HANDLED.load(Ordering::Relaxed) {
        0 => 0,
        _ => HANDLER_READING.load(Ordering::Relaxed),
    };
    // In a child forked at the step, the interrupted reading began in the
    // parent: its result is the parent thread's, not comparable with the
    // child thread's (as any reading from before a fork).
    let floor = match IN_FORKED.load(Ordering::Relaxed) {
        true => handler,
        false => first.max(handler),
    };
    if second < floor || third < second {
        eprintln!("readings {first} (handler {handler}), then {second}, {third}");
        return 30;
    }
    if let Some(n) = perf_maps {
        if perf_mappings().len() != n {
            eprintln!("perf mappings {:x?}, want {n}", perf_mappings());
            return 31;
        }
    }
    if IN_FORKED.load(Ordering::Relaxed) && !page_intact(FORKED_PAGE.load(Ordering::Relaxed)) {
        return 32;
    }
    0
}

/// `after`, then: a forked child exits with its result; the parent waits
/// for the child it forked at the step, if it did.
fn finish(first: u64, perf_maps: Option<usize>) -> i32 {
    let code = after(first, perf_maps);
    if IN_FORKED.load(Ordering::Relaxed) {
        // SAFETY: ends the child forked at the step.
        unsafe { libc::_exit(code) };
    }
    match FORKED_PID.swap(0, Ordering::Relaxed) {
        0 => code,
        pid => {
            let mut status = 0;
            // SAFETY: waits for our own child.
            assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
            match (code, libc::WIFEXITED(status), libc::WEXITSTATUS(status)) {
                (0, true, 0) => 0,
                (0, true, child) => 100 + child,
                (0, false, _) => 200 + libc::WTERMSIG(status).min(50),
                (code, _, _) => code,
            }
        }
    }
}

/// A thread's first reading, on a perf page (the hooks accept one without
/// `cap_user_time`).
fn new_threads_first_reading() -> i32 {
    std::thread::spawn(|| {
        let first = ThreadCpuInstant::now().as_nanos();
        finish(first, Some(1))
    })
    .join()
    .unwrap()
}

/// A forked child's first reading, on the thread that opened an event in
/// the parent.
fn childs_first_reading() -> i32 {
    let first = ThreadCpuInstant::now().as_nanos();
    finish(first, Some(1))
}

/// A reading on a (synthetic) page that no longer offers `cap_user_time`.
fn reading_that_leaves_the_page() -> i32 {
    std::thread::spawn(|| {
        let before = ThreadCpuInstant::now().as_nanos();
        __test::thread_cpu_withdraw_user_time();
        let action = ACTION.swap(DISARMED, Ordering::Relaxed);
        // (armed only now: the opening above met the same steps)
        ACTION.store(action, Ordering::Relaxed);
        let first = ThreadCpuInstant::now().as_nanos();
        let info = fastnow::clock_info();
        match finish(first.min(before), Some(0)) {
            0 if first < before => 33,
            0 if info.thread_cpu_fallback != Some(fastnow::ThreadCpuFallback::NoUserTime) => 34,
            code => code,
        }
    })
    .join()
    .unwrap()
}

/// A reading on a (synthetic) page that offers `cap_user_time`, during
/// which a signal handler finds the page withdrawn and leaves it.
fn reading_overtaken_by_a_handler_that_leaves() -> i32 {
    std::thread::spawn(|| {
        let action = ACTION.swap(DISARMED, Ordering::Relaxed);
        let before = ThreadCpuInstant::now().as_nanos();
        ACTION.store(action, Ordering::Relaxed);
        let first = ThreadCpuInstant::now().as_nanos();
        match finish(first, Some(0)) {
            0 if first < before => 33,
            code => code,
        }
    })
    .join()
    .unwrap()
}

/// Runs `scenario` in a fresh child process once per step it goes through
/// and per action, the hook acting at that step; collects what failed.
/// Which route a scenario's thread opens.
#[derive(Clone, Copy)]
enum On {
    /// A perf page (accepted without `cap_user_time`: stale, but the
    /// event's).
    Page,
    /// A synthetic page offering `cap_user_time`.
    Synthetic,
    /// The system-call route.
    Syscall,
}

/// Runs `scenario` in a fresh child process once per step it goes through
/// and per action, the hook acting at that step; collects what failed.
fn at_every_step(
    name: &str,
    scenario: fn() -> i32,
    steps: &[u8],
    actions: &[u8],
    on: On,
    failures: &mut Vec<String>,
) {
    for &step in steps {
        for &action in actions {
            let result = in_fork(30, || {
                __test::thread_cpu_synthetic_pages(matches!(on, On::Synthetic));
                __test::thread_cpu_accept_without_user_time(matches!(on, On::Page));
                __test::thread_cpu_choose_perf_ioctl(Some(matches!(on, On::Syscall)));
                __test::thread_cpu_at_step(Some(at_step));
                HANDLED.store(0, Ordering::Relaxed);
                TARGET.store(step, Ordering::Relaxed);
                ACTION.store(action, Ordering::Relaxed);
                let code = scenario();
                match (code, REACHED.load(Ordering::Relaxed)) {
                    (0, false) => 40, // the scenario does not go through this step
                    (0, true) if action != FORK && HANDLED.load(Ordering::Relaxed) == 0 => 41,
                    (code, _) => code,
                }
            });
            if let Err(e) = result {
                failures.push(format!(
                    "{name}, {} at step {step} ({}): {e}",
                    ["", "signal", "fork", "withdrawal and signal"][action as usize],
                    __test::THREAD_CPU_STEPS[step as usize]
                ));
            }
        }
    }
}

/// A reading on the system-call route after the program closed the
/// thread's descriptor and put a pipe at its number.
fn reading_that_finds_its_descriptor_replaced() -> i32 {
    let main_thread = thread_cpu_support::perf_descriptors();
    std::thread::spawn(move || {
        let action = ACTION.swap(DISARMED, Ordering::Relaxed);
        let before = ThreadCpuInstant::now().as_nanos();
        let fds = thread_cpu_support::perf_descriptors();
        let Some(&fd) = fds.iter().find(|fd| !main_thread.contains(fd)) else {
            return 35;
        };
        let mut pipe = [0; 2];
        // SAFETY: the test takes the number over for a pipe of its own.
        unsafe {
            libc::close(fd);
            assert_eq!(libc::pipe(pipe.as_mut_ptr()), 0);
            assert_eq!(libc::dup2(pipe[0], fd), fd);
        }
        ACTION.store(action, Ordering::Relaxed);
        let first = ThreadCpuInstant::now().as_nanos();
        match finish(first, Some(1)) {
            0 if first < before => 33,
            code => code,
        }
    })
    .join()
    .unwrap()
}

/// Every transition of the perf route, interrupted at each of its steps by
/// a signal handler that reads the clock, or by a fork (whose child maps
/// memory of its own, continues, and is then interrupted by a signal at its
/// own next step): no fault, no leaked or foreign perf mapping, the child's
/// memory intact, and no reading below one taken before it returned.
#[test]
fn a_signal_or_a_fork_at_every_step() {
    run_child("child_signal_or_fork_at_every_step");
}

#[test]
#[ignore = "run by a_signal_or_a_fork_at_every_step in a child process"]
fn child_signal_or_fork_at_every_step() {
    if open_on_this_thread().is_none() {
        return;
    }
    install_handler(libc::SIGUSR1);
    let opening = [0, 1, 2, 3, 4, 5, 6];
    let both = [SIGNAL, FORK];
    let mut failures = Vec::new();
    at_every_step(
        "a new thread's first reading",
        new_threads_first_reading,
        &opening,
        &both,
        On::Page,
        &mut failures,
    );
    at_every_step(
        "a forked child's first reading",
        childs_first_reading,
        &[6, 7, 1, 2, 3, 4, 5],
        &both,
        On::Page,
        &mut failures,
    );
    at_every_step(
        "a reading that leaves the page",
        reading_that_leaves_the_page,
        &[6, 8, 9],
        &both,
        On::Synthetic,
        &mut failures,
    );
    at_every_step(
        "a reading overtaken by a handler that leaves the page",
        reading_overtaken_by_a_handler_that_leaves,
        &[6],
        &[WITHDRAW_AND_SIGNAL],
        On::Synthetic,
        &mut failures,
    );
    at_every_step(
        "a new thread's first reading on the system-call route",
        new_threads_first_reading,
        &opening,
        &both,
        On::Syscall,
        &mut failures,
    );
    at_every_step(
        "a reading that finds its descriptor replaced",
        reading_that_finds_its_descriptor_replaced,
        &[8, 9],
        &both,
        On::Syscall,
        &mut failures,
    );
    assert_eq!(__test::THREAD_CPU_STEPS.len(), 10);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------
// perf_event_open and mmap failing.
// ---------------------------------------------------------------------------

use fastnow::ThreadCpuFallback;

const OS: ThreadCpuSource = ThreadCpuSource::Os("clock_gettime(CLOCK_THREAD_CPUTIME_ID)");

/// The route and reason a new thread gets at its first reading, and
/// whether that reading, and one after it, were the kernel's thread clock
/// (between two of its readings) where the route is the OS call.
fn new_thread() -> (ThreadCpuSource, Option<ThreadCpuFallback>, bool) {
    std::thread::spawn(|| {
        let k0 = thread_cpu_support::kernel_thread_cpu();
        let a = ThreadCpuInstant::now().as_nanos();
        let b = ThreadCpuInstant::now().as_nanos();
        let k1 = thread_cpu_support::kernel_thread_cpu();
        let info = fastnow::clock_info();
        let kernels = k0 <= a && a <= b && b <= k1;
        (info.thread_cpu, info.thread_cpu_fallback, kernels)
    })
    .join()
    .unwrap()
}

/// Each errno that `perf_event_open` or the page's `mmap` may fail with (or
/// that a sandbox makes them fail with): the thread that meets it makes the
/// OS call, reading the kernel's thread clock, with the reason
/// `clock_info()` gives; the refusals every thread would meet are kept for
/// the process, the others for the thread alone (the next thread opens its
/// event); an interrupted call is tried again; nothing is left mapped or
/// open.
#[test]
fn every_errno_of_the_opening() {
    run_child("child_every_errno_of_the_opening");
}

#[test]
#[ignore = "run by every_errno_of_the_opening in a child process"]
fn child_every_errno_of_the_opening() {
    if open_on_this_thread().is_none() {
        return;
    }
    use libc::{EACCES, EAGAIN, EINTR, EMFILE, ENFILE, ENOMEM, EPERM};
    use ThreadCpuFallback::*;
    type Inject = fn(i32, u32);
    type Case = (
        &'static str,
        Inject,
        i32,
        u32,
        Option<ThreadCpuFallback>,
        bool,
    );
    let syscall: Inject = __test::thread_cpu_fail_perf_event_open;
    let map: Inject = __test::thread_cpu_fail_mmap;
    // (what fails, errno, how many times, the reason; None: the event opens
    // after all; whether the process keeps it)
    let cases: [Case; 13] = [
        (
            "perf_event_open",
            syscall,
            EMFILE,
            u32::MAX,
            Some(NoDescriptor),
            false,
        ),
        (
            "perf_event_open",
            syscall,
            ENFILE,
            u32::MAX,
            Some(NoDescriptor),
            false,
        ),
        (
            "perf_event_open",
            syscall,
            EPERM,
            u32::MAX,
            Some(Denied),
            true,
        ),
        (
            "perf_event_open",
            syscall,
            EACCES,
            u32::MAX,
            Some(Denied),
            true,
        ),
        (
            "perf_event_open",
            syscall,
            ENOMEM,
            u32::MAX,
            Some(NoMemory),
            false,
        ),
        ("perf_event_open", syscall, EINTR, 3, None, false),
        (
            "perf_event_open",
            syscall,
            EINTR,
            u32::MAX,
            Some(Error(EINTR)),
            false,
        ),
        ("mmap", map, EPERM, u32::MAX, Some(NoMemory), false),
        ("mmap", map, EAGAIN, u32::MAX, Some(NoMemory), false),
        ("mmap", map, ENOMEM, u32::MAX, Some(NoMemory), false),
        ("mmap", map, EMFILE, u32::MAX, Some(NoDescriptor), false),
        ("mmap", map, ENFILE, u32::MAX, Some(NoDescriptor), false),
        ("mmap", map, EACCES, u32::MAX, Some(Error(EACCES)), false),
    ];
    let mut failures = Vec::new();
    for (call, inject, errno, times, why, process_wide) in cases {
        let result = in_fork(20, || {
            inject(errno, times);
            let (route, reason, kernels) = new_thread();
            let want = why.map_or((ThreadCpuSource::PerfPage, None), |w| (OS, Some(w)));
            if (route, reason) != want {
                eprintln!("{call} {errno}: {route:?} {reason:?}, want {want:?}");
                return 2;
            }
            if why.is_some() && !kernels {
                return 3;
            }
            inject(0, 0);
            // Nothing left behind by the refusal (the thread has exited).
            if !perf_mappings().is_empty() || !thread_cpu_support::perf_descriptors().is_empty() {
                return 4;
            }
            // The next thread: refused as well if the process keeps it.
            let (route, reason, _) = new_thread();
            let next = match process_wide {
                true => (OS, why),
                false => (ThreadCpuSource::PerfPage, None),
            };
            if (route, reason) != next {
                eprintln!("{call} {errno}, next thread: {route:?} {reason:?}, want {next:?}");
                return 5;
            }
            0
        });
        if let Err(e) = result {
            failures.push(format!("{call} failing with {errno} ×{times}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------
// The system-call route (`PerfIoctl`): its descriptor closed or replaced
// behind fastnow's back, and fork.
// ---------------------------------------------------------------------------

/// Puts the calling thread on the system-call route (where perf events
/// open at all), as the process takes it where it measures it cheaper:
/// false, with the reason printed, where there is no perf event to open.
fn on_the_syscall_route() -> bool {
    __test::thread_cpu_accept_without_user_time(false);
    __test::thread_cpu_choose_perf_ioctl(Some(true));
    let _ = ThreadCpuInstant::now();
    let info = fastnow::clock_info();
    match info.thread_cpu {
        ThreadCpuSource::PerfIoctl => {
            let costs = info.thread_cpu_costs.expect("the costs it measured");
            assert!(costs.perf_ioctl_ns > 0 && costs.os_call_ns > 0, "{costs:?}");
            assert_eq!(
                info.thread_cpu_fallback,
                Some(ThreadCpuFallback::NoUserTime)
            );
            true
        }
        ThreadCpuSource::PerfPage => {
            eprintln!("skipped: this kernel's page offers cap_user_time");
            false
        }
        _ => {
            eprintln!("skipped: no perf events here ({info:?})");
            false
        }
    }
}

/// Readings of the calling thread that must be its CPU time: within the
/// kernel's thread clock around them (the event counts from other
/// bookkeeping, so a millisecond's slack), advancing over a busy loop and
/// not over a sleep. 0, or what failed.
fn readings_are_cpu_time() -> i32 {
    let slack = 1_000_000;
    let k0 = thread_cpu_support::kernel_thread_cpu();
    let a = ThreadCpuInstant::now().as_nanos();
    thread_cpu_support::burn(Duration::from_millis(5));
    let b = ThreadCpuInstant::now().as_nanos();
    std::thread::sleep(Duration::from_millis(30));
    let c = ThreadCpuInstant::now().as_nanos();
    let k1 = thread_cpu_support::kernel_thread_cpu();
    let within = |x: u64| x + slack >= k0 && x <= k1 + slack;
    match () {
        _ if !(within(a) && within(b) && within(c)) => 50,
        _ if !(a <= b && b <= c) => 51,
        _ if b - a < 4_000_000 => 52,
        _ if c - b > 10_000_000 => 53, // wall time passed off as CPU time
        _ => 0,
    }
}

/// On the system-call route, each thread keeps one descriptor (its event's),
/// reads CPU time, and closes it at exit.
#[test]
fn the_syscall_route_reads_cpu_time_and_closes_its_descriptor() {
    run_child("child_syscall_route");
}

#[test]
#[ignore = "run by the_syscall_route_reads_cpu_time_and_closes_its_descriptor in a child process"]
fn child_syscall_route() {
    if !in_child() || !on_the_syscall_route() {
        return;
    }
    assert_eq!(readings_are_cpu_time(), 0);
    assert_eq!(thread_cpu_support::perf_descriptors().len(), 1);
    let (held, exited) = std::thread::spawn(|| {
        let _ = ThreadCpuInstant::now();
        let held = thread_cpu_support::perf_descriptors().len();
        (held, readings_are_cpu_time())
    })
    .join()
    .unwrap();
    assert_eq!((held, exited), (2, 0));
    assert_eq!(
        thread_cpu_support::perf_descriptors().len(),
        1,
        "closed at thread exit"
    );
}

/// What a program may put at the number of fastnow's descriptor after
/// closing it: a pipe with data in it (a `read()` of an empty one would
/// wait forever), a regular file, another perf event of its own.
#[derive(Clone, Copy, Debug)]
enum Replacement {
    Nothing,
    Pipe,
    File,
    PerfEvent,
}

/// The program closes fastnow's descriptor (`fd`, the calling thread's)
/// and puts `what` at its number:
/// readings stay CPU time (the OS call, continuing from the last), the
/// reason says so, and the program's file is neither read nor closed.
fn replace_the_descriptor(what: Replacement, fd: i32) -> i32 {
    let before = ThreadCpuInstant::now().as_nanos();
    let mut pipe = [0; 2];
    // SAFETY: plain descriptor calls on numbers this test owns or is
    // taking over; the buffers are valid for their lengths.
    let replacement = unsafe {
        libc::close(fd);
        match what {
            Replacement::Nothing => -1,
            Replacement::Pipe => {
                assert_eq!(libc::pipe(pipe.as_mut_ptr()), 0);
                assert_eq!(libc::write(pipe[1], b"12345".as_ptr().cast(), 5), 5);
                pipe[0]
            }
            Replacement::File => {
                let f = libc::open(c"/proc/self/exe".as_ptr(), libc::O_RDONLY);
                assert!(f >= 0);
                f
            }
            Replacement::PerfEvent => __test::thread_cpu_task_clock_descriptor().unwrap(),
        }
    };
    if replacement >= 0 && replacement != fd {
        // SAFETY: moves the replacement onto fastnow's old number.
        unsafe {
            assert_eq!(libc::dup2(replacement, fd), fd);
            libc::close(replacement);
        }
    }
    let after = ThreadCpuInstant::now().as_nanos();
    let code = readings_are_cpu_time();
    let info = fastnow::clock_info();
    let lost = info.thread_cpu_fallback == Some(ThreadCpuFallback::DescriptorLost)
        && matches!(info.thread_cpu, ThreadCpuSource::Os(_));
    // SAFETY: reads back what the test put there, through its own number.
    let untouched = unsafe {
        match what {
            Replacement::Nothing => libc::fcntl(fd, libc::F_GETFD) == -1,
            Replacement::Pipe => {
                let mut buf = [0u8; 8];
                libc::fcntl(fd, libc::F_SETFL, libc::O_NONBLOCK);
                libc::read(fd, buf.as_mut_ptr().cast(), 8) == 5 && &buf[..5] == b"12345"
            }
            Replacement::File => libc::lseek(fd, 0, libc::SEEK_CUR) == 0,
            Replacement::PerfEvent => libc::fcntl(fd, libc::F_GETFD) != -1,
        }
    };
    match () {
        _ if after < before => 61,
        _ if code != 0 => code,
        _ if !lost => {
            eprintln!("{what:?}: {info:?}");
            62
        }
        _ if !untouched => 63,
        _ => 0,
    }
}

/// A program that closes descriptors it did not open: fastnow's readings
/// stay CPU time, whatever the program puts at the number, and fastnow
/// neither reads from nor closes the program's file — also when the thread
/// exits.
#[test]
fn a_descriptor_closed_or_reused_behind_fastnows_back() {
    run_child("child_descriptor_closed_or_reused");
}

#[test]
#[ignore = "run by a_descriptor_closed_or_reused_behind_fastnows_back in a child process"]
fn child_descriptor_closed_or_reused() {
    if !in_child() || !on_the_syscall_route() {
        return;
    }
    let main_thread = thread_cpu_support::perf_descriptors();
    for what in [
        Replacement::Nothing,
        Replacement::Pipe,
        Replacement::File,
        Replacement::PerfEvent,
    ] {
        let main_thread = main_thread.clone();
        let (code, fd) = std::thread::spawn(move || {
            let _ = ThreadCpuInstant::now();
            let fds = thread_cpu_support::perf_descriptors();
            let &fd = fds.iter().find(|fd| !main_thread.contains(fd)).unwrap();
            (replace_the_descriptor(what, fd), fd)
        })
        .join()
        .unwrap();
        assert_eq!(code, 0, "{what:?}");
        // The thread has exited: the program's file at the number is open.
        // SAFETY: asks about a descriptor number.
        let open = unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1;
        assert_eq!(open, !matches!(what, Replacement::Nothing), "{what:?}");
        if open {
            // SAFETY: the test's own file, closed once.
            unsafe { libc::close(fd) };
        }
    }
}

/// A forked child closes every descriptor the parent's threads keep on the
/// system-call route (each counts a parent thread) in its fork handler,
/// before anything else runs in it; its first reading opens its own.
#[test]
fn a_forked_child_closes_the_parents_descriptors() {
    run_child("child_fork_on_the_syscall_route");
}

#[test]
#[ignore = "run by a_forked_child_closes_the_parents_descriptors in a child process"]
fn child_fork_on_the_syscall_route() {
    if !in_child() || !on_the_syscall_route() {
        return;
    }
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    // The threads live until the parent's last count, however slow the
    // child on a loaded machine: each waits for the gate the test holds.
    let gate = std::sync::Arc::new(std::sync::RwLock::new(()));
    let held = gate.write().unwrap();
    let others: Vec<_> = (0..3)
        .map(|_| {
            let (ready, gate) = (ready_tx.clone(), gate.clone());
            std::thread::spawn(move || {
                let _ = ThreadCpuInstant::now();
                ready.send(()).unwrap();
                let _open = gate.read();
            })
        })
        .collect();
    for _ in 0..3 {
        ready_rx.recv().unwrap();
    }
    assert_eq!(thread_cpu_support::perf_descriptors().len(), 4);
    in_fork(20, || {
        let inherited = thread_cpu_support::perf_descriptors().len();
        let code = readings_are_cpu_time();
        let own = thread_cpu_support::perf_descriptors().len();
        match (inherited, code, own, perf_mappings().len()) {
            (0, 0, 1, 1) => 0,
            other => {
                eprintln!("{other:?}");
                70
            }
        }
    })
    .unwrap();
    assert_eq!(
        thread_cpu_support::perf_descriptors().len(),
        4,
        "the parent's"
    );
    drop(held);
    for t in others {
        t.join().unwrap();
    }
    assert_eq!(thread_cpu_support::perf_descriptors().len(), 1);
}
