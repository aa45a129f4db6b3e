//! The cheapest *correct* way to read the time in a hot path.
//!
//! fastnow reads the CPU's architectural counter (`RDTSC` on x86_64,
//! `CNTVCT_EL0` on aarch64) instead of asking the kernel, and converts ticks
//! to nanoseconds with a fixed-point multiply calibrated against
//! `CLOCK_MONOTONIC`. Every type states what it guarantees:
//!
//! | type | typical cost (x86, see `BENCHMARKS.md`) | guarantee |
//! |---|---|---|
//! | [`Instant`] | ≈ bare `RDTSC` | monotonic on one thread |
//! | [`MonotonicInstant`] | ≈ `Instant` alone, ≈ 2× under contention | if B happens after A, B ≥ A, across threads |
//! | [`OrderedInstant`] | ≈ `RDTSCP` | read after every preceding load |
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
//! The first reading in the process decides, once, whether the counter is
//! trustworthy (see [`clock_info`] and [`Fallback`]): it must tick at a
//! constant rate, be readable, and — on Linux x86 — be the kernel's own
//! clocksource, which means the kernel verified that all cores agree.
//! Otherwise every type reads `CLOCK_MONOTONIC` instead, with the same API and
//! guarantees. `FASTNOW_CLOCK=counter|os` overrides the choice; an invalid
//! value is ignored and reported in [`ClockInfo::env_override`].
//!
//! # Calibration
//! Nothing is measured at load time. The first *conversion* (`elapsed`,
//! `duration_since`, …) derives the tick rate from a frequency the hardware
//! publishes, or from the counter and OS clock sampled 1 ms apart (waiting
//! only if the process is younger than that). The rate is then refined
//! against `CLOCK_MONOTONIC` at growing intervals, up to once a second, by
//! whichever conversion notices a refinement is due — a relaxed load and a
//! compare on the read path, and a few hundred nanoseconds once in a while
//! for the thread that does it. [`recalibrate`] forces one.
//!
//! # Features
//! - `std` (default): the `FASTNOW_CLOCK` override and the Linux clocksource
//!   check. Without it the crate is `no_std` (Unix only; it needs `libc` for
//!   the OS clock) and relies on the CPU's invariant-counter flag alone.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

#[cfg(feature = "std")]
extern crate std;

mod arch;
mod calibrate;
mod coarse;
mod detect;
mod latch;
#[cfg(feature = "mock")]
pub mod mock;
mod os;
mod precise;
mod scale;
mod timekeeper;
#[cfg(feature = "tracing")]
pub mod tracing;
mod wall;

pub use coarse::{recent, recent_unix_nanos, refresh, DEFAULT_RESOLUTION};
#[cfg(feature = "std")]
pub use coarse::{set_auto_upkeep, start_upkeep, stop_upkeep, upkeep_resolution, UpkeepError};
pub use detect::{Clocksource, EnvOverride, Fallback, FreqOrigin, MonotonicMode, Source};
pub use precise::{Instant, MonotonicInstant, OrderedInstant};
pub use scale::{Line, LINE_SHIFT};
pub use timekeeper::{clock_info, recalibrate, ClockInfo};
#[cfg(feature = "std")]
pub use wall::system_time;
pub use wall::{resync_wall, set_wall_resync_interval, unix_nanos, UnixTime, DEFAULT_RESYNC};
