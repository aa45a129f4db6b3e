//! The hybrid logical clock against the shared vectors (which the Go module
//! reads too), against the paper's rules in a model of drifting nodes that
//! exchange messages, and across real threads.

use super::*;
use proptest::prelude::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::string::ToString;
use std::vec::Vec;
use std::{format, vec};

fn vectors() -> Value {
    let path = format!("{}/spec/vectors/hlc.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).expect("valid JSON")
}

fn num(v: &Value) -> u64 {
    v.as_str()
        .unwrap_or_else(|| panic!("{v} is not a string"))
        .parse()
        .expect("decimal u64 string")
}

#[test]
fn layout_is_the_vectors() {
    let v = vectors();
    let layout = &v["layout"];
    assert_eq!(
        layout["logical_bits"].as_u64(),
        Some(u64::from(LOGICAL_BITS))
    );
    assert_eq!(
        layout["physical_bits"].as_u64(),
        Some(64 - u64::from(LOGICAL_BITS))
    );
    assert_eq!(
        num(&layout["last_physical_nanos"]),
        Timestamp::from_u64(u64::MAX).physical_nanos()
    );
    assert_eq!(num(&layout["end_ns"]), END_NANOS);
    assert_eq!(
        num(&layout["default_max_drift_ns"]),
        Hlc::DEFAULT_MAX_DRIFT.as_nanos() as u64
    );
}

#[test]
fn encode_vectors() {
    let v = vectors();
    let cases = v["encode"].as_array().unwrap();
    assert!(cases.len() >= 10);
    for c in cases {
        let logical = u16::try_from(c["logical"].as_u64().unwrap()).unwrap();
        let t = Timestamp::new(num(&c["physical_nanos_in"]), logical);
        assert_eq!(t.to_u64(), num(&c["word"]), "{c}");
        assert_eq!(t.physical_nanos(), num(&c["physical_nanos"]), "{c}");
        assert_eq!(t.logical(), logical);
        assert_eq!(t.to_string(), c["text"].as_str().unwrap());
        assert_eq!(t.to_string().parse(), Ok(t));
    }
}

#[test]
fn parse_vectors() {
    let v = vectors();
    let (mut ok, mut refused) = (0, 0);
    for c in v["parse"].as_array().unwrap() {
        let text = c["text"].as_str().unwrap();
        let got = text.parse::<Timestamp>();
        match &c["word"] {
            Value::Null => {
                assert!(got.is_err(), "{text:?} read as {got:?}");
                refused += 1;
            }
            w => {
                assert_eq!(got, Ok(Timestamp::from_u64(num(w))), "{text:?}");
                ok += 1;
            }
        }
    }
    assert!(
        ok >= 10 && refused >= 15,
        "{ok} accepted, {refused} refused"
    );
}

/// The send/receive sequences, each node a new clock driven with the
/// given wall readings.
#[test]
fn sequence_vectors() {
    let v = vectors();
    let sequences = v["sequences"].as_array().unwrap();
    assert!(sequences.len() >= 12);
    for s in sequences {
        let name = s["name"].as_str().unwrap();
        let drift = Duration::from_nanos(num(&s["max_drift_ns"]));
        let mut nodes: BTreeMap<&str, Hlc> = BTreeMap::new();
        for (i, step) in s["steps"].as_array().unwrap().iter().enumerate() {
            let hlc = nodes
                .entry(step["node"].as_str().unwrap())
                .or_insert_with(|| Hlc::new().with_max_drift(drift));
            let wall = num(&step["wall_ns"]);
            let got = match step["op"].as_str().unwrap() {
                "now" => {
                    let repeat = step["repeat"].as_u64().unwrap_or(1);
                    let mut t = hlc.now_at(wall);
                    for _ in 1..repeat {
                        t = hlc.now_at(wall);
                    }
                    Ok(t)
                }
                "update" => hlc.update_at(Timestamp::from_u64(num(&step["remote"])), wall),
                op => panic!("unknown op {op}"),
            };
            match (&step["want"], got) {
                (Value::Null, Err(e)) => assert_eq!(
                    e.ahead_by().as_nanos() as u64,
                    num(&step["refused_ahead_by_ns"]),
                    "{name}, step {i}"
                ),
                (want, Ok(t)) if !want.is_null() => {
                    assert_eq!(t.to_u64(), num(want), "{name}, step {i}: {t}");
                    assert_eq!(t.to_string(), step["want_text"].as_str().unwrap());
                }
                (_, got) => panic!("{name}, step {i}: got {got:?}, want {step}"),
            }
        }
    }
}

/// The paper's clock (Kulkarni et al. 2014, Figure 5) on separate
/// physical and counter parts, the counter unbounded: what the packed
/// word must equal while no counter fills.
#[derive(Clone, Copy, Default, Debug, PartialEq)]
struct Paper {
    l: u64,
    c: u64,
}

impl Paper {
    fn now(&mut self, pt: u64) {
        let old = self.l;
        self.l = old.max(pt);
        self.c = if self.l == old { self.c + 1 } else { 0 };
    }

    fn receive(&mut self, m: Paper, pt: u64) {
        let old = self.l;
        self.l = old.max(m.l).max(pt);
        self.c = if self.l == old && self.l == m.l {
            self.c.max(m.c) + 1
        } else if self.l == old {
            self.c + 1
        } else if self.l == m.l {
            m.c + 1
        } else {
            0
        };
    }

    fn word(self) -> u64 {
        assert!(self.c <= 0xffff, "the model's counter filled: {self:?}");
        (self.l << LOGICAL_BITS) | self.c
    }
}

/// One simulated machine: its wall clock is true time plus an offset plus
/// a rate error, and steps when the test says so.
struct Node {
    hlc: Hlc,
    paper: Paper,
    offset_ns: i64,
    ppm: i64,
    vc: Vec<u32>,
    last: Option<Timestamp>,
    max_wall: u64,
}

const TAU0: u64 = 1_700_000_000_000_000_000;

impl Node {
    fn wall(&self, tau: u64) -> u64 {
        let since = (tau - TAU0) as i64;
        (tau as i64 + self.offset_ns + since * self.ppm / 1_000_000) as u64
    }
}

/// A stamped event, for the checks across events.
struct Event {
    node: usize,
    stamp: Timestamp,
    vc: Vec<u32>,
}

/// `f` happened before `e` (vector clocks), `f` not `e`.
fn happened_before(f: &Event, e: &Event) -> bool {
    f.vc.iter().zip(&e.vc).all(|(a, b)| a <= b) && f.vc != e.vc
}

#[derive(Clone, Debug)]
enum Op {
    Local,
    Send,
    /// Receives the message in flight at this index (modulo their number).
    Receive(usize),
    /// Steps the node's wall clock back by this many nanoseconds.
    StepBack(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => Just(Op::Local),
        3 => Just(Op::Send),
        4 => any::<usize>().prop_map(Op::Receive),
        1 => (1u64..3_000_000).prop_map(Op::StepBack),
    ]
}

/// Drift bound of the model: the honest nodes' clocks are within 2 ms of
/// true time; one rogue node (when there is one) is 1 s ahead.
const MAX_DRIFT_NS: u64 = 10_000_000;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::proptest_cases(400)))]

    /// Random interleavings of local, send and receive events across nodes
    /// whose clocks drift, step back, and (one of them) run far ahead. Every
    /// stamp is the paper's (l, c); the stamps respect causality (an event
    /// that happened before another has the smaller stamp, receipts above
    /// their sends); each node's stamps strictly increase; a stamp's
    /// physical part is some node's wall reading, at least its own
    /// node's current one and at most the maximum drift past the largest
    /// its node read; a receipt is refused exactly when the message is
    /// more than the maximum drift ahead, and leaves the clock unchanged;
    /// the counter is at most the number of events before it with the same
    /// physical part (the paper's bound on the counter).
    #[test]
    fn follows_the_papers_rules(
        offsets in proptest::collection::vec(-2_000_000i64..2_000_000, 2..5),
        ppms in proptest::collection::vec(-200i64..200, 4),
        rogue in any::<bool>(),
        steps in proptest::collection::vec((any::<usize>(), op(), 0u64..40_000), 1..250),
    ) {
        let n = offsets.len();
        let mut nodes: Vec<Node> = (0..n)
            .map(|i| Node {
                hlc: Hlc::new().with_max_drift(Duration::from_nanos(MAX_DRIFT_NS)),
                paper: Paper::default(),
                offset_ns: offsets[i] + if rogue && i == 0 { 1_000_000_000 } else { 0 },
                ppm: ppms[i],
                vc: vec![0; n],
                last: None,
                max_wall: 0,
            })
            .collect();
        let mut tau = TAU0;
        let mut in_flight: Vec<(Timestamp, Paper, Vec<u32>)> = Vec::new();
        let mut events: Vec<Event> = Vec::new();
        let mut max_wall_anywhere = 0;
        for (who, op, advance) in steps {
            tau += advance;
            let i = who % n;
            let node = &mut nodes[i];
            if let Op::StepBack(by) = op {
                node.offset_ns -= by as i64;
                continue;
            }
            let wall = node.wall(tau);
            node.max_wall = node.max_wall.max(wall);
            max_wall_anywhere = max_wall_anywhere.max(wall);
            let pt = word_of_nanos(wall) >> LOGICAL_BITS;
            let (stamp, vc) = match op {
                Op::Receive(k) if !in_flight.is_empty() => {
                    let (m, paper_m, vc_m) = in_flight.remove(k % in_flight.len());
                    let ahead = m.physical_nanos().saturating_sub(wall);
                    match node.hlc.update_at(m, wall) {
                        Err(e) => {
                            prop_assert!(ahead > MAX_DRIFT_NS, "refused {m} at {wall}: {e}");
                            prop_assert_eq!(e.ahead_by(), Duration::from_nanos(ahead));
                            continue;
                        }
                        Ok(t) => {
                            prop_assert!(ahead <= MAX_DRIFT_NS, "accepted {m} at {wall}");
                            prop_assert!(t > m, "receipt {t} not above its send {m}");
                            node.paper.receive(paper_m, pt);
                            let vc: Vec<u32> =
                                node.vc.iter().zip(&vc_m).map(|(a, b)| *a.max(b)).collect();
                            (t, vc)
                        }
                    }
                }
                _ => {
                    node.paper.now(pt);
                    (node.hlc.now_at(wall), node.vc.clone())
                }
            };
            let mut vc = vc;
            vc[i] += 1;
            node.vc = vc.clone();
            prop_assert_eq!(stamp.to_u64(), node.paper.word(), "node {} at {}", i, wall);
            if let Some(last) = node.last {
                prop_assert!(stamp > last, "node {}: {} after {}", i, stamp, last);
            }
            node.last = Some(stamp);
            // Physical time: at least this node's wall clock's unit, at
            // most the maximum drift past the largest reading it took, and
            // always a reading some node took.
            prop_assert!(stamp.to_u64() >> LOGICAL_BITS >= pt);
            prop_assert!(stamp.physical_nanos() <= node.max_wall + MAX_DRIFT_NS);
            prop_assert!(stamp.physical_nanos() <= max_wall_anywhere);
            if matches!(op, Op::Send) {
                in_flight.push((stamp, node.paper, vc.clone()));
            }
            events.push(Event { node: i, stamp, vc });
        }
        for (k, e) in events.iter().enumerate() {
            let mut same_physical_before = 0;
            for f in &events[..k] {
                if happened_before(f, e) {
                    prop_assert!(f.stamp < e.stamp, "{} (node {}) before {} (node {})",
                        f.stamp, f.node, e.stamp, e.node);
                    if f.stamp.to_u64() >> LOGICAL_BITS == e.stamp.to_u64() >> LOGICAL_BITS {
                        same_physical_before += 1;
                    }
                }
            }
            prop_assert!(u32::from(e.stamp.logical()) <= same_physical_before,
                "{}: counter above the {} events before it in its unit", e.stamp, same_physical_before);
        }
    }

    /// The conversions against exact 128-bit arithmetic, for every u64.
    #[test]
    fn conversions_are_exact(ns in any::<u64>(), physical in 0..=MAX_PHYSICAL) {
        let unit = (u128::from(ns) << 16) / 1_000_000_000;
        let want = u64::try_from(unit).unwrap_or(u64::MAX).min(MAX_PHYSICAL);
        prop_assert_eq!(word_of_nanos(ns), want << LOGICAL_BITS);
        let first = (u128::from(physical) * 1_000_000_000).div_ceil(1 << 16);
        prop_assert_eq!(u128::from(nanos_of_physical(physical)), first);
        prop_assert_eq!(word_of_nanos(nanos_of_physical(physical)), physical << LOGICAL_BITS);
        if physical > 0 {
            prop_assert_eq!(word_of_nanos(nanos_of_physical(physical) - 1), (physical - 1) << LOGICAL_BITS);
        }
    }

    /// Every stamp's text reads back as the stamp, is 36 bytes, and sorts
    /// as the stamps do.
    #[test]
    fn text_round_trips_and_sorts(a in any::<u64>(), b in any::<u64>()) {
        let (ta, tb) = (Timestamp::from_u64(a), Timestamp::from_u64(b));
        let (sa, sb) = (ta.to_string(), tb.to_string());
        prop_assert_eq!(sa.parse::<Timestamp>(), Ok(ta));
        prop_assert_eq!(sa.len(), 36);
        prop_assert_eq!(sa.cmp(&sb), a.cmp(&b));
    }

    /// Mangled texts are errors or stamps, never a panic.
    #[test]
    fn garbage_is_an_error_not_a_panic(word in any::<u64>(), at in 0usize..36, b in any::<u8>()) {
        let mut t = Timestamp::from_u64(word).to_string().into_bytes();
        t[at] = b;
        if let Ok(s) = core::str::from_utf8(&t) {
            let _ = s.parse::<Timestamp>();
            let _ = s[..at].parse::<Timestamp>();
        }
    }
}

