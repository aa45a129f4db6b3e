//! s390x (Linux): the TOD clock, read with `STCKF` (between two
//! serializations when ordered).
//!
//! z/Architecture has one time-of-day (TOD) clock per configuration, shared
//! by every CPU: a 64-bit binary counter whose bit 51 ticks once a
//! microsecond, so it counts 4096 units a microsecond — a rate fixed by the
//! architecture (Principles of Operation, "TOD Clock"), not measured or
//! published by firmware. Any program may read it. As on Arm, there is
//! nothing to verify between CPUs, so the kernel's clocksource is not
//! checked.
//!
//! `STORE CLOCK FAST` stores the clock with no serialization, the cheap
//! read. The ordered read is the same instruction between two
//! serializations (`BCR 14,0`; `BCR 15,0`, which also synchronizes
//! checkpoints, when the build allows models without the
//! fast-BCR-serialization facility, older than the z196, as Rust's
//! baseline z10 does): a serialization completes every
//! conceptually earlier storage access before any later instruction is
//! fetched, so the clock is read after every earlier load has its value,
//! and every later storage access happens after the value was stored. Linux's
//! vDSO reads `STCKF` too.
//!
//! Not `STORE CLOCK`, although it performs the same two serializations:
//! to make each value it stores unique, `STCK` may set bits to the right of
//! the rightmost bit the model increments, where `STCKF` stores zeros
//! (Principles of Operation, "TOD Clock" and "STORE CLOCK FAST"). A `STCK`
//! value can then exceed a later `STCKF` value of the same increment, by
//! less than one increment: a reading whose slow path read the counter
//! ordered, followed on the same thread by a fast-path `STCKF` reading,
//! would step back — `Instant` promises it never does. With `STCKF` on both
//! reads, the clock is the only thing either stores, and the ordered value
//! is never above a bare one read after it.
//!
//! The 64-bit clock counts from 1900 and wraps in 2042 (the extended clock
//! of `STCKE` carries the epoch above it). fastnow's conversion needs a
//! counter that does not wrap, so the readings are counted from the start
//! of 2020 instead (a constant subtracted modulo 2^64): they wrap in 2162.
//! A clock that reads from 1949 to 2019 (the upper half of that range,
//! modulo 2^64) is not used, nor one not running (condition code 2 or 3).

use super::{FreqOrigin, Probe};
use core::arch::asm;

/// The TOD clock at 2020-01-01 00:00:00 UTC (120 years of 365.2425 days
/// less 3 leap days, 3,786,825,600 s, at 4096 units per µs).
const TOD_2020: u64 = 3_786_825_600 * 4_096_000_000;

/// The TOD clock's rate, fixed by the architecture.
const TOD_HZ: u64 = 4_096_000_000;

/// The instructions the reads are made of, so that the tests can check the
/// reads' composition against a model of the TOD clock.
trait Tod {
    /// One `STORE CLOCK FAST`.
    fn stckf(&self) -> u64;
    /// One serialization.
    fn serialize(&self);
}

/// The machine's TOD clock.
struct Machine;

impl Tod for Machine {
    #[inline(always)]
    fn stckf(&self) -> u64 {
        let mut tod = 0u64;
        // SAFETY: STCKF is unprivileged (store-clock-fast facility, in
        // every z/Architecture CPU since the z9, and Rust's baseline z10);
        // it stores 8 bytes at the address, which is `tod`, a live, aligned
        // local, and sets the condition code (so no `preserves_flags`).
        unsafe { asm!("stckf 0({p})", p = in(reg_addr) &mut tod, options(nostack)) };
        tod
    }
    #[inline(always)]
    fn serialize(&self) {
        // SAFETY: a branch on condition to register 0 never branches: it
        // only serializes (with mask 14 where the fast-BCR-serialization
        // facility is installed, as it is on every model with the
        // high-word facility: the z196 brought both, under one facility
        // bit; with mask 15, also checkpoint-synchronizing, on any model).
        // Not `nomem`, so the compiler keeps memory accesses on their side
        // of it as well.
        unsafe {
            #[cfg(target_feature = "high-word")]
            asm!("bcr 14, 0", options(nostack, preserves_flags));
            #[cfg(not(target_feature = "high-word"))]
            asm!("bcr 15, 0", options(nostack, preserves_flags));
        }
    }
}

