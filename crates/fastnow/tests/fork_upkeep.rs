//! A child forked while upkeep runs in the parent: the upkeep thread is not
//! copied, so the child must say so (`upkeep_resolution()` is `None`) and
//! restart it on its first `recent()`, which then advances; starting and
//! stopping upkeep in the child work (they used to report "already runs"
//! and panic).
#![cfg(unix)]

mod common;

use std::time::Duration;

#[test]
fn child_restarts_upkeep() {
    if std::env::var_os("FASTNOW_TEST_RUNNER").is_some() {
        // qemu-user 7.2 aborts (an internal assertion) when a child forked
        // from a multithreaded process creates a thread; fork itself is
        // tested under emulation by tests/fork.rs.
        println!("SKIPPED under an emulator: it cannot start a thread in a forked child");
        return;
    }
    fastnow::stop_upkeep();
    fastnow::start_upkeep(Duration::from_millis(1)).unwrap();
    let seen = fastnow::recent();
    assert!(
        common::recent_advances_past(seen),
        "upkeep runs in the parent"
    );

    // SAFETY: fork has no preconditions; the child only uses fastnow and
    // sleeps, then `_exit`s without returning into the test harness.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        // SAFETY: plain values; async-signal-safe.
        unsafe { libc::alarm(20) };
        let ok = std::panic::catch_unwind(|| {
            assert_eq!(fastnow::upkeep_resolution(), None, "no thread was copied");
            let first = fastnow::recent();
            // The parent's last refresh, a moment ago by the system clock
            // (an unset cache would be decades off).
            let (unix, sys) = (fastnow::recent_unix_nanos(), common::system_unix_nanos());
            assert!(unix.abs_diff(sys) < 1_000_000_000, "{unix} vs {sys}");
            assert_eq!(
                fastnow::upkeep_resolution(),
                Some(Duration::from_millis(1)),
                "restarted at the parent's resolution"
            );
            assert!(
                common::recent_advances_past(first),
                "the child's recent() advances"
            );
            assert!(fastnow::stop_upkeep());
            fastnow::start_upkeep(Duration::from_millis(2)).unwrap();
            assert!(fastnow::stop_upkeep());
        })
        .is_ok();
        // SAFETY: ends the child without unwinding into the harness.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let mut status = 0;
    // SAFETY: our own child; valid out-pointer.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child status {status:#x}"
    );
    // The parent's upkeep is untouched.
    assert_eq!(fastnow::upkeep_resolution(), Some(Duration::from_millis(1)));
    assert!(fastnow::stop_upkeep());
}
