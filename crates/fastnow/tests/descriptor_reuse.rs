//! A program that closes descriptors it did not open, then opens a file of
//! its own at the same number (the daemon pattern: close 3..63, open a pid
//! file, write the pid), must not make fastnow read its file as the kernel's
//! clocksource. The scenario runs in a child process, whose descriptors it
//! may close freely: this test binary re-executes itself and runs one
//! `child_*` test, which does nothing unless `FASTNOW_TEST_CHILD` is set.
#![cfg(unix)]

mod common;

use common::{clocksource_descriptor, in_child, CLOCKSOURCE};
use fastnow::{Instant, Source};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::time::Duration;

#[test]
fn pid_file_at_the_clocksource_descriptor() {
    if common::no_processes() {
        return;
    }
    let pid_file = std::env::temp_dir().join(format!(
        "fastnow-descriptor-reuse-{}.pid",
        std::process::id()
    ));
    common::run_child(
        "child_daemon",
        &[("FASTNOW_TEST_PID_FILE", pid_file.as_ref())],
    );
    let _ = std::fs::remove_file(&pid_file);
}

fn kernel_clocksource() -> Option<String> {
    std::fs::read_to_string(CLOCKSOURCE)
        .ok()
        .map(|s| s.trim().to_owned())
}

#[test]
#[ignore = "run by pid_file_at_the_clocksource_descriptor in a child process"]
fn child_daemon() {
    if !in_child() {
        return;
    }
    let _ = Instant::now();
    let before = fastnow::clock_info();
    let Some(held) = clocksource_descriptor() else {
        println!("SKIPPED: fastnow holds no clocksource file here ({before})");
        return;
    };
    let real = kernel_clocksource().expect("the file fastnow holds is readable");
    assert_eq!(
        before.kernel_clocksource.map(|c| c.as_str().to_owned()),
        Some(real.clone())
    );
    if before.source != Source::Counter {
        println!("note: the counter is not in use ({before}); checking the report only");
    }

    // The daemon pattern. Nothing else in this process holds a descriptor
    // above 2 (the test harness keeps none), so closing them is safe here.
    for fd in 3..64 {
        // SAFETY: closing a descriptor has no memory effects; none of these
        // is owned by a Rust object of this process but fastnow's file.
        unsafe { libc::close(fd) };
    }
    let path = CString::new(
        std::env::var_os("FASTNOW_TEST_PID_FILE")
            .unwrap()
            .as_bytes(),
    )
    .unwrap();
    let open_pid_file = || {
        // SAFETY: `path` is NUL-terminated; open has no other memory effects.
        unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC,
                0o644,
            )
        }
    };
    // The lowest free number: fastnow's, unless the harness had a lower one.
    let mut pid_fd = open_pid_file();
    while pid_fd >= 0 && pid_fd < held {
        pid_fd = open_pid_file();
    }
    assert_eq!(
        pid_fd, held,
        "the pid file takes fastnow's descriptor number"
    );
    let pid = b"7905\n";
    // SAFETY: writes `pid.len()` bytes from a live buffer.
    let written = unsafe { libc::write(pid_fd, pid.as_ptr().cast(), pid.len()) };
    assert_eq!(written, pid.len() as isize);

    // Re-checks as a reader does, then as the upkeep thread does (at each
    // of its updates, four a second).
    for _ in 0..3 {
        fastnow::__test::reader_update(true);
    }
    let t = Instant::now();
    let after_readers = fastnow::clock_info();
    fastnow::start_upkeep(Duration::from_millis(1)).unwrap();
    std::thread::sleep(Duration::from_millis(600));
    assert!(fastnow::stop_upkeep());
    let after = fastnow::clock_info();
    for info in [&after_readers, &after] {
        assert_eq!(
            info.kernel_clocksource.map(|c| c.as_str().to_owned()),
            kernel_clocksource(),
            "{info}"
        );
        assert_eq!(info.source, before.source, "{info}");
        assert_eq!(info.fallback, before.fallback, "{info}");
        assert_eq!(info.demoted_at, None, "{info}");
    }
    assert!(t.elapsed() >= Duration::from_millis(600));

    // fastnow left the program's file alone: open at its number, intact.
    let mut buf = [0u8; 16];
    // SAFETY: reads into a live buffer of its length.
    let n = unsafe { libc::pread(pid_fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
    assert_eq!(&buf[..n.max(0) as usize], pid, "the pid file's content");
    let meta = std::fs::metadata(std::ffi::OsStr::from_bytes(path.as_bytes())).unwrap();
    // SAFETY: a zeroed stat is valid output space; fstat only writes it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a valid, writable stat.
    assert_eq!(unsafe { libc::fstat(pid_fd, &mut st) }, 0);
    assert_eq!(
        (st.st_dev as u64, st.st_ino as u64),
        (meta.dev(), meta.ino())
    );
}
