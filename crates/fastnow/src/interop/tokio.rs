//! The three instant types as `tokio::time::Instant` (feature `tokio`).
//!
//! tokio's `Instant` wraps std's, so the conversion is std's (see
//! `interop/std.rs`: one anchor per process, differences kept exactly)
//! followed by `tokio::time::Instant::from_std`.

use crate::precise::{Instant, MonotonicInstant, OrderedInstant};
use tokio::time::Instant as TokioInstant;

macro_rules! into_tokio {
    ($($name:ident),*) => {$(
        #[doc = concat!("The `tokio::time::Instant` of a [`", stringify!($name), "`] (feature `tokio`).")]
        ///
        /// `tokio::time::Instant::from_std` of the [`std::time::Instant`]
        /// conversion, whose error bound, range and handling of mocks it
        /// shares: exact differences, never a panic.
        ///
        /// **Two clocks.** fastnow and tokio keep separate clocks, and
        /// neither moves the other. tokio's paused clock
        /// (`tokio::time::pause`, `advance`, `#[tokio::test(start_paused =
        /// true)]`) moves `tokio::time::Instant::now()` only: fastnow's
        /// readings, like std's, keep real time, and convert to the tokio
        /// instant of the same real moment — so a deadline computed from
        /// fastnow and handed to `sleep_until` or `timeout_at` under a
        /// paused clock waits its duration plus the real time that passed
        /// since the pause, in tokio's virtual time (auto-advance gets there
        /// at once). fastnow's `mock::GlobalMockClock` (feature `mock`)
        /// moves fastnow's readings only: tokio's clock does not follow it,
        /// and a mocked reading converts as any value on fastnow's timeline
        /// does, to the instant at which the real timeline has that value. A
        /// mock starts at one second of the OS monotonic clock, so whether a
        /// deadline computed from it is already due for tokio, or due only
        /// after real time catches up with it, depends on how long the
        /// machine has been up (see the [`std::time::Instant`] conversion).
        /// In a test, let one clock drive time for each piece of code:
        /// tokio's for code that waits on tokio's timers, fastnow's mock for
        /// code that reads fastnow.
        ///
        /// ```
        #[doc = concat!("use fastnow::", stringify!($name), ";")]
        /// use std::time::Duration;
        ///
        #[doc = concat!("let start = ", stringify!($name), "::now();")]
        /// let deadline: tokio::time::Instant = (start + Duration::from_secs(30)).into();
        /// assert_eq!(
        ///     deadline - tokio::time::Instant::from(start),
        ///     Duration::from_secs(30)
        /// );
        /// let std_deadline = std::time::Instant::from(start + Duration::from_secs(30));
        /// assert_eq!(deadline.into_std(), std_deadline);
        /// ```
        #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
        impl From<$name> for TokioInstant {
            #[inline]
            fn from(t: $name) -> TokioInstant {
                TokioInstant::from_std(crate::interop::std::to_std(t.as_nanos()))
            }
        }
    )*};
}

into_tokio!(Instant, MonotonicInstant, OrderedInstant);
