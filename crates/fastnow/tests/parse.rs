//! `UnixTime`'s `FromStr`: RFC 3339 text, the inverse of `Display`, with
//! errors that say what was wrong.

use fastnow::{ParseError, UnixTime};
use proptest::prelude::*;

fn parse(text: &str) -> Result<UnixTime, ParseError> {
    text.parse()
}

fn at(nanos: u64) -> Result<UnixTime, ParseError> {
    Ok(UnixTime::from_nanos(nanos))
}

const MAX_TEXT: &str = "2554-07-21T23:34:33.709551615Z";

#[test]
fn reads_what_display_writes() {
    for n in [0, 1, 999_999_999, 1_709_210_096_123_456_789, u64::MAX] {
        let t = UnixTime::from_nanos(n);
        assert_eq!(parse(&t.to_string()), Ok(t));
    }
    assert_eq!(UnixTime::from_nanos(u64::MAX).to_string(), MAX_TEXT);
}

#[test]
fn offsets() {
    let base = 951_782_400_000_000_000; // 2000-02-29T00:00:00Z
    let next_day = base + 86_400_000_000_000;
    for (text, expected) in [
        ("2000-02-29T00:00:00Z", base),
        ("2000-02-29t00:00:00z", base),
        ("2000-02-29 00:00:00Z", base),
        ("2000-02-29T00:00:00+00:00", base),
        ("2000-02-29T00:00:00-00:00", base),
        ("2000-02-29T05:30:00+05:30", base),
        ("2000-02-28T16:00:00-08:00", base),
        ("2000-02-28T00:01:00-23:59", base),
        ("2000-03-01T23:59:00+23:59", next_day),
    ] {
        assert_eq!(parse(text), at(expected), "{text}");
    }
}

/// A leap second reads as the first second of the next minute, as Unix
/// time counts it; second 61 does not exist.
#[test]
fn leap_second() {
    let new_year_2017 = 1_483_228_800_000_000_000;
    assert_eq!(parse("2016-12-31T23:59:60Z"), at(new_year_2017));
    assert_eq!(
        parse("2016-12-31T23:59:60.999999999Z"),
        at(new_year_2017 + 999_999_999)
    );
    assert_eq!(parse("2017-01-01T00:59:60+01:00"), at(new_year_2017));
    let err = parse("2016-12-31T23:59:61Z").unwrap_err();
    assert_eq!(err.position(), None);
    assert!(
        err.to_string().ends_with("second 61 is out of range"),
        "{err}"
    );
}

/// Past the ninth digit only zeros: exact or refused, never rounded.
#[test]
fn fraction_digits() {
    let base = 1_000_000_000_000_000_000; // 2001-09-09T01:46:40Z
    assert_eq!(parse("2001-09-09T01:46:40.1Z"), at(base + 100_000_000));
    assert_eq!(
        parse("2001-09-09T01:46:40.123456789Z"),
        at(base + 123_456_789)
    );
    assert_eq!(
        parse("2001-09-09T01:46:40.123456789000000000000Z"),
        at(base + 123_456_789)
    );
    for text in [
        "2001-09-09T01:46:40.1234567891Z",
        "2001-09-09T01:46:40.0000000000000000001Z",
    ] {
        let err = parse(text).unwrap_err();
        assert!(
            err.to_string().contains("more precise than a nanosecond"),
            "{text}: {err}"
        );
        assert_eq!((err.position(), err.out_of_range()), (None, None));
    }
    let err = parse("2001-09-09T01:46:40.Z").unwrap_err();
    assert_eq!(err.position(), Some(20));
    assert!(err
        .to_string()
        .contains("expected a digit after '.' at byte 20"));
}

#[test]
fn out_of_range() {
    assert_eq!(parse("1970-01-01T00:00:00Z"), at(0));
    assert_eq!(parse(MAX_TEXT), at(u64::MAX));
    for (text, before) in [
        ("1969-12-31T23:59:59.999999999Z", true),
        ("1970-01-01T00:30:00+01:00", true),
        ("0000-01-01T00:00:00Z", true),
        ("2554-07-21T23:34:33.709551616Z", false),
        ("2554-07-21T23:00:00-01:00", false),
        ("9999-12-31T23:59:59Z", false),
    ] {
        let err = parse(text).unwrap_err();
        let range = err
            .out_of_range()
            .unwrap_or_else(|| panic!("{text}: {err}"));
        assert_eq!(range.is_before_epoch(), before, "{text}");
        assert_eq!(err.to_string(), range.to_string());
        assert_eq!(err.position(), None);
    }
}

