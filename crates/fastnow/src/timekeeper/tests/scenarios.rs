//! The fault model (`spec/vectors/scenarios.json`, which the Go module's
//! tests run too): every event a clock lives through, on the simulated
//! machine, against every reader of the timekeeper, without and with the
//! upkeep, with frequent and with sparse readers — and, here only, with a
//! signal handler's reading and with a fork at every clock read of the first
//! update after the events. The invariants are the file's; a failure names
//! the scenario, the run and what broke.

use super::*;
use serde_json::Value;
use std::string::ToString;

fn num(v: &Value) -> u64 {
    v.as_str()
        .unwrap_or_else(|| std::panic!("{v}: a decimal string"))
        .parse()
        .expect("a decimal u64")
}

fn signed(v: &Value) -> i64 {
    v.as_str()
        .unwrap_or_else(|| std::panic!("{v}: a decimal string"))
        .parse()
        .expect("a decimal i64")
}

fn spec() -> Value {
    let path = std::format!("{}/spec/vectors/scenarios.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| std::panic!("{path}: {e}"));
    serde_json::from_str(&text).expect("valid JSON")
}

/// The file's bounds.
struct Bounds {
    settle: u64,
    follow: u64,
    stand_still_max: u64,
    in_step_after: u64,
    offset: u64,
    interval: u64,
    wall: u64,
}

/// What the variant adds to the first update after the events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Interrupt {
    None,
    /// A signal handler reads every clock at the update's `k`th clock read.
    Signal(usize),
    /// The process forks at the update's `k`th clock read; the child goes on.
    Fork(usize),
}

/// One run's readings so far, and the checks made as they come.
struct Reader {
    precise: u64,
    boot: u64,
    /// How far a reading may step back (the scenario's `step_back_ns`).
    slack: u64,
    label: String,
}

impl Reader {
    fn read(&mut self, tk: &Timekeeper<Sim>) -> (u64, u64, u64) {
        let bare = tk.read_nanos(false);
        let ordered = tk.read_nanos(true);
        let boot = tk.read_boot_nanos();
        let wall = tk.unix_nanos();
        for (what, v) in [("a bare reading", bare), ("an ordered reading", ordered)] {
            assert!(
                v + self.slack >= self.precise,
                "{}: {what} stepped back {} ns",
                self.label,
                self.precise - v
            );
        }
        assert!(
            boot + self.slack >= self.boot,
            "{}: a boot reading stepped back {} ns",
            self.label,
            self.boot - boot
        );
        self.precise = self.precise.max(ordered).max(bare);
        self.boot = self.boot.max(boot);
        (ordered, boot, wall)
    }
}

/// The simulated truth now: `CLOCK_MONOTONIC`, `CLOCK_BOOTTIME`,
/// `CLOCK_REALTIME`.
fn truth(tk: &Timekeeper<Sim>) -> (u64, u64, u64) {
    let w = tk.clocks.w();
    (w.mono_at(w.tau), w.boot_at(w.tau), w.real_at(w.tau))
}

/// Applies one event of the file to the simulated machine; whether the
/// kernel would wake a clock-was-set `timerfd` (a resume, a step).
fn apply(tk: &Timekeeper<Sim>, event: &Value) -> bool {
    let mut w = tk.clocks.w();
    if let Some(ns) = event.get("suspend_ns") {
        let counter = match event["counter"].as_str() {
            Some("stopped") => SuspendCounter::Stopped,
            Some("counting") => SuspendCounter::Counting,
            Some("reset") => SuspendCounter::Reset(num(&event["reset_to"])),
            other => std::panic!("suspend: counter {other:?}"),
        };
        w.suspend_with(num(ns), counter);
        return true;
    }
    if let Some(ns) = event.get("pause_ns") {
        w.tau += num(ns);
    } else if let Some(ns) = event.get("counter_jump_ns") {
        let ns = signed(ns);
        let ticks = (ns.unsigned_abs() as u128 * FREQ as u128 / S as u128) as i64;
        w.jump_counter(if ns < 0 { -ticks } else { ticks });
    } else if let Some(ppb) = event.get("counter_rate_ppb") {
        w.set_counter_rate(signed(ppb));
    } else if let Some(ns) = event.get("realtime_step_ns") {
        w.real_minus_mono += signed(ns) as i128;
        return true;
    } else if let Some(ppb) = event.get("mono_rate_ppb") {
        w.set_rate(signed(ppb));
    } else if let Some(cs) = event.get("clocksource") {
        let name = cs.as_str().expect("a clocksource name");
        w.verdict = KernelVerdict::Clocksource(Clocksource::new(name.as_bytes()));
    } else if let Some(errno) = event.get("clocksource_error") {
        let name = errno.as_str().expect("an errno name");
        // Run only where the kernel's verdict is followed (FOLLOWS_KERNEL):
        // a file the kernel keeps, read through Unix calls.
        #[cfg(unix)]
        {
            w.verdict = detect::failure(errno_of(name));
        }
        #[cfg(not(unix))]
        std::panic!("clocksource_error {name}: no clocksource file here");
    } else {
        std::panic!("unknown event {event}");
    }
    false
}

