//! The kernel's verdict when it cannot be read for now (`timekeeper::verdict`),
//! on the simulated machine: descriptors exhausted at a re-check keep the
//! counter, and at the first reading delay it, never settling the source for
//! good; every reading on the way continues the one before.

use super::*;
use crate::source::detect::Fallback;
use crate::timekeeper::verdict::{RETRY_FIRST_NS, RETRY_MAX_NS};

/// `EMFILE` (24 on every Unix fastnow runs on).
#[cfg(unix)]
const EMFILE: i32 = libc::EMFILE;
#[cfg(not(unix))]
const EMFILE: i32 = 24;

fn named(name: &str) -> KernelVerdict {
    KernelVerdict::Clocksource(Clocksource::new(name.as_bytes()))
}

/// Reads every `step` ns of simulated time for `total` ns, each reading at
/// least the one before (`last`); `check` sees the state after each. The
/// last reading.
fn read_for(
    tk: &Timekeeper<Sim>,
    total: u64,
    step: u64,
    mut last: u64,
    mut check: impl FnMut(&State),
) -> u64 {
    for _ in 0..total / step {
        tk.clocks.w().tau += step;
        let v = tk.read_nanos(false);
        assert!(v >= last, "stepped back {} ns", last - v);
        last = v;
        check(&tk.state());
    }
    last
}

fn mono_now(tk: &Timekeeper<Sim>) -> u64 {
    let w = tk.clocks.w();
    w.mono_at(w.tau)
}

/// A daemon closed fastnow's descriptor and is out of descriptors when the
/// re-check must open the file again: the counter stays in use (the
/// failure says nothing about it), every re-check tries again, the
/// introspection says what failed and for how long, and once the file can
/// be read the kernel's verdict is followed again, a demotion included.
/// (Before, the re-check took `EMFILE` for "unreadable" and demoted the
/// counter for good.)
#[test]
#[cfg(all(
    target_arch = "x86_64",
    any(target_os = "linux", target_os = "android")
))]
fn descriptors_exhausted_at_a_recheck_keep_the_counter() {
    for upkeep in [false, true] {
        let tk = on_the_counter();
        if upkeep {
            tk.set_upkeep(true);
            tk.upkeep_turn(false);
        }
        // The upkeep's turns, or, without it, a program asking clock_info()
        // once a second: readers do not read the kernel's verdict.
        let asked = core::cell::Cell::new(0u32);
        let turn = |tk: &Timekeeper<Sim>| {
            if upkeep {
                tk.upkeep_turn(false);
            } else {
                asked.set(asked.get() + 1);
                if asked.get() % 100 == 0 {
                    let _ = tk.info();
                }
            }
        };
        let (a, mono_a) = (tk.read_nanos(false), mono_now(&tk));
        tk.clocks.w().verdict = KernelVerdict::Unavailable(EMFILE);
        let last = read_for(&tk, 5 * S, 10_000_000, a, |s| {
            assert_eq!(s.mode, MODE_COUNTER, "upkeep {upkeep}");
            turn(&tk);
        });
        let (b, mono_b) = (tk.read_nanos(false), mono_now(&tk));
        assert!(
            (b - a).abs_diff(mono_b - mono_a) < 10_000,
            "an interval follows CLOCK_MONOTONIC: {} vs {}",
            b - a,
            mono_b - mono_a
        );
        let info = tk.info();
        assert_eq!(info.source, Source::Counter, "{info}");
        assert_eq!(info.fallback, None, "{info}");
        assert_eq!(info.demoted_at, None, "{info}");
        assert_eq!(info.kernel_clocksource, Some(Clocksource::new(b"tsc")));
        let why = info.verdict_unavailable.expect("the failure is reported");
        assert_eq!(why.errno, EMFILE);
        assert!(why.attempts >= 4, "a check a second: {why:?}");
        let since = why.since_last_read.expect("read at detection");
        assert!(since >= core::time::Duration::from_secs(4), "{why:?}");
        let text = std::format!("{info}");
        assert!(
            text.contains("stays in use") && !text.contains("fallback"),
            "{text}"
        );
        #[cfg(unix)]
        assert!(text.contains("too many open files (EMFILE)"), "{text}");

        // Descriptors free again: the next check reads the file.
        tk.clocks.w().verdict = named("tsc");
        let last = read_for(&tk, 3 * S / 2, 10_000_000, last, |_| turn(&tk));
        let info = tk.info();
        assert_eq!(info.source, Source::Counter, "{info}");
        assert_eq!(info.verdict_unavailable, None, "{info}");

        // And a demotion the kernel makes afterwards is followed.
        tk.clocks.w().verdict = named("hpet");
        read_for(&tk, 5 * S / 2, 10_000_000, last, |_| turn(&tk));
        let info = tk.info();
        assert_eq!(info.source, Source::Os, "{info}");
        assert!(matches!(
            info.fallback,
            Some(Fallback::KernelClocksource(_))
        ));
        assert_eq!(info.verdict_unavailable, None, "{info}");
    }
}

