//! serde support (feature `serde`): [`UnixTime`] is RFC 3339 text in
//! human-readable formats and integer nanoseconds in binary ones;
//! [`rfc3339`] and [`nanos`] choose one form for a field whatever the format.
//!
//! `UnixTime`'s own `Serialize` asks the format
//! ([`is_human_readable`](serde_core::Serializer::is_human_readable)), as
//! serde's `IpAddr` does:
//!
//! - **human-readable** formats (JSON, YAML, TOML, RON…) get UTC text with
//!   all nine fraction digits, `"2024-02-29T12:34:56.123456789Z"`, as
//!   [`rfc3339`] writes it: exact in every reader, readable, and what chrono's
//!   and jiff's types write by default;
//! - **binary** formats (bincode, postcard…) get a `u64` of nanoseconds
//!   since the epoch, as [`nanos`] writes it: eight bytes, exact, and cheap.
//!
//! Why not integers everywhere: every time after April 1970 is above 2^53
//! nanoseconds, and a JSON reader that parses numbers as doubles
//! (JavaScript's `JSON.parse`, and many others) silently rounds it, to
//! about a quarter of a microsecond today. Text cannot be misread that way.
//!
//! `Deserialize` reads what `Serialize` writes, and in human-readable
//! formats also an integer of nanoseconds, which is what this crate wrote
//! there in its 0.1 releases: stored data keeps reading. Text is read as
//! [`rfc3339`] reads it (any offset; exact or refused), integers as
//! [`nanos`] does.
//!
//! ```
//! use fastnow::UnixTime;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, PartialEq, Debug)]
//! struct Event {
//!     at: UnixTime,
//!     #[serde(with = "fastnow::serde::nanos")]
//!     logged: UnixTime,
//! }
//!
//! let t = UnixTime::from_nanos(1_709_210_096_123_456_789);
//! let event = Event { at: t, logged: t };
//! let json = serde_json::to_string(&event).unwrap();
//! assert_eq!(
//!     json,
//!     r#"{"at":"2024-02-29T12:34:56.123456789Z","logged":1709210096123456789}"#
//! );
//! assert_eq!(serde_json::from_str::<Event>(&json).unwrap(), event);
//! // Integers still read as the default form.
//! let old = r#"{"at":1709210096123456789,"logged":1709210096123456789}"#;
//! assert_eq!(serde_json::from_str::<Event>(old).unwrap(), event);
//! ```
//!
//! [`OutOfRange`]: crate::OutOfRange

use crate::interop::nanos_from_i128;
use crate::wall::UnixTime;
use core::fmt;
use serde_core::de::{self, Deserializer, Visitor};
use serde_core::{Deserialize, Serialize, Serializer};

/// RFC 3339 text in human-readable formats, a `u64` of nanoseconds since
/// the epoch in binary ones (feature `serde`; see the [module docs](self)).
///
/// ```
/// let t = fastnow::UnixTime::from_nanos(1_500_000_000);
/// assert_eq!(serde_json::to_string(&t).unwrap(), r#""1970-01-01T00:00:01.500000000Z""#);
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl Serialize for UnixTime {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            rfc3339::serialize(self, serializer)
        } else {
            nanos::serialize(self, serializer)
        }
    }
}

/// In human-readable formats, RFC 3339 text (as [`rfc3339`] reads it) or an
/// integer of nanoseconds since the epoch; in binary ones, the integer
/// (feature `serde`). An integer out of range (negative, or past
/// `u64::MAX`) and a time before 1970 or after 2554 are an
/// [`OutOfRange`](crate::OutOfRange) error.
///
/// ```
/// use fastnow::UnixTime;
///
/// let t: UnixTime = serde_json::from_str(r#""1970-01-01T01:00:01.5+01:00""#).unwrap();
/// assert_eq!(t, UnixTime::from_nanos(1_500_000_000));
/// let t: UnixTime = serde_json::from_str("1500000000").unwrap();
/// assert_eq!(t, UnixTime::from_nanos(1_500_000_000));
/// let err = serde_json::from_str::<UnixTime>("-1").unwrap_err();
/// assert!(err.to_string().starts_with("time before 1970-01-01T00:00:00Z"));
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl<'de> Deserialize<'de> for UnixTime {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<UnixTime, D::Error> {
        if deserializer.is_human_readable() {
            deserializer.deserialize_any(EitherVisitor)
        } else {
            nanos::deserialize(deserializer)
        }
    }
}