/// The errno a name in the file stands for.
#[cfg(unix)]
fn errno_of(name: &str) -> i32 {
    match name {
        "EMFILE" => libc::EMFILE,
        "ENFILE" => libc::ENFILE,
        "EINTR" => libc::EINTR,
        "ENOMEM" => libc::ENOMEM,
        "EACCES" => libc::EACCES,
        "EPERM" => libc::EPERM,
        "ENOENT" => libc::ENOENT,
        other => std::panic!("errno {other}: add it here"),
    }
}

/// A copy of `tk` as a child forked at this moment has it: its memory as it
/// is (the published state and the latch word by word, the bookkeeping saved
/// at the last publish), the writers' lock held by the parent's thread, no
/// upkeep thread, and the machine's clocks going on from here.
fn fork_copy(tk: &Timekeeper<Sim>) -> Timekeeper<Sim> {
    let world = tk.clocks.w().clone();
    // SAFETY: the saved copies are written only under the writers' lock,
    // by `Writer::save` in one assignment; this thread holds the lock (it
    // is inside the update) and is not in `save` (a clock read never is).
    let saved = [0, 1].map(|i| unsafe { *tk.keeper.saved[i].get() });
    let child = Timekeeper {
        state: tk.state.fork_copy(),
        lock: ProcessLock::new(),
        keeper: KeeperCell {
            // The live bookkeeping may be half-updated: the child's first
            // writer resumes from a saved copy (what it is there for), so
            // whatever stands here is never read.
            live: core::cell::UnsafeCell::new(Keeper::new()),
            saved: saved.map(core::cell::UnsafeCell::new),
            saved_at: AtomicUsize::new(tk.keeper.saved_at.load(Ordering::Relaxed)),
        },
        clocks: Sim::with_world(world),
        upkeep: AtomicBool::new(false),
        upkeep_due: AtomicU64::new(0),
        wall_interval: AtomicU64::new(tk.wall_interval.load(Ordering::Relaxed)),
        first_mono: AtomicU64::new(tk.first_mono.load(Ordering::Relaxed)),
        first_boot: AtomicU64::new(tk.first_boot.load(Ordering::Relaxed)),
        slowed: AtomicU64::new(0),
        counter_read: AtomicBool::new(tk.counter_read.load(Ordering::Relaxed)),
    };
    child.lock.hold_in_another_process();
    child
}

/// What one run found out about the first update after the events: how
/// many clock reads it made.
struct RunResult {
    update_reads: usize,
}

