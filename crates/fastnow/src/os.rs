//! The operating system's clocks: the portable fallback and the reference
//! every calibration is measured against.
//!
//! On Unix this is `clock_gettime(CLOCK_MONOTONIC)`: through the vDSO on
//! Linux (20–60 ns), strictly monotonic across threads by the kernel's own
//! guarantee, and disciplined by NTP, so a counter calibrated against it
//! follows the same rate as every other timestamp on the machine.

/// Nanoseconds of `CLOCK_MONOTONIC`.
#[cfg(unix)]
#[inline]
pub(crate) fn monotonic_nanos() -> u64 {
    clock_nanos(libc::CLOCK_MONOTONIC)
}

/// Nanoseconds since the Unix epoch from `CLOCK_REALTIME` (0 before 1970).
#[cfg(unix)]
#[allow(dead_code)] // used by the wall tier and tests
#[inline]
pub(crate) fn realtime_nanos() -> u64 {
    clock_nanos(libc::CLOCK_REALTIME)
}

#[cfg(unix)]
#[inline]
fn clock_nanos(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; both clocks exist on every
    // Unix fastnow supports, so the call cannot fail (POSIX: EINVAL only for
    // an unknown clock, EFAULT only for a bad pointer).
    unsafe { libc::clock_gettime(clock, &mut ts) };
    // A real-time clock set before 1970 reads 0, as documented for the wall
    // tier, not a wrapped huge value.
    if ts.tv_sec < 0 {
        return 0;
    }
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

#[cfg(all(not(unix), feature = "std"))]
pub(crate) fn monotonic_nanos() -> u64 {
    // std's monotonic clock, counted from the first call in this process.
    use std::sync::OnceLock;
    static BASE: OnceLock<std::time::Instant> = OnceLock::new();
    let base = *BASE.get_or_init(std::time::Instant::now);
    std::time::Instant::now().duration_since(base).as_nanos() as u64
}

#[cfg(all(not(unix), feature = "std"))]
#[allow(dead_code)]
pub(crate) fn realtime_nanos() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

#[cfg(all(not(unix), not(feature = "std")))]
compile_error!(
    "fastnow without the `std` feature needs a Unix target (it reads the OS clock through libc)"
);
