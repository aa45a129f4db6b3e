//! Stamps shared between threads: [`AtomicInstant`] and [`AtomicUnixTime`],
//! one `AtomicU64` of nanoseconds each.

use crate::precise::Instant;
use crate::wall::UnixTime;
use core::fmt;
use core::sync::atomic::{AtomicU64, Ordering};

/// `compare_exchange` or `compare_exchange_weak` of a stamp: the
/// `AtomicU64` method of that name on its nanoseconds.
macro_rules! compare_exchange {
    ($(#[$doc:meta])* $method:ident, $value:ident, $to:ident, $from:path) => {
        $(#[$doc])*
        #[inline]
        pub fn $method(
            &self,
            current: $value,
            new: $value,
            success: Ordering,
            failure: Ordering,
        ) -> Result<$value, $value> {
            self.0
                .$method(current.$to(), new.$to(), success, failure)
                .map($from)
                .map_err($from)
        }
    };
}

macro_rules! atomic_stamp {
    ($(#[$doc:meta])* $name:ident, $value:ident, $to:ident, $from:path) => {
        $(#[$doc])*
        #[repr(transparent)]
        pub struct $name(AtomicU64);

        impl $name {
            #[doc = concat!("A cell holding `value`.")]
            #[must_use]
            pub const fn new(value: $value) -> $name {
                $name(AtomicU64::new(value.$to()))
            }

            /// Loads the stamp.
            #[inline]
            pub fn load(&self, order: Ordering) -> $value {
                $from(self.0.load(order))
            }

            /// Stores a stamp.
            #[inline]
            pub fn store(&self, value: $value, order: Ordering) {
                self.0.store(value.$to(), order)
            }

            /// Stores a stamp and returns the previous one.
            #[inline]
            pub fn swap(&self, value: $value, order: Ordering) -> $value {
                $from(self.0.swap(value.$to(), order))
            }

            compare_exchange!(
                /// Stores `new` if the stamp is `current`; returns the previous
                /// stamp, as `Ok` when it was `current` (see
                /// [`AtomicU64::compare_exchange`]).
                compare_exchange, $value, $to, $from
            );

            compare_exchange!(
                /// Like [`compare_exchange`](Self::compare_exchange), but may
                /// fail spuriously; for retry loops.
                compare_exchange_weak, $value, $to, $from
            );

            /// Moves the stamp to `value` if that is later; returns the
            /// previous stamp.
            #[inline]
            pub fn fetch_max(&self, value: $value, order: Ordering) -> $value {
                $from(self.0.fetch_max(value.$to(), order))
            }

            /// Moves the stamp to `value` if that is earlier; returns the
            /// previous stamp.
            #[inline]
            pub fn fetch_min(&self, value: $value, order: Ordering) -> $value {
                $from(self.0.fetch_min(value.$to(), order))
            }

            /// Moves the stamp forward to `value`, never back; whether it
            /// moved. `AcqRel`: a thread that loads the new stamp (Acquire)
            /// sees what the storing thread did before storing it.
            #[inline]
            pub fn store_if_newer(&self, value: $value) -> bool {
                self.0.fetch_max(value.$to(), Ordering::AcqRel) < value.$to()
            }

            /// The stamp, from a unique reference.
            #[inline]
            pub fn get_mut(&mut self) -> $value {
                $from(*self.0.get_mut())
            }

            /// The stamp, consuming the cell.
            #[inline]
            pub fn into_inner(self) -> $value {
                $from(self.0.into_inner())
            }
        }

        impl Default for $name {
            fn default() -> $name {
                $name::new($from(0))
            }
        }

        impl From<$value> for $name {
            fn from(value: $value) -> $name {
                $name::new(value)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.load(Ordering::Relaxed), f)
            }
        }
    };
}

atomic_stamp!(
    /// An [`Instant`] that threads share: load, store, compare-and-exchange,
    /// and move forward with [`fetch_max`](Self::fetch_max) or
    /// [`store_if_newer`](Self::store_if_newer).
    ///
    /// The "last seen" time of a cache entry, a connection or a rate-limit
    /// bucket is read and moved forward by many threads at once. This type
    /// and [`AtomicUnixTime`] are a single `AtomicU64` of nanoseconds —
    /// lock-free on every target fastnow supports, the size of the plain
    /// value — with the operations of std's atomics (each taking an
    /// [`Ordering`]) plus `fetch_max` and a `*_if_newer` convenience that
    /// does the common thing: move the stamp forward, never back, and say
    /// whether it moved.
    ///
    /// ```
    /// # #[cfg(not(target_os = "wasi"))] { // (no threads there)
    /// use fastnow::{AtomicInstant, Instant};
    /// use std::sync::atomic::Ordering;
    ///
    /// let last_seen = AtomicInstant::new(Instant::now());
    /// std::thread::scope(|s| {
    ///     for _ in 0..4 {
    ///         s.spawn(|| { last_seen.store_if_newer(Instant::now()); });
    ///     }
    /// });
    /// assert!(last_seen.load(Ordering::Relaxed) <= Instant::now());
    /// # }
    /// ```
    AtomicInstant,
    Instant,
    as_nanos,
    Instant::from_nanos
);

atomic_stamp!(
    /// A [`UnixTime`] that threads share; see [`AtomicInstant`].
    ///
    /// ```
    /// use fastnow::{AtomicUnixTime, UnixTime};
    /// use std::sync::atomic::Ordering;
    /// let modified = AtomicUnixTime::default();
    /// assert!(modified.store_if_newer(UnixTime::now()));
    /// assert!(!modified.store_if_newer(UnixTime::EPOCH), "never back");
    /// assert!(modified.load(Ordering::Acquire) > UnixTime::EPOCH);
    /// ```
    AtomicUnixTime,
    UnixTime,
    as_nanos,
    UnixTime::from_nanos
);

#[cfg(test)]
mod tests {
    use super::*;
    use std::prelude::v1::*;

    #[test]
    fn operations() {
        let t = |n| Instant::from_nanos(n);
        let a = AtomicInstant::new(t(10));
        assert_eq!(a.load(Ordering::Relaxed), t(10));
        assert_eq!(a.swap(t(20), Ordering::Relaxed), t(10));
        assert_eq!(
            a.compare_exchange(t(20), t(30), Ordering::AcqRel, Ordering::Relaxed),
            Ok(t(20))
        );
        assert_eq!(
            a.compare_exchange(t(20), t(40), Ordering::AcqRel, Ordering::Relaxed),
            Err(t(30))
        );
        assert_eq!(a.fetch_max(t(25), Ordering::Relaxed), t(30));
        assert_eq!(a.load(Ordering::Relaxed), t(30));
        assert_eq!(a.fetch_min(t(5), Ordering::Relaxed), t(30));
        assert!(a.store_if_newer(t(6)));
        assert!(!a.store_if_newer(t(6)));
        assert!(!a.store_if_newer(t(1)));
        a.store(t(7), Ordering::Relaxed);
        let mut a = a;
        assert_eq!(a.get_mut(), t(7));
        assert_eq!(a.into_inner(), t(7));
        assert_eq!(AtomicInstant::default().into_inner(), t(0));
        assert_eq!(
            format!("{:?}", AtomicInstant::new(t(3))),
            format!("{:?}", t(3))
        );
        assert_eq!(core::mem::size_of::<AtomicInstant>(), 8);
    }

    /// Many threads moving one stamp forward: it ends at the largest value
    /// any stored, every `store_if_newer` that said it moved did move it past
    /// what was there, and no load ever saw it go back.
    #[test]
    #[cfg(not(target_os = "wasi"))] // no threads there
    fn contended_stamp_only_moves_forward() {
        use std::sync::Arc;
        let stamp = Arc::new(AtomicUnixTime::default());
        let threads: Vec<_> = (0..4u64)
            .map(|k| {
                let stamp = stamp.clone();
                std::thread::spawn(move || {
                    let (mut moved, mut last, mut max) = (0u64, 0u64, 0u64);
                    for i in 0..100_000u64 {
                        let v = i * 4 + k + 1;
                        max = max.max(v);
                        moved += u64::from(stamp.store_if_newer(UnixTime::from_nanos(v)));
                        let seen = stamp.load(Ordering::Acquire).as_nanos();
                        assert!(seen >= last && seen >= v, "went back: {last} -> {seen}");
                        last = seen;
                    }
                    (moved, max)
                })
            })
            .collect();
        let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        let max = results.iter().map(|r| r.1).max().unwrap();
        assert_eq!(stamp.load(Ordering::Acquire).as_nanos(), max);
        assert!(results.iter().map(|r| r.0).sum::<u64>() >= 100_000);
    }
}
