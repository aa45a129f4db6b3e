//! `ThreadCpuInstant` against the kernel's own thread clock, and its routes:
//! the perf page's fallbacks (a refusal remembered for the process or for
//! one thread), its life (opened at a thread's first reading, no descriptor
//! kept, released at thread exit) and fork (a child's thread does not read
//! the parent thread's event). The scenarios that change the process's
//! route run in child processes: this binary re-executes itself and runs
//! one `child_*` test, which does nothing unless `FASTNOW_TEST_CHILD` is set.

mod common;
mod thread_cpu_support;

use fastnow::{Instant, ThreadCpuInstant, ThreadCpuSource};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::time::Duration;
use thread_cpu_support::burn;
#[cfg(unix)]
use thread_cpu_support::kernel_thread_cpu;

/// Whether `T: Send` / `T: Sync`, without requiring either: the method
/// resolution picks the inherent-like impl only when the bound holds.
struct Probe<T>(std::marker::PhantomData<T>);
trait NotSend {
    fn is_send(&self) -> bool {
        false
    }
}
impl<T> NotSend for Probe<T> {}
impl<T: Send> Probe<T> {
    fn is_send(&self) -> bool {
        true
    }
}
trait NotSync {
    fn is_sync(&self) -> bool {
        false
    }
}
impl<T> NotSync for Probe<T> {}
impl<T: Sync> Probe<T> {
    fn is_sync(&self) -> bool {
        true
    }
}

#[test]
fn a_reading_stays_on_its_thread() {
    let p = Probe::<ThreadCpuInstant>(std::marker::PhantomData);
    assert!(!p.is_send() && !p.is_sync());
    // The probe itself tells Send types apart.
    assert!(Probe::<Instant>(std::marker::PhantomData).is_send());
    assert!(Probe::<Instant>(std::marker::PhantomData).is_sync());
}

#[test]
fn api_is_instants() {
    let a = ThreadCpuInstant::now();
    burn(Duration::from_millis(2));
    let b = ThreadCpuInstant::now();
    if fastnow::measures_thread_cpu_time() {
        assert!(b > a);
    }
    assert!(b >= a);
    assert_eq!(b - a, b.duration_since(a));
    assert_eq!(a.duration_since(b), Duration::ZERO);
    assert_eq!(
        a.checked_duration_since(b),
        (a == b).then_some(Duration::ZERO)
    );
    assert_eq!(a.saturating_duration_since(b), Duration::ZERO);
    assert_eq!(b.checked_duration_since(a), Some(b - a));
    let d = Duration::from_nanos(1_234_567);
    assert_eq!((a + d) - a, d);
    assert_eq!((a + d) - d, a);
    let mut c = a;
    c += d;
    c -= d;
    assert_eq!(c, a);
    assert_eq!(a.checked_add(Duration::MAX), None);
    assert_eq!(
        ThreadCpuInstant::from_nanos(5).checked_sub(Duration::from_nanos(6)),
        None
    );
    assert_eq!(ThreadCpuInstant::from_nanos(a.as_nanos()), a);
    let hash = |t: ThreadCpuInstant| {
        let mut h = DefaultHasher::new();
        t.hash(&mut h);
        h.finish()
    };
    assert_eq!(hash(a), hash(ThreadCpuInstant::from_nanos(a.as_nanos())));
    assert_eq!(
        format!("{:?}", ThreadCpuInstant::from_nanos(42)),
        "ThreadCpuInstant(42ns of CPU)"
    );
    assert!(a.elapsed() >= b - a);
}

#[test]
#[should_panic(expected = "overflow when adding duration to instant")]
fn add_overflow_panics_like_std() {
    let _ = ThreadCpuInstant::now() + Duration::MAX;
}

