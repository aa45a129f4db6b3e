//! The fixed-point conversion against the shared vectors and an exact
//! 128-bit reference.

use fastnow::Scale;
use proptest::prelude::*;
use serde_json::Value;

fn vectors() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../spec/vectors/conversion.json"
    );
    let text = std::fs::read_to_string(path).expect("spec/vectors/conversion.json is readable");
    serde_json::from_str(&text).expect("conversion.json is valid JSON")
}

fn num(v: &Value) -> Option<u64> {
    v.as_str().map(|s| s.parse().expect("decimal u64 string"))
}

fn scale(v: &Value) -> Option<Scale> {
    if v.is_null() {
        return None;
    }
    Some(Scale {
        mult: num(&v["mult"]).unwrap(),
        shift: v["shift"].as_u64().unwrap() as u32,
    })
}

#[test]
fn frequency_vectors() {
    let v = vectors();
    let freqs = v["frequencies"].as_array().unwrap();
    assert!(freqs.len() >= 10);
    let mut checked = 0;
    for case in freqs {
        let hz = num(&case["freq_hz"]).unwrap();
        let ns = Scale::nanos_per_tick(hz);
        let tk = Scale::ticks_per_nano(hz);
        assert_eq!(ns, scale(&case["nanos_per_tick"]), "nanos_per_tick({hz})");
        assert_eq!(tk, scale(&case["ticks_per_nano"]), "ticks_per_nano({hz})");
        for c in case["ticks_to_nanos"].as_array().unwrap() {
            let ticks = num(&c["ticks"]).unwrap();
            assert_eq!(
                ns.and_then(|s| s.apply(ticks)),
                num(&c["nanos"]),
                "{hz} Hz, {ticks} ticks"
            );
            checked += 1;
        }
        for c in case["nanos_to_ticks"].as_array().unwrap() {
            let nanos = num(&c["nanos"]).unwrap();
            assert_eq!(
                tk.and_then(|s| s.apply(nanos)),
                num(&c["ticks"]),
                "{hz} Hz, {nanos} ns"
            );
            checked += 1;
        }
    }
    assert!(checked > 300, "only {checked} cases");
}

#[test]
fn ratio_vectors() {
    let v = vectors();
    for c in v["ratios"].as_array().unwrap() {
        let (out, inp) = (num(&c["out"]).unwrap(), num(&c["in"]).unwrap());
        assert_eq!(
            Scale::from_ratio(out, inp),
            scale(&c["scale"]),
            "from_ratio({out}, {inp})"
        );
    }
    for c in v["with_shift"].as_array().unwrap() {
        let (out, inp) = (num(&c["out"]).unwrap(), num(&c["in"]).unwrap());
        let shift = c["shift"].as_u64().unwrap() as u32;
        assert_eq!(
            Scale::with_shift(out, inp, shift),
            scale(&c["scale"]),
            "with_shift({out}, {inp}, {shift})"
        );
    }
}

