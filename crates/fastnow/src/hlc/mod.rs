//! Hybrid logical clocks: timestamps that order events across machines
//! whose clocks disagree, at the wall tier's cost.
//!
//! A hybrid logical clock (Kulkarni et al., "Logical Physical Clocks", 2014)
//! gives every event a [`Timestamp`] that
//!
//! - is close to physical time: its physical part is the wall clock's
//!   reading, or a later one that the clock heard from another machine,
//!   never more than the maximum drift ahead of the local wall clock;
//! - never goes back, even when the wall clock is stepped back;
//! - respects causality: the stamp of a message's receipt
//!   ([`Hlc::update`]) is above the stamp the sender gave it
//!   ([`Hlc::now`]), so an event that could have caused another is stamped
//!   earlier.
//!
//! Each node keeps one [`Hlc`], stamps its local events and outgoing
//! messages with [`Hlc::now`], sends the stamp along ([`Timestamp::to_u64`],
//! or the RFC 3339 text of its `Display`), and passes each stamp it receives
//! to [`Hlc::update`], which refuses one further ahead of the local wall
//! clock than the maximum drift ([`DriftError`]) and otherwise returns the
//! stamp of the receipt.
//!
//! ```
//! use fastnow::hlc::{Hlc, Timestamp};
//!
//! let (a, b) = (Hlc::new(), Hlc::new());
//! let sent = a.now();                       // A sends a message stamped `sent`
//! let wire = sent.to_u64();                 // … as eight bytes
//! let received = b.update(Timestamp::from_u64(wire)).unwrap();
//! assert!(received > sent);                 // causality
//! let reply = b.now();
//! assert!(reply > received);                // never back on one node
//! ```
//!
//! # The stamp
//! A [`Timestamp`] is one `u64`, ordered as that integer: the upper 48 bits
//! are the physical part, in units of 2^-16 s (15.26 µs) since the Unix
//! epoch, and the lower 16 bits a counter of events that share a physical
//! part. The word is an NTP-format time (32 bits of seconds, 32 of fraction;
//! Unix epoch, as `uhlc`'s `NTP64`) whose last 16 bits count events, so it
//! ends on 2106-02-07T06:28:16Z. When the counter is full the next stamp
//! borrows from the physical part (the word simply goes up by one), so a
//! stamp can run ahead of the wall clock by one unit per 65,536 stamps
//! issued without the wall clock passing it. spec/SEMANTICS.md ("Hybrid
//! logical clock") has the rules, and why this layout.
//!
//! # Cost
//! [`Hlc::now`] is one [`unix_nanos`](crate::unix_nanos) reading, a
//! conversion (two multiplications) and a compare-and-swap on one
//! `AtomicU64`: no lock, no system call, async-signal-safe. `BENCHMARKS.md`
//! has its cost beside `unix_nanos`, and under contention beside `uhlc`'s.
//! An `Hlc` is `Send + Sync` and can be a `static`.

mod text;

pub use text::ParseError;
#[cfg(feature = "serde")]
pub(crate) use text::Text;

use core::fmt;
use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;

const NANOS_PER_SEC: u64 = 1_000_000_000;
/// Bits of the counter: the lower part of the word.
const LOGICAL_BITS: u32 = 16;
/// The largest physical part, 2^48 − 1 units: 2106-02-07T06:28:15.99998474Z.
const MAX_PHYSICAL: u64 = (1 << (64 - LOGICAL_BITS)) - 1;
/// The first nanosecond after the last unit (2^32 s): the end of the range.
const END_NANOS: u64 = (1 << 32) * NANOS_PER_SEC;

/// The word with counter 0 whose physical part is the unit (2^-16 s) that
/// contains `unix_nanos`, i.e. floor(`unix_nanos` × 2^16 / 10^9); the last
/// unit for times from 2106-02-07T06:28:16Z on.
///
/// Split into seconds and a fraction so that both divisions are of a `u64`
/// by a constant, which compile to multiplications (a 128-bit division
/// would be a library call): 2^16 / 10^9 = 2^7 / 5^9.
#[inline]
const fn word_of_nanos(unix_nanos: u64) -> u64 {
    if unix_nanos >= END_NANOS {
        return MAX_PHYSICAL << LOGICAL_BITS;
    }
    let secs = unix_nanos / NANOS_PER_SEC;
    let frac = ((unix_nanos % NANOS_PER_SEC) << 7) / 1_953_125;
    ((secs << 16) | frac) << LOGICAL_BITS
}

