//! A clock for tests: time that moves only when the test says so.
//!
//! With the `mock` feature, [`MockClock::install`] makes every fastnow clock
//! *on the current thread* — the three precise types, [`unix_nanos`], the
//! coarse tier — read the mock instead of the hardware, and converts its
//! exactly, so timeouts and expiry can be
//! tested without sleeping and without flakiness. Other threads, including
//! other tests running in parallel, are unaffected. Dropping the handle
//! uninstalls it.
//!
//! The feature adds one thread-local flag check to every read, which is why
//! it is off by default: enable it for tests only
//! (`[dev-dependencies] fastnow = { version = "…", features = ["mock"] }`).
//! Do not compare instants taken with and without a mock installed: they
//! are on different timelines.
//!
//! ```
//! use fastnow::{mock::MockClock, Instant};
//! use std::time::Duration;
//!
//! let clock = MockClock::install();
//! let start = Instant::now();
//! let deadline = start + Duration::from_secs(30);
//! clock.advance(Duration::from_secs(29));
//! assert!(Instant::now() < deadline);
//! clock.advance(Duration::from_secs(1));
//! assert_eq!(start.elapsed(), Duration::from_secs(30));
//! assert!(Instant::now() >= deadline);
//! ```
//!
//! [`unix_nanos`]: crate::unix_nanos

use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::rc::Rc;
use std::time::Duration;

struct State {
    mono_ns: Cell<u64>,
    unix_ns: Cell<u64>,
}

std::thread_local! {
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
    static CURRENT: RefCell<Option<Rc<State>>> = const { RefCell::new(None) };
}

/// A manual clock installed on the current thread; see the [module docs](self).
pub struct MockClock {
    state: Rc<State>,
    // Installed on one thread: must be dropped (uninstalled) there.
    _not_send: PhantomData<*const ()>,
}

impl MockClock {
    /// Installs a mock clock on this thread, starting at one second of
    /// monotonic time and at 2001-09-09T01:46:40Z (10^9 s) of Unix time.
    ///
    /// # Panics
    /// If a mock clock is already installed on this thread.
    pub fn install() -> MockClock {
        let state = Rc::new(State {
            mono_ns: Cell::new(1_000_000_000),
            unix_ns: Cell::new(1_000_000_000_000_000_000),
        });
        CURRENT.with(|c| {
            let mut c = c.borrow_mut();
            assert!(
                c.is_none(),
                "a fastnow MockClock is already installed on this thread"
            );
            *c = Some(state.clone());
        });
        ACTIVE.with(|a| a.set(true));
        MockClock {
            state,
            _not_send: PhantomData,
        }
    }

    /// Moves both the monotonic and the Unix time forward.
    ///
    /// # Panics
    /// If the monotonic time would pass `u64::MAX` nanoseconds (584 years).
    pub fn advance(&self, by: Duration) {
        let ns = u64::try_from(by.as_nanos()).expect("MockClock::advance: duration over 584 years");
        let mono = self
            .state
            .mono_ns
            .get()
            .checked_add(ns)
            .expect("MockClock::advance: time overflow");
        self.state.mono_ns.set(mono);
        self.state
            .unix_ns
            .set(self.state.unix_ns.get().saturating_add(ns));
    }

    /// Sets the Unix time (as if the system clock were stepped); the
    /// monotonic time is not affected.
    pub fn set_unix_nanos(&self, nanos: u64) {
        self.state.unix_ns.set(nanos);
    }

    /// The mock's monotonic time, in nanoseconds (what its instants hold).
    pub fn nanos(&self) -> u64 {
        self.state.mono_ns.get()
    }
}

impl Drop for MockClock {
    fn drop(&mut self) {
        ACTIVE.with(|a| a.set(false));
        CURRENT.with(|c| *c.borrow_mut() = None);
    }
}

#[inline(always)]
fn active() -> bool {
    // `try_with`: reads during thread-local destruction see no mock.
    ACTIVE.try_with(Cell::get).unwrap_or(false)
}

fn with_state<T>(f: impl FnOnce(&State) -> T) -> Option<T> {
    CURRENT.with(|c| c.borrow().as_deref().map(f))
}

/// One of the mock's clocks, if one is installed on this thread; the
/// `active()` check keeps the thread-local borrow off the path otherwise.
#[inline(always)]
fn read(clock: impl FnOnce(&State) -> u64) -> Option<u64> {
    if active() {
        with_state(clock)
    } else {
        None
    }
}

/// The mock's monotonic nanoseconds, if one is installed on this thread.
#[inline(always)]
pub(crate) fn nanos() -> Option<u64> {
    read(|s| s.mono_ns.get())
}

/// The mock's Unix nanoseconds, if one is installed on this thread.
#[inline(always)]
pub(crate) fn unix_nanos() -> Option<u64> {
    read(|s| s.unix_ns.get())
}
