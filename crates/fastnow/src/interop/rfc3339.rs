//! The calendar and RFC 3339 text of Unix nanoseconds, shared by
//! `UnixTime`'s `Display` and `FromStr` (here), `fastnow::serde::rfc3339`
//! (nanoseconds), and the tracing timers (microseconds).
//!
//! Everything here is proleptic Gregorian in UTC without leap seconds, like
//! Unix time itself, and needs neither `std` nor an allocator.

use crate::wall::{OutOfRange, UnixTime};
use core::fmt;

const NANOS_PER_SEC: u64 = 1_000_000_000;
const SECS_PER_DAY: u64 = 86_400;
/// Days from 0000-03-01 (the start of the era used below) to 1970-01-01.
const DAYS_0000_03_01_TO_EPOCH: i64 = 719_468;
/// Days in one 400-year cycle of the Gregorian calendar.
const DAYS_PER_ERA: i64 = 146_097;

/// The proleptic Gregorian date `(year, month, day)` of a day count since
/// 1970-01-01.
///
/// Works in 400-year eras counted from 0000-03-01, so a leap day falls at the
/// end of each era-year and months are uniform 153-day groups of five; then
/// shifts back to a January-first year.
pub(crate) fn civil_date(days_since_epoch: u64) -> (u64, u64, u64) {
    let z = days_since_epoch + DAYS_0000_03_01_TO_EPOCH as u64;
    let era = z / DAYS_PER_ERA as u64;
    let day_of_era = z % DAYS_PER_ERA as u64;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = era * 400 + year_of_era + (month <= 2) as u64;
    (year, month, day)
}

/// The day count since 1970-01-01 (negative before it) of a proleptic
/// Gregorian date: the inverse of [`civil_date`], for years 0 to 9999 and a
/// valid month and day.
pub(crate) fn days_from_civil(year: u32, month: u32, day: u32) -> i64 {
    // The same March-first eras: January and February belong to the
    // previous year's era-year.
    let year = i64::from(year) - i64::from(month <= 2);
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let month_from_march = i64::from((month + 9) % 12);
    let day_of_year = (153 * month_from_march + 2) / 5 + i64::from(day) - 1;
    let day_of_era = 365 * year_of_era + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * DAYS_PER_ERA + day_of_era - DAYS_0000_03_01_TO_EPOCH
}

fn is_leap(year: u32) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The longest text [`format`] writes: `YYYY-MM-DDTHH:MM:SS.fffffffffZ`.
const MAX_LEN: usize = 30;

/// RFC 3339 text built on the stack.
pub(crate) struct Text {
    bytes: [u8; MAX_LEN],
    len: usize,
}

impl Text {
    pub(crate) fn as_str(&self) -> &str {
        // Only ASCII digits and punctuation are ever written.
        core::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default()
    }
}

/// Unix nanoseconds as `YYYY-MM-DDTHH:MM:SS` in UTC, then `frac_digits`
/// (at most 9; 0 omits the point) digits of the second, truncated, then `Z`.
/// Every u64 falls in the years 1970 to 2554, so the year always has four
/// digits and the text is always `20 + frac_digits (+ 1)` bytes: texts of the
/// same precision sort as the times they stand for.
pub(crate) fn format(unix_nanos: u64, frac_digits: u32) -> Text {
    let frac_digits = frac_digits.min(9) as usize;
    let secs = unix_nanos / NANOS_PER_SEC;
    let (year, month, day) = civil_date(secs / SECS_PER_DAY);
    let second_of_day = secs % SECS_PER_DAY;
    let mut text = Text {
        bytes: [0; MAX_LEN],
        len: 0,
    };
    let mut put = |value: u64, width: usize, then: u8| {
        let digits = &mut text.bytes[text.len..text.len + width];
        let mut v = value;
        for d in digits.iter_mut().rev() {
            *d = b'0' + (v % 10) as u8;
            v /= 10;
        }
        text.len += width;
        if then != 0 {
            text.bytes[text.len] = then;
            text.len += 1;
        }
    };
    put(year, 4, b'-');
    put(month, 2, b'-');
    put(day, 2, b'T');
    put(second_of_day / 3600, 2, b':');
    put(second_of_day / 60 % 60, 2, b':');
    if frac_digits == 0 {
        put(second_of_day % 60, 2, b'Z');
    } else {
        put(second_of_day % 60, 2, b'.');
        let frac = unix_nanos % NANOS_PER_SEC / 10u64.pow(9 - frac_digits as u32);
        put(frac, frac_digits, b'Z');
    }
    text
}