/// The first whole nanosecond of the unit `physical`: ceil(`physical` ×
/// 10^9 / 2^16). Rounding up makes [`word_of_nanos`] its inverse, so a
/// stamp's text reads back as the same stamp.
#[inline]
const fn nanos_of_physical(physical: u64) -> u64 {
    (physical >> 16) * NANOS_PER_SEC + (((physical & 0xffff) * NANOS_PER_SEC + 0xffff) >> 16)
}

/// A hybrid logical clock's timestamp: one `u64`, ordered as that integer.
///
/// The upper 48 bits are the physical part, in units of 2^-16 s (about
/// 15.26 µs) since 1970-01-01T00:00:00Z; the lower 16 bits are the logical
/// counter. The same value in every language fastnow has ([`to_u64`] and
/// [`from_u64`] are the wire form), and the same as an NTP-format time
/// (seconds and a 32-bit fraction, Unix epoch) whose last 16 bits count
/// events. It covers 1970 to 2106-02-07T06:28:15.99998474Z.
///
/// It displays as RFC 3339 text in UTC, the first nanosecond of its
/// physical unit, then a comma and the counter in five digits:
/// `2024-02-29T12:34:56.123458862Z,00007`. Every text is 36 bytes, so the
/// texts sort as the stamps do. [`FromStr`](core::str::FromStr) reads that
/// back (see [`ParseError`]); with the `serde` feature it is the text in
/// human-readable formats and the `u64` in binary ones.
///
/// ```
/// use fastnow::hlc::Timestamp;
///
/// let t = Timestamp::new(1_709_210_096_123_456_789, 7);
/// assert_eq!(t.physical_nanos(), 1_709_210_096_123_443_604); // its unit's first nanosecond
/// assert_eq!(t.logical(), 7);
/// assert_eq!(t.to_string(), "2024-02-29T12:34:56.123443604Z,00007");
/// assert_eq!(t.to_string().parse(), Ok(t));
/// assert_eq!(Timestamp::from_u64(t.to_u64()), t);
/// assert!(Timestamp::new(1_709_210_096_123_456_789, 8) > t);
/// ```
///
/// [`to_u64`]: Timestamp::to_u64
/// [`from_u64`]: Timestamp::from_u64
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(u64);

impl Timestamp {
    /// The stamp whose physical part is the unit (2^-16 s) containing
    /// `physical_nanos` (Unix nanoseconds), with counter `logical`.
    ///
    /// The physical part keeps the unit, not the nanosecond:
    /// [`physical_nanos`](Self::physical_nanos) gives back the unit's first
    /// nanosecond, at most 15.26 µs earlier. Times from
    /// 2106-02-07T06:28:16Z on, which the stamp cannot hold, are taken as
    /// its last unit.
    ///
    /// ```
    /// use fastnow::hlc::Timestamp;
    ///
    /// let t = Timestamp::new(1_500_000_000, 3);
    /// assert_eq!((t.physical_nanos(), t.logical()), (1_500_000_000, 3));
    /// // 1 ns is in the epoch's first unit, as 15_258 ns is; 15_259 ns is in the next.
    /// assert_eq!(Timestamp::new(15_258, 0).physical_nanos(), 0);
    /// assert_eq!(Timestamp::new(15_259, 0).physical_nanos(), 15_259);
    /// ```
    #[must_use]
    pub const fn new(physical_nanos: u64, logical: u16) -> Timestamp {
        Timestamp(word_of_nanos(physical_nanos) | logical as u64)
    }

    /// The stamp of a word written by [`to_u64`](Self::to_u64) (or by the
    /// Go module's `uint64(HLCTimestamp)`). Every `u64` is a stamp.
    ///
    /// ```
    /// use fastnow::hlc::Timestamp;
    ///
    /// let t = Timestamp::from_u64(0x0000_0001_0000_0002);
    /// assert_eq!((t.physical_nanos(), t.logical()), (1_000_000_000, 2));
    /// ```
    #[must_use]
    pub const fn from_u64(word: u64) -> Timestamp {
        Timestamp(word)
    }

    /// The stamp as one `u64`, ordered as the stamps are: the wire form,
    /// which [`from_u64`](Self::from_u64) reads back.
    ///
    /// ```
    /// use fastnow::hlc::Timestamp;
    ///
    /// assert_eq!(Timestamp::new(1_000_000_000, 2).to_u64(), (1 << 32) + 2);
    /// ```
    #[must_use]
    pub const fn to_u64(self) -> u64 {
        self.0
    }

    /// The physical part as Unix nanoseconds: the first whole nanosecond of
    /// its unit (2^-16 s).
    ///
    /// ```
    /// use fastnow::hlc::Timestamp;
    ///
    /// let t = Timestamp::new(1_700_000_000_000_000_000, 0);
    /// assert!(1_700_000_000_000_000_000 - t.physical_nanos() < 15_259);
    /// ```
    #[must_use]
    pub const fn physical_nanos(self) -> u64 {
        nanos_of_physical(self.0 >> LOGICAL_BITS)
    }

