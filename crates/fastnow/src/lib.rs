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
//! the same API and guarantees. A verdict that cannot be read *for now* —
//! the process out of descriptors or memory — changes nothing: the counter
//! stays in use, or, at the first reading, waits (on `CLOCK_MONOTONIC`)
//! until the verdict can be read, and [`ClockInfo::verdict_unavailable`]
//! says why. `FASTNOW_CLOCK=counter|os` overrides the
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
//! for every thread and an `elapsed()` never steps back. These updates
//! (a rate sample, and once a second a re-check of the kernel's
//! clocksource, one system call) run up to twice a second on the reader
//! that finds one due, which pays for it; while the coarse tier's upkeep
//! thread runs, that thread makes them and readers only load. A program
//! that cannot let a reading take that long (`BENCHMARKS.md` gives the
//! costs) runs the upkeep. See `spec/SEMANTICS.md` for the rules, and
//! [`recalibrate`] to restart the measurement after a suspend or a
//! migration.
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
//! - `uhlc`: `fastnow::uhlc::wall_clock`, the wall tier as the physical
//!   clock of uhlc's hybrid logical clocks (`HLCBuilder::with_clock`), and
//!   [`hlc::Timestamp`] to and from `uhlc::NTP64` (no `std` needed).
//!
//! # Time beyond one process
//! [`hlc::Hlc`] is a hybrid logical clock: [`hlc::Timestamp`]s that order
//! events across machines whose clocks disagree (a message's receipt is
//! stamped above its send), close to the wall clock, never going back, for
//! a [`unix_nanos`] reading and a compare-and-swap. See the [`hlc`] module.
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
//! hook for one, as governor does (its `clock::Clock` trait); where a crate
//! reads `std::time::Instant`, quanta's or tokio's clock itself and takes
//! none, fastnow cannot be its clock.
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
//! The crate's `rust-version` is that of its own code; a feature's
//! dependency may need a newer Rust, which only builds with that feature on
//! do (`Cargo.toml` says which, beside each feature).
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
pub mod hlc;
mod info;
mod interop;
pub mod migration;
#[cfg(feature = "mock")]
#[cfg_attr(docsrs, doc(cfg(feature = "mock")))]
pub mod mock;
mod precise;
mod snapshot;
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
    if emulated() {
        (native / 8).max(32)
    } else {
        native
    }
}

/// Whether the tests run under an emulator (the cross-target runs set
/// `FASTNOW_TEST_RUNNER`).
#[cfg(test)]
pub(crate) fn emulated() -> bool {
    std::env::var_os("FASTNOW_TEST_RUNNER").is_some()
}

pub use atomic::{AtomicInstant, AtomicUnixTime};
pub use boot::BootInstant;
pub use cache::{refresh, DEFAULT_RESOLUTION};
pub use coarse::{recent, recent_unix_nanos};
pub use info::{clock_info, recalibrate, ClockInfo, CounterJump};
#[cfg(feature = "governor")]
#[cfg_attr(docsrs, doc(cfg(feature = "governor")))]
pub use interop::governor;
pub use interop::rfc3339::ParseError;
#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
pub use interop::serde;
#[cfg(feature = "uhlc")]
#[cfg_attr(docsrs, doc(cfg(feature = "uhlc")))]
pub use interop::uhlc;
pub use precise::{Instant, MonotonicInstant, MonotonicMode, OrderedInstant};
pub use snapshot::{conversion_error, ClockSnapshot};
pub use source::arch::FreqOrigin;
pub use source::detect::{Clocksource, EnvOverride, Fallback, Source, VerdictUnavailable};
pub use source::thread_cpu::{ThreadCpuCosts, ThreadCpuFallback, ThreadCpuSource};
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

/// Test hooks, for this workspace's tests and benches (the `__test-hooks`
/// feature). Not part of the API.
#[cfg(feature = "__test-hooks")]
#[doc(hidden)]
pub mod __test {
    /// Runs `f` while this thread holds the timekeeper's writers' lock (as
    /// a state update does), whether or not anything was published yet.
    pub fn with_writer_lock<R>(f: impl FnOnce() -> R) -> R {
        crate::timekeeper::hooks::with_writer_lock(f)
    }