/// The route `clock_info()` names is the one this platform should take,
/// and says why when it is not the perf page.
#[test]
fn route_is_reported() {
    let info = fastnow::clock_info();
    assert_eq!(
        fastnow::measures_thread_cpu_time(),
        matches!(
            info.thread_cpu,
            ThreadCpuSource::PerfPage | ThreadCpuSource::PerfIoctl | ThreadCpuSource::Os(_)
        )
    );
    if cfg!(any(unix, windows)) {
        assert!(fastnow::measures_thread_cpu_time(), "{info:?}");
    }
    // WASI preview 2's clocks are the monotonic and the wall clock only: no
    // CPU clock to ask.
    if cfg!(all(target_os = "wasi", target_env = "p2")) {
        assert_eq!(info.thread_cpu, ThreadCpuSource::Unavailable);
    }
    let perf_target = cfg!(all(
        any(target_os = "linux", target_os = "android"),
        any(target_arch = "x86_64", target_arch = "aarch64")
    ));
    match info.thread_cpu {
        ThreadCpuSource::PerfPage => {
            assert!(perf_target);
            assert_eq!(info.thread_cpu_fallback, None);
        }
        ThreadCpuSource::PerfIoctl => {
            assert!(perf_target);
            assert_eq!(
                info.thread_cpu_fallback,
                Some(fastnow::ThreadCpuFallback::NoUserTime)
            );
        }
        ThreadCpuSource::Os(call) => {
            if cfg!(unix) {
                assert_eq!(call, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
            }
            assert_eq!(info.thread_cpu_fallback.is_some(), perf_target, "{info:?}");
        }
        other => assert!(!fastnow::measures_thread_cpu_time(), "{other}"),
    }
    match info.thread_cpu_costs {
        Some(costs) => assert_eq!(
            costs.perf_ioctl_taken,
            info.thread_cpu == ThreadCpuSource::PerfIoctl,
            "{info:?}"
        ),
        None => assert_ne!(info.thread_cpu, ThreadCpuSource::PerfIoctl),
    }
    eprintln!(
        "thread CPU time: {} ({}; {})",
        info.thread_cpu,
        info.thread_cpu_fallback
            .map_or("perf page in use, or no perf route here".into(), |w| w
                .to_string()),
        info.thread_cpu_costs
            .map_or("no choice between system calls".into(), |c| c.to_string())
    );
}

/// Over a busy loop, the clock advances as the kernel's thread clock does,
/// and reads about its value.
#[test]
#[cfg(unix)]
fn agrees_with_the_kernels_thread_clock() {
    let _ = ThreadCpuInstant::now(); // this thread's route decided
    let k0 = kernel_thread_cpu();
    let t0 = ThreadCpuInstant::now();
    burn(Duration::from_millis(50));
    let t1 = ThreadCpuInstant::now();
    let k1 = kernel_thread_cpu();
    let ours = (t1 - t0).as_nanos() as u64;
    let kernel = k1 - k0;
    // The kernel's interval encloses ours; the perf route counts from other
    // bookkeeping (interrupt time), so allow 1 % and a millisecond.
    let slack = kernel / 100 + 1_000_000;
    assert!(
        ours <= kernel + slack,
        "{ours} ns vs the kernel's {kernel} ns"
    );
    assert!(
        ours + slack >= kernel,
        "{ours} ns vs the kernel's {kernel} ns"
    );
    assert!(ours >= 45_000_000, "{ours}");
    // And the value itself: about the thread's CPU time.
    assert!(
        t0.as_nanos() + slack >= k0 && t0.as_nanos() <= k1 + slack,
        "{t0:?} {k0} {k1}"
    );
}

/// A sleeping thread's CPU time barely advances while wall time does.
#[test]
fn sleeping_burns_no_cpu() {
    let wall = Instant::now();
    let cpu = ThreadCpuInstant::now();
    std::thread::sleep(Duration::from_millis(50));
    let (slept, used) = (wall.elapsed(), cpu.elapsed());
    assert!(slept >= Duration::from_millis(50), "{slept:?}");
    if fastnow::measures_thread_cpu_time() || cfg!(target_os = "wasi") {
        assert!(
            used < Duration::from_millis(10),
            "{used:?} of CPU while asleep"
        );
    }
}

/// Each thread has its own clock: another thread's busy loop does not move
/// this thread's, and the other thread's readings see its own work.
#[test]
fn each_thread_counts_its_own_time() {
    if common::no_threads() || !fastnow::measures_thread_cpu_time() {
        return;
    }
    let mine = ThreadCpuInstant::now();
    let theirs = std::thread::spawn(|| {
        let t = ThreadCpuInstant::now();
        burn(Duration::from_millis(40));
        t.elapsed()
    })
    .join()
    .unwrap();
    // (Windows counts in scheduler ticks.)
    assert!(theirs >= Duration::from_millis(30), "{theirs:?}");
    assert!(
        mine.elapsed() < Duration::from_millis(20),
        "{:?}",
        mine.elapsed()
    );
}

// ---------------------------------------------------------------------------
// The perf route's fallbacks and life, in child processes (Linux x86_64 and
// aarch64, where the route exists).
// ---------------------------------------------------------------------------

#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod perf {
    use super::*;
    use fastnow::__test;
    use fastnow::ThreadCpuFallback;

    use thread_cpu_support::{in_child, in_fork, perf_descriptors, perf_mappings};

    /// Runs `perf::<name>` alone in a fresh process.
    fn run_child(name: &str) {
        thread_cpu_support::run_child(&format!("perf::{name}"));
    }

    fn route_on_new_thread() -> (ThreadCpuSource, Option<ThreadCpuFallback>) {
        std::thread::spawn(|| {
            let _ = ThreadCpuInstant::now();
            let info = fastnow::clock_info();
            (info.thread_cpu, info.thread_cpu_fallback)
        })
        .join()
        .unwrap()
    }

    const OS: ThreadCpuSource = ThreadCpuSource::Os("clock_gettime(CLOCK_THREAD_CPUTIME_ID)");

    #[test]
    fn denied_is_remembered_for_the_process() {
        if !common::no_processes() {
            run_child("child_denied");
        }
    }

    #[test]
    #[ignore = "run by denied_is_remembered_for_the_process in a child process"]
    fn child_denied() {
        if !in_child() {
            return;
        }
        // seccomp or perf_event_paranoid: EACCES / EPERM.
        __test::thread_cpu_fail_open(libc::EACCES);
        assert_eq!(route_on_new_thread(), (OS, Some(ThreadCpuFallback::Denied)));
        // Every thread after it takes the OS call without trying again:
        // an open now would succeed (and the page be accepted).
        __test::thread_cpu_fail_open(0);
        __test::thread_cpu_accept_without_user_time(true);
        assert_eq!(route_on_new_thread(), (OS, Some(ThreadCpuFallback::Denied)));
        assert_eq!(perf_mappings().len(), 0);
        // Its readings are the kernel's thread clock.
        let k0 = kernel_thread_cpu();
        let t = ThreadCpuInstant::now().as_nanos();
        assert!(t >= k0 && t <= kernel_thread_cpu());
    }

    #[test]
    fn out_of_descriptors_is_remembered_for_the_thread() {
        if !common::no_processes() {
            run_child("child_out_of_descriptors");
        }
    }

    #[test]
    #[ignore = "run by out_of_descriptors_is_remembered_for_the_thread in a child process"]
    fn child_out_of_descriptors() {
        if !in_child() {
            return;
        }
        __test::thread_cpu_accept_without_user_time(true);
        // Where the kernel (or an emulator: qemu-user has no perf events)
        // offers no perf event, or refuses this process one
        // (`perf_event_paranoid`, a seccomp filter), there is no event for a
        // thread to open.
        if let Some(why @ (ThreadCpuFallback::Unsupported | ThreadCpuFallback::Denied)) =
            route_on_new_thread().1
        {
            eprintln!("skipped: no perf event for this process here ({why:?})");
            return;
        }
        // RLIMIT_NOFILE reached while this thread opens its event.
        __test::thread_cpu_fail_open(libc::EMFILE);
        let _ = ThreadCpuInstant::now();
        let info = fastnow::clock_info();
        assert_eq!(
            (info.thread_cpu, info.thread_cpu_fallback),
            (OS, Some(ThreadCpuFallback::NoDescriptor))
        );
        __test::thread_cpu_fail_open(0);
        // This thread stays on the OS call (it paid for the failure once)...
        let _ = ThreadCpuInstant::now();
        assert_eq!(
            fastnow::clock_info().thread_cpu_fallback,
            Some(ThreadCpuFallback::NoDescriptor)
        );
        assert_eq!(perf_mappings().len(), 0);
        // ...while another thread opens its own event.
        assert_eq!(route_on_new_thread(), (ThreadCpuSource::PerfPage, None));
    }

    /// A page without `cap_user_time` (this is what a KVM guest's kernel
    /// gives) is refused for the whole process and released.
    #[test]
    fn no_user_time_is_refused() {
        if !common::no_processes() {
            run_child("child_no_user_time");
        }
    }

    #[test]
    #[ignore = "run by no_user_time_is_refused in a child process"]
    fn child_no_user_time() {
        if !in_child() {
            return;
        }
        // Whatever this kernel offers, the verdict is consistent with it.
        let (source, why) = route_on_new_thread();
        let costs = fastnow::clock_info().thread_cpu_costs;
        match source {
            ThreadCpuSource::PerfPage => assert_eq!((why, costs), (None, None)),
            // No cap_user_time, and the event's own system call measured
            // cheaper than the OS call: a descriptor per thread, no more.
            ThreadCpuSource::PerfIoctl => {
                assert_eq!(why, Some(ThreadCpuFallback::NoUserTime));
                assert!(costs.unwrap().perf_ioctl_taken, "{costs:?}");
                assert_eq!(perf_mappings().len(), 0, "released at thread exit");
                assert_eq!(perf_descriptors().len(), 0, "closed at thread exit");
                assert_eq!(route_on_new_thread(), (source, why));
            }
            _ => {
                assert_eq!(source, OS);
                assert!(why.is_some());
                assert_eq!(perf_mappings().len(), 0);
                assert_eq!(perf_descriptors().len(), 0);
                if why == Some(ThreadCpuFallback::NoUserTime) {
                    // Measured, and the OS call kept.
                    assert!(!costs.unwrap().perf_ioctl_taken, "{costs:?}");
                    // Remembered: a later thread does not open again.
                    assert_eq!(route_on_new_thread(), (OS, why));
                }
            }
        }
    }

    /// An event is opened at a thread's first reading, holds no descriptor,
    /// and is released when the thread exits.
    #[test]
    fn event_lives_with_its_thread() {
        if !common::no_processes() {
            run_child("child_event_lives_with_its_thread");
        }
    }

    #[test]
    #[ignore = "run by event_lives_with_its_thread in a child process"]
    fn child_event_lives_with_its_thread() {
        if !in_child() {
            return;
        }
        __test::thread_cpu_accept_without_user_time(true);
        if route_on_new_thread().0 != ThreadCpuSource::PerfPage {
            // perf events denied here (seccomp, paranoid 3): nothing to test.
            eprintln!("skipped: no perf events in this process");
            return;
        }
        assert_eq!(perf_mappings().len(), 0, "released at thread exit");
        let (opened, go) = (std::sync::mpsc::channel(), std::sync::mpsc::channel::<()>());
        let (opened_tx, opened_rx) = opened;
        let (go_tx, go_rx) = go;
        let worker = std::thread::spawn(move || {
            let before = perf_mappings().len();
            let _ = ThreadCpuInstant::now();
            opened_tx.send(before).unwrap();
            go_rx.recv().unwrap();
        });
        let before = opened_rx.recv().unwrap();
        assert_eq!(before, 0, "nothing before the first reading");
        assert_eq!(perf_mappings().len(), 1, "one page for the reading thread");
        assert_eq!(perf_descriptors().len(), 0, "no descriptor kept");
        go_tx.send(()).unwrap();
        worker.join().unwrap();
        assert_eq!(perf_mappings().len(), 0, "released at thread exit");
    }

    /// A forked child's thread has the parent thread's event in its state
    /// (the descriptor was closed, and the kernel copies no perf mapping):
    /// the child's readings must be its own, from an event of its own.
    #[test]
    fn fork_reopens_for_the_child() {
        if !common::no_processes() {
            run_child("child_fork");
        }
    }

    #[test]
    #[ignore = "run by fork_reopens_for_the_child in a child process"]
    fn child_fork() {
        if !in_child() {
            return;
        }
        __test::thread_cpu_accept_without_user_time(true);
        let _ = ThreadCpuInstant::now();
        if fastnow::clock_info().thread_cpu != ThreadCpuSource::PerfPage {
            eprintln!("skipped: no perf events in this process");
            return;
        }
        // The parent thread's event has counted a good deal by now.
        burn(Duration::from_millis(200));
        std::thread::sleep(Duration::from_millis(2)); // a switch: the page updated
        let parent = ThreadCpuInstant::now().as_nanos();
        assert!(parent >= 200_000_000, "{parent}");
        let parents_page = perf_mappings();
        in_fork(20, || {
            let start = ThreadCpuInstant::now().as_nanos();
            burn(Duration::from_millis(20));
            std::thread::sleep(Duration::from_millis(2));
            let end = ThreadCpuInstant::now().as_nanos();
            let kernel = kernel_thread_cpu();
            let own = perf_mappings();
            // On the parent thread's event it would read ≥ 200 ms.
            let ok = start < 100_000_000
                && end <= kernel + 10_000_000
                && fastnow::clock_info().thread_cpu == ThreadCpuSource::PerfPage
                && own.len() == 1;
            i32::from(!ok)
        })
        .unwrap();
        // The parent's own event goes on.
        assert!(ThreadCpuInstant::now().as_nanos() >= parent);
        assert_eq!(perf_mappings(), parents_page);
    }
}

