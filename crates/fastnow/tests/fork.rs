//! A child forked at a bad moment keeps a working clock: while another
//! thread of the parent holds the writers' lock (before the first state is
//! published, during the warm-up, and with the counter in use), the child's
//! readings still advance, its own state updates happen,
//! `clock_info()`/`recalibrate()` return, and `clock_info()` says what it
//! said in the parent. One test function: the first fork must come before
//! anything in this process read the clock.
#![cfg(unix)]

use fastnow::{Instant, MonotonicInstant, OrderedInstant};
use std::sync::mpsc;
use std::time::Duration;

/// Forks; the child runs `child` under a 20 s watchdog (a hang becomes
/// SIGALRM) and exits with its result (0 for success, 1 for a panic); the
/// parent returns the child's wait status.
fn in_child(child: impl FnOnce() -> libc::c_int) -> libc::c_int {
    // SAFETY: fork has no preconditions; the child only calls fastnow's
    // clocks, sleeps and `_exit`s, never returning into the test harness.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // SAFETY: alarm and _exit are async-signal-safe and take plain values.
        unsafe { libc::alarm(20) };
        let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)).unwrap_or(1);
        unsafe { libc::_exit(code) };
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

/// Forks while another thread of this process holds the writers' lock, runs
/// `child` there, and returns the child's exit code (a hang shows as
/// SIGALRM, and fails).
fn fork_while_another_thread_holds_the_lock(
    when: &str,
    child: impl FnOnce() -> libc::c_int,
) -> libc::c_int {
    let (held_tx, held_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        fastnow::__test::with_writer_lock(|| {
            held_tx.send(()).unwrap();
            let _ = release_rx.recv_timeout(Duration::from_secs(30));
        });
    });
    held_rx.recv().unwrap();
    let status = in_child(child);
    release_tx.send(()).unwrap();
    holder.join().unwrap();
    assert!(
        libc::WIFEXITED(status),
        "child forked {when}: status {status:#x}"
    );
    libc::WEXITSTATUS(status)
}

/// `child_clock_works` as an exit code.
fn works() -> libc::c_int {
    if child_clock_works() {
        0
    } else {
        1
    }
}

#[test]
fn child_forked_while_a_parent_thread_holds_the_lock() {
    let code = fork_while_another_thread_holds_the_lock("before the first state", works);
    assert_eq!(code, 0, "child forked before the first state");

    // The first reading publishes the warm-up's state (the OS clock while
    // the counter's rate is measured), and nothing reads again before the
    // fork: the child finishes the warm-up, and must reach the source the
    // parent reaches. (Its bookkeeping restarted from scratch lost the
    // warm-up's first sample, and the counter for good: "does not advance".)
    let t = Instant::now();
    let code = fork_while_another_thread_holds_the_lock("during the warm-up", || {
        let info = fastnow::clock_info();
        match (works(), info.source) {
            (0, fastnow::Source::Counter) => 10,
            (0, fastnow::Source::Os) => 11,
            _ => 1,
        }
    });
    let parent = match fastnow::clock_info().source {
        fastnow::Source::Counter => 10,
        fastnow::Source::Os => 11,
    };
    assert_eq!(
        code, parent,
        "child forked during the warm-up (10: counter, 11: OS)"
    );

    std::thread::sleep(Duration::from_millis(5));
    assert!(t.elapsed() >= Duration::from_millis(4));
    // The child reports what the parent did: the frequency's origin, the
    // calibration, the refinements (not "being calibrated").
    let before = format!("{:?}", fastnow::clock_info());
    let code = fork_while_another_thread_holds_the_lock("with the clock running", || {
        let after = format!("{:?}", fastnow::clock_info());
        if after != before {
            eprintln!("child's clock_info: {after}\nparent's: {before}");
            return 2;
        }
        works()
    });
    assert_eq!(
        code, 0,
        "child forked with the clock running (2: clock_info differs)"
    );
    // And the parent itself is unharmed.
    assert!(child_clock_works());
}
