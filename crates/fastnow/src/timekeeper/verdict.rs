//! The kernel's verdict when it cannot be read for now
//! ([`KernelVerdict::Unavailable`]: descriptors or memory exhausted, an
//! interrupted call). Such a failure says nothing about the counter, so it
//! changes no decision (spec/SEMANTICS.md, "The kernel's verdict"):
//!
//! - at a re-check, the counter stays in use and the verdict is read again
//!   at the next check, a second later (`Writer::check_kernel` records each
//!   attempt here);
//! - at the first reading, the counter is neither chosen nor refused: the
//!   first state is the OS clock, as in the warm-up's first millisecond but
//!   without a counter sample, and its trigger reads the verdict again, after
//!   [`RETRY_FIRST_NS`], then twice as long each time up to
//!   [`RETRY_MAX_NS`]. Once the kernel names the counter, the warm-up
//!   starts there as detection would have started it (a sample, a
//!   millisecond's measurement, the promotion); once it names another
//!   clocksource, or cannot be read at all, the OS clock stays for good.
//!
//! Each of these OS states ends no earlier than the one it replaces, so a
//! reader holding the older one never converts a reading above a later
//! reader's (the rule of take-over points), and the warm-up's first state
//! ends where the warm-up's own retries expect it to (`trigger` plus a
//! millisecond's grace).

use crate::source::arch::FreqOrigin;
use crate::source::detect::{KernelVerdict, VerdictUnavailable};
use crate::timekeeper::state::{State, MODE_OS};
use crate::timekeeper::writer::Writer;
use crate::timekeeper::{grace, Clocks, Timekeeper, CHECK_PERIOD_NS, MIN_PERIOD_NS};
use crate::timekeeper::{MAX_PERIOD_NS, TIMELINE_OFFSET_NS};
use core::time::Duration;

/// At the first reading, how soon an unavailable verdict is read again.
pub(super) const RETRY_FIRST_NS: u64 = MIN_PERIOD_NS;
/// The longest wait between two attempts at the first reading's verdict
/// (the wait doubles from [`RETRY_FIRST_NS`]).
pub(super) const RETRY_MAX_NS: u64 = MAX_PERIOD_NS;

/// What the attempts to read the kernel's verdict gave, for `clock_info`
/// and for the first reading's retries.
#[derive(Clone, Copy, Debug)]
pub(super) struct VerdictLog {
    /// The `errno` of the last attempt, when it failed for want of a
    /// resource; `None` once one reads the file.
    error: Option<i32>,
    /// How many attempts in a row failed so.
    failures: u32,
    /// `CLOCK_MONOTONIC` time of the last attempt that read a verdict (0:
    /// none did).
    read_mono: u64,
    /// While the first reading's decision awaits the verdict: the wait
    /// before the next attempt.
    retry_ns: u64,
}

impl VerdictLog {
    pub(super) const NEW: VerdictLog = VerdictLog {
        error: None,
        failures: 0,
        read_mono: 0,
        retry_ns: 0,
    };

    /// What `clock_info` reports of it, `now` reading `CLOCK_MONOTONIC` —
    /// only when there is something to report: on a thread whose `RDTSC`
    /// faults, the vDSO's `CLOCK_MONOTONIC` faults too, and `clock_info`
    /// must not read it for nothing there.
    pub(super) fn unavailable(&self, now: impl FnOnce() -> u64) -> Option<VerdictUnavailable> {
        let errno = self.error?;
        Some(VerdictUnavailable {
            errno,
            attempts: self.failures,
            since_last_read: (self.read_mono != 0)
                .then(|| Duration::from_nanos(now().saturating_sub(self.read_mono))),
        })
    }
}

impl<C: Clocks> Timekeeper<C> {
    /// Whether the first reading's decision still awaits the kernel's
    /// verdict (the OS clock is read meanwhile; not for read paths).
    pub(super) fn verdict_awaited(&self) -> bool {
        let w = Writer::new(self);
        w.keeper.decision.is_some_and(|d| d.pending.is_some())
    }
}

