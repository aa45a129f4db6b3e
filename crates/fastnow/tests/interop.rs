//! `UnixTime` and other crates' time types (features serde, jiff, chrono,
//! time, prost): exact both ways, refused just outside the range, at the
//! edges and for any value.
#![cfg(any(
    feature = "serde",
    feature = "jiff",
    feature = "chrono",
    feature = "time",
    feature = "prost"
))]
#![allow(dead_code)]

use fastnow::{OutOfRange, UnixTime};
use proptest::prelude::*;

const NS: i128 = 1_000_000_000;
const MAX: i128 = u64::MAX as i128;

/// Signed nanoseconds since the epoch at the edges: the epoch and 1 ns
/// either side, the end of i64 nanoseconds (2262-04-11T23:47:16.854775807Z)
/// and 1 ns either side, the end of `UnixTime` (2554-07-21T23:34:33.709551615Z)
/// and 1 ns either side, whole-second boundaries, and 5000 years out (inside
/// every other crate's range).
const EDGES: &[i128] = &[
    -5_000 * 365 * 86_400 * NS,
    -NS - 1,
    -NS,
    -NS + 1,
    -1,
    0,
    1,
    NS - 1,
    NS,
    NS + 1,
    i64::MAX as i128 - 1,
    i64::MAX as i128,
    i64::MAX as i128 + 1,
    MAX - NS,
    MAX - 1,
    MAX,
    MAX + 1,
    MAX / NS * NS + NS,
    5_000 * 365 * 86_400 * NS,
];

/// Checks a conversion's result for the time `nanos` ns from the epoch: that
/// time exactly, or the error that names its side of the range.
fn check(nanos: i128, got: Result<UnixTime, OutOfRange>) {
    match got {
        Ok(t) => assert_eq!(i128::from(t.as_nanos()), nanos),
        Err(e) if nanos < 0 => assert!(e.is_before_epoch() && !e.is_after_max(), "{nanos}"),
        Err(e) => assert!(e.is_after_max() && nanos > MAX, "{nanos}: {e}"),
    }
}

/// Any u64, with the edges weighted in.
fn any_unix_time() -> impl Strategy<Value = UnixTime> {
    prop_oneof![
        any::<u64>(),
        Just(0u64),
        Just(u64::MAX),
        (0u64..1 << 20).prop_map(|d| u64::MAX - d),
        (0u64..1 << 20).prop_map(|d| i64::MAX as u64 - (1 << 19) + d),
    ]
    .prop_map(UnixTime::from_nanos)
}

/// Signed nanoseconds covering the range and far beyond it on both sides.
fn any_nanos() -> impl Strategy<Value = i128> {
    prop_oneof![
        -(1i128 << 66)..(1i128 << 66),
        -(1i128 << 20)..(1i128 << 20),
        (MAX - (1 << 20))..(MAX + (1 << 20)),
    ]
}

#[cfg(feature = "jiff")]
#[test]
fn out_of_range_says_the_range_and_what_to_do() {
    let ts = jiff::Timestamp::from_nanosecond(-1).unwrap();
    let e = UnixTime::try_from(ts).unwrap_err();
    assert_eq!(
        e.to_string(),
        "time before 1970-01-01T00:00:00Z: fastnow::UnixTime holds u64 nanoseconds since \
         the Unix epoch, 1970-01-01T00:00:00Z to 2554-07-21T23:34:33.709551615Z; keep times \
         outside that range in a signed type (e.g. jiff::Timestamp, or i128 nanoseconds)"
    );
    let ts = jiff::Timestamp::from_nanosecond(MAX + 1).unwrap();
    let e = UnixTime::try_from(ts).unwrap_err();
    assert!(e
        .to_string()
        .starts_with("time after 2554-07-21T23:34:33.709551615Z: "));
    let _: &dyn std::error::Error = &e;
}

#[cfg(feature = "jiff")]
mod jiff_timestamp {
    use super::*;
    use jiff::Timestamp;