/// Writes Unix nanoseconds as RFC 3339 text, see [`format`].
pub(crate) fn write(w: &mut impl fmt::Write, unix_nanos: u64, frac_digits: u32) -> fmt::Result {
    w.write_str(format(unix_nanos, frac_digits).as_str())
}

/// RFC 3339 in UTC with nanoseconds, e.g. `2026-11-23T13:45:07.123456789Z`.
///
/// ```
/// let t = fastnow::UnixTime::from_nanos(1_795_441_069_732_833_442);
/// assert_eq!(t.to_string(), "2026-11-23T13:37:49.732833442Z");
/// assert_eq!(format!("{t:?}"), "UnixTime(2026-11-23T13:37:49.732833442Z)");
/// ```
impl core::fmt::Display for UnixTime {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write(f, self.as_nanos(), 9)
    }
}

impl core::fmt::Debug for UnixTime {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "UnixTime({self})")
    }
}

/// Reads RFC 3339 text: the inverse of `Display`, and the same reader as
/// `#[serde(with = "fastnow::serde::rfc3339")]`.
///
/// Accepts any RFC 3339 `date-time` (section 5.6):
///
/// - any offset: `Z` (or `z`), `+hh:mm`, `-hh:mm`, converted to UTC
///   (`-00:00`, "local offset unknown", reads as UTC);
/// - `T`, `t` or a space between date and time;
/// - a fraction of the second of any length, provided the digits past the
///   ninth are zeros: the result is the exact time or an error, never
///   rounded (`.1234567890` is accepted, `.1234567891` refused);
/// - a leap second, `23:59:60`, as the first second of the next minute,
///   as Unix time counts it (so `…T23:59:60Z` and the next day's
///   `T00:00:00Z` are the same `UnixTime`).
///
/// Refuses everything else with a [`ParseError`] that says what was wrong
/// and where: a syntax error (with the byte it was found at), a field out
/// of range (month 13, hour 24, offset hour 24), a day the month does not
/// have, a fraction finer than a nanosecond, or a valid time outside
/// `UnixTime`'s range, before 1970 or after 2554-07-21T23:34:33.709551615Z
/// ([`ParseError::out_of_range`]).
///
/// ```
/// use fastnow::UnixTime;
///
/// let t: UnixTime = "2024-02-29T13:34:56.5+01:00".parse().unwrap();
/// assert_eq!(t, UnixTime::from_nanos(1_709_210_096_500_000_000));
/// assert_eq!(t.to_string(), "2024-02-29T12:34:56.500000000Z");
/// assert_eq!(t.to_string().parse::<UnixTime>(), Ok(t));
///
/// let leap: UnixTime = "2016-12-31T23:59:60Z".parse().unwrap();
/// assert_eq!(leap, "2017-01-01T00:00:00Z".parse().unwrap());
///
/// let err = "2024-02-30T00:00:00Z".parse::<UnixTime>().unwrap_err();
/// assert!(err.to_string().ends_with("2024-02 has no day 30"));
/// let err = "1969-07-20T20:17:40Z".parse::<UnixTime>().unwrap_err();
/// assert!(err.out_of_range().unwrap().is_before_epoch());
/// ```
impl core::str::FromStr for UnixTime {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<UnixTime, ParseError> {
        parse(text.as_bytes())
            .map(UnixTime::from_nanos)
            .map_err(|kind| ParseError { kind })
    }
}

/// Why a text is not an RFC 3339 time that [`UnixTime`] can hold: the
/// error of `UnixTime`'s [`FromStr`](core::str::FromStr).
///
/// Its `Display` says what was wrong: what was expected and at which byte,
/// which field is out of range, which day the month does not have, that the
/// fraction is finer than a nanosecond, or (the message of
/// [`OutOfRange`]) that the time is before 1970 or after 2554.
///
/// ```
/// use fastnow::UnixTime;
///
/// let err = "2024-02-29 12:34:56".parse::<UnixTime>().unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "not an RFC 3339 date-time (e.g. 2024-02-29T12:34:56.5+01:00): \
///      expected 'Z' or an offset such as +01:00 at byte 19"
/// );
/// assert_eq!(err.position(), Some(19));
/// assert_eq!(err.out_of_range(), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseError {
    kind: Kind,
}