/// A verdict that could not be read at a re-check because the file is gone
/// (`ENOENT` after a `chroot`, say) vouches for nothing, as before: the
/// counter is dropped — and the introspection no longer names the
/// clocksource read before beside "could not be read".
#[test]
#[cfg(all(
    target_arch = "x86_64",
    any(target_os = "linux", target_os = "android")
))]
fn an_unreadable_recheck_still_demotes() {
    let tk = on_the_counter();
    let a = tk.read_nanos(false);
    tk.clocks.w().verdict = KernelVerdict::Unreadable;
    // A program asking clock_info() once a second (readers do not read the
    // kernel's verdict).
    let mut asked = 0;
    read_for(&tk, 5 * S / 2, 10_000_000, a, |_| {
        asked += 1;
        if asked % 100 == 0 {
            let _ = tk.info();
        }
    });
    let info = tk.info();
    assert_eq!(info.source, Source::Os, "{info}");
    assert_eq!(info.fallback, Some(Fallback::ClocksourceUnknown));
    assert_eq!(info.kernel_clocksource, None, "{info}");
    assert_eq!(info.verdict_unavailable, None, "{info}");
}

/// A process that starts out of descriptors: its first reading cannot read
/// the kernel's verdict. The precise clocks read `CLOCK_MONOTONIC` (not for
/// good: the state has a trigger), `clock_info` says the counter awaits the
/// verdict and why — without waiting for it — and the verdict is read
/// again after 1 ms, then twice as long each time up to a second. Once it
/// reads `tsc`, the warm-up runs and the counter takes over, a little
/// ahead, never back. (Before, the first reading settled on the OS clock
/// for good, blaming a sandbox.) Driven by readers, and by the upkeep
/// alone.
#[test]
fn descriptors_exhausted_at_the_first_reading_delay_the_counter() {
    for upkeep in [false, true] {
        let tk = Timekeeper::new(Sim::new(None));
        tk.clocks.w().verdict = KernelVerdict::Unavailable(EMFILE);
        if upkeep {
            tk.set_upkeep(true);
        }
        let first = tk.read_nanos(false);
        let mono0 = mono_now(&tk);
        assert!(first.abs_diff(mono0 + TIMELINE_OFFSET_NS) < 1_000);
        let s = tk.state();
        assert_eq!(s.mode, MODE_OS);
        assert!(!s.os_for_good(), "the OS clock for now, not for good");
        assert!(s.trigger <= mono0 + RETRY_FIRST_NS, "retried after 1 ms");

        let info = tk.info();
        assert_eq!(info.source, Source::Os, "{info}");
        assert_eq!(info.fallback, None, "nothing decided for good: {info}");
        assert_eq!(info.freq_hz, 1_000_000_000);
        assert_eq!(info.kernel_clocksource, None);
        let why = info.verdict_unavailable.expect("the failure is reported");
        assert_eq!((why.errno, why.since_last_read), (EMFILE, None));
        let text = std::format!("{info}");
        assert!(
            text.contains("counter simulated awaits the kernel's verdict")
                && text.contains("retrying")
                && !text.contains("fallback"),
            "{text}"
        );
        #[cfg(unix)]
        assert!(text.contains("too many open files (EMFILE)"), "{text}");

        // Three seconds out of descriptors: the OS clock throughout, each
        // reading CLOCK_MONOTONIC + 2^62, the next attempt never more than
        // a second away.
        let mut last = first;
        let mut waits = Vec::new();
        for _ in 0..3_000 {
            tk.clocks.w().tau += 1_000_000;
            if upkeep {
                tk.upkeep_turn(false);
            }
            let v = tk.read_nanos(false);
            assert!(v >= last, "stepped back {} ns", last - v);
            assert!(v.abs_diff(mono_now(&tk) + TIMELINE_OFFSET_NS) < 1_000);
            last = v;
            let s = tk.state();
            assert_eq!(s.mode, MODE_OS);
            assert!(s.trigger != u64::MAX && s.end >= s.trigger);
            let wait = s.trigger.saturating_sub(mono_now(&tk));
            assert!(wait <= RETRY_MAX_NS, "{wait}");
            if waits.last() != Some(&s.trigger) {
                waits.push(s.trigger);
            }
        }
        // 1, 2, 4 … 512 ms, then a second each time: 12 or 13 attempts.
        let why = tk.info().verdict_unavailable.expect("still failing");
        assert!((11..=14).contains(&why.attempts), "{why:?}");
        assert!(
            waits
                .windows(2)
                .all(|p| p[1] - p[0] <= RETRY_MAX_NS + 3_000_000),
            "{waits:?}"
        );

        // Descriptors free again: the warm-up runs, and the counter takes
        // over within a second and a few milliseconds.
        tk.clocks.w().verdict = named("tsc");
        let (a, mono_a) = (last, mono_now(&tk));
        let mut counter_at = None;
        for i in 0..1_100 {
            tk.clocks.w().tau += 1_000_000;
            if upkeep {
                tk.upkeep_turn(false);
            }
            let v = tk.read_nanos(false);
            assert!(v >= last, "stepped back {} ns", last - v);
            last = v;
            if counter_at.is_none() && tk.state().mode == MODE_COUNTER {
                counter_at = Some(i);
            }
        }
        assert!(
            counter_at.is_some(),
            "the counter took over (upkeep {upkeep})"
        );
        let (b, mono_b) = (tk.read_nanos(false), mono_now(&tk));
        assert!(
            (b - a).abs_diff(mono_b - mono_a) < 10_000,
            "an interval across the switch follows CLOCK_MONOTONIC: {} vs {}",
            b - a,
            mono_b - mono_a
        );
        let info = tk.info();
        assert_eq!(info.source, Source::Counter, "{info}");
        assert_eq!(info.fallback, None);
        assert_eq!(info.verdict_unavailable, None, "{info}");
        assert_eq!(info.kernel_clocksource, Some(Clocksource::new(b"tsc")));
        assert!(
            info.calibration_time >= core::time::Duration::from_secs(3),
            "the OS clock was read from the first reading on: {info:?}"
        );
        assert!(
            info.freq_hz.abs_diff(FREQ) < FREQ / 10_000,
            "{}",
            info.freq_hz
        );
    }
}