/// The counter fills and borrows: 2^16 events in one unit take the
/// physical part one unit past the wall clock, and the next wall reading
/// past that unit starts the counter again.
#[test]
fn a_full_counter_borrows_from_the_physical_part() {
    let hlc = Hlc::new();
    let wall = TAU0 + 123_456_789;
    let first = hlc.now_at(wall);
    let mut last = first;
    for _ in 0..0xffff {
        let t = hlc.now_at(wall);
        assert!(t > last);
        last = t;
    }
    assert_eq!(last.logical(), 0xffff);
    let borrowed = hlc.now_at(wall);
    assert_eq!(borrowed.to_u64(), first.to_u64() + 0x1_0000);
    assert_eq!(borrowed.logical(), 0);
    assert!(borrowed.physical_nanos() > wall);
    let later = hlc.now_at(borrowed.physical_nanos() + 15_259);
    assert_eq!(later.logical(), 0);
}

/// A refused stamp leaves the clock as it was, and the error says by how
/// much the stamp was ahead, in its message too.
#[test]
fn a_refused_stamp_changes_nothing() {
    let hlc = Hlc::new().with_max_drift(Duration::from_millis(1));
    let wall = TAU0;
    let before = hlc.now_at(wall);
    let remote = Timestamp::new(wall + 1_500_000, 0);
    let err = hlc.update_at(remote, wall).unwrap_err();
    // The stamp holds the unit of 1.5 ms: its first nanosecond, 1.495362 ms.
    assert_eq!(err.ahead_by(), Duration::from_nanos(1_495_362));
    assert_eq!(err.max_drift(), Duration::from_millis(1));
    assert_eq!(
        err.to_string(),
        "remote HLC timestamp 2023-11-14T22:13:20.001495362Z,00000 is 1.495362ms ahead of the \
         local wall clock (2023-11-14T22:13:20.000000000Z), more than the maximum drift of 1ms: \
         refused, the clock left as it was"
    );
    assert_eq!(hlc.now_at(wall).to_u64(), before.to_u64() + 1);
    // Just at the bound: accepted.
    let at_bound = Timestamp::new(wall + 1_000_000, 0);
    let ahead = at_bound.physical_nanos() - wall;
    assert!(ahead <= 1_000_000);
    assert!(hlc
        .update_at(at_bound, at_bound.physical_nanos() - 1_000_000)
        .is_ok());
}