/// The ordered read's instructions, as `ClockInfo` names them.
const ORDERED_READ: &str = if cfg!(target_feature = "high-word") {
    "BCR 14,0;STCKF;BCR 14,0"
} else {
    "BCR 15,0;STCKF;BCR 15,0"
};

/// The bare read: one `STCKF`, counted from 2020.
#[inline(always)]
fn bare<T: Tod>(tod: &T) -> u64 {
    tod.stckf().wrapping_sub(TOD_2020)
}

/// The ordered read: the same `STCKF` between two serializations (see the
/// module docs), so its value is never above a bare read's after it.
#[inline(always)]
fn ordered<T: Tod>(tod: &T) -> u64 {
    tod.serialize();
    let value = tod.stckf();
    tod.serialize();
    value.wrapping_sub(TOD_2020)
}

/// The bare counter read.
#[inline(always)]
pub(crate) fn ticks() -> u64 {
    bare(&Machine)
}

/// The counter read after every earlier storage access, and before every
/// later one (see the module docs).
#[inline(always)]
pub(crate) fn ticks_ordered(_alt: bool) -> u64 {
    ordered(&Machine)
}

/// One `STCKF`, with its condition code (0 set, 1 not set: both running;
/// 2 error, 3 stopped or not operational).
fn tod_with_state() -> (u64, u8) {
    let mut tod = 0u64;
    let cc: u64;
    // SAFETY: as in `Machine::stckf`; IPM copies the condition code into bits 34
    // and 35 of `cc` (the program mask beside it), nothing else.
    unsafe {
        asm!(
            "stckf 0({p})",
            "ipm {cc}",
            p = in(reg_addr) &mut tod,
            cc = out(reg) cc,
            options(nostack)
        )
    };
    (tod, ((cc >> 28) & 3) as u8)
}

/// Whether a clock that read `tod` with condition code `cc` is usable: it
/// runs, and counted from 2020 it is far from wrapping.
fn usable(tod: u64, cc: u8) -> bool {
    cc <= 1 && tod.wrapping_sub(TOD_2020) < 1 << 63
}