/// One run of one scenario; panics, naming it, where an invariant breaks.
#[allow(clippy::too_many_arguments)]
fn run_one(b: &Bounds, sc: &Value, upkeep: bool, every: u64, interrupt: Interrupt) -> RunResult {
    let name = sc["name"].as_str().unwrap();
    let label = std::format!("{name} (upkeep {upkeep}, every {every} ns, {interrupt:?})");
    let expect = &sc["expect"];
    let slack = expect.get("step_back_ns").map_or(0, num);
    let offset = expect.get("offset_ns").map_or(b.offset, num);
    let tk = Timekeeper::new(Sim::new(None));
    tk.set_upkeep(upkeep);
    for event in sc
        .get("from_start")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        apply(&tk, event);
    }
    let mut reader = Reader {
        precise: 0,
        boot: 0,
        slack: 0,
        label: label.clone(),
    };
    let mut upkeep_next = 0u64;
    let turn = |tk: &Timekeeper<Sim>, next: &mut u64, woken: bool| {
        let now = tk.clocks.mono();
        if woken || now >= *next {
            *next = tk.upkeep_turn(woken).min(now + 1_000_000);
        }
    };
    // Settle.
    let start = tk.clocks.w().tau;
    while tk.clocks.w().tau < start + b.settle {
        tk.clocks.w().tau += every;
        if upkeep {
            turn(&tk, &mut upkeep_next, false);
        }
        reader.read(&tk);
    }
    let settled = match sc.get("settled").and_then(Value::as_str) {
        None | Some("counter") => MODE_COUNTER,
        Some("os") => MODE_OS,
        Some(other) => std::panic!("{label}: settled {other}"),
    };
    assert_eq!(tk.state().mode, settled, "{label}: settled on the source");
    // Just before the events.
    let (p0, b0, _) = reader.read(&tk);
    let (mono0, boot0, _) = truth(&tk);
    let rebases0 = Writer::new(&tk).keeper.rebases;
    let seq0 = tk.state.sequence();
    let mut woken = false;
    let mut later = Vec::new();
    for event in sc["events"].as_array().unwrap() {
        match event.get("after_ns") {
            Some(ns) => later.push((num(ns), event.clone())),
            None => woken |= apply(&tk, event),
        }
    }
    reader.slack = slack;
    let (mono_after, _, _) = truth(&tk);
    // Interrupts at the first update after the events: arm a hook that
    // counts the clock reads made under the writers' lock.
    let reads = std::sync::Arc::new(AtomicUsize::new(0));
    let child = std::sync::Arc::new(Mutex::new(None::<Timekeeper<Sim>>));
    let nested = std::sync::Arc::new(Mutex::new(Vec::<u64>::new()));
    let before_update = reader.precise;
    {
        let tkp = &tk as *const Timekeeper<Sim> as usize;
        let (reads, child, nested) = (reads.clone(), child.clone(), nested.clone());
        let first_over = AtomicBool::new(false);
        *tk.clocks.2.lock().unwrap() = Some(std::boxed::Box::new(move || {
            // SAFETY: `tk` outlives the hook, which is removed before the
            // end of this function, where `tk` is dropped.
            let tk = unsafe { &*(tkp as *const Timekeeper<Sim>) };
            // Only the first update's reads: once a clock read outside the
            // lock follows them, that update is over.
            if !tk.lock.is_held_here() {
                if reads.load(Ordering::Relaxed) > 0 {
                    first_over.store(true, Ordering::Relaxed);
                }
                return;
            }
            if first_over.load(Ordering::Relaxed) {
                return;
            }
            let k = reads.fetch_add(1, Ordering::Relaxed);
            match interrupt {
                Interrupt::Signal(at) if at == k => {
                    let mut got = nested.lock().unwrap();
                    got.push(tk.read_nanos(false));
                    got.push(tk.read_nanos(true));
                    let _ = tk.read_boot_nanos();
                    let _ = tk.unix_nanos();
                }
                Interrupt::Fork(at) if at == k => {
                    *child.lock().unwrap() = Some(fork_copy(tk));
                }
                _ => {}
            }
        }));
    }
    if upkeep && woken {
        // The kernel wakes the upkeep's clock-was-set timerfd at a resume
        // and at a step of the system clock.
        turn(&tk, &mut upkeep_next, true);
    }
    // The first reading after: at most one period and its grace ahead of
    // where CLOCK_MONOTONIC puts the timeline.
    let (p1, _, _) = reader.read(&tk);
    let (mono1, _, _) = truth(&tk);
    let kept = p0.wrapping_add(mono1 - mono0);
    assert!(
        p1 <= kept + b.stand_still_max,
        "{label}: {} ns ahead of CLOCK_MONOTONIC right after",
        p1 - kept
    );
    // Follow, until the first update after the events has come and gone
    // (a sparse reader may take several readings to get there) and
    // `follow` has passed.
    let follow_from = tk.clocks.w().tau;
    let mut checked = 0;
    let mut reference = None;
    let mut asked = false;
    loop {
        let tau = tk.clocks.w().tau;
        if tau >= follow_from + b.follow && tk.state.sequence() != seq0 {
            break;
        }
        tk.clocks.w().tau += every;
        // Without the upkeep, the kernel's verdict is read by clock_info()
        // (readers read it only where a reading showed cause): a program
        // asks it a second after the events.
        if !upkeep && !asked && tau >= follow_from + ASK_AFTER_NS {
            asked = true;
            let _ = tk.info();
        }
        later.retain(|(after, event)| {
            let due = tau >= follow_from + after;
            if due {
                apply(&tk, event);
            }
            !due
        });
        if upkeep {
            turn(&tk, &mut upkeep_next, false);
        }
        let (p, boot, wall) = reader.read(&tk);
        let (mono, boot_truth, real) = truth(&tk);
        if mono - mono_after >= b.in_step_after && tau >= follow_from + b.in_step_after {
            let moved = p.wrapping_sub(p0);
            assert!(
                moved.abs_diff(mono - mono0) <= offset,
                "{label}: the precise readings moved {moved} ns, CLOCK_MONOTONIC {}",
                mono - mono0
            );
            let boot_moved = boot.wrapping_sub(b0);
            assert!(
                boot_moved.abs_diff(boot_truth - boot0) <= offset,
                "{label}: the boot readings moved {boot_moved} ns, CLOCK_BOOTTIME {}",
                boot_truth - boot0
            );
            let (pr, br, mr, btr) = *reference.get_or_insert((p, boot, mono, boot_truth));
            assert!(
                p.wrapping_sub(pr).abs_diff(mono - mr) <= b.interval,
                "{label}: an interval of {} ns of CLOCK_MONOTONIC measured {} ns",
                mono - mr,
                p.wrapping_sub(pr)
            );
            assert!(
                boot.wrapping_sub(br).abs_diff(boot_truth - btr) <= b.interval,
                "{label}: an interval of {} ns of CLOCK_BOOTTIME measured {} ns",
                boot_truth - btr,
                boot.wrapping_sub(br)
            );
            assert!(
                wall.abs_diff(real) <= b.wall,
                "{label}: the wall tier is {} ns off CLOCK_REALTIME",
                wall as i128 - real as i128
            );
            checked += 1;
        }
    }
    assert!(checked > 0, "{label}: nothing checked in step");
    *tk.clocks.2.lock().unwrap() = None;
    // What the introspection says.
    let info = tk.info();
    let source = match expect["source"].as_str() {
        Some("counter") => Source::Counter,
        Some("os") => Source::Os,
        other => std::panic!("{label}: source {other:?}"),
    };
    assert_eq!(info.source, source, "{label}: {info}");
    match expect.get("fallback").and_then(Value::as_str) {
        None => assert_eq!(info.fallback, None, "{label}"),
        Some("kernel_clocksource") => assert!(
            matches!(info.fallback, Some(Fallback::KernelClocksource(_))),
            "{label}: {info}"
        ),
        Some("clocksource_unknown") => assert_eq!(
            info.fallback,
            Some(Fallback::ClocksourceUnknown),
            "{label}: {info}"
        ),
        Some(other) => std::panic!("{label}: fallback {other}"),
    }
    if let Some(want) = expect.get("verdict_unavailable").and_then(Value::as_bool) {
        assert_eq!(
            info.verdict_unavailable.is_some(),
            want,
            "{label}: the verdict's failure reported: {info}"
        );
    }
    let jumped = info.counter_jumps > rebases0;
    match &expect["counter_jump"] {
        Value::Bool(want) => assert_eq!(jumped, *want, "{label}: counter jump reported: {info}"),
        Value::String(maybe) if maybe == "maybe" => {}
        other => std::panic!("{label}: counter_jump {other}"),
    }
    if jumped && info.source == Source::Counter {
        assert!(info.last_counter_jump.is_some(), "{label}");
        assert!(info.to_string().contains("re-based"), "{label}: {info}");
    }
    // A signal handler's readings: never below what the thread read before,
    // never above what it reads after.
    for v in nested.lock().unwrap().iter() {
        assert!(
            *v + slack >= before_update,
            "{label}: the handler read {v} < {before_update}"
        );
        assert!(
            *v <= reader.precise,
            "{label}: the handler read {v} > {} later",
            reader.precise
        );
    }
    // A forked child goes on from the copy: never below what the parent
    // read before the fork, in step with CLOCK_MONOTONIC in time.
    if let Some(child) = child.lock().unwrap().take() {
        let mut reader = Reader {
            precise: before_update,
            boot: 0,
            slack,
            label: std::format!("{label}, the child"),
        };
        reader.boot = child.read_boot_nanos();
        let from = child.clocks.w().tau;
        let mut last = (0, 0);
        while child.clocks.w().tau < from + b.follow {
            child.clocks.w().tau += every;
            let (p, _, _) = reader.read(&child);
            last = (p, truth(&child).0);
        }
        assert!(
            last.0.wrapping_sub(p0).abs_diff(last.1 - mono0) <= offset,
            "{label}, the child: the precise readings moved {} ns, CLOCK_MONOTONIC {}",
            last.0.wrapping_sub(p0),
            last.1 - mono0
        );
    }
    RunResult {
        update_reads: reads.load(Ordering::Relaxed),
    }
}