/// Once the first reading's awaited verdict can be read, a verdict against
/// the counter settles the OS clock for good, with that reason — the
/// readings go on without a step. (Another clocksource's name is against
/// the counter only where the kernel's verdict is followed: x86.)
#[test]
fn an_awaited_verdict_can_refuse_the_counter() {
    let mut refusals = std::vec![(KernelVerdict::Unreadable, Fallback::ClocksourceUnknown)];
    if cfg!(all(
        target_arch = "x86_64",
        any(target_os = "linux", target_os = "android")
    )) {
        refusals.push((
            named("hpet"),
            Fallback::KernelClocksource(Clocksource::new(b"hpet")),
        ));
    }
    for (verdict, reason) in refusals {
        let tk = Timekeeper::new(Sim::new(None));
        tk.clocks.w().verdict = KernelVerdict::Unavailable(EMFILE);
        let first = tk.read_nanos(false);
        let last = read_for(&tk, 100_000_000, 1_000_000, first, |s| {
            assert_eq!(s.mode, MODE_OS);
        });
        tk.clocks.w().verdict = verdict;
        read_for(&tk, 200_000_000, 1_000_000, last, |_| {});
        assert!(tk.state().os_for_good(), "{verdict:?}");
        let info = tk.info();
        assert_eq!(info.source, Source::Os);
        assert_eq!(info.fallback, Some(reason), "{info}");
        assert_eq!(info.verdict_unavailable, None, "{info}");
        assert!(!tk.counter_read.load(Ordering::Relaxed));
    }
}

/// A program that only reads the wall tier ends the wait too (its slow path
/// updates at an OS state's trigger), and wall readings are
/// `CLOCK_REALTIME` meanwhile.
#[test]
fn wall_readers_retry_the_verdict() {
    let tk = Timekeeper::new(Sim::new(None));
    tk.clocks.w().verdict = KernelVerdict::Unavailable(EMFILE);
    let _ = tk.unix_nanos();
    for i in 0..2_000 {
        tk.clocks.w().tau += 1_000_000;
        let u = tk.unix_nanos();
        let w = tk.clocks.w();
        assert!(u.abs_diff(w.real_at(w.tau)) < 10_000, "{i}");
        drop(w);
        if i == 500 {
            assert_eq!(tk.state().mode, MODE_OS);
            tk.clocks.w().verdict = named("tsc");
        }
    }
    assert_eq!(tk.state().mode, MODE_COUNTER);
}

/// The first reading's retry schedule against `spec/vectors/verdict.json`
/// (the Go module's tests read it too).
#[test]
fn retry_schedule_matches_the_spec() {
    let path = std::format!("{}/spec/vectors/verdict.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| std::panic!("{path}: {e}"));
    let file: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(file["retry_first_ns"].as_u64(), Some(RETRY_FIRST_NS));
    assert_eq!(file["retry_max_ns"].as_u64(), Some(RETRY_MAX_NS));
}