    #[test]
    fn edges() {
        for &n in EDGES {
            let ts = Timestamp::from_nanosecond(n).unwrap();
            check(n, UnixTime::try_from(ts));
            if let Ok(t) = UnixTime::try_from(ts) {
                assert_eq!(Timestamp::from(t), ts);
            }
        }
        let at = |s: &str| UnixTime::try_from(s.parse::<Timestamp>().unwrap());
        assert_eq!(at("1970-01-01T00:00:00Z"), Ok(UnixTime::EPOCH));
        assert!(at("1969-12-31T23:59:59.999999999Z").is_err());
        assert_eq!(
            at("2262-04-11T23:47:16.854775807Z").unwrap().as_nanos(),
            i64::MAX as u64
        );
        assert_eq!(
            at("2554-07-21T23:34:33.709551615Z").unwrap().as_nanos(),
            u64::MAX
        );
        assert!(at("2554-07-21T23:34:33.709551616Z").is_err());
        assert!(UnixTime::try_from(Timestamp::MIN).is_err());
        assert!(UnixTime::try_from(Timestamp::MAX).is_err());
    }

    proptest! {
        #[test]
        fn round_trips(t in any_unix_time()) {
            let ts = Timestamp::from(t);
            prop_assert_eq!(ts.as_nanosecond(), i128::from(t.as_nanos()));
            prop_assert_eq!(UnixTime::try_from(ts), Ok(t));
        }

        #[test]
        fn any_timestamp(n in any_nanos()) {
            check(n, UnixTime::try_from(Timestamp::from_nanosecond(n).unwrap()));
        }
    }
}

#[cfg(feature = "chrono")]
mod chrono_datetime {
    use super::*;
    use chrono::{DateTime, FixedOffset, NaiveDate, SecondsFormat, TimeZone, Utc};

    fn at(nanos: i128) -> DateTime<Utc> {
        DateTime::from_timestamp(nanos.div_euclid(NS) as i64, nanos.rem_euclid(NS) as u32).unwrap()
    }

    #[test]
    fn edges() {
        for &n in EDGES {
            check(n, UnixTime::try_from(at(n)));
            let east = FixedOffset::east_opt(5 * 3600 + 30 * 60).unwrap();
            check(n, UnixTime::try_from(at(n).with_timezone(&east)));
            if let Ok(t) = UnixTime::try_from(at(n)) {
                assert_eq!(DateTime::<Utc>::from(t), at(n));
            }
        }
        let text = |t: u64| {
            DateTime::<Utc>::from(UnixTime::from_nanos(t))
                .to_rfc3339_opts(SecondsFormat::Nanos, true)
        };
        assert_eq!(text(0), "1970-01-01T00:00:00.000000000Z");
        assert_eq!(text(i64::MAX as u64), "2262-04-11T23:47:16.854775807Z");
        assert_eq!(text(i64::MAX as u64 + 1), "2262-04-11T23:47:16.854775808Z");
        assert_eq!(text(u64::MAX), "2554-07-21T23:34:33.709551615Z");
    }

    /// chrono's leap second (nanoseconds past 10^9 in second 59) is the next
    /// minute's first second, as Unix time counts it.
    #[test]
    fn leap_second() {
        let leap = NaiveDate::from_ymd_opt(2016, 12, 31)
            .unwrap()
            .and_hms_nano_opt(23, 59, 59, 1_500_000_000)
            .unwrap();
        let t = UnixTime::try_from(Utc.from_utc_datetime(&leap)).unwrap();
        assert_eq!(t.as_nanos(), 1_483_228_800_500_000_000); // 2017-01-01T00:00:00.5Z
    }

    proptest! {
        #[test]
        fn round_trips(t in any_unix_time(), offset in -86_399i32..86_400) {
            let dt = DateTime::<Utc>::from(t);
            prop_assert_eq!(dt, at(i128::from(t.as_nanos())));
            prop_assert_eq!(UnixTime::try_from(dt), Ok(t));
            let zone = FixedOffset::east_opt(offset).unwrap();
            prop_assert_eq!(UnixTime::try_from(dt.with_timezone(&zone)), Ok(t));
        }

        #[test]
        fn any_datetime(n in any_nanos()) {
            check(n, UnixTime::try_from(at(n)));
        }
    }
}

#[cfg(feature = "time")]
mod time_datetime {
    use super::*;
    use time::{OffsetDateTime, UtcDateTime, UtcOffset};

