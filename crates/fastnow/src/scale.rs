//! Fixed-point unit conversion: multiply and shift, no division on the read path.
//!
//! A [`Scale`] converts a count in one unit (counter ticks) to another
//! (nanoseconds) as `(x * mult) >> shift`, computed in 128 bits. Both operands
//! are below 2^64, so the product never overflows; only the result can exceed
//! `u64`, which [`Scale::apply`] reports as `None` and
//! [`Scale::apply_saturating`] clamps.
//!
//! The parameters are chosen so that `mult` carries 63 significant bits: the
//! largest `shift` in `0..=96` for which `mult < 2^63`. That makes the
//! relative error of the ratio below 2^-62 (rounding of `mult`), far below
//! any counter's own accuracy, and leaves one bit of headroom so a refined
//! calibration that moves the ratio by less than 2× keeps the same `shift`.
//! Keeping `shift` fixed is what lets a refinement publish a new ratio through
//! a single atomic `mult`, so a concurrent reader never sees a torn pair.
//!
//! The exact rules (they are the shared spec; the Go module computes the same
//! numbers from `spec/vectors/conversion.json`):
//!
//! ```text
//! from_ratio(out, in):  for shift = 96 down to 0:
//!                           skip if out << shift overflows 128 bits
//!                           mult = ceil((out << shift) / in)        (rounded up)
//!                           if mult < 2^63: return (mult, shift)
//!                       none if no shift fits (out / in >= 2^63) or in == 0 or out == 0
//! with_shift(out, in, s): mult = ceil((out << s) / in); none unless 1 <= mult < 2^64
//!                       (none if out or in is 0, s > 96, or out << s overflows 128 bits)
//! apply(x):             (x * mult) >> shift in 128 bits; None above u64::MAX
//! ```
//!
//! Rounding the multiplier *up* once, at calibration, instead of rounding
//! every result: the read path stays a multiply and a shift, yet whenever
//! the exact result `x * out / in` is a whole number (2.5e9 ticks of a
//! 2.5 GHz counter are exactly 1e9 ns) it comes out exactly, because the
//! excess `x * (mult - out * 2^shift / in) / 2^shift` is below 1 for any
//! `x < 2^shift`. Since `mult >= 2^62`, `2^shift` ticks convert to at least
//! 2^62 ns: every count up to 146 years, at any frequency, is covered. In
//! general the result is `floor(x * out / in)` or one more.

/// Largest `shift` considered; keeps `out << shift` inside 128 bits for any
/// `out` below 2^32 and gives 2^-96 resolution for very fast counters.
pub const MAX_SHIFT: u32 = 96;

/// `from_ratio` keeps `mult` below this, one bit under the u64 limit, so a
/// refinement at the same shift has room to grow (see `with_shift`).
const MULT_LIMIT: u64 = 1 << 63;

/// A fixed-point ratio `mult / 2^shift` that converts one unit into another.
///
/// ```
/// use fastnow::Scale;
/// // A 2.5 GHz counter: 0.4 ns per tick.
/// let ns_per_tick = Scale::from_ratio(1_000_000_000, 2_500_000_000).unwrap();
/// assert_eq!(ns_per_tick.apply(2_500_000_000), Some(1_000_000_000));
/// // And back: 2.5 ticks per ns.
/// let ticks_per_ns = Scale::ticks_per_nano(2_500_000_000).unwrap();
/// assert_eq!(ticks_per_ns.apply(1_000), Some(2_500));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Scale {
    /// Multiplier, always below 2^63 (and at least 1).
    pub mult: u64,
    /// Right shift applied to the 128-bit product, at most [`MAX_SHIFT`].
    pub shift: u32,
}