/// A thread whose RDTSC faults (`prctl(PR_SET_TSC, PR_TSC_SIGSEGV)`, as
/// sandboxes and record/replay tools set it) must not take the perf route,
/// whose reads execute RDTSC: it makes the OS call, and survives.
#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    target_arch = "x86_64"
))]
mod tsc_fault {
    use super::*;

    #[test]
    fn a_thread_whose_rdtsc_faults_makes_the_os_call() {
        if common::no_processes() {
            return;
        }
        // SAFETY: fork has no preconditions; the child sets its own TSC
        // mode, reads, and `_exit`s, never returning into the harness.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            // SAFETY: alarm, prctl and _exit take plain values.
            unsafe { libc::alarm(20) };
            let set = unsafe { libc::prctl(libc::PR_SET_TSC, libc::PR_TSC_SIGSEGV) };
            if set != 0 {
                unsafe { libc::_exit(0) }; // not settable here: nothing to test
            }
            if !os_clock_survives() {
                // The kernel's own clock_gettime (its vDSO reads the TSC on
                // a `tsc` clocksource) faults too: so does std's
                // `Instant::now()`, and there is no OS call left to make.
                unsafe { libc::_exit(0) };
            }
            let k0 = kernel_thread_cpu();
            let t = ThreadCpuInstant::now().as_nanos();
            let ok = t >= k0
                && t <= kernel_thread_cpu()
                && fastnow::clock_info().thread_cpu != ThreadCpuSource::PerfPage;
            // SAFETY: as above.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waits for our own child.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "the child died of signal {} (or failed: {status})",
            libc::WTERMSIG(status)
        );
    }

    /// Whether libc's `clock_gettime(CLOCK_MONOTONIC)` survives in this
    /// process (tried in a forked child, which inherits the TSC mode).
    fn os_clock_survives() -> bool {
        // SAFETY: as above; the child reads the clock and `_exit`s.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: `ts` is a valid timespec to write; _exit takes a value.
            unsafe {
                libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
                libc::_exit(0)
            };
        }
        let mut status = 0;
        // SAFETY: waits for our own child.
        pid > 0 && unsafe { libc::waitpid(pid, &mut status, 0) } == pid && libc::WIFEXITED(status)
    }
}