    /// The logical counter: how many events before this one had the same
    /// physical part, on this node or on the nodes whose stamps it heard.
    ///
    /// ```
    /// use fastnow::hlc::Timestamp;
    ///
    /// assert_eq!(Timestamp::new(0, 65_535).logical(), 65_535);
    /// ```
    #[must_use]
    pub const fn logical(self) -> u16 {
        self.0 as u16
    }

    /// The physical part as a [`UnixTime`](crate::UnixTime)
    /// ([`physical_nanos`](Self::physical_nanos)).
    ///
    /// ```
    /// use fastnow::{hlc::Timestamp, UnixTime};
    ///
    /// let t = Timestamp::new(2_000_000_000, 9);
    /// assert_eq!(t.unix_time(), UnixTime::from_nanos(2_000_000_000));
    /// ```
    #[must_use]
    pub const fn unix_time(self) -> crate::UnixTime {
        crate::UnixTime::from_nanos(self.physical_nanos())
    }
}

/// `Timestamp::from_u64`.
///
/// ```
/// use fastnow::hlc::Timestamp;
/// assert_eq!(Timestamp::from(5u64).logical(), 5);
/// ```
impl From<u64> for Timestamp {
    fn from(word: u64) -> Timestamp {
        Timestamp(word)
    }
}

/// `Timestamp::to_u64`.
///
/// ```
/// use fastnow::hlc::Timestamp;
/// assert_eq!(u64::from(Timestamp::from_u64(5)), 5);
/// ```
impl From<Timestamp> for u64 {
    fn from(t: Timestamp) -> u64 {
        t.0
    }
}

/// A hybrid logical clock: [`Timestamp`]s for local and sent events
/// ([`now`](Hlc::now)) and received ones ([`update`](Hlc::update)); see
/// the [module docs](self).
///
/// Lock-free: each stamp is one compare-and-swap on one `AtomicU64`. Stamps
/// strictly increase across all the threads that share the clock: if one
/// call returns before another starts (on any thread), the second stamp is
/// greater, and no two calls return the same stamp (except past 2106, see
/// below). `new` is a `const fn`, so a process-wide clock can be a
/// `static`:
///
/// ```
/// use fastnow::hlc::Hlc;
/// use std::time::Duration;
///
/// static HLC: Hlc = Hlc::new().with_max_drift(Duration::from_millis(250));
///
/// let a = HLC.now();
/// # #[cfg(not(target_os = "wasi"))] // no threads on WASI preview 1
/// let b = std::thread::spawn(|| HLC.now()).join().unwrap();
/// # #[cfg(target_os = "wasi")]
/// # let b = HLC.now();
/// assert!(b > a);
/// ```
///
/// **The wall clock.** The physical part comes from
/// [`unix_nanos`](crate::unix_nanos), and so follows the `mock` feature's
/// clocks (a test sets the wall time with `set_unix_nanos`). When the wall
/// clock steps back, stamps keep their physical part and count up in the
/// counter until the wall clock passes it again.
///
/// **Range.** A wall clock past 2106-02-07T06:28:16Z reads as the last
/// physical unit; the stamps then count up to `u64::MAX` and stay there
/// (no longer increasing), never wrapping.
pub struct Hlc {
    last: AtomicU64,
    max_drift_ns: u64,
}

impl Hlc {
    /// The maximum drift of a new clock: 500 ms, as uhlc's default and
    /// CockroachDB's default maximum clock offset.
    ///
    /// ```
    /// use fastnow::hlc::Hlc;
    /// assert_eq!(Hlc::new().max_drift(), Hlc::DEFAULT_MAX_DRIFT);
    /// ```
    pub const DEFAULT_MAX_DRIFT: Duration = Duration::from_millis(500);

    /// A clock that has issued no stamp, accepting remote stamps up to
    /// [`DEFAULT_MAX_DRIFT`](Self::DEFAULT_MAX_DRIFT) ahead of the local
    /// wall clock.
    ///
    /// ```
    /// use fastnow::hlc::Hlc;
    ///
    /// let hlc = Hlc::new();
    /// let t = hlc.now();
    /// assert!(t.physical_nanos() <= fastnow::unix_nanos());
    /// ```
    #[must_use]
    pub const fn new() -> Hlc {
        Hlc {
            last: AtomicU64::new(0),
            max_drift_ns: Self::DEFAULT_MAX_DRIFT.as_nanos() as u64,
        }
    }