/// Integers of nanoseconds since the epoch, in range or refused (never
/// wrapped).
struct NanosVisitor;

impl Visitor<'_> for NanosVisitor {
    type Value = UnixTime;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an integer of nanoseconds since 1970-01-01T00:00:00Z")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<UnixTime, E> {
        Ok(UnixTime::from_nanos(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<UnixTime, E> {
        nanos_from_i128(i128::from(v)).map_err(E::custom)
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<UnixTime, E> {
        nanos_from_i128(i128::try_from(v).unwrap_or(i128::MAX)).map_err(E::custom)
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<UnixTime, E> {
        nanos_from_i128(v).map_err(E::custom)
    }
}

/// RFC 3339 text or an integer of nanoseconds: the default form in
/// human-readable formats.
struct EitherVisitor;

impl Visitor<'_> for EitherVisitor {
    type Value = UnixTime;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "an RFC 3339 date-time from 1970 to 2554, or an integer of nanoseconds since \
             1970-01-01T00:00:00Z",
        )
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<UnixTime, E> {
        rfc3339::TextVisitor.visit_str(v)
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<UnixTime, E> {
        rfc3339::TextVisitor.visit_bytes(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<UnixTime, E> {
        NanosVisitor.visit_u64(v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<UnixTime, E> {
        NanosVisitor.visit_i64(v)
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<UnixTime, E> {
        NanosVisitor.visit_u128(v)
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<UnixTime, E> {
        NanosVisitor.visit_i128(v)
    }
}

/// Integer nanoseconds for a `UnixTime` field, in every format:
/// `#[serde(with = "fastnow::serde::nanos")]` (and [`nanos::option`] for
/// `Option<UnixTime>`).
///
/// **Writes** a `u64` of nanoseconds since 1970-01-01T00:00:00Z: compact and
/// exact, but above 2^53, so a reader that parses JSON numbers as doubles
/// (JavaScript) rounds it; give such readers the default text.
///
/// **Reads** any integer from 0 to `u64::MAX` (a negative or larger one,
/// in formats with 128-bit integers too, is an
/// [`OutOfRange`](crate::OutOfRange) error, never wrapped); text is
/// refused.
///
/// ```
/// use fastnow::UnixTime;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, PartialEq, Debug)]
/// struct Row {
///     #[serde(with = "fastnow::serde::nanos")]
///     at: UnixTime,
/// }
///
/// let row = Row { at: UnixTime::from_nanos(1_500_000_000) };
/// let json = serde_json::to_string(&row).unwrap();
/// assert_eq!(json, r#"{"at":1500000000}"#);
/// assert_eq!(serde_json::from_str::<Row>(&json).unwrap(), row);
/// let err = serde_json::from_str::<Row>(r#"{"at":-1}"#).unwrap_err();
/// assert!(err.to_string().starts_with("time before 1970-01-01T00:00:00Z"));
/// ```
pub mod nanos {
    use super::*;

    /// Serializes `time` as a `u64` of nanoseconds since the epoch.
    ///
    /// ```
    /// let t = fastnow::UnixTime::from_nanos(1);
    /// let n = fastnow::serde::nanos::serialize(&t, serde_json::value::Serializer).unwrap();
    /// assert_eq!(n, 1);
    /// ```
    pub fn serialize<S: Serializer>(time: &UnixTime, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(time.as_nanos())
    }

    /// Deserializes an integer of nanoseconds since the epoch.
    ///
    /// ```
    /// use fastnow::UnixTime;
    ///
    /// let t = fastnow::serde::nanos::deserialize(serde_json::json!(1)).unwrap();
    /// assert_eq!(t, UnixTime::from_nanos(1));
    /// ```
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<UnixTime, D::Error> {
        deserializer.deserialize_u64(NanosVisitor)
    }

    /// Integer nanoseconds for an `Option<UnixTime>` field, `None` as the
    /// format's null: `#[serde(with = "fastnow::serde::nanos::option")]`.
    ///
    /// ```
    /// use fastnow::UnixTime;
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Serialize, Deserialize, PartialEq, Debug)]
    /// struct Job {
    ///     #[serde(with = "fastnow::serde::nanos::option", default)]
    ///     done: Option<UnixTime>,
    /// }
    ///
    /// let job = Job { done: Some(UnixTime::from_nanos(7)) };
    /// let json = serde_json::to_string(&job).unwrap();
    /// assert_eq!(json, r#"{"done":7}"#);
    /// assert_eq!(serde_json::from_str::<Job>(&json).unwrap(), job);
    /// assert_eq!(serde_json::to_string(&Job { done: None }).unwrap(), r#"{"done":null}"#);
    /// assert_eq!(serde_json::from_str::<Job>("{}").unwrap(), Job { done: None });
    /// ```
    pub mod option {
        use super::*;

        /// Serializes `Some` as a `u64` of nanoseconds and `None` as none.
        ///
        /// ```
        /// let n = fastnow::serde::nanos::option::serialize(
        ///     &Some(fastnow::UnixTime::from_nanos(7)),
        ///     serde_json::value::Serializer,
        /// );
        /// assert_eq!(n.unwrap(), 7);
        /// ```
        pub fn serialize<S: Serializer>(
            time: &Option<UnixTime>,
            serializer: S,
        ) -> Result<S::Ok, S::Error> {
            time.map(|t| t.as_nanos()).serialize(serializer)
        }

        /// Deserializes an integer of nanoseconds as `Some`, and none (null)
        /// as `None`.
        ///
        /// ```
        /// use fastnow::serde::nanos::option::deserialize;
        ///
        /// assert_eq!(deserialize(serde_json::Value::Null).unwrap(), None);
        /// let n = serde_json::json!(1_000_000_000);
        /// assert_eq!(deserialize(n).unwrap(), Some(fastnow::UnixTime::from_nanos(1_000_000_000)));
        /// ```
        pub fn deserialize<'de, D: Deserializer<'de>>(
            deserializer: D,
        ) -> Result<Option<UnixTime>, D::Error> {
            Ok(Option::<Nanos>::deserialize(deserializer)?.map(|t| t.0))
        }

        /// A `UnixTime` read as integer nanoseconds, so that serde's own
        /// `Option` handles none (null, unit) and some.
        struct Nanos(UnixTime);

        impl<'de> Deserialize<'de> for Nanos {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Nanos, D::Error> {
                super::deserialize(deserializer).map(Nanos)
            }
        }
    }
}

/// RFC 3339 text for a `UnixTime` field, in every format (binary ones
/// too, where the default is an integer):
/// `#[serde(with = "fastnow::serde::rfc3339")]` (and [`rfc3339::option`] for
/// `Option<UnixTime>`). The parsing is `UnixTime`'s
/// [`FromStr`](core::str::FromStr).
///
/// **Writes** UTC with all nine digits of the fraction, e.g.
/// `2024-02-29T12:34:56.123456789Z`: exact, and always 30 bytes, so the texts
/// sort as the times do (a trimmed fraction would put `…:56Z` after
/// `…:56.5Z`).
///
/// **Reads** any RFC 3339 `date-time`: any offset (`+01:00`, `-08:00`, `Z`;
/// converted to UTC, and `-00:00` read as UTC), `T`, `t` or a space before
/// the time, a fraction of any length (digits past the ninth must be zeros:
/// the time is exact or refused, never rounded). A leap second (`23:59:60`)
/// reads as the first second of the next minute, as Unix time counts it.
/// Times before 1970 or after 2554-07-21T23:34:33.709551615Z are refused with
/// the message of [`OutOfRange`](crate::OutOfRange).
///
/// ```
/// use fastnow::UnixTime;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, Debug)]
/// struct Row {
///     #[serde(with = "fastnow::serde::rfc3339")]
///     at: UnixTime,
/// }
///
/// let row: Row = serde_json::from_str(r#"{"at": "2024-02-29T13:34:56.5+01:00"}"#).unwrap();
/// assert_eq!(row.at, UnixTime::from_nanos(1_709_210_096_500_000_000));
///
/// let early = serde_json::from_str::<Row>(r#"{"at": "1969-12-31T23:59:59Z"}"#);
/// assert!(early.unwrap_err().to_string().contains("before 1970-01-01T00:00:00Z"));
/// ```
pub mod rfc3339 {
    use super::*;
    use crate::interop::rfc3339 as text;

    /// Serializes `time` as RFC 3339 text in UTC with nine fraction digits.
    ///
    /// ```
    /// let t = fastnow::UnixTime::from_nanos(1);
    /// let text = fastnow::serde::rfc3339::serialize(&t, serde_json::value::Serializer).unwrap();
    /// assert_eq!(text, "1970-01-01T00:00:00.000000001Z");
    /// ```
    pub fn serialize<S: Serializer>(time: &UnixTime, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(text::format(time.as_nanos(), 9).as_str())
    }

    /// Deserializes RFC 3339 text with any offset.
    ///
    /// ```
    /// use fastnow::UnixTime;
    ///
    /// let text = serde_json::json!("1970-01-01T01:00:00.000000001+01:00");
    /// let t = fastnow::serde::rfc3339::deserialize(text).unwrap();
    /// assert_eq!(t, UnixTime::from_nanos(1));
    /// ```
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<UnixTime, D::Error> {
        deserializer.deserialize_str(TextVisitor)
    }

    pub(super) struct TextVisitor;

    impl Visitor<'_> for TextVisitor {
        type Value = UnixTime;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an RFC 3339 date-time from 1970 to 2554")
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<UnixTime, E> {
            self.visit_bytes(v.as_bytes())
        }

        fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<UnixTime, E> {
            text::parse(v).map(UnixTime::from_nanos).map_err(E::custom)
        }
    }

    /// RFC 3339 text for an `Option<UnixTime>` field, `None` as the format's
    /// null: `#[serde(with = "fastnow::serde::rfc3339::option")]`.
    ///
    /// ```
    /// use fastnow::UnixTime;
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Serialize, Deserialize, PartialEq, Debug)]
    /// struct Job {
    ///     #[serde(with = "fastnow::serde::rfc3339::option", default)]
    ///     done: Option<UnixTime>,
    /// }
    ///
    /// let job = Job { done: Some(UnixTime::EPOCH) };
    /// let json = serde_json::to_string(&job).unwrap();
    /// assert_eq!(json, r#"{"done":"1970-01-01T00:00:00.000000000Z"}"#);
    /// assert_eq!(serde_json::from_str::<Job>(&json).unwrap(), job);
    /// assert_eq!(serde_json::to_string(&Job { done: None }).unwrap(), r#"{"done":null}"#);
    /// assert_eq!(serde_json::from_str::<Job>("{}").unwrap(), Job { done: None });
    /// ```
    pub mod option {
        use super::*;

        /// Serializes `Some` as RFC 3339 text and `None` as none.
        ///
        /// ```
        /// let text = fastnow::serde::rfc3339::option::serialize(
        ///     &Some(fastnow::UnixTime::EPOCH),
        ///     serde_json::value::Serializer,
        /// );
        /// assert_eq!(text.unwrap(), "1970-01-01T00:00:00.000000000Z");
        /// ```
        pub fn serialize<S: Serializer>(
            time: &Option<UnixTime>,
            serializer: S,
        ) -> Result<S::Ok, S::Error> {
            time.map(Text).serialize(serializer)
        }

        /// Deserializes RFC 3339 text as `Some`, and none (null) as `None`.
        ///
        /// ```
        /// use fastnow::serde::rfc3339::option::deserialize;
        ///
        /// assert_eq!(deserialize(serde_json::Value::Null).unwrap(), None);
        /// let text = serde_json::json!("1970-01-01T00:00:01Z");
        /// assert_eq!(deserialize(text).unwrap(), Some(fastnow::UnixTime::from_nanos(1_000_000_000)));
        /// ```
        pub fn deserialize<'de, D: Deserializer<'de>>(
            deserializer: D,
        ) -> Result<Option<UnixTime>, D::Error> {
            Ok(Option::<Text>::deserialize(deserializer)?.map(|t| t.0))
        }

        /// A `UnixTime` as RFC 3339 text, so that serde's own `Option`
        /// writes and reads none (null, unit) and some.
        struct Text(UnixTime);

        impl Serialize for Text {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                super::serialize(&self.0, serializer)
            }
        }

        impl<'de> Deserialize<'de> for Text {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Text, D::Error> {
                super::deserialize(deserializer).map(Text)
            }
        }
    }
}

/// An HLC stamp is its text in human-readable formats (as its `Display`
/// writes it, `"2024-02-29T12:34:56.123443604Z,00007"`: exact, readable,
/// and sorting as the stamps do) and its `u64` word in binary ones (as
/// [`Timestamp::to_u64`](crate::hlc::Timestamp::to_u64)), for the reason
/// `UnixTime`'s forms differ: the words are above 2^53, which a JSON
/// reader that parses numbers as doubles rounds (feature `serde`).
///
/// ```
/// use fastnow::hlc::Timestamp;
///
/// let t = Timestamp::new(1_500_000_000, 7);
/// assert_eq!(serde_json::to_string(&t).unwrap(), r#""1970-01-01T00:00:01.500000000Z,00007""#);
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl Serialize for crate::hlc::Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serializer.serialize_str(crate::hlc::Text::of(*self).as_str())
        } else {
            serializer.serialize_u64(self.to_u64())
        }
    }
}