    fn at(nanos: i128) -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp_nanos(nanos).unwrap()
    }

    #[test]
    fn edges() {
        for &n in EDGES {
            check(n, UnixTime::try_from(at(n)));
            check(n, UnixTime::try_from(at(n).to_utc()));
            let west = UtcOffset::from_hms(-9, -30, 0).unwrap();
            check(n, UnixTime::try_from(at(n).to_offset(west)));
            if let Ok(t) = UnixTime::try_from(at(n)) {
                assert_eq!(OffsetDateTime::from(t), at(n));
                assert_eq!(OffsetDateTime::from(t).offset(), UtcOffset::UTC);
                assert_eq!(UtcDateTime::from(t), at(n).to_utc());
            }
        }
        let max = OffsetDateTime::from(UnixTime::from_nanos(u64::MAX));
        assert_eq!(
            (max.year(), u8::from(max.month()), max.day()),
            (2554, 7, 21)
        );
        assert_eq!(
            (max.hour(), max.minute(), max.second(), max.nanosecond()),
            (23, 34, 33, 709_551_615)
        );
    }

    proptest! {
        #[test]
        fn round_trips(t in any_unix_time(), offset in -86_399i32..86_400) {
            let dt = OffsetDateTime::from(t);
            prop_assert_eq!(dt.unix_timestamp_nanos(), i128::from(t.as_nanos()));
            prop_assert_eq!(UnixTime::try_from(dt), Ok(t));
            prop_assert_eq!(UnixTime::try_from(UtcDateTime::from(t)), Ok(t));
            let zone = UtcOffset::from_whole_seconds(offset).unwrap();
            prop_assert_eq!(UnixTime::try_from(dt.to_offset(zone)), Ok(t));
        }

        #[test]
        fn any_datetime(n in -(253_402_300_799 * NS)..(253_402_300_799 * NS)) {
            check(n, UnixTime::try_from(at(n)));
            check(n, UnixTime::try_from(at(n).to_utc()));
        }
    }
}

#[cfg(feature = "prost")]
mod prost_timestamp {
    use super::*;
    use prost_types::Timestamp;

    fn at(nanos: i128) -> Timestamp {
        Timestamp {
            seconds: nanos.div_euclid(NS) as i64,
            nanos: nanos.rem_euclid(NS) as i32,
        }
    }

    #[test]
    fn edges() {
        for &n in EDGES {
            check(n, UnixTime::try_from(at(n)));
            if let Ok(t) = UnixTime::try_from(at(n)) {
                assert_eq!(Timestamp::from(t), at(n));
            }
        }
        let max = Timestamp::from(UnixTime::from_nanos(u64::MAX));
        assert_eq!((max.seconds, max.nanos), (18_446_744_073, 709_551_615));
        // The fields' extremes overflow nothing.
        for (seconds, nanos) in [
            (i64::MIN, i32::MIN),
            (i64::MIN, i32::MAX),
            (i64::MAX, i32::MIN),
            (i64::MAX, i32::MAX),
        ] {
            let n = i128::from(seconds) * NS + i128::from(nanos);
            check(n, UnixTime::try_from(Timestamp { seconds, nanos }));
        }
    }

    /// Fields outside the protobuf rules (nanos negative or ≥ 10^9) are read
    /// for the time they add up to, as `Timestamp::normalize` makes them.
    #[test]
    fn unnormalised_fields_are_the_time_they_add_up_to() {
        for (seconds, nanos, expected) in [
            (1, -1, Ok(999_999_999)),
            (0, 1_000_000_000, Ok(1_000_000_000)),
            (0, -1, Err(())),
            (18_446_744_073, 709_551_615, Ok(u64::MAX)),
            (18_446_744_072, 1_709_551_615, Ok(u64::MAX)),
            (18_446_744_074, -290_448_385, Ok(u64::MAX)),
            (18_446_744_074, -290_448_384, Err(())),
        ] {
            let ts = Timestamp { seconds, nanos };
            let got = UnixTime::try_from(ts).map(|t| t.as_nanos()).map_err(|_| ());
            assert_eq!(got, expected, "{seconds} s {nanos} ns");
            let mut normalised = ts;
            normalised.normalize();
            let again = UnixTime::try_from(normalised)
                .map(|t| t.as_nanos())
                .map_err(|_| ());
            assert_eq!(again, expected, "normalised {seconds} s {nanos} ns");
        }
    }

    proptest! {
        #[test]
        fn round_trips(t in any_unix_time()) {
            let ts = Timestamp::from(t);
            prop_assert!((0..1_000_000_000).contains(&ts.nanos));
            prop_assert_eq!(ts, at(i128::from(t.as_nanos())));
            prop_assert_eq!(UnixTime::try_from(ts), Ok(t));
        }

        #[test]
        fn any_fields(seconds in any::<i64>(), nanos in any::<i32>(), n in any_nanos()) {
            check(i128::from(seconds) * NS + i128::from(nanos), UnixTime::try_from(Timestamp { seconds, nanos }));
            check(n, UnixTime::try_from(at(n)));
        }
    }
}