impl<C: Clocks> Writer<'_, C> {
    /// Records what an attempt to read the kernel's verdict gave, at `now`
    /// (`CLOCK_MONOTONIC`, as the caller read it anyway).
    pub(super) fn note_verdict(&mut self, verdict: KernelVerdict, now: u64) {
        let k = &mut *self.keeper;
        let log = &mut k.verdict_log;
        match verdict {
            KernelVerdict::Unavailable(errno) => {
                log.error = Some(errno);
                log.failures = log.failures.saturating_add(1);
            }
            KernelVerdict::Clocksource(_) => {
                log.read_mono = now;
                log.error = None;
                log.failures = 0;
            }
            KernelVerdict::Unreadable => {
                log.error = None;
                log.failures = 0;
                // No clocksource is known any more: the one read before
                // must not be reported beside "could not be read".
                if let Some(d) = k.decision.as_mut() {
                    d.clocksource = None;
                }
            }
            KernelVerdict::NotApplicable => {}
        }
    }

    /// Detection's part: records the verdict it read and, when the counter
    /// awaits one that could not be read, publishes the first state, the
    /// OS clock until the next attempt, and returns true.
    pub(super) fn await_verdict(&mut self) -> bool {
        let Some(d) = self.keeper.decision else {
            return false;
        };
        let Some(errno) = d.pending else {
            if let Some(cs) = d.clocksource {
                let now = self.mono();
                self.note_verdict(KernelVerdict::Clocksource(cs), now);
            }
            return false;
        };
        let mono = self.mono();
        self.note_verdict(KernelVerdict::Unavailable(errno), mono);
        // This state has an end, which must be no earlier than the one
        // readers act on while it is being published (`before_first`).
        let agreed_end = self.tk.before_first(mono).end;
        let k = &mut *self.keeper;
        k.first_mono = mono;
        k.next_check_mono = mono + CHECK_PERIOD_NS;
        k.origin = FreqOrigin::Os;
        k.verdict_log.retry_ns = RETRY_FIRST_NS;
        let trigger = mono + RETRY_FIRST_NS;
        self.publish(
            State {
                mode: MODE_OS,
                trigger,
                end: (trigger + grace(RETRY_FIRST_NS)).max(agreed_end),
                os_offset: TIMELINE_OFFSET_NS,
                ..State::default()
            },
            None,
        );
        true
    }

    /// At the trigger of an OS state while the verdict is awaited: reads it
    /// again and acts on it (see the module docs). False when no verdict is
    /// awaited: the trigger is the warm-up's.
    pub(super) fn retry_verdict(&mut self) -> bool {
        let Some(mut d) = self.keeper.decision.filter(|d| d.pending.is_some()) else {
            return false;
        };
        let verdict = self.tk.clocks.verdict(&mut self.keeper.verdict_file);
        let now = self.mono();
        self.note_verdict(verdict, now);
        d.settle(verdict);
        self.keeper.decision = Some(d);
        if let Some(reason) = d.fallback {
            self.stay_on_os(reason);
            return true;
        }
        let old = self.keeper.state;
        if d.pending.is_none() {
            // The kernel vouches: the warm-up starts, as at detection.
            let first = self.sample();
            let k = &mut *self.keeper;
            k.window.push(first);
            k.min_width = first.width;
            k.origin = FreqOrigin::Pending;
            k.next_check_mono = first.mono + CHECK_PERIOD_NS;
            let trigger =
                (first.mono + MIN_PERIOD_NS).max(old.end.saturating_sub(grace(MIN_PERIOD_NS)));
            self.publish(
                State {
                    trigger,
                    end: trigger + grace(MIN_PERIOD_NS),
                    ..old
                },
                None,
            );
            return true;
        }
        let log = &mut self.keeper.verdict_log;
        log.retry_ns = log
            .retry_ns
            .saturating_mul(2)
            .clamp(RETRY_FIRST_NS, RETRY_MAX_NS);
        let wait = log.retry_ns;
        let trigger = now + wait;
        self.publish(
            State {
                trigger,
                end: (trigger + grace(wait)).max(old.end),
                ..old
            },
            None,
        );
        true
    }
}