/// When, after the events, a run without the upkeep asks `clock_info()`.
const ASK_AFTER_NS: u64 = 1_000_000_000;

/// Whether this target follows a kernel verdict the simulated machine can
/// change (the demotion scenarios need it).
const FOLLOWS_KERNEL: bool = cfg!(all(
    target_arch = "x86_64",
    any(target_os = "linux", target_os = "android")
));

#[test]
fn every_scenario_keeps_every_invariant() {
    let spec = spec();
    assert_eq!(
        num(&spec["counter_hz"]),
        FREQ,
        "the simulated counter's rate"
    );
    let b = Bounds {
        settle: num(&spec["settle_ns"]),
        follow: num(&spec["follow_ns"]),
        stand_still_max: num(&spec["stand_still_max_ns"]),
        in_step_after: num(&spec["in_step_after_ns"]),
        offset: num(&spec["offset_ns"]),
        interval: num(&spec["interval_ns"]),
        wall: num(&spec["wall_ns"]),
    };
    // The bound on standing still is one update period and its grace.
    assert_eq!(b.stand_still_max, MAX_PERIOD_NS + MAX_GRACE_NS);
    let cadences = [
        num(&spec["read_every_ns"]),
        num(&spec["sparse_read_every_ns"]),
    ];
    let scenarios = spec["scenarios"].as_array().expect("scenarios");
    assert!(scenarios.len() >= 15, "the fault model lost scenarios");
    let mut runs = 0;
    for (index, sc) in scenarios.iter().enumerate() {
        let demotes = sc["events"]
            .as_array()
            .unwrap()
            .iter()
            .chain(
                sc.get("from_start")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten(),
            )
            .any(|e| e.get("clocksource").is_some() || e.get("clocksource_error").is_some());
        if demotes && !FOLLOWS_KERNEL {
            continue;
        }
        for upkeep in [false, true] {
            for every in cadences {
                let plain = run_one(&b, sc, upkeep, every, Interrupt::None);
                runs += 1;
                // A signal and a fork at every clock read of the first update
                // after the events (with frequent readers: sparse ones make
                // the same update).
                // Under an emulator (tens of times slower), every fourth
                // read, a different fourth for each scenario: the sweep's
                // logic is the target's own code, not its arithmetic.
                if every == cadences[0] {
                    let stride = if crate::emulated() { 4 } else { 1 };
                    for k in (index % stride..plain.update_reads).step_by(stride) {
                        run_one(&b, sc, upkeep, every, Interrupt::Signal(k));
                        run_one(&b, sc, upkeep, every, Interrupt::Fork(k));
                        runs += 2;
                    }
                }
            }
        }
    }
    assert!(runs > 100, "only {runs} runs");
}
