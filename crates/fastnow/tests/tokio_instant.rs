//! The three instant types as `tokio::time::Instant` (feature `tokio`),
//! with tokio's paused clock and fastnow's global mock: two clocks, neither
//! of which moves the other.
#![cfg(all(
    feature = "tokio",
    not(all(target_family = "wasm", target_os = "unknown"))
))]

use fastnow::{Instant, MonotonicInstant, OrderedInstant};
use std::sync::Mutex;
use std::time::{Duration, Instant as StdInstant};
use tokio::time::Instant as TokioInstant;

/// The global mock is seen by every thread: tests that read fastnow's real
/// time do not run while it is installed.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `test` on a current-thread runtime with timers, its clock paused
/// or running, while holding `SERIAL` (outside the future: no lock is held
/// across an await).
fn run<F: std::future::Future<Output = ()>>(paused: bool, test: F) {
    let _serial = serial();
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(paused)
        .build()
        .unwrap()
        .block_on(test);
}

/// tokio's conversion is std's, wrapped.
#[test]
fn goes_through_std() {
    let _serial = serial();
    let (a, b, c) = (
        Instant::now(),
        MonotonicInstant::now(),
        OrderedInstant::now(),
    );
    assert_eq!(TokioInstant::from(a).into_std(), StdInstant::from(a));
    assert_eq!(TokioInstant::from(b).into_std(), StdInstant::from(b));
    assert_eq!(TokioInstant::from(c).into_std(), StdInstant::from(c));
    let later = a + Duration::from_secs(7);
    assert_eq!(
        TokioInstant::from(later) - TokioInstant::from(a),
        Duration::from_secs(7)
    );
}

/// A paused tokio clock moves tokio's `now` only: fastnow keeps real time,
/// so a fastnow instant converted before an hour of virtual time is an
/// hour behind tokio's `now` after it.
#[test]
fn paused_tokio_does_not_move_fastnow() {
    run(true, async {
        let start = Instant::now();
        let tokio_start = TokioInstant::now();
        tokio::time::advance(Duration::from_secs(3600)).await;
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "fastnow followed tokio's clock"
        );
        assert!(TokioInstant::now() - tokio_start >= Duration::from_secs(3600));
        let behind = TokioInstant::now() - TokioInstant::from(start);
        // tokio's paused clock started at (about) the real time of the pause.
        assert!(
            behind >= Duration::from_secs(3600) - Duration::from_secs(60)
                && behind <= Duration::from_secs(3600) + Duration::from_secs(60),
            "{behind:?}"
        );
    });
}

/// A deadline computed from fastnow and handed to tokio's timer fires in
/// tokio's virtual time (auto-advance jumps to it), at its converted
/// instant, while fastnow's real clock barely moves.
#[test]
fn fastnow_deadline_on_a_paused_tokio_clock() {
    run(true, async {
        let start = Instant::now();
        let deadline = start + Duration::from_secs(600);
        tokio::time::sleep_until(deadline.into()).await;
        let now = TokioInstant::now();
        assert!(now >= TokioInstant::from(deadline));
        // tokio's timers have millisecond granularity.
        assert!(now - TokioInstant::from(deadline) <= Duration::from_millis(2));
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "600 s of tokio's time passed, not of fastnow's"
        );
    });
}

/// The signed distance from `a` to `b`, in nanoseconds.
#[cfg(all(feature = "mock", unix))]
fn signed_nanos(a: TokioInstant, b: TokioInstant) -> i128 {
    match b.checked_duration_since(a) {
        Some(ahead) => ahead.as_nanos() as i128,
        None => -(a.duration_since(b).as_nanos() as i128),
    }
}

/// fastnow's global mock moves fastnow only: tokio's clock (running, not
/// paused) does not follow it, and mocked readings convert as values: each
/// to the tokio instant of the real reading with the same value, an hour
/// of mock time to an hour between the converted instants. Whether a
/// mocked deadline is due is decided by its value against the real
/// timeline, never by how long the machine has been up: the amounts here
/// are taken from a real reading, so the test holds on a machine booted a
/// minute ago and on one up for decades.
#[cfg(feature = "mock")]
#[test]
fn global_mock_does_not_move_tokio() {
    run(false, async {
        let real = Instant::now();
        let tokio_start = TokioInstant::now();
        let clock = fastnow::mock::GlobalMockClock::install();
        let start = Instant::now();
        clock.advance(Duration::from_secs(3600));
        let later = Instant::now();
        assert_eq!(later - start, Duration::from_secs(3600));
        assert_eq!(
            TokioInstant::from(later) - TokioInstant::from(start),
            Duration::from_secs(3600)
        );
        // Each mocked reading lands at its distance from the real one, on
        // whichever side of it the mock's value lies. (Unix: on Windows
        // std's `Instant` cannot go back past boot.)
        #[cfg(unix)]
        for t in [start, later] {
            assert_eq!(
                signed_nanos(TokioInstant::from(real), TokioInstant::from(t)),
                i128::from(t.as_nanos()) - i128::from(real.as_nanos()),
                "{t:?} against the real {real:?}"
            );
        }
        // A deadline from the mock an hour past the real clock is an hour in
        // tokio's future: a short real wait ends first.
        let to_real = Duration::from_nanos(real.as_nanos().saturating_sub(later.as_nanos()));
        clock.advance(to_real + Duration::from_secs(3600));
        let ahead = Instant::now();
        assert!(ahead.duration_since(real) >= Duration::from_secs(3600));
        tokio::time::timeout_at(ahead.into(), tokio::time::sleep(Duration::from_millis(20)))
            .await
            .expect("a deadline an hour ahead of the real clock fired");
        // One computed from the mock an hour before the real clock is due at once.
        let behind = ahead - (ahead.duration_since(real) + Duration::from_secs(3600));
        tokio::time::timeout_at(behind.into(), std::future::pending::<()>())
            .await
            .unwrap_err();
        // Over two hours of mock time, tokio's clock moved only as real time did.
        assert!(TokioInstant::now() - tokio_start < Duration::from_secs(60));
        drop(clock);
    });
}
