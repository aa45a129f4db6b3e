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
//! | [`BootInstant`] | ≈ `Instant` | as `Instant`, and counts time suspended (`CLOCK_BOOTTIME`) |
//! | [`unix_nanos`], [`UnixTime`] | ≈ `Instant` | within a stated bound of `CLOCK_REALTIME`, following NTP and steps |
//! | [`recent`], [`recent_unix_nanos`] | one atomic load | the last refresh (1 ms upkeep by default) |
//! | [`ThreadCpuInstant`] | the OS call, or a counter read where Linux's perf page allows | the calling thread's CPU time ([`measures_thread_cpu_time`]) |
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
//! Coming from `std::time`, quanta, minstant, fastant, coarsetime or tach?
//! The [`migration`] guide maps each name to fastnow's and says what behaves
//! differently.
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
//!   conversions, `From` each instant type for `std::time::Instant`, and
//!   the non-Unix OS clocks. Without it the crate is
//!   `no_std` (Unix only: it reads the OS clocks, the environment and the
//!   kernel's clocksource through `libc`), with everything else unchanged.
//! - `mock`: `fastnow::mock::MockClock`, a manual clock for tests (needs `std`).
//! - `tracing`: timers for `tracing-subscriber` from the wall tier (needs `std`).
//! - `test-hooks`: not part of the API; for this workspace's own tests and
//!   benches.
//!
//! # Bridges for the instant types
//! - `std` (default): `std::time::Instant::from(t)` for [`Instant`],
//!   [`MonotonicInstant`] and [`OrderedInstant`], for the APIs that take
//!   std's type (not in browsers, `wasm32-unknown-unknown`, where std's
//!   `Instant` cannot be read). Relative to one pair of readings taken at
//!   the first conversion: exact differences, within a stated bound of
//!   std's clock, never a panic (see the `From` impls).
//! - `tokio`: the same into `tokio::time::Instant`. fastnow and tokio keep
//!   separate clocks: `tokio::time::pause` does not move fastnow, and the
//!   `mock` feature's clocks do not move tokio (see the `From` impls).
//! - `governor`: `fastnow::governor::FastnowClock`, a clock for governor's
//!   rate limiters (`RateLimiter::direct_with_clock`), which the `mock`
//!   feature's clocks drive in tests (needs `std`).
//!
//! Rate limiters, caches and metrics take a clock only where they have a
//! hook for one. governor does (its `clock::Clock` trait). These do not,
//! so fastnow cannot be their clock: moka (0.12) reads `std::time::Instant`
//! internally, or `quanta::Instant` with its `quanta` feature, and its
//! builders take no clock; metrics-util (0.20) takes a `quanta::Clock` (its
//! `Recency::new(clock, …)`), which only quanta can make, a real one or
//! quanta's mock; tokio-metrics (0.5) reads `tokio::time::Instant::now()`
//! in its task monitor (`std::time::Instant` without its `rt` feature) and
//! `std::time::Instant::now()` in its runtime monitor, and takes no clock.
//!
//! Interop features give [`UnixTime`] the traits and conversions of other
//! crates' time types. Each conversion is exact to the nanosecond both ways;
//! the ones into `UnixTime` fail with [`OutOfRange`] before 1970 or after
//! 2554-07-21T23:34:33.709551615Z. None needs `std` (the `prost` one needs
//! `alloc`, as `prost-types` does), and each dependency is taken without its
//! default features. Without any, `UnixTime` displays and parses
//! ([`FromStr`](core::str::FromStr), [`ParseError`]) as RFC 3339 text.
//! - `serde`: `Serialize`/`Deserialize` as RFC 3339 text in human-readable
//!   formats (JSON, YAML…) and as integer nanoseconds in binary ones
//!   (bincode, postcard…); `#[serde(with = "fastnow::serde::rfc3339")]` and
//!   `#[serde(with = "fastnow::serde::nanos")]` choose one form for a field
//!   in every format (see the `fastnow::serde` module). Text is the default
//!   where people and JavaScript read the data: integer nanoseconds are
//!   above 2^53, which a JSON reader that parses numbers as doubles rounds
//!   silently; binary formats keep the exact, compact integer. Integers
//!   still deserialize in every format.
//! - `jiff`: `From<UnixTime> for jiff::Timestamp`, `TryFrom<jiff::Timestamp> for UnixTime`.
//! - `chrono`: `From<UnixTime> for DateTime<Utc>`, `TryFrom<DateTime<Tz>> for UnixTime`.
//! - `time`: `From<UnixTime>` for `time::OffsetDateTime` (at UTC) and
//!   `time::UtcDateTime`, and `TryFrom` both.
//! - `prost`: `From<UnixTime> for prost_types::Timestamp`,
//!   `TryFrom<prost_types::Timestamp> for UnixTime`.
//!
//! The crate's `rust-version` is that of its own code; the current releases
//! of `jiff` (1.x), `prost-types` (0.14) and `tokio` (1.x) need Rust 1.85,
//! those of `time` 1.88 (any `time` from 0.3.41 on is accepted, and 0.3.41
//! needs 1.67); `governor` 0.10 builds with the crate's own.
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
mod boot;
mod cache;
mod coarse;
mod info;
mod interop;
pub mod migration;
#[cfg(feature = "mock")]
#[cfg_attr(docsrs, doc(cfg(feature = "mock")))]
pub mod mock;
mod precise;
mod source;
mod thread_cpu;
mod timekeeper;
#[cfg(feature = "tracing")]
#[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
pub mod tracing;
#[cfg(feature = "std")]
mod upkeep;
mod wall;

