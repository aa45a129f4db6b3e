//! A [`Timestamp`]'s text: RFC 3339 in UTC (the crate's own formatter and
//! parser, `interop::rfc3339`), a comma, and the counter.

use super::{word_of_nanos, Timestamp, END_NANOS};
use crate::interop::rfc3339;
use core::fmt;

/// The physical part as RFC 3339 in UTC with nine fraction digits (the
/// first nanosecond of its unit), a comma and the counter in five digits:
/// `2024-02-29T12:34:56.123443604Z,00007`.
///
/// ```
/// use fastnow::hlc::Timestamp;
///
/// let t = Timestamp::new(1_500_000_000, 42);
/// assert_eq!(t.to_string(), "1970-01-01T00:00:01.500000000Z,00042");
/// assert_eq!(format!("{t:?}"), "Timestamp(1970-01-01T00:00:01.500000000Z,00042)");
/// ```
impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(Text::of(*self).as_str())
    }
}

/// The length of every stamp's text: 30 bytes of RFC 3339, a comma, five digits.
const TEXT_LEN: usize = 36;

/// A stamp's text built on the stack (for `Display` and serde, without an
/// allocator).
pub(crate) struct Text {
    bytes: [u8; TEXT_LEN],
}

impl Text {
    pub(crate) fn of(t: Timestamp) -> Text {
        let mut bytes = [0u8; TEXT_LEN];
        let time = rfc3339::format(t.physical_nanos(), 9);
        let time = time.as_str().as_bytes();
        bytes[..time.len()].copy_from_slice(time);
        bytes[time.len()] = b',';
        let mut n = t.logical();
        for d in bytes[time.len() + 1..].iter_mut().rev() {
            *d = b'0' + (n % 10) as u8;
            n /= 10;
        }
        Text { bytes }
    }

    pub(crate) fn as_str(&self) -> &str {
        // Only ASCII digits and punctuation are ever written.
        core::str::from_utf8(&self.bytes).unwrap_or_default()
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Timestamp({self})")
    }
}

/// Reads the text [`Display`](fmt::Display) writes: an RFC 3339 date-time,
/// a comma, and the counter in one to five decimal digits (0 to 65535).
///
/// The date-time is read as [`UnixTime`](crate::UnixTime)'s `FromStr`
/// reads it (any offset, any number of fraction digits, exact or refused),
/// and the physical part is the unit (2^-16 s) that contains it, as in
/// [`Timestamp::new`]: a text `Display` wrote reads back as the same stamp,
/// and a time written by hand reads as its unit. Times before 1970 or from
/// 2106-02-07T06:28:16Z on, which a stamp cannot hold, are refused.
///
/// ```
/// use fastnow::hlc::Timestamp;
///
/// let t: Timestamp = "2024-02-29T13:34:56.5+01:00,7".parse().unwrap();
/// assert_eq!(t, Timestamp::new(1_709_210_096_500_000_000, 7));
/// assert_eq!(t.to_string(), "2024-02-29T12:34:56.500000000Z,00007");
///
/// let err = "2024-02-29T12:34:56Z".parse::<Timestamp>().unwrap_err();
/// assert_eq!(err.position(), Some(20));
/// assert!("2024-02-29T12:34:56Z,65536".parse::<Timestamp>().is_err());
/// assert!("2106-02-07T06:28:16Z,0".parse::<Timestamp>().is_err());
/// ```
impl core::str::FromStr for Timestamp {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Timestamp, ParseError> {
        parse(text.as_bytes()).map_err(|kind| ParseError { kind })
    }
}

/// The counter's digits: at most five (65535 has five).
const MAX_COUNTER_DIGITS: usize = 5;

fn parse(text: &[u8]) -> Result<Timestamp, Kind> {
    let Some(comma) = text.iter().rposition(|&b| b == b',') else {
        return Err(Kind::Counter(text.len()));
    };
    let nanos = rfc3339::parse(&text[..comma]).map_err(Kind::Time)?;
    let digits = &text[comma + 1..];
    if digits.is_empty()
        || digits.len() > MAX_COUNTER_DIGITS
        || !digits.iter().all(u8::is_ascii_digit)
    {
        return Err(Kind::Counter(comma + 1));
    }
    let counter = digits
        .iter()
        .fold(0u32, |n, d| n * 10 + u32::from(d - b'0'));
    let logical = u16::try_from(counter).map_err(|_| Kind::CounterTooLarge(counter))?;
    if nanos >= END_NANOS {
        return Err(Kind::AfterEnd);
    }
    Ok(Timestamp(word_of_nanos(nanos) | u64::from(logical)))
}

/// Why a text is not an HLC [`Timestamp`]: the error of its
/// [`FromStr`](core::str::FromStr).
///
/// Its `Display` says what was wrong: the date-time's own error (as
/// [`UnixTime`](crate::UnixTime)'s parser says it), a missing or malformed
/// counter and where, a counter above 65535, or a time after the last a
/// stamp holds.
///
/// ```
/// use fastnow::hlc::Timestamp;
///
/// let err = "2024-02-29T12:34:56Z,x".parse::<Timestamp>().unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "not an HLC timestamp (e.g. 2024-02-29T12:34:56.123443604Z,00007): \
///      expected one to five digits of counter at byte 21"
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseError {
    kind: Kind,
}

impl ParseError {
    /// The byte of the text where the syntax went wrong, for a syntax
    /// error; `None` for well-formed text whose values are wrong (month 13,
    /// a counter above 65535, a time out of range).
    ///
    /// ```
    /// use fastnow::hlc::Timestamp;
    ///
    /// let err = "2024-02-29 12:34:56,1".parse::<Timestamp>().unwrap_err();
    /// assert_eq!(err.position(), Some(19));
    /// let err = "2024-02-29T12:34:56Z,99999".parse::<Timestamp>().unwrap_err();
    /// assert_eq!(err.position(), None);
    /// ```
    #[must_use]
    pub fn position(&self) -> Option<usize> {
        match self.kind {
            Kind::Time(k) => crate::ParseError::from_kind(k).position(),
            Kind::Counter(at) => Some(at),
            Kind::CounterTooLarge(_) | Kind::AfterEnd => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// The date-time before the comma is not one `UnixTime` reads.
    Time(rfc3339::Kind),
    /// No comma, or not one to five digits after it: where they should be.
    Counter(usize),
    /// Digits, but above 65535.
    CounterTooLarge(u32),
    /// A valid time from 2106-02-07T06:28:16Z on.
    AfterEnd,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const WHAT: &str = "not an HLC timestamp (e.g. 2024-02-29T12:34:56.123443604Z,00007)";
        match self.kind {
            Kind::Time(k) => write!(f, "{WHAT}: {k}"),
            Kind::Counter(at) => {
                write!(
                    f,
                    "{WHAT}: expected one to five digits of counter at byte {at}"
                )
            }
            Kind::CounterTooLarge(n) => write!(f, "{WHAT}: the counter {n} is above 65535"),
            Kind::AfterEnd => write!(
                f,
                "the time is after 2106-02-07T06:28:15.999999999Z, the last an HLC timestamp \
                 holds (48 bits of 2^-16 s since 1970)"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for ParseError {}