#[cfg(feature = "serde")]
mod serde_formats {
    use super::*;
    use serde::de::value::{Error as ValueError, I128Deserializer, U128Deserializer};
    use serde::de::IntoDeserializer;
    use serde::{Deserialize, Serialize};

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Record {
        #[serde(with = "fastnow::serde::nanos")]
        nanos: UnixTime,
        #[serde(with = "fastnow::serde::rfc3339")]
        text: UnixTime,
        #[serde(with = "fastnow::serde::rfc3339::option", default)]
        maybe: Option<UnixTime>,
    }

    fn from_json<T: for<'de> Deserialize<'de>>(json: &str) -> Result<T, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    /// `fastnow::serde::nanos`: integers in every format, text refused.
    #[test]
    fn integer_nanoseconds() {
        #[derive(Serialize, Deserialize, PartialEq, Debug)]
        struct Nanos(#[serde(with = "fastnow::serde::nanos")] UnixTime);
        for n in [0, 1, i64::MAX as u64, i64::MAX as u64 + 1, u64::MAX] {
            let json = serde_json::to_string(&Nanos(UnixTime::from_nanos(n))).unwrap();
            assert_eq!(json, n.to_string());
            assert_eq!(
                from_json::<Nanos>(&json),
                Ok(Nanos(UnixTime::from_nanos(n)))
            );
        }
        let err = from_json::<Nanos>("-1").unwrap_err();
        assert!(err.starts_with("time before 1970-01-01T00:00:00Z"), "{err}");
        let err = from_json::<Nanos>("18446744073709551616").unwrap_err();
        assert!(err.contains("an integer of nanoseconds"), "{err}");
        let err = from_json::<Nanos>("\"1970-01-01T00:00:00Z\"").unwrap_err();
        assert!(err.contains("an integer of nanoseconds"), "{err}");
    }

    /// The default form: RFC 3339 text in human-readable formats (JSON),
    /// a `u64` in binary ones; human-readable formats also read integers
    /// (the form fastnow 0.1 wrote there).
    #[test]
    fn default_form() {
        use serde_test::{assert_de_tokens, assert_tokens, Configure, Token};
        for n in [0, 1, i64::MAX as u64, i64::MAX as u64 + 1, u64::MAX] {
            let t = UnixTime::from_nanos(n);
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(json, format!("\"{t}\""));
            assert_eq!(from_json::<UnixTime>(&json), Ok(t));
            assert_eq!(from_json::<UnixTime>(&n.to_string()), Ok(t));
            assert_tokens(&t.compact(), &[Token::U64(n)]);
            let text = t.to_string();
            let text: &'static str = Box::leak(text.into_boxed_str());
            assert_tokens(&t.readable(), &[Token::Str(text)]);
            assert_de_tokens(&t.readable(), &[Token::U64(n)]);
        }
        let t = UnixTime::from_nanos(1_709_210_096_500_000_000);
        assert_eq!(
            from_json::<UnixTime>("\"2024-02-29T13:34:56.5+01:00\""),
            Ok(t)
        );
        for (json, says) in [
            ("-1", "time before 1970-01-01T00:00:00Z"),
            (
                "\"1969-12-31T23:59:59Z\"",
                "time before 1970-01-01T00:00:00Z",
            ),
            ("\"2024-02-30T00:00:00Z\"", "2024-02 has no day 30"),
            (
                "1.5",
                "an RFC 3339 date-time from 1970 to 2554, or an integer",
            ),
            (
                "true",
                "an RFC 3339 date-time from 1970 to 2554, or an integer",
            ),
        ] {
            let err = from_json::<UnixTime>(json).unwrap_err();
            assert!(err.contains(says), "{json}: {err}");
        }
    }

    /// Formats with 128-bit integers: in range or refused, never wrapped.
    #[test]
    fn wide_integers() {
        let check_wide = |n: i128, got: Result<UnixTime, ValueError>| match got {
            Ok(t) => assert_eq!(i128::from(t.as_nanos()), n),
            Err(e) => {
                let side = if n < 0 { "time before" } else { "time after" };
                assert!(
                    !(0..=MAX).contains(&n) && e.to_string().starts_with(side),
                    "{n}: {e}"
                );
            }
        };
        for &n in EDGES {
            let de: I128Deserializer<ValueError> = n.into_deserializer();
            check_wide(n, UnixTime::deserialize(de));
            let de: I128Deserializer<ValueError> = n.into_deserializer();
            check_wide(n, fastnow::serde::nanos::deserialize(de));
            if n >= 0 {
                let de: U128Deserializer<ValueError> = (n as u128).into_deserializer();
                check_wide(n, UnixTime::deserialize(de));
            }
        }
        let de: U128Deserializer<ValueError> = u128::MAX.into_deserializer();
        check_wide(i128::MAX, UnixTime::deserialize(de));
    }

    #[test]
    fn rfc3339_text() {
        let record = |n| Record {
            nanos: UnixTime::from_nanos(n),
            text: UnixTime::from_nanos(n),
            maybe: Some(UnixTime::from_nanos(n)),
        };
        for (n, text) in [
            (0, "1970-01-01T00:00:00.000000000Z"),
            (951_782_400_000_000_000, "2000-02-29T00:00:00.000000000Z"),
            (4_107_542_400_000_000_000, "2100-03-01T00:00:00.000000000Z"),
            (i64::MAX as u64, "2262-04-11T23:47:16.854775807Z"),
            (u64::MAX, "2554-07-21T23:34:33.709551615Z"),
        ] {
            let json = serde_json::to_string(&record(n)).unwrap();
            assert_eq!(
                json,
                format!(r#"{{"nanos":{n},"text":"{text}","maybe":"{text}"}}"#)
            );
            assert_eq!(from_json::<Record>(&json), Ok(record(n)));
        }
        let none = Record {
            maybe: None,
            ..record(0)
        };
        let json = serde_json::to_string(&none).unwrap();
        assert!(json.ends_with(r#""maybe":null}"#), "{json}");
        assert_eq!(from_json::<Record>(&json), Ok(none));
        let json = r#"{"nanos":0,"text":"1970-01-01T00:00:00Z"}"#;
        assert_eq!(from_json::<Record>(json).unwrap().maybe, None);
    }

    #[test]
    fn rfc3339_errors_say_why() {
        let read = |text: &str| {
            from_json::<Record>(&format!(r#"{{"nanos":0,"text":"{text}","maybe":null}}"#))
                .map(|r| r.text.as_nanos())
        };
        assert_eq!(read("1970-01-01T01:00:00+01:00"), Ok(0));
        assert_eq!(read("2554-07-21T23:34:33.709551615Z"), Ok(u64::MAX));
        for (text, says) in [
            (
                "1969-12-31T23:59:59.999999999Z",
                "time before 1970-01-01T00:00:00Z",
            ),
            (
                "1970-01-01T00:59:59.999999999+01:00",
                "time before 1970-01-01T00:00:00Z",
            ),
            (
                "2554-07-21T23:34:33.709551616Z",
                "time after 2554-07-21T23:34:33.709551615Z",
            ),
            ("2023-02-29T00:00:00Z", "2023-02 has no day 29"),
            (
                "2024-02-29",
                "expected 'T' between date and time at byte 10",
            ),
            (
                "2024-02-29T00:00:00.0000000001Z",
                "more precise than a nanosecond",
            ),
        ] {
            let err = read(text).unwrap_err();
            assert!(err.contains(says), "{text}: {err}");
        }
        let err = from_json::<Record>(r#"{"nanos":0,"text":5}"#).unwrap_err();
        assert!(err.contains("an RFC 3339 date-time"), "{err}");
    }

    proptest! {
        #[test]
        fn round_trips(t in any_unix_time(), maybe in any::<bool>()) {
            let r = Record { nanos: t, text: t, maybe: maybe.then_some(t) };
            let json = serde_json::to_string(&r).unwrap();
            prop_assert_eq!(from_json::<Record>(&json), Ok(r));
        }

        #[test]
        fn integers(n in any_nanos()) {
            let de: I128Deserializer<ValueError> = n.into_deserializer();
            let got = UnixTime::deserialize(de);
            prop_assert_eq!(got.is_ok(), (0..=MAX).contains(&n));
            if let Ok(t) = got {
                prop_assert_eq!(i128::from(t.as_nanos()), n);
            }
        }
    }
}