/// How many cases a property test runs: `native` on the machine itself; an
/// eighth of them (at least 32) under an emulator (the cross-target runs set
/// `FASTNOW_TEST_RUNNER`), which runs them tens of times slower. The
/// properties are of integer arithmetic, which the native run covers in
/// full; the emulated runs are there for the target's own code.
#[cfg(test)]
pub(crate) fn proptest_cases(native: u32) -> u32 {
    if std::env::var_os("FASTNOW_TEST_RUNNER").is_some() {
        (native / 8).max(32)
    } else {
        native
    }
}

pub use atomic::{AtomicInstant, AtomicUnixTime};
pub use boot::BootInstant;
pub use cache::{refresh, DEFAULT_RESOLUTION};
pub use coarse::{recent, recent_unix_nanos};
pub use info::{clock_info, recalibrate, ClockInfo};
#[cfg(feature = "governor")]
#[cfg_attr(docsrs, doc(cfg(feature = "governor")))]
pub use interop::governor;
pub use interop::rfc3339::ParseError;
#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
pub use interop::serde;
pub use precise::{Instant, MonotonicInstant, MonotonicMode, OrderedInstant};
pub use source::arch::FreqOrigin;
pub use source::detect::{Clocksource, EnvOverride, Fallback, Source};
pub use source::thread_cpu::{ThreadCpuFallback, ThreadCpuSource};
pub use thread_cpu::{measures_thread_cpu_time, ThreadCpuInstant};
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

    /// The width, in nanoseconds, of the bracket that anchors conversions to
    /// `std::time::Instant` (taking the anchor if no conversion has yet).
    #[cfg(all(
        feature = "std",
        not(all(target_family = "wasm", target_os = "unknown"))
    ))]
    pub fn std_anchor_width() -> u64 {
        crate::interop::std::anchor_width()
    }

    /// How many states have been published (each update adds one or two).
    pub fn state_generation() -> u64 {
        crate::timekeeper::TK.state.sequence() / 2
    }

    /// Makes the thread CPU clock's perf event fail to open with `errno`
    /// (0: opens normally again).
    pub fn thread_cpu_fail_open(errno: i32) {
        crate::thread_cpu::hooks::fail_open(errno)
    }

    /// Makes the thread CPU clock accept a perf page without
    /// `cap_user_time`, reading its last total (stale): the event's life
    /// (opening, fork, thread exit) can then be tested on any kernel.
    pub fn thread_cpu_accept_without_user_time(accept: bool) {
        crate::thread_cpu::hooks::accept_without_user_time(accept)
    }

    /// Forgets the thread CPU clock's process-wide route decision and the
    /// calling thread's state (unmapping its page), so that the next
    /// reading decides again.
    pub fn thread_cpu_reset() {
        crate::thread_cpu::hooks::reset()
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
