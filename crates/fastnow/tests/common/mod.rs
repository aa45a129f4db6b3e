//! What some targets cannot do: a test that needs it calls one of these
//! first and returns when it says so, having printed why.

use std::io::Write;

/// The reason goes straight to stderr, past the test harness's capture, so
/// a skip shows in every run's output, with the line of the test that asked.
#[track_caller]
fn skipped(reason: &str) {
    let at = std::panic::Location::caller();
    let _ = writeln!(std::io::stderr(), "{at}: skipped: {reason}");
}

/// WASI (wasm32-wasip1, wasm32-wasip2) has no threads (`thread::spawn`
/// fails there).
#[allow(dead_code)]
#[track_caller]
pub fn no_threads() -> bool {
    let none = cfg!(all(target_os = "wasi", not(target_feature = "atomics")));
    if none {
        skipped("this target has no threads");
    }
    none
}

/// WASI cannot start processes.
#[allow(dead_code)]
#[track_caller]
pub fn no_processes() -> bool {
    let none = cfg!(target_os = "wasi");
    if none {
        skipped("this target cannot start processes");
    }
    none
}

/// The system clock's Unix time in nanoseconds: what the wall tier's
/// readings are compared with (a date written into a test would assume the
/// machine's clock).
#[allow(dead_code)]
pub fn system_unix_nanos() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("the system clock is after 1970")
        .as_nanos() as u64
}

/// This process's threads, as Linux lists them (`None` elsewhere: a leak
/// check is then skipped; under Wine the path would name Wine's own
/// threads).
#[allow(dead_code)]
pub fn threads() -> Option<usize> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    std::fs::read_dir("/proc/self/task").ok().map(|d| d.count())
}

/// The kernel may list a joined thread for a moment after `join` returns;
/// a leaked thread stays. Waits up to a second for the count to settle.
#[allow(dead_code)]
pub fn threads_settle_to(expected: usize) -> usize {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    loop {
        let n = threads().unwrap_or(0);
        if n == expected || std::time::Instant::now() > deadline {
            return n;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Whether this process is a child that `run_child` started.
#[allow(dead_code)]
pub fn in_child() -> bool {
    std::env::var_os("FASTNOW_TEST_CHILD").is_some()
}

/// Runs the ignored test `test` of this test binary alone in a child
/// process, for what a process can do only once or only to itself (its
/// first reading, its descriptors): with `FASTNOW_TEST_CHILD` set (see
/// `in_child`), `FASTNOW_CLOCK` unset and `env` set, started through
/// `FASTNOW_TEST_RUNNER` where the Makefile sets one (an emulator, for
/// cross-target runs). Fails unless the test passes; its standard output.
#[allow(dead_code)]
pub fn run_child(test: &str, env: &[(&str, &std::ffi::OsStr)]) -> String {
    run_child_in(&[], test, env)
}

/// `run_child`, with the command line prefixed by `wrapper` (e.g. a shell
/// that first changes the child's view of the file system).
#[allow(dead_code)]
pub fn run_child_in(wrapper: &[&str], test: &str, env: &[(&str, &std::ffi::OsStr)]) -> String {
    let mut argv: Vec<std::ffi::OsString> = wrapper.iter().map(Into::into).collect();
    if let Some(runner) = std::env::var_os("FASTNOW_TEST_RUNNER") {
        argv.push(runner);
    }
    argv.push(std::env::current_exe().unwrap().into());
    let out = std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .args([
            test,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("FASTNOW_TEST_CHILD", "1")
        .env_remove("FASTNOW_CLOCK")
        .envs(env.iter().copied())
        .output()
        .expect("re-run the test binary");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{test} {env:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The descriptor fastnow holds the kernel's clocksource file open with,
/// if any (Linux).
#[allow(dead_code)]
pub fn clocksource_descriptor() -> Option<i32> {
    std::fs::read_dir("/proc/self/fd")
        .ok()?
        .flatten()
        .find(|e| std::fs::read_link(e.path()).is_ok_and(|p| p.as_os_str() == CLOCKSOURCE))
        .and_then(|e| e.file_name().to_str()?.parse().ok())
}

/// The kernel's clocksource file (Linux x86 reads its verdict there).
#[allow(dead_code)]
pub const CLOCKSOURCE: &str = "/sys/devices/system/clocksource/clocksource0/current_clocksource";

/// Whether `recent()` moves past `seen` within ten seconds: the upkeep
/// thread refreshes it once it runs, and on a loaded machine (or under an
/// emulator) a new thread may wait tens of milliseconds for a core, so only
/// a thread that does not refresh at all fails a test.
#[allow(dead_code)]
pub fn recent_advances_past(seen: fastnow::Instant) -> bool {
    advance_within(seen, std::time::Duration::from_millis(1))
}

/// Whether `recent()` moves past `seen` within ten seconds, looking every
/// `poll`.
fn advance_within(seen: fastnow::Instant, poll: std::time::Duration) -> bool {
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while fastnow::recent() <= seen && std::time::Instant::now() < give_up {
        std::thread::sleep(poll);
    }
    fastnow::recent() > seen
}

/// The shortest of five gaps between successive advances of `recent()`
/// (`None` if it stopped advancing): how often the upkeep refreshes, as far
/// as a loaded machine lets it show — a preemption lengthens some gaps,
/// rarely all five.
#[allow(dead_code)]
pub fn shortest_refresh_gap() -> Option<std::time::Duration> {
    let poll = std::time::Duration::from_micros(100);
    if !advance_within(fastnow::recent(), poll) {
        return None;
    }
    let mut last = std::time::Instant::now();
    let mut shortest = std::time::Duration::MAX;
    for _ in 0..5 {
        if !advance_within(fastnow::recent(), poll) {
            return None;
        }
        let now = std::time::Instant::now();
        shortest = shortest.min(now - last);
        last = now;
    }
    Some(shortest)
}