#[test]
fn a_static_clock_is_send_and_sync() {
    fn shared<T: Send + Sync>(_: &T) {}
    static HLC: Hlc = Hlc::new().with_max_drift(Duration::MAX);
    shared(&HLC);
    assert_eq!(HLC.max_drift(), Duration::from_nanos(u64::MAX));
    let a = HLC.now();
    assert!(HLC.now() > a);
}

const THREADS: usize = 4;
/// 10^6 stamps in all: the debug build's share (a tenth under an emulator);
/// the release harness (`fastnow-bench`) and `make figures` take 10^7 and
/// 10^8.
fn stamps_per_thread() -> usize {
    if crate::emulated() {
        25_000
    } else {
        250_000
    }
}

/// Across real threads: each thread's stamps strictly increase, and no
/// two stamps of all threads are equal.
#[test]
#[cfg_attr(target_os = "wasi", ignore = "no threads on wasip1")]
fn no_duplicate_across_threads() {
    static HLC: Hlc = Hlc::new();
    let per_thread: Vec<Vec<u64>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|_| {
                s.spawn(|| {
                    (0..stamps_per_thread())
                        .map(|_| HLC.now().to_u64())
                        .collect::<Vec<u64>>()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for stamps in &per_thread {
        assert!(stamps.windows(2).all(|w| w[0] < w[1]));
    }
    let mut all: Vec<u64> = per_thread.concat();
    all.sort_unstable();
    let total = all.len();
    all.dedup();
    assert_eq!(all.len(), total, "{} duplicate stamps", total - all.len());
}

/// Across real threads: a stamp taken after seeing another thread's
/// (Acquire of its Release) is above it.
#[test]
#[cfg_attr(target_os = "wasi", ignore = "no threads on wasip1")]
fn no_inversion_across_threads() {
    use core::sync::atomic::AtomicBool;
    static HLC: Hlc = Hlc::new();
    let seen = AtomicU64::new(HLC.now().to_u64());
    let stop = AtomicBool::new(false);
    let inversions = std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                seen.store(HLC.now().to_u64(), Ordering::Release);
            }
        });
        let mut inversions = 0;
        for _ in 0..1_000_000 {
            let other = seen.load(Ordering::Acquire);
            inversions += u32::from(HLC.now().to_u64() <= other);
        }
        stop.store(true, Ordering::Relaxed);
        inversions
    });
    assert_eq!(inversions, 0);
}
