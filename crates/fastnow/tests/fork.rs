//! A child forked at a bad moment keeps a working clock: while another
//! thread of the parent holds the writers' lock (before and after the first
//! state is published), the child's readings still advance, its own state
//! updates happen, and `clock_info()`/`recalibrate()` return. One test
//! function: the first fork must come before anything in this process read
//! the clock.
#![cfg(unix)]

use fastnow::{Instant, MonotonicInstant, OrderedInstant};
use std::sync::mpsc;
use std::time::Duration;

/// Forks; the child runs `child` under a 20 s watchdog (a hang becomes
/// SIGALRM) and exits with its result; the parent returns the child's wait
/// status.
fn in_child(child: impl FnOnce() -> bool) -> libc::c_int {
    // SAFETY: fork has no preconditions; the child only calls fastnow's
    // clocks, sleeps and `_exit`s, never returning into the test harness.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // SAFETY: alarm and _exit are async-signal-safe and take plain values.
        unsafe { libc::alarm(20) };
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)).unwrap_or(false);
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let mut status = 0;
    // SAFETY: waits for our own child; `status` is a valid out-pointer.
    let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(rc, pid);
    status
}

/// What a child must be able to do: read every clock for 100 ms (several
/// state updates, the first of which takes the lock over from the parent's
/// thread), and see time advance by about that much.
fn child_clock_works() -> bool {
    let start = Instant::now();
    let mono = MonotonicInstant::now();
    let unix = fastnow::unix_nanos();
    let deadline = std::time::Instant::now() + Duration::from_millis(100);
    let mut last = start;
    while std::time::Instant::now() < deadline {
        let now = Instant::now();
        if now < last {
            return false;
        }
        last = now;
        let _ = OrderedInstant::now();
    }
    let took = start.elapsed();
    let info = fastnow::clock_info();
    let _ = fastnow::recalibrate();
    took >= Duration::from_millis(90)
        && took < Duration::from_secs(5)
        && mono.elapsed() >= Duration::from_millis(90)
        && fastnow::unix_nanos() > unix
        && !info.to_string().is_empty()
}

/// Forks while another thread of this process holds the writers' lock, and
/// checks the child's clock works (a hang shows as SIGALRM).
fn fork_while_another_thread_holds_the_lock(when: &str) {
    let (held_tx, held_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        fastnow::__test::with_writer_lock(|| {
            held_tx.send(()).unwrap();
            let _ = release_rx.recv_timeout(Duration::from_secs(30));
        });
    });
    held_rx.recv().unwrap();
    let status = in_child(child_clock_works);
    release_tx.send(()).unwrap();
    holder.join().unwrap();
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child forked {when}: status {status:#x}"
    );
}

#[test]
fn child_forked_while_a_parent_thread_holds_the_lock() {
    fork_while_another_thread_holds_the_lock("before the first state");
    let t = Instant::now();
    std::thread::sleep(Duration::from_millis(5));
    assert!(t.elapsed() >= Duration::from_millis(4));
    fork_while_another_thread_holds_the_lock("with the clock running");
    // And the parent itself is unharmed.
    assert!(child_clock_works());
}
