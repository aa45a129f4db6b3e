//! The `FASTNOW_CLOCK` spellings against the shared vectors (which the Go
//! module reads too). (The fixed-point conversion's vectors are checked by
//! the unit tests beside it, in `src/timekeeper/line.rs`.)

use fastnow::EnvOverride;
use serde_json::Value;

fn vectors(name: &str) -> Value {
    let path = format!("{}/spec/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).expect("valid JSON")
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