impl Scale {
    /// The scale that converts `x` units of `in_units` into `x * out_units / in_units`.
    ///
    /// Returns `None` when either argument is zero or when the ratio is too
    /// large to represent (`out_units / in_units >= 2^63`).
    pub const fn from_ratio(out_units: u64, in_units: u64) -> Option<Scale> {
        if out_units == 0 || in_units == 0 {
            return None;
        }
        let out_bits = 64 - out_units.leading_zeros();
        let mut shift = MAX_SHIFT;
        loop {
            if out_bits + shift <= 128 {
                let mult = Self::rounded_ratio(out_units, in_units, shift);
                if mult < MULT_LIMIT as u128 {
                    return Some(Scale {
                        mult: mult as u64,
                        shift,
                    });
                }
            }
            if shift == 0 {
                return None;
            }
            shift -= 1;
        }
    }

    /// Nanoseconds per tick of a counter running at `freq_hz`.
    pub const fn nanos_per_tick(freq_hz: u64) -> Option<Scale> {
        Self::from_ratio(1_000_000_000, freq_hz)
    }

    /// Ticks per nanosecond of a counter running at `freq_hz`.
    pub const fn ticks_per_nano(freq_hz: u64) -> Option<Scale> {
        Self::from_ratio(freq_hz, 1_000_000_000)
    }

    /// The ratio `out_units / in_units` at a given, fixed `shift`, or `None` if
    /// the multiplier would be zero or not fit in a `u64` at that shift.
    /// Calibration refinements use this to keep the published shift unchanged;
    /// since [`from_ratio`](Self::from_ratio) leaves `mult` below 2^63, a
    /// refined ratio up to twice the first still fits.
    pub const fn with_shift(out_units: u64, in_units: u64, shift: u32) -> Option<Scale> {
        if out_units == 0 || in_units == 0 || shift > MAX_SHIFT {
            return None;
        }
        if (64 - out_units.leading_zeros()) + shift > 128 {
            return None;
        }
        let mult = Self::rounded_ratio(out_units, in_units, shift);
        if mult >= 1 && mult <= u64::MAX as u128 {
            Some(Scale {
                mult: mult as u64,
                shift,
            })
        } else {
            None
        }
    }

    /// `ceil(out * 2^shift / in)`; the caller guarantees `out << shift` fits in 128 bits.
    const fn rounded_ratio(out_units: u64, in_units: u64, shift: u32) -> u128 {
        let num = (out_units as u128) << shift;
        num.div_ceil(in_units as u128)
    }

    /// `(x * mult) >> shift`, or `None` if the result does not fit in a `u64`.
    ///
    /// Computed from the two halves of the 128-bit product rather than with
    /// a 128-bit shift: the shift is fixed for the life of a process, so the
    /// branch on it is always predicted, and for `shift >= 64` (every counter
    /// faster than 2 GHz) the result is the high half shifted, which cannot
    /// overflow. A general 128-bit shift by a variable amount costs about
    /// 2.5 ns more per conversion on Intel cores (BENCHMARKS.md).
    #[inline(always)]
    pub const fn apply(self, x: u64) -> Option<u64> {
        let product = x as u128 * self.mult as u128;
        let (hi, lo) = ((product >> 64) as u64, product as u64);
        if self.shift >= 64 {
            // shift <= MAX_SHIFT = 96, so the amount is below 64.
            Some(hi >> (self.shift - 64))
        } else if self.shift == 0 {
            if hi == 0 {
                Some(lo)
            } else {
                None
            }
        } else if hi >> self.shift != 0 {
            None
        } else {
            Some((lo >> self.shift) | (hi << (64 - self.shift)))
        }
    }

    /// [`apply`](Self::apply), clamped to `u64::MAX`.
    #[inline(always)]
    pub const fn apply_saturating(self, x: u64) -> u64 {
        match self.apply(x) {
            Some(v) => v,
            None => u64::MAX,
        }
    }

    /// The counter frequency this scale implies when it converts ticks to
    /// nanoseconds (`1e9 * 2^shift / mult`, rounded), for reporting.
    pub fn implied_freq_hz(self) -> u64 {
        // 1e9 < 2^30 and shift <= 96, so the numerator fits in 128 bits.
        let num = (1_000_000_000u128 << self.shift) + self.mult as u128 / 2;
        let hz = num / self.mult as u128;
        if hz > u64::MAX as u128 {
            u64::MAX
        } else {
            hz as u64
        }
    }
}
