//! The cheapest *correct* way to read the time in a hot path.
//!
//! fastnow reads the CPU's architectural counter (`RDTSC` on x86_64,
//! `CNTVCT_EL0` on aarch64) instead of asking the kernel, and converts it to
//! nanoseconds at the read with one multiply, on a line kept in step with
//! `CLOCK_MONOTONIC`. Every type states what it guarantees:
//!
//! | type | typical cost (x86, see `BENCHMARKS.md`) | guarantee |
//! |---|---|---|
//! | [`Instant`] | ≈ bare `RDTSC` | monotonic on one thread |
//! | [`MonotonicInstant`] | ≈ `Instant` (AMD) or ≈ `OrderedInstant` (Intel) | if B happens after A, B ≥ A, across threads |
//! | [`OrderedInstant`] | ≈ `RDTSCP` | read after every preceding load |
//! | [`unix_nanos`], [`UnixTime`] | ≈ `Instant` | within a stated bound of `CLOCK_REALTIME`, following NTP and steps |
//! | [`recent`], [`recent_unix_nanos`] | one atomic load | the last refresh (1 ms upkeep by default) |
//!
//! ```
//! use fastnow::Instant;
//!
//! let start = Instant::now();
//! let total: u64 = (0..1_000u64).sum();
//! let took = start.elapsed(); // a std::time::Duration
//! assert_eq!(total, 499_500);
//! println!("summed in {took:?} using {}", fastnow::clock_info());
//! ```
//!
//! # Which clock, and why
//! The first reading in the process decides whether the counter is
//! trustworthy (see [`clock_info`] and [`Fallback`]): it must tick at a
//! constant rate, be readable, and — on Linux x86 — be the kernel's own
//! clocksource, which means the kernel verified that all cores agree. The
//! kernel's verdict is read again every second, and if it drops the counter
//! (its watchdog found the TSC unstable), so does fastnow, without a reading
//! stepping back. Otherwise every type reads `CLOCK_MONOTONIC` instead, with
//! the same API and guarantees. `FASTNOW_CLOCK=counter|os` overrides the
//! choice; an invalid value is ignored and reported in
//! [`ClockInfo::env_override`].
//!
//! # Calibration
//! Nothing happens at load time, and no reading ever waits for calibration:
//! the first millisecond of a process reads `CLOCK_MONOTONIC` while the
//! counter's rate is measured (and checked against the frequency the
//! hardware publishes, if it does). From then on the rate is measured over the most recent
//! second, about once a second, so it follows `CLOCK_MONOTONIC`'s *current*
//! rate — which NTP, chrony or PTP adjust — within about two seconds. Each
//! new rate takes over at a point fixed in advance, continuing the old line
//! there, so the conversion is one non-decreasing function of the counter
//! for every thread and an `elapsed()` never steps back. The update runs
//! up to twice a second (where the kernel's clocksource is followed) on the
//! reader that finds it due — a rate sample, or a re-check of the kernel's
//! clocksource (one system call), whose costs `BENCHMARKS.md` gives, warm
//! and as a read in a hot loop meets them a second after they last ran — or
//! on the coarse tier's upkeep thread while that runs, and readers then
//! only load: programs that cannot have one read take that long run it. See
//! `spec/SEMANTICS.md` for the rules, and [`recalibrate`] to restart the
//! measurement after a suspend or a migration.
//!
//! # Async-signal safety and fork
//! Every reading, including the first of the process, may be made in a
//! signal handler: no read path waits on a lock, allocates, or reads the
//! environment through more than `getenv`. That covers every method of the
//! three instant types, [`unix_nanos`], [`UnixTime::now`], [`system_time`]
//! and [`refresh`], and [`recent`] and [`recent_unix_nanos`] except for
//! their very first call in a process (or in a forked child whose parent
//! ran upkeep), which may start the upkeep thread. The controls are not
//! async-signal-safe: [`clock_info`], [`recalibrate`], [`resync_wall`],
//! [`set_wall_resync_interval`], [`start_upkeep`] and [`stop_upkeep`]. A
//! process forked at any moment (even while another thread was updating
//! the state) keeps a working clock.
//!
//! # Features
//! - `std` (default): the coarse tier's upkeep thread, `SystemTime`
//!   conversions, and the non-Unix OS clocks. Without it the crate is
//!   `no_std` (Unix only: it reads the OS clocks, the environment and the
//!   kernel's clocksource through `libc`), with everything else unchanged.
//! - `mock`: `fastnow::mock::MockClock`, a manual clock for tests (needs `std`).
//! - `tracing`: timers for `tracing-subscriber` from the wall tier (needs `std`).
//! - `test-hooks`: not part of the API; for this workspace's own tests and
//!   benches.
//!
//! Interop features give [`UnixTime`] the traits and conversions of other
//! crates' time types. Each conversion is exact to the nanosecond both ways;
//! the ones into `UnixTime` fail with [`OutOfRange`] before 1970 or after
//! 2554-07-21T23:34:33.709551615Z. None needs `std` (the `prost` one needs
//! `alloc`, as `prost-types` does), and each dependency is taken without its
//! default features.
//! - `serde`: `Serialize`/`Deserialize` as integer nanoseconds, and
//!   `#[serde(with = "fastnow::serde::rfc3339")]` for RFC 3339 text (see
//!   the `fastnow::serde` module).
//! - `jiff`: `From<UnixTime> for jiff::Timestamp`, `TryFrom<jiff::Timestamp> for UnixTime`.
//! - `chrono`: `From<UnixTime> for DateTime<Utc>`, `TryFrom<DateTime<Tz>> for UnixTime`.
//! - `time`: `From<UnixTime>` for `time::OffsetDateTime` (at UTC) and
//!   `time::UtcDateTime`, and `TryFrom` both.
//! - `prost`: `From<UnixTime> for prost_types::Timestamp`,
//!   `TryFrom<prost_types::Timestamp> for UnixTime`.
//!
//! The crate's `rust-version` is that of its own code; the current releases
//! of `jiff` (1.x) and `prost-types` (0.14) need Rust 1.85, those of `time`
//! 1.88 (any `time` from 0.3.41 on is accepted, and 0.3.41 needs 1.67).
//!
//! ```
//! # #[cfg(all(feature = "jiff", feature = "chrono"))] {
//! use fastnow::UnixTime;
//!
//! let t = UnixTime::now();
//! let ts = jiff::Timestamp::from(t);
//! let dt = chrono::DateTime::<chrono::Utc>::from(t);
//! assert_eq!(UnixTime::try_from(ts), Ok(t));
//! assert_eq!(UnixTime::try_from(dt), Ok(t));
//! # }
//! ```
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

