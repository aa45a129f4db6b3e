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
    concurrent_advances_all_count();
    advance_saturates();
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
    assert_eq!(own, (1 << 62) + 8_000_000_000);

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
    // A mock starts at 1 s, on the real instants' timeline (2^62 ns ahead).
    assert_eq!(Instant::now().as_nanos(), (1 << 62) + 101_000_000_000);
    drop(first);
    assert_eq!(other.join().unwrap(), (1 << 62) + 1_000_000_000);
}

/// Eight threads advancing at once, while others read: every advance
/// counts, on both clocks, and no thread's readings ever go back.
fn concurrent_advances_all_count() {
    const THREADS: u64 = 8;
    const STEPS: u64 = 25_000;
    const STEP: Duration = Duration::from_millis(1);
    let clock = GlobalMockClock::install();
    let (mono0, unix0) = (clock.nanos(), fastnow::unix_nanos());
    // Advancers that finished, or panicked: readers stop when all have.
    let finished = std::sync::atomic::AtomicU64::new(0);
    struct Finished<'a>(&'a std::sync::atomic::AtomicU64);
    impl Drop for Finished<'_> {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
    std::thread::scope(|s| {
        let readers: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let (mut last, mut last_unix, mut reads) = (Instant::now(), 0, 0u64);
                    while finished.load(Ordering::Relaxed) < THREADS || reads == 0 {
                        let (now, unix) = (Instant::now(), fastnow::unix_nanos());
                        assert!(now >= last, "went back: {last:?} -> {now:?}");
                        assert!(unix >= last_unix, "Unix time went back");
                        (last, last_unix) = (now, unix);
                        reads += 1;
                    }
                })
            })
            .collect();
        let advancers: Vec<_> = (0..THREADS)
            .map(|_| {
                s.spawn(|| {
                    let _finished = Finished(&finished);
                    let mut last = Instant::now();
                    for _ in 0..STEPS {
                        clock.advance(STEP);
                        let now = Instant::now();
                        // This thread's own advance is in what it reads next.
                        assert!(now >= last + STEP, "went back: {last:?} -> {now:?}");
                        last = now;
                    }
                })
            })
            .collect();
        for t in advancers.into_iter().chain(readers) {
            t.join().unwrap();
        }
    });
    let asked = STEP * (THREADS * STEPS) as u32;
    assert_eq!(Duration::from_nanos(clock.nanos() - mono0), asked);
    assert_eq!(Duration::from_nanos(fastnow::unix_nanos() - unix0), asked);
}

/// The global mock saturates as a thread's does: no panic, no wrap, and no
/// later reading smaller.
fn advance_saturates() {
    let clock = GlobalMockClock::install();
    let start = std::thread::spawn(Instant::now).join().unwrap();
    clock.advance(Duration::MAX);
    let end = std::thread::spawn(Instant::now).join().unwrap();
    assert_eq!(end.as_nanos(), u64::MAX);
    assert!(end > start);
    clock.advance(Duration::from_secs(1));
    assert_eq!(std::thread::spawn(Instant::now).join().unwrap(), end);
    assert_eq!(fastnow::unix_nanos(), u64::MAX);
    assert_eq!(clock.nanos(), u64::MAX);
}
