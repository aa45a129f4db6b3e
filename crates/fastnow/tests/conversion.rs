//! The fixed-point conversion and the `FASTNOW_CLOCK` spellings against the
//! shared vectors (which the Go module reads too), and the conversion
//! against an exact 128-bit reference.

use fastnow::{EnvOverride, Line, LINE_SHIFT};
use proptest::prelude::*;
use serde_json::Value;

fn vectors(name: &str) -> Value {
    let path = format!("{}/../../spec/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
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

#[test]
fn env_vectors() {
    let v = vectors("env.json");
    let cases = v["cases"].as_array().unwrap();
    assert!(cases.len() > 20);
    for c in cases {
        let hex = c["value_hex"].as_str().unwrap();
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        let want = match c["outcome"].as_str().unwrap() {
            "unset" => EnvOverride::Unset,
            "counter" => EnvOverride::Counter,
            "os" => EnvOverride::Os,
            "invalid" => EnvOverride::Invalid,
            other => panic!("unknown outcome {other}"),
        };
        assert_eq!(EnvOverride::parse(&bytes), want, "{bytes:?}");
    }
}

/// `(t * slope) >> LINE_SHIFT` in exact arithmetic.
fn exact_scaled(t: u64, slope: u64) -> u128 {
    (t as u128 * slope as u128) >> LINE_SHIFT
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

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
