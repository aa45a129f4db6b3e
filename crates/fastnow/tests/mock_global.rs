//! The process-wide mock (feature `mock`) drives every tier on every
//! thread — a spawned thread, a pool of workers — and the tracing timers;
//! two tests that install it run their mocked sections one after the other;
//! and it never leaks into the real clocks. Its own test binary: while it
//! is installed, every thread of the process reads it.
#![cfg(feature = "mock")]

mod common;

use fastnow::mock::{GlobalMockClock, MockClock};
use fastnow::{Instant, MonotonicInstant, OrderedInstant, UnixTime};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// A minimal pool: `workers` threads that run the jobs sent to them.
struct Pool {
    jobs: mpsc::Sender<Box<dyn FnOnce() + Send>>,
    workers: Vec<std::thread::JoinHandle<()>>,
}

impl Pool {
    fn new(workers: usize) -> Pool {
        let (jobs, rx) = mpsc::channel::<Box<dyn FnOnce() + Send>>();
        let rx = Arc::new(std::sync::Mutex::new(rx));
        let workers = (0..workers)
            .map(|_| {
                let rx = rx.clone();
                std::thread::spawn(move || loop {
                    let job = rx.lock().unwrap().recv();
                    match job {
                        Ok(job) => job(),
                        Err(_) => return,
                    }
                })
            })
            .collect();
        Pool { jobs, workers }
    }

    fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = mpsc::channel();
        self.jobs
            .send(Box::new(move || tx.send(f()).unwrap()))
            .unwrap();
        rx.recv().unwrap()
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        let (dead, _) = mpsc::channel();
        self.jobs = dead;
        for w in self.workers.drain(..) {
            w.join().unwrap();
        }
    }
}

/// One test function: while the mock is installed every thread reads it,
/// the harness's other test threads included.
#[test]
fn global_mock() {
    if common::no_threads() {
        return;
    }
    every_thread_and_every_tier();
    installs_are_serialised();
}

fn every_thread_and_every_tier() {
    let clock = GlobalMockClock::install();
    let pool = Pool::new(3);
    let start = std::thread::spawn(Instant::now).join().unwrap();
    assert_eq!(
        start.as_nanos(),
        clock.nanos(),
        "a spawned thread reads the mock"
    );
    let deadline = pool.run(move || start + Duration::from_secs(30));
    clock.advance(Duration::from_secs(29));
    assert!(!pool.run(move || Instant::now() >= deadline));
    clock.advance(Duration::from_secs(1));
    assert!(
        pool.run(move || Instant::now() >= deadline),
        "the pool sees the advance"
    );
    for _ in 0..6 {
        let (i, m, o, u, r, ru) = pool.run(|| {
            (
                Instant::now(),
                MonotonicInstant::now(),
                OrderedInstant::now(),
                fastnow::unix_nanos(),
                fastnow::recent(),
                fastnow::recent_unix_nanos(),
            )
        });
        assert_eq!(i.as_nanos(), clock.nanos());
        assert_eq!(m.as_nanos(), clock.nanos());
        assert_eq!(o.as_nanos(), clock.nanos());
        assert_eq!(r, i);
        assert_eq!(u, ru);
        assert_eq!(u, 1_000_000_030_000_000_000);
    }
    clock.set_unix_nanos(1_700_000_000_000_000_000);
    assert_eq!(pool.run(UnixTime::now).as_secs(), 1_700_000_000);
    assert_eq!(pool.run(|| fastnow::refresh().as_nanos()), clock.nanos());

    // A thread's own mock wins on that thread.
    let own = std::thread::spawn(|| {
        let local = MockClock::install();
        local.advance(Duration::from_secs(7));
        Instant::now().as_nanos()
    })
    .join()
    .unwrap();
    assert_eq!(own, 8_000_000_000);

    // The tracing timers stamp the mock's time.
    #[cfg(feature = "tracing")]
    {
        use tracing_subscriber::fmt::format::Writer;
        use tracing_subscriber::fmt::time::FormatTime;
        let mut s = String::new();
        fastnow::tracing::WallTime
            .format_time(&mut Writer::new(&mut s))
            .unwrap();
        assert_eq!(s, "2023-11-14T22:13:20.000000Z");
    }
    drop(pool);
    drop(clock);

    // Gone: real time again, and the real cache never saw the mock.
    let real = fastnow::recent_unix_nanos();
    let sys = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    assert!(real.abs_diff(sys) < 60_000_000_000, "{real} vs {sys}");
    let t = Instant::now();
    std::thread::sleep(Duration::from_millis(2));
    assert!(t.elapsed() >= Duration::from_millis(1));
}

/// Two tests installing the global mock at once: the second waits for the
/// first to drop it, so neither sees the other's time.
fn installs_are_serialised() {
    let first = GlobalMockClock::install();
    first.advance(Duration::from_secs(100));
    let second_started = Arc::new(AtomicBool::new(false));
    let other = {
        let started = second_started.clone();
        std::thread::spawn(move || {
            let second = GlobalMockClock::install();
            started.store(true, Ordering::SeqCst);
            // A fresh mock: the first one's 100 s are not visible.
            let seen = Instant::now().as_nanos();
            drop(second);
            seen
        })
    };
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        !second_started.load(Ordering::SeqCst),
        "the second install waits"
    );
    assert_eq!(Instant::now().as_nanos(), 101_000_000_000);
    drop(first);
    assert_eq!(other.join().unwrap(), 1_000_000_000);
}
