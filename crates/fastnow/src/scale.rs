//! Fixed-point conversion: a counter value to nanoseconds in one multiply.
//!
//! Every fastnow conversion is a [`Line`]: `nanos(t) = offset + (t * slope) >> LINE_SHIFT`,
//! computed with a 128-bit product and wrapping addition. `slope` is
//! nanoseconds per tick in fixed point with [`LINE_SHIFT`] fractional bits, a
//! compile-time constant: on x86_64 it is 64, so the conversion is the high
//! half of one `MUL` plus an add — no shift at all — and on other targets a
//! shift by an immediate. (A shift by a run-time amount costs several
//! micro-operations on Intel cores; the precise tier's read path has no room
//! for them.)
//!
//! The constant shift bounds the counter's rate from below: the slope must
//! fit in 64 bits, so a tick may be worth at most 2^(64 − LINE_SHIFT) ns.
//! On x86_64 that is one nanosecond (counters of 1 GHz and faster: every
//! invariant TSC); elsewhere 2^10 ns (counters faster than about 1 MHz; the
//! Arm generic timer runs at 1 MHz to 1 GHz). Slower counters are not used.
//!
//! A line is stored through a point, as `offset`, rather than as a base pair
//! `(t0, n0)`: the read path then needs no subtraction, and `through` makes
//! any two lines meet exactly where a new one takes over from an old one
//! (see the `timekeeper` module). Wrapping arithmetic is exact modulo 2^64,
//! so `at` returns the right value whenever the true value fits in a `u64`.
//!
//! The exact rules are shared with the Go module and pinned down by
//! `spec/vectors/line.json`:
//!
//! ```text
//! slope(nanos, ticks):   round((nanos << LINE_SHIFT) / ticks), half up; none if ticks == 0
//!                        or the result is 0 or does not fit in 64 bits
//! through(t, v, slope):  offset = v - ((t * slope) >> LINE_SHIFT)        (mod 2^64)
//! at(t):                 offset + ((t * slope) >> LINE_SHIFT)             (mod 2^64)
//! ```

/// Fractional bits of a [`Line`]'s slope (see the module docs).
#[cfg(target_arch = "x86_64")]
pub const LINE_SHIFT: u32 = 64;
/// Fractional bits of a [`Line`]'s slope (see the module docs).
#[cfg(not(target_arch = "x86_64"))]
pub const LINE_SHIFT: u32 = 54;

/// `(t * slope) >> LINE_SHIFT`: the counter-dependent half of a conversion.
#[inline(always)]
pub(crate) const fn scaled(t: u64, slope: u64) -> u64 {
    ((t as u128 * slope as u128) >> LINE_SHIFT) as u64
}

/// A conversion from counter ticks to nanoseconds; see the module docs.
///
/// ```
/// use fastnow::Line;
/// // A 2.5 GHz counter: 0.4 ns per tick, through (1000 ticks, 5000 ns).
/// let slope = Line::slope(2, 5).unwrap();
/// let line = Line::through(1_000, 5_000, slope);
/// assert_eq!(line.at(1_000), 5_000);
/// assert_eq!(line.at(3_500), 6_000);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Line {
    /// The value at counter value 0 (modulo 2^64).
    pub offset: u64,
    /// Nanoseconds per tick, with [`LINE_SHIFT`] fractional bits.
    pub slope: u64,
}

impl Line {
    /// The slope of `nanos` nanoseconds per `ticks` ticks, rounded to the
    /// nearest fixed-point step; `None` for zero ticks, or when the rate is
    /// too slow or too fast to represent (see the module docs).
    pub const fn slope(nanos: u64, ticks: u64) -> Option<u64> {
        if ticks == 0 {
            return None;
        }
        // nanos < 2^64 and LINE_SHIFT <= 64: the numerator fits in 128 bits.
        let num = ((nanos as u128) << LINE_SHIFT) + (ticks as u128 >> 1);
        let slope = num / ticks as u128;
        if slope == 0 || slope > u64::MAX as u128 {
            None
        } else {
            Some(slope as u64)
        }
    }

    /// The slope of a counter running at `freq_hz`.
    pub const fn slope_of_freq(freq_hz: u64) -> Option<u64> {
        Self::slope(1_000_000_000, freq_hz)
    }

    /// The line of `slope` through the point (`ticks`, `value`).
    #[inline]
    pub const fn through(ticks: u64, value: u64, slope: u64) -> Line {
        Line {
            offset: value.wrapping_sub(scaled(ticks, slope)),
            slope,
        }
    }

    /// The value at counter value `ticks`.
    #[inline(always)]
    pub const fn at(self, ticks: u64) -> u64 {
        self.offset.wrapping_add(scaled(ticks, self.slope))
    }

    /// Ticks that `nanos` nanoseconds take at this slope (rounded down,
    /// saturating), for scheduling.
    pub const fn ticks_for(self, nanos: u64) -> u64 {
        if self.slope == 0 {
            return u64::MAX;
        }
        let ticks = ((nanos as u128) << LINE_SHIFT) / self.slope as u128;
        if ticks > u64::MAX as u128 {
            u64::MAX
        } else {
            ticks as u64
        }
    }

    /// Nanoseconds that `ticks` ticks take at this slope (rounded down).
    #[inline]
    pub const fn nanos_for(self, ticks: u64) -> u64 {
        scaled(ticks, self.slope)
    }

    /// The counter frequency this slope implies, rounded, for reports.
    pub fn freq_hz(self) -> u64 {
        if self.slope == 0 {
            return 0;
        }
        let hz = ((1_000_000_000u128 << LINE_SHIFT) + self.slope as u128 / 2) / self.slope as u128;
        u64::try_from(hz).unwrap_or(u64::MAX)
    }
}