#[cfg(feature = "std")]
extern crate std;

mod atomic;
mod cache;
mod coarse;
mod info;
mod interop;
#[cfg(feature = "mock")]
#[cfg_attr(docsrs, doc(cfg(feature = "mock")))]
pub mod mock;
mod precise;
mod source;
mod timekeeper;
#[cfg(feature = "tracing")]
#[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
pub mod tracing;
#[cfg(feature = "std")]
mod upkeep;
mod wall;

pub use atomic::{AtomicInstant, AtomicUnixTime};
pub use cache::{refresh, DEFAULT_RESOLUTION};
pub use coarse::{recent, recent_unix_nanos};
pub use info::{clock_info, recalibrate, ClockInfo};
#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
pub use interop::serde;
pub use precise::{Instant, MonotonicInstant, MonotonicMode, OrderedInstant};
pub use source::arch::FreqOrigin;
pub use source::detect::{Clocksource, EnvOverride, Fallback, Source};
#[cfg(feature = "std")]
pub use upkeep::{set_auto_upkeep, start_upkeep, stop_upkeep, upkeep_resolution, UpkeepError};
#[cfg(feature = "std")]
pub use wall::system_time;
pub use wall::{
    resync_wall, set_wall_resync_interval, unix_nanos, OutOfRange, UnixTime, DEFAULT_RESYNC,
};

// The README's examples are doc tests too (they need these features).
#[cfg(all(doctest, feature = "serde", feature = "jiff", feature = "mock"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// Test hooks, for this workspace's tests and benches (the `test-hooks`
/// feature). Not part of the API.
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub mod __test {
    /// Runs `f` while this thread holds the timekeeper's writers' lock (as
    /// a state update does), whether or not anything was published yet.
    pub fn with_writer_lock<R>(f: impl FnOnce() -> R) -> R {
        crate::timekeeper::TK.with_lock(f)
    }

    /// How many readings so far returned a lower bound of the next state
    /// (past a state's end while another thread held the writers' lock).
    pub fn slowed_readings() -> u64 {
        crate::timekeeper::TK
            .slowed
            .load(core::sync::atomic::Ordering::Relaxed)
    }

    /// What a state update costs the reader that does it, in nanoseconds:
    /// a rate sample, or (`check`) a clocksource re-check.
    pub fn reader_update_cost(check: bool) -> u64 {
        crate::timekeeper::TK.reader_update_cost(check)
    }

    /// The same update, untimed: a caller times it with a bare counter
    /// read, so that no OS clock reading before it warms the update's path.
    pub fn reader_update(check: bool) {
        crate::timekeeper::TK.reader_update(check)
    }

    /// How many states have been published (each update adds one or two).
    pub fn state_generation() -> u64 {
        crate::timekeeper::TK.state.sequence() / 2
    }

    /// Runs `hook` at the start of the coarse tier's first refresh (each
    /// time `recent()` or `recent_unix_nanos()` finds the cache unset),
    /// after the caller's check for a mock: a test installs a global mock
    /// there. Set once per process; only with the `mock` feature.
    #[cfg(feature = "mock")]
    pub fn before_first_refresh(hook: fn()) {
        let _ = crate::coarse::BEFORE_FIRST_REFRESH.set(hook);
    }
}
