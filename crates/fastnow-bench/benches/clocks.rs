//! Criterion suite: every clock's `now()` on one thread, and the cost of
//! converting (`elapsed()`) against a second `now()`.
//!
//!     cargo bench -p fastnow-bench --features peers
//!
//! The readers come from `fastnow_bench::clocks()`, the same list the figures
//! program and `fastnow report` use. Contention, strictness, start-up and
//! accuracy are not criterion-shaped; `figures` measures them.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use std::time::Duration;

fn now(c: &mut Criterion) {
    let mut g = c.benchmark_group("now");
    for clock in fastnow_bench::clocks() {
        g.bench_function(clock.name, |b| b.iter(|| black_box((clock.read)())));
    }
    g.finish();
}

fn elapsed(c: &mut Criterion) {
    let mut g = c.benchmark_group("start-stop");
    let start = fastnow::Instant::now();
    g.bench_function("fastnow Instant::now", |b| {
        b.iter(|| black_box(fastnow::Instant::now()))
    });
    g.bench_function("fastnow start.elapsed()", |b| {
        b.iter(|| black_box(start.elapsed()))
    });
    let std_start = std::time::Instant::now();
    g.bench_function("std start.elapsed()", |b| {
        b.iter(|| black_box(std_start.elapsed()))
    });
    g.finish();
}

/// `BootInstant::now()` beside `Instant::now()` and the kernel's boot clock.
fn boot(c: &mut Criterion) {
    let mut g = c.benchmark_group("boot");
    g.bench_function("fastnow BootInstant::now", |b| {
        b.iter(|| black_box(fastnow::BootInstant::now()))
    });
    g.bench_function("fastnow Instant::now", |b| {
        b.iter(|| black_box(fastnow::Instant::now()))
    });
    #[cfg(any(target_os = "linux", target_os = "android"))]
    g.bench_function("clock_gettime(CLOCK_BOOTTIME)", |b| {
        b.iter(|| {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: a valid, writable timespec.
            unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
            black_box(ts)
        })
    });
    g.finish();
}

/// `ThreadCpuInstant::now()` beside the OS thread clock it reads or stands in for.
fn thread_cpu(c: &mut Criterion) {
    let mut g = c.benchmark_group("thread-cpu");
    g.bench_function("fastnow ThreadCpuInstant::now", |b| {
        b.iter(|| black_box(fastnow::ThreadCpuInstant::now()))
    });
    #[cfg(unix)]
    g.bench_function("clock_gettime(CLOCK_THREAD_CPUTIME_ID)", |b| {
        b.iter(|| {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: a valid, writable timespec.
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
            black_box(ts)
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = now, elapsed, boot, thread_cpu
}
criterion_main!(benches);
