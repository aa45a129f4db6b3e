//! A process out of descriptors (at `RLIMIT_NOFILE`) when fastnow must open
//! the kernel's clocksource file: at its first reading (a server that starts
//! with a burst of connections), and at a re-check after the program closed
//! fastnow's descriptor (a daemon closing every descriptor it did not open,
//! the number then free or reused). The failure says nothing about the
//! counter: it must neither refuse nor drop it for good, and
//! `clock_info()` must say what happened. Each scenario runs in a child
//! process, whose descriptor limit it may lower: this test binary
//! re-executes itself and runs one `child_*` test, which does nothing unless
//! `FASTNOW_TEST_CHILD` is set.
#![cfg(all(
    any(target_os = "linux", target_os = "android"),
    any(target_arch = "x86_64", target_arch = "x86")
))]

mod common;

use common::{clocksource_descriptor, in_child, CLOCKSOURCE};
use fastnow::{Instant, Source};
use std::time::Duration;

/// Runs `test` in a child process with `FASTNOW_TEST_MODE=mode`; prints its
/// skip, if it skipped.
fn run_child(test: &str, mode: &str) {
    if common::no_processes() {
        return;
    }
    let stdout = common::run_child(test, &[("FASTNOW_TEST_MODE", mode.as_ref())]);
    for line in stdout.lines().filter(|l| l.contains("SKIPPED")) {
        eprintln!("{test} ({mode}): {line}");
    }
}

/// The kernel's clocksource, if it is `tsc` (what the scenarios need: the
/// counter chosen because the kernel vouches for it); otherwise says why
/// the scenario is skipped.
fn tsc_clocksource() -> bool {
    let cs = std::fs::read_to_string(CLOCKSOURCE).map(|s| s.trim().to_owned());
    match cs {
        Ok(cs) if cs == "tsc" => true,
        other => {
            println!("SKIPPED: the kernel's clocksource is not tsc here ({other:?})");
            false
        }
    }
}

fn nofile() -> libc::rlimit {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: writes one rlimit through a valid pointer.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
    lim
}

fn set_nofile(lim: libc::rlimit) {
    // SAFETY: reads one rlimit through a valid pointer.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) }, 0);
}

fn open_dev_null() -> i32 {
    // SAFETY: the path is NUL-terminated; open has no other memory effects.
    unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) }
}

/// Makes the process unable to open any descriptor, as when it has as many
/// open as its limit allows: the limit becomes the lowest free number. The
/// limit before, to restore.
fn exhaust_descriptors() -> libc::rlimit {
    let before = nofile();
    let lowest = open_dev_null();
    assert!(lowest >= 0);
    // SAFETY: the descriptor just opened, closed once.
    unsafe { libc::close(lowest) };
    set_nofile(libc::rlimit {
        rlim_cur: lowest as libc::rlim_t,
        ..before
    });
    assert_eq!(open_dev_null(), -1);
    assert_eq!(
        std::io::Error::last_os_error().raw_os_error(),
        Some(libc::EMFILE),
        "out of descriptors"
    );
    before
}