/// Exact floor(x * out / in), for any u64 inputs (the product fits in 128 bits).
fn exact(x: u64, out: u64, inp: u64) -> u128 {
    x as u128 * out as u128 / inp as u128
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    /// mult/2^shift is out/in rounded *up* at 2^-shift, so the converted
    /// value is never below the exact quotient and exceeds it by at most
    /// x/2^shift + 1 (just 1 when x < 2^shift, which test below pins down).
    #[test]
    fn apply_matches_exact_reference(out in 1u64.., inp in 1u64.., x in any::<u64>()) {
        if let Some(s) = Scale::from_ratio(out, inp) {
            prop_assert!(s.mult < 1 << 63 && s.shift <= 96);
            let reference = exact(x, out, inp);
            let bound = ((x as u128) >> s.shift) + 1;
            let got = (x as u128 * s.mult as u128) >> s.shift;
            prop_assert!(got >= reference && got - reference <= bound,
                "x={x} out={out} in={inp} got={got} ref={reference} bound={bound}");
            match s.apply(x) {
                Some(v) => prop_assert_eq!(v as u128, got),
                None => prop_assert!(got > u64::MAX as u128),
            }
        } else {
            // Only unrepresentable ratios may be refused.
            prop_assert!(out / inp >= (1 << 63) - 1, "refused {out}/{inp}");
        }
    }

    /// `apply` splits the 128-bit product into halves by shift; any
    /// multiplier and any shift up to MAX_SHIFT must give exactly the 128-bit
    /// shift (including `shift == 0`, `shift == 64` and results at the u64 edge).
    #[test]
    fn apply_equals_128_bit_shift(mult in any::<u64>(), shift in 0u32..=96, x in any::<u64>()) {
        let s = Scale { mult, shift };
        let wide = (x as u128 * mult as u128) >> shift;
        match s.apply(x) {
            Some(v) => prop_assert_eq!(v as u128, wide),
            None => prop_assert!(wide > u64::MAX as u128, "refused {wide}"),
        }
        prop_assert_eq!(s.apply_saturating(x) as u128, wide.min(u64::MAX as u128));
    }

    /// Realistic counters (1 kHz – 6 GHz): ticks→ns is within 1 ns of exact
    /// for a century of uptime and never overflows, and ns→ticks→ns round
    /// trips within one tick.
    #[test]
    fn counter_frequencies(hz in 1_000u64..6_000_000_000, frac in 0.0f64..1.0) {
        let ns = Scale::nanos_per_tick(hz).unwrap();
        let tk = Scale::ticks_per_nano(hz).unwrap();
        let century_ticks = (100u128 * 365 * 86_400 * hz as u128).min(u64::MAX as u128) as u64;
        let ticks = (century_ticks as f64 * frac) as u64;
        let got = ns.apply(ticks).expect("a century of ticks converts");
        let reference = exact(ticks, 1_000_000_000, hz);
        prop_assert!(got as u128 == reference || got as u128 == reference + 1,
            "{hz} Hz {ticks} ticks: {got} vs {reference}");
        let back = tk.apply(got).unwrap();
        prop_assert!(back.abs_diff(ticks) <= 1 + hz / 1_000_000_000, "{ticks} -> {got} ns -> {back}");
    }

    /// Whole results come out exactly: k seconds of ticks are k * 1e9 ns.
    #[test]
    fn exact_ratios_are_exact(hz in 1u64..10_000_000_000, k in 0u64..3_000_000_000) {
        let ns = Scale::nanos_per_tick(hz).unwrap();
        if let Some(ticks) = k.checked_mul(hz) {
            if ticks < 1u64.checked_shl(ns.shift).unwrap_or(u64::MAX) {
                prop_assert_eq!(ns.apply(ticks), k.checked_mul(1_000_000_000));
            }
        }
    }

    /// Conversion is monotone: more ticks never give fewer nanoseconds.
    #[test]
    fn monotone(hz in 1u64.., x in 0u64..u64::MAX) {
        if let Some(s) = Scale::nanos_per_tick(hz) {
            prop_assert!(s.apply_saturating(x) <= s.apply_saturating(x + 1));
        }
    }

    /// Refinement at a fixed shift agrees with the free choice when the
    /// ratio moves by a few ppm.
    #[test]
    fn with_shift_keeps_precision(hz in 1_000_000u64..6_000_000_000, ppm in -100i64..100) {
        let first = Scale::nanos_per_tick(hz).unwrap();
        let moved = (hz as i64 + hz as i64 / 1_000_000 * ppm) as u64;
        let fixed = Scale::with_shift(1_000_000_000, moved, first.shift).unwrap();
        let free = Scale::nanos_per_tick(moved).unwrap();
        let x = 1u64 << 50;
        prop_assert!(fixed.apply(x).unwrap().abs_diff(free.apply(x).unwrap()) <= 2);
    }
}
