//! Fixed-point conversion: a counter value to nanoseconds in one multiply.
//!
//! Every fastnow conversion is a [`Line`]: `nanos(t) = offset + (t * slope) >> LINE_SHIFT`,
//! computed with a 128-bit product and wrapping addition. `slope` is
//! nanoseconds per tick in fixed point with [`LINE_SHIFT`] fractional bits, a
//! compile-time constant: on x86_64 it is 64, so the conversion is the high
//! half of one `MUL` plus an add — no shift at all — and on other targets a
//! shift by an immediate. (A shift by a run-time amount costs several
//! micro-operations on Intel cores; the precise tier's read path has no room
//! for them.) The constant shift bounds the counter's rate from below:
//! slower counters are not used.
//!
//! A line is stored through a point, as `offset`, rather than as a base pair
//! `(t0, n0)`: the read path then needs no subtraction, and `through` makes
//! any two lines meet exactly where a new one takes over from an old one
//! (see `state`). The exact rules are shared with the Go module
//! (spec/SEMANTICS.md, "Conversion") and pinned down by
//! `spec/vectors/line.json`, which the tests below read.

/// Fractional bits of a [`Line`]'s slope (see the module docs).
#[cfg(target_arch = "x86_64")]
pub(super) const LINE_SHIFT: u32 = 64;
/// Fractional bits of a [`Line`]'s slope (see the module docs).
#[cfg(not(target_arch = "x86_64"))]
pub(super) const LINE_SHIFT: u32 = 54;

/// `(t * slope) >> LINE_SHIFT`: the counter-dependent half of a conversion.
#[inline(always)]
pub(super) const fn scaled(t: u64, slope: u64) -> u64 {
    ((t as u128 * slope as u128) >> LINE_SHIFT) as u64
}

/// A conversion from counter ticks to nanoseconds; see the module docs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(super) struct Line {
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

    /// The line that stands still at `value`: what a state converts with
    /// while readings wait for `CLOCK_MONOTONIC` to catch up with them
    /// (see `state`).
    pub const fn flat(value: u64) -> Line {
        Line {
            offset: value,
            slope: 0,
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

/// The conversion against the shared vectors (which the Go module reads
/// too), and against an exact 128-bit reference.
#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::Value;
    use std::format;

    fn vectors(name: &str) -> Value {
        let path = format!("{}/spec/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        serde_json::from_str(&text).expect("valid JSON")
    }

    fn num(v: &Value) -> Option<u64> {
        v.as_str().map(|s| s.parse().expect("decimal u64 string"))
    }

    /// The vectors of this target's `LINE_SHIFT`.
    fn line_vectors() -> Value {
        let v = vectors("line.json");
        v["shifts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["line_shift"].as_u64() == Some(LINE_SHIFT as u64))
            .expect("vectors for this LINE_SHIFT")
            .clone()
    }

    /// A 2.5 GHz counter: 0.4 ns per tick, through (1000 ticks, 5000 ns).
    #[test]
    fn a_line_through_a_point() {
        let slope = Line::slope(2, 5).unwrap();
        let line = Line::through(1_000, 5_000, slope);
        assert_eq!(line.at(1_000), 5_000);
        assert_eq!(line.at(3_500), 6_000);
    }

    #[test]
    fn slope_vectors() {
        let v = line_vectors();
        let mut checked = 0;
        for c in v["slope_of_freq"].as_array().unwrap() {
            let hz = num(&c["freq_hz"]).unwrap();
            assert_eq!(
                Line::slope_of_freq(hz),
                num(&c["slope"]),
                "slope_of_freq({hz})"
            );
            checked += 1;
        }
        for c in v["slope"].as_array().unwrap() {
            let (n, t) = (num(&c["nanos"]).unwrap(), num(&c["ticks"]).unwrap());
            assert_eq!(Line::slope(n, t), num(&c["slope"]), "slope({n}, {t})");
            checked += 1;
        }
        assert!(checked >= 30, "only {checked} cases");
    }

    #[test]
    fn line_vectors_convert_exactly() {
        let v = line_vectors();
        let mut checked = 0;
        for c in v["lines"].as_array().unwrap() {
            let slope = num(&c["slope"]).unwrap();
            let hz = num(&c["freq_hz"]).unwrap();
            assert_eq!(Line::slope_of_freq(hz), Some(slope));
            let line = Line::through(
                num(&c["through_ticks"]).unwrap(),
                num(&c["through_value"]).unwrap(),
                slope,
            );
            assert_eq!(line.offset, num(&c["offset"]).unwrap());
            for p in c["at"].as_array().unwrap() {
                let t = num(&p["ticks"]).unwrap();
                assert_eq!(line.at(t), num(&p["value"]).unwrap(), "{c} at {t}");
                checked += 1;
            }
        }
        assert!(checked > 80, "only {checked} cases");
    }

    /// `(t * slope) >> LINE_SHIFT` in exact arithmetic.
    fn exact_scaled(t: u64, slope: u64) -> u128 {
        (t as u128 * slope as u128) >> LINE_SHIFT
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::proptest_cases(4000)))]

        /// A line goes through its point exactly, and is one step of the
        /// exact product away everywhere else (mod 2^64).
        #[test]
        fn through_is_exact(t in any::<u64>(), v in any::<u64>(), slope in 1u64.., x in any::<u64>()) {
            let line = Line::through(t, v, slope);
            prop_assert_eq!(line.at(t), v);
            let m = 1u128 << 64;
            let expected = (v as u128 + exact_scaled(x, slope) % m + m - exact_scaled(t, slope) % m) % m;
            prop_assert_eq!(line.at(x) as u128, expected);
        }

        /// Conversion never decreases with the counter (no wrap in between).
        #[test]
        fn monotone(t in any::<u64>(), d in 0u64..1 << 40, slope in 1u64..) {
            let line = Line::through(t, 1 << 62, slope);
            let later = t.saturating_add(d);
            let m = 1u128 << 64;
            let step = (exact_scaled(later, slope) - exact_scaled(t, slope)) % m;
            prop_assert_eq!(line.at(later).wrapping_sub(line.at(t)) as u128, step);
        }

        /// The slope is the ratio rounded to the nearest step: off by at most
        /// half a step, i.e. the converted value of `ticks` ticks is within one
        /// nanosecond of the exact one for a day of ticks at any realistic rate.
        #[test]
        fn slope_is_nearest(hz in 1_100_000u64..8_000_000_000, secs in 0u64..86_400) {
            let Some(slope) = Line::slope_of_freq(hz) else {
                prop_assert!(LINE_SHIFT == 64 && hz < 1_000_000_000, "refused {hz}");
                return Ok(());
            };
            let exact = (1_000_000_000u128 << LINE_SHIFT) as f64 / hz as f64;
            prop_assert!((slope as f64 - exact).abs() <= 0.5 + exact * 1e-15);
            let ticks = secs * hz;
            let line = Line::through(0, 0, slope);
            let want = ticks as u128 * 1_000_000_000 / hz as u128;
            let got = line.at(ticks) as u128;
            prop_assert!(got.abs_diff(want) <= 1 + (ticks as u128 >> (LINE_SHIFT - 1)),
                "{hz} Hz {ticks} ticks: {got} vs {want}");
            // And back, within a tick.
            let back = line.ticks_for(got as u64);
            prop_assert!(back.abs_diff(ticks) <= 1 + hz / 1_000_000_000, "{ticks} -> {got} -> {back}");
            prop_assert!((line.freq_hz() as i128 - hz as i128).abs() <= 1 + hz as i128 / 1_000_000_000_000);
        }
    }
}