/// `{:?}` prints the CPU time a person can read, and it is the reading's
/// own figure (read back here, to the nanosecond the text keeps).
#[test]
fn debug_prints_the_cpu_time() {
    /// Reads back Go's duration form (`1h2m3.5s`, `12.25ms`, `950ns`) in ns.
    fn parse(text: &str) -> u128 {
        let (mut total, mut rest) = (0u128, text);
        while !rest.is_empty() {
            let digits = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or_else(|| panic!("no unit in {text}"));
            let (number, tail) = rest.split_at(digits);
            let (unit, per): (&str, u128) = [
                ("ns", 1),
                ("µs", 1_000),
                ("ms", 1_000_000),
                ("h", 3_600_000_000_000),
                ("m", 60_000_000_000),
                ("s", 1_000_000_000),
            ]
            .into_iter()
            .find(|(u, _)| tail.starts_with(u))
            .unwrap_or_else(|| panic!("unknown unit in {text}"));
            let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
            let mut value = whole.parse::<u128>().unwrap() * per;
            let mut scale = per;
            for d in frac.chars() {
                scale /= 10;
                value += u128::from(d.to_digit(10).unwrap()) * scale;
            }
            total += value;
            rest = &tail[unit.len()..];
        }
        total
    }
    // Some CPU first, so that the figure has a fraction to print.
    let spin = std::time::Instant::now();
    while spin.elapsed() < std::time::Duration::from_millis(3) {
        std::hint::black_box(0);
    }
    let t = ThreadCpuInstant::now();
    let text = format!("{t:?}");
    let shown = text
        .strip_prefix("ThreadCpuInstant(")
        .and_then(|s| s.strip_suffix(" of CPU)"))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(parse(shown), u128::from(t.as_nanos()), "{text}");
}