/// In human-readable formats, the text (as its
/// [`FromStr`](core::str::FromStr) reads it) or the `u64` word; in binary
/// ones, the word (feature `serde`). Every `u64` is a stamp; a negative or
/// larger integer is an error, never wrapped.
///
/// ```
/// use fastnow::hlc::Timestamp;
///
/// let t: Timestamp = serde_json::from_str(r#""1970-01-01T01:00:01.5+01:00,7""#).unwrap();
/// assert_eq!(t, Timestamp::new(1_500_000_000, 7));
/// let w: Timestamp = serde_json::from_str(&t.to_u64().to_string()).unwrap();
/// assert_eq!(w, t);
/// assert!(serde_json::from_str::<Timestamp>(r#""1970-01-01T00:00:01Z""#).is_err());
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl<'de> Deserialize<'de> for crate::hlc::Timestamp {
    fn deserialize<D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<crate::hlc::Timestamp, D::Error> {
        if deserializer.is_human_readable() {
            deserializer.deserialize_any(StampVisitor)
        } else {
            deserializer.deserialize_u64(StampVisitor)
        }
    }
}

/// An HLC stamp's text or its word.
struct StampVisitor;

impl Visitor<'_> for StampVisitor {
    type Value = crate::hlc::Timestamp;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "an HLC timestamp: an RFC 3339 date-time, a comma and a counter \
             (2024-02-29T12:34:56.123443604Z,00007), or its u64 word",
        )
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        v.parse().map_err(E::custom)
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
        let text = core::str::from_utf8(v)
            .map_err(|_| E::invalid_value(de::Unexpected::Bytes(v), &self))?;
        self.visit_str(text)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(crate::hlc::Timestamp::from_u64(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        u64::try_from(v)
            .map(crate::hlc::Timestamp::from_u64)
            .map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Self::Value, E> {
        u64::try_from(v)
            .map(crate::hlc::Timestamp::from_u64)
            .map_err(|_| E::custom("an HLC timestamp's word above 2^64 - 1"))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Self::Value, E> {
        u64::try_from(v)
            .map(crate::hlc::Timestamp::from_u64)
            .map_err(|_| E::custom("an HLC timestamp's word out of the u64 range"))
    }
}