    /// How many readings so far returned a lower bound of the next state
    /// (past a state's end while another thread held the writers' lock).
    pub fn slowed_readings() -> u64 {
        crate::timekeeper::hooks::slowed_readings()
    }

    /// What a state update costs the reader that does it, in nanoseconds:
    /// a rate sample, or (`check`) a clocksource re-check.
    pub fn reader_update_cost(check: bool) -> u64 {
        crate::timekeeper::hooks::reader_update_cost(check)
    }

    /// The same update, untimed: a caller times it with a bare counter
    /// read, so that no OS clock reading before it warms the update's path.
    pub fn reader_update(check: bool) {
        crate::timekeeper::hooks::reader_update(check)
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
        crate::timekeeper::hooks::state_generation()
    }

    /// Makes the thread CPU clock's perf event fail to open with `errno`
    /// (0: opens normally again).
    pub fn thread_cpu_fail_open(errno: i32) {
        crate::thread_cpu::hooks::fail_open(errno)
    }

    /// Makes the thread CPU clock's `perf_event_open` call fail with
    /// `errno`, `times` times (`u32::MAX`: always; errno 0: no more).
    pub fn thread_cpu_fail_perf_event_open(errno: i32, times: u32) {
        crate::thread_cpu::hooks::fail_syscall(errno, times)
    }

    /// Makes the thread CPU clock's `mmap` of its perf page fail with
    /// `errno`, `times` times (`u32::MAX`: always; errno 0: no more).
    pub fn thread_cpu_fail_mmap(errno: i32, times: u32) {
        crate::thread_cpu::hooks::fail_map(errno, times)
    }

    /// Makes the thread CPU clock's choice between the OS call and the perf
    /// event's own system call, where the page offers no user-space time
    /// (`Some(true)`: the event's; `None`: measure them, as outside tests).
    /// The costs are measured all the same.
    pub fn thread_cpu_choose_perf_ioctl(choice: Option<bool>) {
        crate::thread_cpu::hooks::choose_syscall(choice)
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

    /// Makes the thread CPU clock map a synthetic perf page (offering
    /// `cap_user_time`, counting a nanosecond per counter tick: not CPU
    /// time) instead of opening a perf event, so that the page route's
    /// transitions can be tested on a kernel without the time extension.
    pub fn thread_cpu_synthetic_pages(on: bool) {
        crate::thread_cpu::hooks::synthetic_pages(on)
    }

    /// Withdraws `cap_user_time` from the calling thread's synthetic page,
    /// as the kernel does when it stops trusting the counter.
    pub fn thread_cpu_withdraw_user_time() {
        crate::thread_cpu::hooks::withdraw_user_time()
    }

    /// Runs `hook` with the step's number at each step of a thread CPU
    /// clock's opening or reading on the perf route (to fork or raise a
    /// signal there; `None`: no more). Process-wide.
    pub fn thread_cpu_at_step(hook: Option<fn(u8)>) {
        crate::thread_cpu::hooks::at_step(hook)
    }

    /// Opens a perf `task-clock` event for the calling thread that the
    /// thread CPU clock does not hold (close-on-exec; the caller closes
    /// it): its descriptor, or `None` where perf events do not open.
    pub fn thread_cpu_task_clock_descriptor() -> Option<i32> {
        crate::thread_cpu::hooks::task_clock_descriptor()
    }

    /// The steps [`thread_cpu_at_step`]'s hook is called at, by number.
    pub const THREAD_CPU_STEPS: &[&str] = &crate::thread_cpu::hooks::STEPS;

    /// Runs `hook` at the start of the coarse tier's first refresh (each
    /// time `recent()` or `recent_unix_nanos()` finds the cache unset),
    /// after the caller's check for a mock: a test installs a global mock
    /// there. Set once per process; only with the `mock` feature.
    #[cfg(feature = "mock")]
    pub fn before_first_refresh(hook: fn()) {
        let _ = crate::coarse::BEFORE_FIRST_REFRESH.set(hook);
    }
}
