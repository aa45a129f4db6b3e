//! What the thread CPU clock's tests share: the kernel's own thread clock,
//! a busy loop, the perf route's footprint in `/proc/self`, and two ways to
//! run a scenario apart (a re-executed test binary for one that changes the
//! process's route; a forked child for one that needs a fork).
#![allow(dead_code)]

use std::time::Duration;

/// `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`, the kernel's thread clock.
#[cfg(unix)]
pub fn kernel_thread_cpu() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid, writable timespec.
    assert_eq!(
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) },
        0
    );
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Burns about `cpu` of the calling thread's CPU time, as the kernel
/// counts it where the test can ask it (the perf route's test hook reads a
/// stale page, which would never end the loop); where nothing measures it
/// (WASI runtimes without CPU clocks), for that long by the wall clock.
pub fn burn(cpu: Duration) {
    #[cfg(unix)]
    let elapsed = {
        let start = kernel_thread_cpu();
        move || Duration::from_nanos(kernel_thread_cpu() - start)
    };
    #[cfg(not(unix))]
    let elapsed = {
        let (start, wall) = (fastnow::ThreadCpuInstant::now(), std::time::Instant::now());
        let measured = fastnow::measures_thread_cpu_time();
        move || {
            if measured {
                start.elapsed()
            } else {
                wall.elapsed()
            }
        }
    };
    let mut x = 0u64;
    while elapsed() < cpu {
        for i in 0..1_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
    }
}

/// Whether this process is a re-executed scenario (see [`run_child`]).
pub use super::common::in_child;

/// Runs the ignored test `name` alone in a fresh process (the shared
/// `common::run_child`: this test binary re-executed, under an emulator
/// through `FASTNOW_TEST_RUNNER`), and fails with its output if it fails.
pub fn run_child(name: &str) {
    super::common::run_child(name, &[]);
}

/// The perf event mappings of this process, as `(start, end)` addresses.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn perf_mappings() -> Vec<(usize, usize)> {
    std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .filter(|l| l.contains("perf_event"))
        .filter_map(|l| {
            let (start, end) = l.split_whitespace().next()?.split_once('-')?;
            Some((
                usize::from_str_radix(start, 16).ok()?,
                usize::from_str_radix(end, 16).ok()?,
            ))
        })
        .collect()
}

/// The descriptors of this process that refer to a perf event.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn perf_descriptors() -> Vec<i32> {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read_link(e.path()).is_ok_and(|p| p.to_string_lossy().contains("perf_event"))
        })
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

/// Forks; the child runs `child` under a `watchdog`-second `alarm` (a hang
/// becomes SIGALRM) and `_exit`s with its result (0 for success; 1 if it
/// panicked), never returning into the test harness. The parent waits and
/// says how the child ended: `Ok` for status 0, else what happened.
#[cfg(unix)]
pub fn in_fork(watchdog: u32, child: impl FnOnce() -> i32) -> Result<(), String> {
    // SAFETY: fork has no preconditions; the child runs `child` and
    // `_exit`s.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // SAFETY: alarm takes a plain value.
        unsafe { libc::alarm(watchdog) };
        let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)).unwrap_or(1);
        // SAFETY: ends the forked child without running the harness.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waits for our own child; `status` is a valid out-pointer.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    if libc::WIFSIGNALED(status) {
        Err(format!(
            "the child died of signal {}",
            libc::WTERMSIG(status)
        ))
    } else if libc::WEXITSTATUS(status) != 0 {
        Err(format!(
            "the child failed with {}",
            libc::WEXITSTATUS(status)
        ))
    } else {
        Ok(())
    }
}