/// Each error says what and where.
#[test]
fn errors_say_what_was_wrong() {
    for (text, says, position) in [
        ("", "expected a four-digit year at byte 0", Some(0)),
        (
            "2024-02-29",
            "expected 'T' between date and time at byte 10",
            Some(10),
        ),
        (
            "2024-02-29T12:34:56",
            "expected 'Z' or an offset such as +01:00 at byte 19",
            Some(19),
        ),
        (
            "2024-02-29T12:34:56+0100",
            "expected ':' in the offset at byte 22",
            Some(22),
        ),
        (
            "2024-02-29T12:34:56Z ",
            "expected the end of the text at byte 20",
            Some(20),
        ),
        ("2024-13-01T00:00:00Z", "month 13 is out of range", None),
        ("2024-01-01T24:00:00Z", "hour 24 is out of range", None),
        (
            "2024-01-01T00:00:00+24:00",
            "offset hour 24 is out of range",
            None,
        ),
        ("2023-02-29T00:00:00Z", "2023-02 has no day 29", None),
        ("2024-04-31T00:00:00Z", "2024-04 has no day 31", None),
    ] {
        let err = parse(text).unwrap_err();
        let message = err.to_string();
        assert!(message.ends_with(says), "{text}: {message}");
        assert!(
            message.starts_with("not an RFC 3339 date-time"),
            "{text}: {message}"
        );
        assert_eq!(err.position(), position, "{text}");
        assert_eq!(err.out_of_range(), None, "{text}");
    }
}

#[cfg(feature = "std")]
#[test]
fn is_an_error() {
    let err: Box<dyn std::error::Error> = Box::new(parse("x").unwrap_err());
    assert!(err.to_string().contains("four-digit year"));
}

/// The same reader as serde's RFC 3339 form.
#[cfg(feature = "serde")]
#[test]
fn same_reader_as_serde() {
    for text in [
        "2024-02-29T13:34:56.5+01:00",
        "2016-12-31T23:59:60Z",
        "1969-12-31T23:59:59Z",
        "2024-02-30T00:00:00Z",
    ] {
        let json = serde_json::Value::String(text.to_string());
        let theirs = fastnow::serde::rfc3339::deserialize(json).map_err(|e| e.to_string());
        assert_eq!(parse(text).map_err(|e| e.to_string()), theirs, "{text}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(5_000))]

    /// Every `UnixTime` survives `Display` and `FromStr`, at full precision.
    #[test]
    fn round_trips(n in any::<u64>()) {
        let t = UnixTime::from_nanos(n);
        prop_assert_eq!(parse(&t.to_string()), Ok(t));
    }

    /// The same time written at any offset, with a fraction trimmed or
    /// padded with zeros past the ninth digit, reads as the same time.
    #[test]
    fn any_spelling_of_the_same_time(
        n in any::<u64>(),
        offset in -1439i64..=1439,
        padding in 0usize..12,
    ) {
        let local = i128::from(n) + i128::from(offset) * 60_000_000_000;
        prop_assume!((0..=i128::from(u64::MAX)).contains(&local));
        let text = UnixTime::from_nanos(local as u64).to_string();
        let (secs, frac) = text[..text.len() - 1].split_at(19);
        let frac = format!("{}{}", frac.trim_end_matches('0'), "0".repeat(padding));
        let frac = if frac == "." { String::new() } else { frac };
        let zone = if offset == 0 {
            "Z".to_string()
        } else {
            let sign = if offset < 0 { '-' } else { '+' };
            format!("{sign}{:02}:{:02}", offset.abs() / 60, offset.abs() % 60)
        };
        let spelled = format!("{secs}{frac}{zone}");
        prop_assert_eq!(parse(&spelled), at(n), "{}", spelled);
    }

    /// Any text is a time or an error, never a panic.
    #[test]
    fn any_text(text in ".{0,40}") {
        let _ = parse(&text);
    }
}