/// Reads `Instant` in bursts, as a busy program does (so readers make the
/// state updates and the re-checks), for `d` by std's clock, or until
/// `done`; fails on a step back.
fn read_for(d: Duration, mut done: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    let mut last = Instant::now();
    while start.elapsed() < d && !done() {
        for _ in 0..1_000 {
            let t = Instant::now();
            assert!(t >= last, "stepped back");
            last = t;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A process starts out of descriptors: its first reading cannot open the
/// clocksource file. It reads the OS clock meanwhile, says the counter
/// awaits the kernel's verdict and why, and uses the counter once
/// descriptors are free again. (Before, it used the OS clock for good,
/// "the kernel's clocksource could not be read".)
#[test]
fn out_of_descriptors_at_the_first_reading() {
    run_child("child_first_reading", "");
}

#[test]
#[ignore = "run by out_of_descriptors_at_the_first_reading in a child process"]
fn child_first_reading() {
    if !in_child() || !tsc_clocksource() {
        return;
    }
    let limit = exhaust_descriptors();
    // Each reading between two of std's: a busy machine may deschedule the
    // thread between two reads for longer than the bound below.
    let std_a = std::time::Instant::now();
    let a = Instant::now();
    let std_a_after = std::time::Instant::now();
    let info = fastnow::clock_info();
    assert_eq!(info.source, Source::Os, "{info}");
    assert_eq!(info.fallback, None, "nothing decided for good: {info}");
    let why = info.verdict_unavailable.expect("the failure is reported");
    assert_eq!(why.errno, libc::EMFILE, "{info}");
    assert_eq!(why.since_last_read, None, "{info}");
    let text = info.to_string();
    assert!(
        text.contains("awaits the kernel's verdict")
            && text.contains("too many open files (EMFILE)")
            && !text.contains("fallback"),
        "{text}"
    );
    // A while out of descriptors: the verdict is tried again, and again fails.
    read_for(Duration::from_millis(50), || false);
    let info = fastnow::clock_info();
    assert_eq!(info.source, Source::Os, "{info}");
    assert!(
        info.verdict_unavailable.is_some_and(|w| w.attempts >= 2),
        "tried again: {info}"
    );

    set_nofile(limit);
    read_for(Duration::from_secs(3), || {
        fastnow::clock_info().source == Source::Counter
    });
    let info = fastnow::clock_info();
    assert_eq!(info.source, Source::Counter, "{info}");
    assert_eq!(info.fallback, None, "{info}");
    assert_eq!(info.verdict_unavailable, None, "{info}");
    assert_eq!(
        info.kernel_clocksource.map(|c| c.as_str().to_owned()),
        Some("tsc".to_owned())
    );
    assert!(
        clocksource_descriptor().is_some(),
        "the file is kept open again"
    );
    // An interval across it all agrees with std's, within a millisecond.
    let std_b = std::time::Instant::now();
    let ours = a.elapsed();
    let (least, most) = (std_b - std_a_after, std_a.elapsed());
    assert!(
        ours + Duration::from_millis(1) >= least && ours <= most + Duration::from_millis(1),
        "{ours:?} vs std's [{least:?}, {most:?}]"
    );
    println!("{info}");
}

/// A daemon closes fastnow's descriptor (as it closes every one it did not
/// open) and is out of descriptors when the re-check must open the file
/// again: `closed`, the number stays free, but above the limit (the read
/// gives `EBADF`); `reused`, a file of the program's got the number (its
/// text is not the kernel's); `upkeep`, the same with the upkeep thread
/// making the re-checks. The counter stays in use, the introspection says
/// why the file could not be read, and once descriptors are free the file
/// is opened again and followed. (Before, the counter was dropped for good.)
#[test]
fn out_of_descriptors_at_a_recheck() {
    for mode in ["closed", "reused", "upkeep"] {
        run_child("child_recheck", mode);
    }
}

#[test]
#[ignore = "run by out_of_descriptors_at_a_recheck in a child process"]
fn child_recheck() {
    if !in_child() || !tsc_clocksource() {
        return;
    }
    let mode = std::env::var("FASTNOW_TEST_MODE").unwrap();
    // Descriptors below the one fastnow will take, so that a limit can be
    // set below it, or just above it.
    let pad: Vec<i32> = (0..4).map(|_| open_dev_null()).collect();
    assert!(pad.iter().all(|&fd| fd >= 0));
    let _ = Instant::now();
    let before = fastnow::clock_info();
    if before.source != Source::Counter {
        println!("SKIPPED: the counter is not in use here ({before})");
        return;
    }
    let held = clocksource_descriptor().expect("fastnow keeps the file open");
    if mode == "upkeep" {
        fastnow::start_upkeep(Duration::from_millis(1)).unwrap();
        // Its thread opens its clock-set watch before its first refresh:
        // after it, no descriptor of fastnow's comes to take the numbers
        // this test frees.
        assert!(
            common::recent_advances_past(fastnow::recent()),
            "the upkeep does not refresh"
        );
    }
    // SAFETY: closing a descriptor has no memory effects; the daemon's
    // close-all, of fastnow's only.
    unsafe { libc::close(held) };
    let reused = if mode == "closed" {
        None
    } else {
        let fd = open_dev_null();
        assert_eq!(fd, held, "the lowest free number: fastnow's");
        Some(fd)
    };
    let limit = exhaust_descriptors();
    if mode == "closed" {
        assert!(
            nofile().rlim_cur <= held as libc::rlim_t,
            "fastnow's number is above the limit"
        );
    }

    let t = std::time::Instant::now();
    if mode != "upkeep" {
        // One re-check now, as a reader at its trigger makes it; the next
        // a second later, as the reads below come to it.
        fastnow::__test::reader_update(true);
    }
    // The re-checks (every second, or at each of the upkeep's updates):
    // until two failed, or four seconds.
    read_for(Duration::from_secs(4), || {
        fastnow::clock_info()
            .verdict_unavailable
            .is_some_and(|w| w.attempts >= 2)
    });
    let info = fastnow::clock_info();
    assert_eq!(info.source, Source::Counter, "{info}");
    assert_eq!(info.fallback, None, "{info}");
    assert_eq!(info.demoted_at, None, "{info}");
    let why = info.verdict_unavailable.expect("the failure is reported");
    assert_eq!(why.errno, libc::EMFILE, "{info}");
    assert!(why.attempts >= 2, "{info}");
    assert!(
        why.since_last_read.is_some_and(|d| d >= t.elapsed() / 2),
        "{info}"
    );
    let text = info.to_string();
    assert!(
        text.contains("too many open files (EMFILE)")
            && text.contains("stays in use")
            && !text.contains("fallback"),
        "{text}"
    );

    set_nofile(limit);
    if mode == "upkeep" {
        read_for(Duration::from_secs(2), || {
            fastnow::clock_info().verdict_unavailable.is_none()
        });
        assert!(fastnow::stop_upkeep());
    } else {
        fastnow::__test::reader_update(true);
    }
    let info = fastnow::clock_info();
    assert_eq!(info.source, Source::Counter, "{info}");
    assert_eq!(info.verdict_unavailable, None, "{info}");
    assert_eq!(
        info.kernel_clocksource.map(|c| c.as_str().to_owned()),
        Some("tsc".to_owned())
    );
    let again = clocksource_descriptor().expect("the file is open again");
    assert_ne!(Some(again), reused);
    if let Some(fd) = reused {
        // The program's file at the old number is its own still: open.
        // SAFETY: fcntl F_GETFD only queries the descriptor.
        assert!(unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0);
    }
    println!("{info}");
}