impl ParseError {
    /// The error of a date-time inside a longer text (an HLC timestamp's).
    pub(crate) fn from_kind(kind: Kind) -> ParseError {
        ParseError { kind }
    }

    /// The byte of the text where the syntax went wrong, for a syntax
    /// error; `None` for a well-formed text whose values are wrong (month
    /// 13, a fraction finer than a nanosecond, a time out of range).
    #[must_use]
    pub fn position(&self) -> Option<usize> {
        match self.kind {
            Kind::Expected(_, at) => Some(at),
            _ => None,
        }
    }

    /// For a valid time that [`UnixTime`] cannot hold (before 1970, after
    /// 2554), which side it fell on; `None` for any other error.
    #[must_use]
    pub fn out_of_range(&self) -> Option<OutOfRange> {
        match self.kind {
            Kind::OutOfRange(e) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.kind, f)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for ParseError {}

/// Why a text is not a time [`parse`] accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Not RFC 3339 syntax: what was expected, and at which byte.
    Expected(&'static str, usize),
    /// Syntax right, but a field past its limit (month 13, hour 24, …).
    Field(&'static str, u32),
    /// A day the month does not have, e.g. 2023-02-29.
    NoSuchDay { year: u32, month: u32, day: u32 },
    /// More than nine digits of fraction, some past the ninth not zero.
    FinerThanNanos,
    /// A valid time, before 1970 or after 2554.
    OutOfRange(OutOfRange),
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const WHAT: &str = "not an RFC 3339 date-time (e.g. 2024-02-29T12:34:56.5+01:00)";
        match *self {
            Kind::Expected(what, at) => write!(f, "{WHAT}: expected {what} at byte {at}"),
            Kind::Field(name, value) => {
                write!(f, "{WHAT}: {name} {value:02} is out of range")
            }
            Kind::NoSuchDay { year, month, day } => {
                write!(f, "{WHAT}: {year:04}-{month:02} has no day {day:02}")
            }
            Kind::FinerThanNanos => write!(
                f,
                "the time is more precise than a nanosecond, which UnixTime cannot hold exactly \
                 (digits past the ninth of the fraction must be 0)"
            ),
            Kind::OutOfRange(e) => fmt::Display::fmt(&e, f),
        }
    }
}

/// Reads RFC 3339 `date-time` text (section 5.6) as Unix nanoseconds.
///
/// Accepts any offset (`Z`, `+hh:mm`, `-hh:mm`; `-00:00` is UTC), `T`, `t` or
/// a space between date and time (the space as section 5.6's note allows),
/// `z` for `Z`, and a fraction of any length, provided the digits past the
/// ninth are zeros: the result is exact or an error, never rounded. A leap
/// second (`:60`) counts as the first second of the next minute, as in Unix
/// time. Times outside 1970-01-01T00:00:00Z ..=
/// 2554-07-21T23:34:33.709551615Z are [`Kind::OutOfRange`].
pub(crate) fn parse(text: &[u8]) -> Result<u64, Kind> {
    let mut cur = Cursor { text, at: 0 };
    let year = cur.number(4, "a four-digit year")?;
    cur.byte(b"-", "'-' after the year")?;
    let month = cur.number(2, "a two-digit month")?;
    cur.byte(b"-", "'-' after the month")?;
    let day = cur.number(2, "a two-digit day")?;
    cur.byte(b"Tt ", "'T' between date and time")?;
    let hour = cur.number(2, "a two-digit hour")?;
    cur.byte(b":", "':' after the hour")?;
    let minute = cur.number(2, "two-digit minutes")?;
    cur.byte(b":", "':' after the minutes")?;
    let second = cur.number(2, "two-digit seconds")?;
    let mut nanos = 0;
    if cur.peek() == Some(b'.') {
        cur.at += 1;
        let start = cur.at;
        while let Some(d @ b'0'..=b'9') = cur.peek() {
            let place = cur.at - start;
            if place < 9 {
                nanos += u32::from(d - b'0') * 10u32.pow(8 - place as u32);
            } else if d != b'0' {
                return Err(Kind::FinerThanNanos);
            }
            cur.at += 1;
        }
        if cur.at == start {
            return Err(Kind::Expected("a digit after '.'", start));
        }
    }
    let offset_minutes = match cur.byte(b"Zz+-", "'Z' or an offset such as +01:00")? {
        b'Z' | b'z' => 0,
        sign => {
            let hours = cur.number(2, "a two-digit offset hour")?;
            cur.byte(b":", "':' in the offset")?;
            let minutes = cur.number(2, "two-digit offset minutes")?;
            if hours > 23 {
                return Err(Kind::Field("offset hour", hours));
            }
            if minutes > 59 {
                return Err(Kind::Field("offset minute", minutes));
            }
            let offset = i64::from(hours * 60 + minutes);
            if sign == b'-' {
                -offset
            } else {
                offset
            }
        }
    };
    if cur.at != text.len() {
        return Err(Kind::Expected("the end of the text", cur.at));
    }
    if !(1..=12).contains(&month) {
        return Err(Kind::Field("month", month));
    }
    if day == 0 || day > days_in_month(year, month) {
        return Err(Kind::NoSuchDay { year, month, day });
    }
    if hour > 23 {
        return Err(Kind::Field("hour", hour));
    }
    if minute > 59 {
        return Err(Kind::Field("minute", minute));
    }
    if second > 60 {
        return Err(Kind::Field("second", second));
    }
    let local_secs = days_from_civil(year, month, day) * SECS_PER_DAY as i64
        + i64::from(hour * 3600 + minute * 60 + second);
    // `local = UTC + offset`.
    let utc_secs = local_secs - offset_minutes * 60;
    let unix_nanos = i128::from(utc_secs) * i128::from(NANOS_PER_SEC) + i128::from(nanos);
    crate::interop::nanos_from_i128(unix_nanos)
        .map(|t| t.as_nanos())
        .map_err(Kind::OutOfRange)
}

struct Cursor<'a> {
    text: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    /// One of `allowed`, returned.
    fn byte(&mut self, allowed: &[u8], what: &'static str) -> Result<u8, Kind> {
        match self.peek() {
            Some(b) if allowed.contains(&b) => {
                self.at += 1;
                Ok(b)
            }
            _ => Err(Kind::Expected(what, self.at)),
        }
    }

    /// Exactly `width` ASCII digits; the error points at the first.
    fn number(&mut self, width: usize, what: &'static str) -> Result<u32, Kind> {
        let start = self.at;
        let mut value = 0;
        for _ in 0..width {
            match self.peek() {
                Some(d @ b'0'..=b'9') => value = value * 10 + u32::from(d - b'0'),
                _ => return Err(Kind::Expected(what, start)),
            }
            self.at += 1;
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::prelude::v1::*;

    const MAX_TEXT: &str = "2554-07-21T23:34:33.709551615Z";

    fn nanos(text: &str) -> Result<u64, Kind> {
        parse(text.as_bytes())
    }

    fn text(unix_nanos: u64) -> String {
        format(unix_nanos, 9).as_str().to_string()
    }

    /// Known dates, formatted and read back.
    #[test]
    fn known_vectors() {
        let vectors: &[(u64, &str)] = &[
            (0, "1970-01-01T00:00:00.000000000Z"),
            (1, "1970-01-01T00:00:00.000000001Z"),
            (86_399_999_999_999, "1970-01-01T23:59:59.999999999Z"),
            (68_169_600_000_000_000, "1972-02-29T00:00:00.000000000Z"),
            (951_782_400_000_000_000, "2000-02-29T00:00:00.000000000Z"),
            (951_868_800_000_000_000, "2000-03-01T00:00:00.000000000Z"),
            (978_307_199_999_999_999, "2000-12-31T23:59:59.999999999Z"),
            (1_000_000_000_123_456_789, "2001-09-09T01:46:40.123456789Z"),
            (1_709_210_096_000_000_000, "2024-02-29T12:34:56.000000000Z"),
            (4_107_456_000_000_000_000, "2100-02-28T00:00:00.000000000Z"),
            (4_107_542_400_000_000_000, "2100-03-01T00:00:00.000000000Z"),
            (i64::MAX as u64, "2262-04-11T23:47:16.854775807Z"),
            (i64::MAX as u64 + 1, "2262-04-11T23:47:16.854775808Z"),
            (u64::MAX, MAX_TEXT),
        ];
        for &(ns, t) in vectors {
            assert_eq!(text(ns), t);
            assert_eq!(nanos(t), Ok(ns), "{t}");
        }
        assert_eq!(format(u64::MAX, 0).as_str(), "2554-07-21T23:34:33Z");
        assert_eq!(format(u64::MAX, 3).as_str(), "2554-07-21T23:34:33.709Z");
        assert_eq!(format(u64::MAX, 6).as_str(), "2554-07-21T23:34:33.709551Z");
    }

    #[test]
    fn offsets_and_spellings() {
        let base = 951_782_400_000_000_000; // 2000-02-29T00:00:00Z
        for (t, ns) in [
            ("2000-02-29T00:00:00Z", base),
            ("2000-02-29t00:00:00z", base),
            ("2000-02-29 00:00:00Z", base),
            ("2000-02-29T00:00:00+00:00", base),
            ("2000-02-29T00:00:00-00:00", base),
            ("2000-02-29T01:30:00+01:30", base),
            ("2000-02-28T23:00:00-01:00", base),
            ("2000-03-01T23:59:00+23:59", base + 86_400_000_000_000),
            ("2000-02-29T00:00:00.5Z", base + 500_000_000),
            ("2000-02-29T00:00:00.000000001Z", base + 1),
            ("2000-02-29T00:00:00.0000000010000Z", base + 1),
            ("2000-02-29T00:00:00.1234567890Z", base + 123_456_789),
            // A leap second is the next minute's first, as in Unix time.
            ("2000-02-28T23:59:60Z", base),
            ("2000-02-28T23:59:60.25Z", base + 250_000_000),
        ] {
            assert_eq!(nanos(t), Ok(ns), "{t}");
        }
    }

    #[test]
    fn range_limits() {
        assert_eq!(nanos("1970-01-01T00:00:00Z"), Ok(0));
        assert_eq!(nanos("1970-01-01T01:00:00+01:00"), Ok(0));
        assert_eq!(nanos(MAX_TEXT), Ok(u64::MAX));
        assert_eq!(nanos("2554-07-22T01:34:33.709551615+02:00"), Ok(u64::MAX));
        let before = |t| matches!(nanos(t), Err(Kind::OutOfRange(e)) if e.is_before_epoch());
        let after = |t| matches!(nanos(t), Err(Kind::OutOfRange(e)) if e.is_after_max());
        assert!(before("1969-12-31T23:59:59.999999999Z"));
        assert!(before("1970-01-01T00:00:00+00:01"));
        assert!(before("0000-01-01T00:00:00Z"));
        assert!(after("2554-07-21T23:34:33.709551616Z"));
        assert!(after("2554-07-21T23:34:33.709551615-00:01"));
        assert!(after("9999-12-31T23:59:60.999999999-23:59"));
    }

    #[test]
    fn rejects_what_is_not_rfc_3339() {
        use Kind::*;
        for (t, err) in [
            ("", Expected("a four-digit year", 0)),
            ("2000-1-01T00:00:00Z", Expected("a two-digit month", 5)),
            ("2000-01-01", Expected("'T' between date and time", 10)),
            ("2000-01-01T00:00Z", Expected("':' after the minutes", 16)),
            (
                "2000-01-01T00:00:00",
                Expected("'Z' or an offset such as +01:00", 19),
            ),
            ("2000-01-01T00:00:00.Z", Expected("a digit after '.'", 20)),
            (
                "2000-01-01T00:00:00,5Z",
                Expected("'Z' or an offset such as +01:00", 19),
            ),
            (
                "2000-01-01T00:00:00+0100",
                Expected("':' in the offset", 22),
            ),
            ("2000-01-01T00:00:00+01", Expected("':' in the offset", 22)),
            ("2000-01-01T00:00:00Z ", Expected("the end of the text", 20)),
            ("+2000-01-01T00:00:00Z", Expected("a four-digit year", 0)),
            ("2000-00-01T00:00:00Z", Field("month", 0)),
            ("2000-13-01T00:00:00Z", Field("month", 13)),
            ("2000-01-01T24:00:00Z", Field("hour", 24)),
            ("2000-01-01T00:60:00Z", Field("minute", 60)),
            ("2000-01-01T00:00:61Z", Field("second", 61)),
            ("2000-01-01T00:00:00+24:00", Field("offset hour", 24)),
            ("2000-01-01T00:00:00+00:60", Field("offset minute", 60)),
            (
                "2023-02-29T00:00:00Z",
                NoSuchDay {
                    year: 2023,
                    month: 2,
                    day: 29,
                },
            ),
            (
                "2100-02-29T00:00:00Z",
                NoSuchDay {
                    year: 2100,
                    month: 2,
                    day: 29,
                },
            ),
            (
                "2000-04-31T00:00:00Z",
                NoSuchDay {
                    year: 2000,
                    month: 4,
                    day: 31,
                },
            ),
            (
                "2000-01-00T00:00:00Z",
                NoSuchDay {
                    year: 2000,
                    month: 1,
                    day: 0,
                },
            ),
            ("2000-01-01T00:00:00.0000000001Z", FinerThanNanos),
        ] {
            assert_eq!(nanos(t), Err(err), "{t}");
        }
        assert!(nanos("2000-02-29T00:00:00Z").is_ok());
        assert!(nanos("2400-02-29T00:00:00Z").is_ok());
    }

    #[test]
    fn error_messages_say_what_and_where() {
        let msg = |t: &str| nanos(t).unwrap_err().to_string();
        assert_eq!(
            msg("2000-01-01T00:00:00"),
            "not an RFC 3339 date-time (e.g. 2024-02-29T12:34:56.5+01:00): \
             expected 'Z' or an offset such as +01:00 at byte 19"
        );
        assert!(msg("2023-02-29T00:00:00Z").ends_with("2023-02 has no day 29"));
        assert!(msg("1969-12-31T23:59:59Z").contains("before 1970-01-01T00:00:00Z"));
        assert!(msg("2600-01-01T00:00:00Z").contains(MAX_TEXT));
    }

    /// Every day from 1970 to 2200 follows the previous one in the calendar,
    /// and `days_from_civil` inverts `civil_date`.
    #[test]
    fn consecutive_days() {
        let mut prev = civil_date(0);
        for d in 1..84_000 {
            let (y, m, day) = civil_date(d);
            let (py, pm, pd) = prev;
            let expected = if pd < u64::from(days_in_month(py as u32, pm as u32)) {
                (py, pm, pd + 1)
            } else if pm < 12 {
                (py, pm + 1, 1)
            } else {
                (py + 1, 1, 1)
            };
            assert_eq!((y, m, day), expected, "day {d}");
            assert_eq!(days_from_civil(y as u32, m as u32, day as u32), d as i64);
            prev = (y, m, day);
        }
    }

    /// `days_from_civil` counts back before 1970 down to year 0 one day at
    /// a time, too (the parser sees those years and must call them early).
    #[test]
    fn days_before_the_epoch() {
        let (mut y, mut m, mut d) = (1970u32, 1u32, 1u32);
        let mut days = 0i64;
        while y > 0 || m > 1 || d > 1 {
            if d > 1 {
                d -= 1;
            } else if m > 1 {
                m -= 1;
                d = days_in_month(y, m);
            } else {
                (y, m, d) = (y - 1, 12, 31);
            }
            days -= 1;
            assert_eq!(days_from_civil(y, m, d), days, "{y:04}-{m:02}-{d:02}");
        }
        assert_eq!(days, -719_528);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::proptest_cases(10_000)))]

        /// Any u64 survives text and back, at full precision; lower
        /// precisions read back as the value truncated to them.
        #[test]
        fn round_trips(ns in any::<u64>(), digits in 0u32..=9) {
            prop_assert_eq!(nanos(&text(ns)), Ok(ns));
            let step = 10u64.pow(9 - digits);
            prop_assert_eq!(parse(format(ns, digits).as_str().as_bytes()), Ok(ns / step * step));
        }

        /// Shifting the same instant to any offset changes the text, not the time.
        #[test]
        fn any_offset_reads_as_the_same_time(ns in any::<u64>(), offset in -1439i64..=1439) {
            let local = ns as i128 + i128::from(offset) * 60_000_000_000;
            prop_assume!((0..=i128::from(u64::MAX)).contains(&local));
            let t = text(local as u64);
            let sign = if offset < 0 { '-' } else { '+' };
            let shifted = std::format!(
                "{}{sign}{:02}:{:02}", &t[..t.len() - 1], offset.abs() / 60, offset.abs() % 60
            );
            prop_assert_eq!(nanos(&shifted), Ok(ns), "{}", shifted);
        }

        /// chrono writes the same text for every u64 (its nanosecond RFC 3339
        /// in UTC with `Z`).
        #[test]
        fn formats_as_chrono_does(ns in any::<u64>()) {
            let dt = chrono::DateTime::from_timestamp((ns / 1_000_000_000) as i64, (ns % 1_000_000_000) as u32).unwrap();
            prop_assert_eq!(text(ns), dt.to_rfc3339_opts(chrono::SecondsFormat::Nanos, true));
        }

        /// Texts chrono writes at any offset and precision read as the time
        /// chrono reads, or out of range exactly where chrono's time is.
        #[test]
        fn reads_chrono_texts(
            ns in -(1i128 << 64)..(1i128 << 65),
            offset_minutes in -1439i32..=1439,
            precision in 0usize..5,
        ) {
            use chrono::SecondsFormat::*;
            let secs = ns.div_euclid(1_000_000_000) as i64;
            let frac = ns.rem_euclid(1_000_000_000) as u32;
            let zone = chrono::FixedOffset::east_opt(offset_minutes * 60).unwrap();
            let dt = chrono::DateTime::from_timestamp(secs, frac).unwrap().with_timezone(&zone);
            let format = [Secs, Millis, Micros, Nanos, AutoSi][precision];
            let t = dt.to_rfc3339_opts(format, offset_minutes == 0);
            let theirs = chrono::DateTime::parse_from_rfc3339(&t).unwrap();
            let theirs = i128::from(theirs.timestamp()) * 1_000_000_000
                + i128::from(theirs.timestamp_subsec_nanos());
            match nanos(&t) {
                Ok(ours) => prop_assert_eq!(i128::from(ours), theirs, "{}", t),
                Err(Kind::OutOfRange(e)) => {
                    prop_assert!(if e.is_before_epoch() { theirs < 0 } else { theirs > i128::from(u64::MAX) }, "{}", t)
                }
                Err(e) => prop_assert!(false, "{}: {}", t, e),
            }
        }

        /// Texts of the RFC 3339 shape with any field values (days past the
        /// month's end, hour 24, second 60, …) are accepted exactly when
        /// chrono accepts them, as the same time.
        #[test]
        fn accepts_what_chrono_accepts(
            year in 1969u32..2556, month in 0u32..14, day in 0u32..33,
            hour in 0u32..26, minute in 0u32..61, second in 0u32..62,
            frac in proptest::option::of("[0-9]{1,9}"),
            offset in proptest::option::of((any::<bool>(), 0u32..25, 0u32..61)),
        ) {
            let frac = frac.map(|f| std::format!(".{f}")).unwrap_or_default();
            let offset = match offset {
                None => "Z".to_string(),
                Some((neg, h, m)) => std::format!("{}{h:02}:{m:02}", if neg { '-' } else { '+' }),
            };
            let t = std::format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}{frac}{offset}");
            let theirs = chrono::DateTime::parse_from_rfc3339(&t).map(|dt| {
                i128::from(dt.timestamp()) * 1_000_000_000 + i128::from(dt.timestamp_subsec_nanos())
            });
            match (nanos(&t), theirs) {
                (Ok(ours), Ok(theirs)) => prop_assert_eq!(i128::from(ours), theirs, "{}", t),
                (Err(Kind::OutOfRange(_)), Ok(theirs)) => {
                    prop_assert!(!(0..=i128::from(u64::MAX)).contains(&theirs), "{}", t)
                }
                (Err(_), Err(_)) => {}
                (ours, theirs) => prop_assert!(false, "{}: ours {:?}, chrono's {:?}", t, ours, theirs),
            }
        }

        /// Mangled texts are errors, never a panic.
        #[test]
        fn garbage_is_an_error_not_a_panic(ns in any::<u64>(), at in 0usize..30, b in any::<u8>()) {
            let mut t = text(ns).into_bytes();
            t[at] = b;
            let _ = parse(&t);
            let _ = parse(&t[..at]);
        }
    }
}