    /// The same clock, accepting remote stamps up to `max` ahead of the
    /// local wall clock ([`update`](Self::update)). Durations past `u64`
    /// nanoseconds (584 years) accept every stamp.
    ///
    /// The bound is the stamps' promise: a clock's physical part is never
    /// further ahead of its own wall clock than the largest maximum drift
    /// of the clocks it heard from (plus what the counter borrowed). Set it
    /// above the worst offset between the machines' clocks that you
    /// tolerate (NTP keeps servers within milliseconds); a stamp from a
    /// machine whose clock is further ahead is refused rather than dragging
    /// every clock it reaches into the future.
    ///
    /// ```
    /// use fastnow::hlc::Hlc;
    /// use std::time::Duration;
    ///
    /// let hlc = Hlc::new().with_max_drift(Duration::from_millis(10));
    /// assert_eq!(hlc.max_drift(), Duration::from_millis(10));
    /// ```
    #[must_use]
    pub const fn with_max_drift(self, max: Duration) -> Hlc {
        let ns = max.as_nanos();
        Hlc {
            last: self.last,
            max_drift_ns: if ns > u64::MAX as u128 {
                u64::MAX
            } else {
                ns as u64
            },
        }
    }

    /// How far ahead of the local wall clock a remote stamp may be.
    ///
    /// ```
    /// use fastnow::hlc::Hlc;
    /// use std::time::Duration;
    ///
    /// assert_eq!(Hlc::new().max_drift(), Duration::from_millis(500));
    /// ```
    #[must_use]
    pub const fn max_drift(&self) -> Duration {
        Duration::from_nanos(self.max_drift_ns)
    }

    /// The stamp of a local event or of a message about to be sent: above
    /// every stamp this clock issued before, and with the wall clock's
    /// physical part unless an earlier stamp's is later.
    ///
    /// ```
    /// use fastnow::hlc::Hlc;
    ///
    /// let hlc = Hlc::new();
    /// let (a, b) = (hlc.now(), hlc.now());
    /// assert!(b > a);
    /// ```
    #[inline]
    pub fn now(&self) -> Timestamp {
        self.now_at(crate::unix_nanos())
    }

    /// The stamp of the receipt of a message stamped `remote`: above
    /// `remote` and above every stamp this clock issued before. The
    /// clock's later stamps are above `remote` too.
    ///
    /// # Errors
    /// [`DriftError`] when `remote`'s physical part is more than the
    /// [maximum drift](Self::with_max_drift) ahead of the local wall clock:
    /// the stamp is refused and the clock left as it was, so one machine
    /// with a wrong clock cannot drag the others' stamps into the future.
    /// The error says by how much it was ahead.
    ///
    /// ```
    /// use fastnow::hlc::{Hlc, Timestamp};
    /// use std::time::Duration;
    ///
    /// let hlc = Hlc::new();
    /// let sent = Hlc::new().now();
    /// assert!(hlc.update(sent).unwrap() > sent);
    ///
    /// let from_the_future = Timestamp::new(fastnow::unix_nanos() + 60_000_000_000, 0);
    /// let err = hlc.update(from_the_future).unwrap_err();
    /// assert!(err.ahead_by() > Duration::from_secs(59));
    /// assert!(hlc.now() < from_the_future);
    /// ```
    #[inline]
    pub fn update(&self, remote: Timestamp) -> Result<Timestamp, DriftError> {
        self.update_at(remote, crate::unix_nanos())
    }

    /// [`now`](Self::now) with the wall clock reading `wall_nanos`: the
    /// model and vector tests drive the clock through this.
    #[inline]
    fn now_at(&self, wall_nanos: u64) -> Timestamp {
        self.advance(word_of_nanos(wall_nanos), 0)
    }

    /// [`update`](Self::update) with the wall clock reading `wall_nanos`.
    #[inline]
    fn update_at(&self, remote: Timestamp, wall_nanos: u64) -> Result<Timestamp, DriftError> {
        let remote_nanos = remote.physical_nanos();
        if remote_nanos > wall_nanos && remote_nanos - wall_nanos > self.max_drift_ns {
            return Err(DriftError {
                remote,
                wall_nanos,
                max_drift_ns: self.max_drift_ns,
            });
        }
        Ok(self.advance(word_of_nanos(wall_nanos), remote.0.saturating_add(1)))
    }