pub(crate) fn probe() -> Probe {
    let (tod, cc) = tod_with_state();
    Probe {
        counter: Some("TOD clock (STCKF)"),
        invariant: true,
        freq: Some((TOD_HZ, FreqOrigin::ArchRegister)),
        ordered_read: ORDERED_READ,
        ordered_read_alt: ORDERED_READ,
        use_alt: false,
        hypervisor: None,
        disabled: !usable(tod, cc),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_and_range() {
        // 1970-01-01 is 2,208,988,800 s after the TOD epoch.
        let unix_epoch = 2_208_988_800u64 * TOD_HZ;
        assert_eq!(TOD_2020 - unix_epoch, 1_577_836_800 * TOD_HZ);
        assert!(usable(TOD_2020, 0));
        assert!(usable(TOD_2020 + 20 * 365 * 86_400 * TOD_HZ, 1));
        // Past the 2042 wrap of the 64-bit clock: still counting on.
        assert!(usable(TOD_2020.wrapping_add(40 * 365 * 86_400 * TOD_HZ), 0));
        assert!(!usable(TOD_2020 - 1, 0), "before 2020");
        assert!(!usable(TOD_2020 - 30 * 365 * 86_400 * TOD_HZ, 0), "1990");
        // The 64-bit clock is modular: 0 is 1900 and also September 2042.
        assert!(usable(0, 1));
        assert!(!usable(TOD_2020, 2), "error state");
        assert!(!usable(TOD_2020, 3), "stopped");
    }

    #[test]
    fn reads_advance_and_order() {
        let (tod, cc) = tod_with_state();
        assert!(usable(tod, cc), "{tod:#x} cc {cc}");
        assert!(!probe().disabled);
        // An ordered read is never above a bare one after it, nor below
        // one before it: both store the clock alone.
        for _ in 0..10_000 {
            let a = ticks();
            let b = ticks_ordered(false);
            let c = ticks();
            assert!(a <= b && b <= c, "{a} {b} {c}");
        }
        let a = ticks();
        let mut n = 0;
        while ticks() == a {
            n += 1;
            assert!(n < 1_000_000, "the TOD clock does not advance");
        }
        // Against the OS clock: 10 ms of CLOCK_MONOTONIC is 10 ms of TOD
        // within 1 %. Each TOD read is bracketed by two of the OS clock, so
        // a thread preempted between them widens the bounds instead of
        // failing the test.
        let bracket = || {
            let m0 = crate::source::os::monotonic_nanos();
            let t = ticks();
            (m0, t, crate::source::os::monotonic_nanos())
        };
        let (m0, t0, m0_after) = bracket();
        while crate::source::os::monotonic_nanos() - m0 < 10_000_000 {}
        let (m1, t1, m1_after) = bracket();
        let nanos = (t1 - t0) as u128 * 1_000_000_000 / TOD_HZ as u128;
        let (shortest, longest) = ((m1 - m0_after) as u128, (m1_after - m0) as u128);
        assert!(
            nanos * 100 >= shortest * 99 && nanos * 100 <= longest * 101,
            "{nanos} ns of TOD vs {shortest} to {longest} ns"
        );
    }

    /// A model of the TOD clock as the Principles of Operation describe
    /// it: the clock advances in units of bit 63, of which a model
    /// increments only the bits down to `1 << lsb`. `STCKF` stores the
    /// clock with zeros to the right of that bit; `STCK` stores a nonzero
    /// value there that makes each value unique (here, counting up within
    /// an increment). Every instruction takes `step` units of time.
    struct Model {
        clock: core::cell::Cell<u64>,
        lsb: u32,
        step: u64,
        last_stck: core::cell::Cell<u64>,
    }

    impl Model {
        fn new(lsb: u32, step: u64) -> Model {
            Model {
                clock: TOD_2020.into(),
                lsb,
                step,
                last_stck: 0.into(),
            }
        }
        /// The clock as the model increments it.
        fn incremented(&self) -> u64 {
            self.clock.set(self.clock.get() + self.step);
            self.clock.get() >> self.lsb << self.lsb
        }
        /// One `STORE CLOCK`: the clock with a nonzero value below its
        /// incremented bits (where it has any) that makes the value unique;
        /// when this increment has none left, the CPU waits for the next.
        fn stck(&self) -> u64 {
            loop {
                let clock = self.incremented();
                let value = (clock + u64::from(self.lsb > 0)).max(self.last_stck.get() + 1);
                if value - clock < 1 << self.lsb {
                    self.last_stck.set(value);
                    return value;
                }
                self.clock.set(self.clock.get() + 1);
            }
        }
    }

    impl Tod for Model {
        fn stckf(&self) -> u64 {
            self.incremented()
        }
        fn serialize(&self) {
            self.clock.set(self.clock.get() + self.step);
        }
    }

    /// Whether one thread's readings, `ordered` and bare alternately, with
    /// `ordered` first, ever step back.
    fn steps_back(model: &Model, ordered: impl Fn(&Model) -> u64) -> bool {
        let mut last = 0;
        (0..1_000).any(|i| {
            let now = if i % 2 == 0 {
                ordered(model)
            } else {
                bare(model)
            };
            let back = now < last;
            last = now;
            back
        })
    }

    /// The ordered read mixes with the bare one on every model of the
    /// clock, however coarse its increments (down to bit 51 only) and
    /// however quickly the reads follow each other. Made with `STCK`, as it
    /// once was, a bare read after it steps back on every model that
    /// increments less than every bit, once reads come several to an
    /// increment (the reason for `STCKF`; see the module docs).
    #[test]
    fn ordered_and_bare_reads_mix() {
        for lsb in 0..=12 {
            for step in 0..64 {
                let model = Model::new(lsb, step);
                assert!(
                    !steps_back(&model, ordered::<Model>),
                    "lsb {lsb} step {step}"
                );
                let stck = |m: &Model| m.stck().wrapping_sub(TOD_2020);
                let stck_steps_back = steps_back(&Model::new(lsb, step), stck);
                if lsb > 0 && 3 * step < 1 << lsb {
                    assert!(stck_steps_back, "lsb {lsb} step {step}: no STCK case");
                }
            }
        }
    }
}