    /// Moves the clock to the largest of `wall` (the wall reading's word),
    /// `floor`, and the last stamp plus one, and returns it.
    ///
    /// On (physical part, counter) pairs this is the paper's rule: the new
    /// physical part is the largest of the three, and the counter one more
    /// than the largest counter among those that have it (0 if the wall
    /// clock's alone). Plus one carries into the physical part when the
    /// counter is full (the borrow), and saturates at `u64::MAX`.
    ///
    /// Relaxed: every stamp is a read-modify-write of one location, whose
    /// modification order is total and agrees with happens-before (a call
    /// that happens after another reads its write or a later one), which
    /// is all that strict increase needs. The clock publishes no other data.
    #[inline]
    fn advance(&self, wall: u64, floor: u64) -> Timestamp {
        let mut last = self.last.load(Ordering::Relaxed);
        loop {
            let next = wall.max(floor).max(last.saturating_add(1));
            match self
                .last
                .compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return Timestamp(next),
                Err(seen) => last = seen,
            }
        }
    }
}

/// [`Hlc::new`].
///
/// ```
/// let hlc = fastnow::hlc::Hlc::default();
/// assert!(hlc.now() < hlc.now());
/// ```
impl Default for Hlc {
    fn default() -> Hlc {
        Hlc::new()
    }
}

/// The last stamp issued and the maximum drift.
///
/// ```
/// let hlc = fastnow::hlc::Hlc::new();
/// assert_eq!(
///     format!("{hlc:?}"),
///     "Hlc { last: Timestamp(1970-01-01T00:00:00.000000000Z,00000), max_drift: 500ms }"
/// );
/// ```
impl fmt::Debug for Hlc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hlc")
            .field("last", &Timestamp(self.last.load(Ordering::Relaxed)))
            .field("max_drift", &self.max_drift())
            .finish()
    }
}

/// A remote stamp further ahead of the local wall clock than the maximum
/// drift: the error of [`Hlc::update`], which then leaves the clock as it
/// was.
///
/// ```
/// use fastnow::hlc::{Hlc, Timestamp};
/// use std::time::Duration;
///
/// let hlc = Hlc::new().with_max_drift(Duration::from_millis(100));
/// let remote = Timestamp::new(fastnow::unix_nanos() + 10_000_000_000, 0);
/// let err = hlc.update(remote).unwrap_err();
/// assert_eq!(err.remote(), remote);
/// assert_eq!(err.max_drift(), Duration::from_millis(100));
/// assert!(err.ahead_by() > Duration::from_secs(9));
/// assert!(err.to_string().contains("more than the maximum drift of 100ms"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DriftError {
    remote: Timestamp,
    wall_nanos: u64,
    max_drift_ns: u64,
}

impl DriftError {
    /// The refused stamp.
    ///
    /// ```
    /// use fastnow::hlc::{Hlc, Timestamp};
    ///
    /// let far = Timestamp::new(u64::MAX, 0);
    /// assert_eq!(Hlc::new().update(far).unwrap_err().remote(), far);
    /// ```
    #[must_use]
    pub const fn remote(&self) -> Timestamp {
        self.remote
    }

    /// How far the remote stamp's physical part
    /// ([`Timestamp::physical_nanos`]) was ahead of the local wall clock's
    /// reading: more than [`max_drift`](Self::max_drift).
    ///
    /// ```
    /// use fastnow::hlc::{Hlc, Timestamp};
    /// use std::time::Duration;
    ///
    /// let far = Timestamp::new(fastnow::unix_nanos() + 3_600_000_000_000, 0);
    /// let ahead = Hlc::new().update(far).unwrap_err().ahead_by();
    /// assert!(ahead > Duration::from_secs(3599) && ahead <= Duration::from_secs(3600));
    /// ```
    #[must_use]
    pub const fn ahead_by(&self) -> Duration {
        Duration::from_nanos(self.remote.physical_nanos() - self.wall_nanos)
    }

    /// The maximum drift of the clock that refused the stamp.
    ///
    /// ```
    /// use fastnow::hlc::{Hlc, Timestamp};
    ///
    /// let far = Timestamp::new(u64::MAX, 0);
    /// assert_eq!(Hlc::new().update(far).unwrap_err().max_drift(), Hlc::DEFAULT_MAX_DRIFT);
    /// ```
    #[must_use]
    pub const fn max_drift(&self) -> Duration {
        Duration::from_nanos(self.max_drift_ns)
    }
}

impl fmt::Display for DriftError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "remote HLC timestamp {} is {:?} ahead of the local wall clock ({}), more than the \
             maximum drift of {:?}: refused, the clock left as it was",
            self.remote,
            self.ahead_by(),
            crate::UnixTime::from_nanos(self.wall_nanos),
            self.max_drift()
        )
    }
}

#[cfg(feature = "std")]
impl std::error::Error for DriftError {}

#[cfg(test)]
mod tests;
