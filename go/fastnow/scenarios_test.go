package fastnow

// The fault model (spec/vectors/scenarios.json, which the Rust crate's tests
// run too): every event a clock lives through, on the simulated machine,
// against every reader of the timekeeper (bare and ordered precise readings,
// boot readings, the wall tier), without and with the upkeep, with frequent
// and with sparse readers. The invariants are the file's; a failure names
// the scenario, the run and what broke.
//
// The Rust crate also runs each scenario with a signal handler's reading
// and with a fork at every clock read of the first update after the events.
// Go code never runs in a signal handler or a forked child
// (spec/SEMANTICS.md, "Processes, signals, threads"): those variants are
// the Rust crate's only.

import (
	"encoding/json"
	"fmt"
	"math/bits"
	"os"
	"strconv"
	"strings"
	"testing"
)

// scenarioFile is spec/vectors/scenarios.json. Integers are decimal strings;
// counter_jump is true, false or "maybe".
type scenarioFile struct {
	CounterHz         string `json:"counter_hz"`
	ReadEveryNs       string `json:"read_every_ns"`
	SparseReadEveryNs string `json:"sparse_read_every_ns"`
	SettleNs          string `json:"settle_ns"`
	FollowNs          string `json:"follow_ns"`
	StandStillMaxNs   string `json:"stand_still_max_ns"`
	InStepAfterNs     string `json:"in_step_after_ns"`
	OffsetNs          string `json:"offset_ns"`
	IntervalNs        string `json:"interval_ns"`
	WallNs            string `json:"wall_ns"`
	Scenarios         []faultScenario
}

type faultScenario struct {
	Name      string              `json:"name"`
	FromStart []map[string]string `json:"from_start"`
	Settled   string              `json:"settled"`
	Events    []map[string]string `json:"events"`
	Expect    struct {
		OffsetNs           *string         `json:"offset_ns"`
		StepBackNs         *string         `json:"step_back_ns"`
		Source             string          `json:"source"`
		Fallback           *string         `json:"fallback"`
		CounterJump        json.RawMessage `json:"counter_jump"`
		VerdictUnavailable *bool           `json:"verdict_unavailable"`
	} `json:"expect"`
}

// faultBounds are the file's bounds, in nanoseconds.
type faultBounds struct {
	settle, follow, standStillMax, inStepAfter, offset, interval, wall uint64
}

func decimal(t *testing.T, what, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("%s: %q is not a decimal u64", what, s)
	}
	return v
}

func signedDecimal(t *testing.T, what, s string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%s: %q is not a decimal i64", what, s)
	}
	return v
}

// faultReader is one run's readings so far, and the checks made as they
// come.
type faultReader struct {
	t             *testing.T
	sk            *simKeeper
	precise, boot uint64 // the largest readings so far
	slack         uint64 // how far a reading may step back (the scenario's step_back_ns)
	label         string
}

// read takes every reading the timekeeper offers: bare, ordered, boot and
// wall; it returns the ordered, boot and wall ones.
func (r *faultReader) read() (ordered, boot, wall uint64) {
	r.t.Helper()
	bare := r.sk.read(false)
	ordered = r.sk.read(true)
	boot = r.sk.readBoot()
	wall = r.sk.unixNano()
	for _, c := range []struct {
		what string
		v    uint64
	}{{"a bare reading", bare}, {"an ordered reading", ordered}} {
		if c.v+r.slack < r.precise {
			r.t.Fatalf("%s: %s stepped back %d ns", r.label, c.what, r.precise-c.v)
		}
	}
	if boot+r.slack < r.boot {
		r.t.Fatalf("%s: a boot reading stepped back %d ns", r.label, r.boot-boot)
	}
	r.precise = max(r.precise, ordered, bare)
	r.boot = max(r.boot, boot)
	return ordered, boot, wall
}

// truth is the simulated machine's clocks now: CLOCK_MONOTONIC,
// CLOCK_BOOTTIME, CLOCK_REALTIME.
func (sk *simKeeper) truth() (mono, boot, real uint64) {
	sk.sim.with(func(w *world) { mono, boot, real = w.monoAt(w.tau), w.bootAt(w.tau), w.realAt(w.tau) })
	return mono, boot, real
}

// applyEvent applies one event of the file to the simulated machine; it
// reports whether the kernel would wake a clock-was-set timerfd (a resume,
// a step of the system clock).
func applyEvent(t *testing.T, sk *simKeeper, ev map[string]string) (woken bool) {
	t.Helper()
	switch {
	case ev["suspend_ns"] != "":
		c := suspendCounter{}
		switch ev["counter"] {
		case "stopped":
			c.kind = counterStopped
		case "counting":
			c.kind = counterCounting
		case "reset":
			c = suspendCounter{kind: counterReset, resetTo: decimal(t, "reset_to", ev["reset_to"])}
		default:
			t.Fatalf("suspend: counter %q", ev["counter"])
		}
		ns := decimal(t, "suspend_ns", ev["suspend_ns"])
		sk.sim.with(func(w *world) { w.suspendWith(ns, c) })
		return true
	case ev["pause_ns"] != "":
		sk.sim.advance(decimal(t, "pause_ns", ev["pause_ns"]))
	case ev["counter_jump_ns"] != "":
		ns := signedDecimal(t, "counter_jump_ns", ev["counter_jump_ns"])
		abs := uint64(ns)
		if ns < 0 {
			abs = uint64(-ns)
		}
		hi, lo := bits.Mul64(abs, simFreq)
		q, _ := bits.Div64(hi, lo, sec)
		ticks := int64(q)
		if ns < 0 {
			ticks = -ticks
		}
		sk.sim.with(func(w *world) { w.jumpCounter(ticks) })
	case ev["counter_rate_ppb"] != "":
		ppb := signedDecimal(t, "counter_rate_ppb", ev["counter_rate_ppb"])
		sk.sim.with(func(w *world) { w.setCounterRate(ppb) })
	case ev["realtime_step_ns"] != "":
		step := signedDecimal(t, "realtime_step_ns", ev["realtime_step_ns"])
		sk.sim.with(func(w *world) { w.realMinusMono += step })
		return true
	case ev["mono_rate_ppb"] != "":
		ppb := signedDecimal(t, "mono_rate_ppb", ev["mono_rate_ppb"])
		sk.sim.with(func(w *world) { w.setRate(ppb) })
	case ev["clocksource"] != "":
		name := ev["clocksource"]
		sk.sim.with(func(w *world) { w.verdict = verdict{kind: verdictNamed, name: name} })
	case ev["clocksource_error"] != "":
		errno, ok := errnoNames[ev["clocksource_error"]]
		if !ok {
			t.Fatalf("errno %s: add it to errnoNames", ev["clocksource_error"])
		}
		sk.sim.with(func(w *world) { w.verdict = clocksourceFailure(errno) })
	default:
		t.Fatalf("unknown event %v", ev)
	}
	return false
}

// runFaultScenario is one run of one scenario; it fails the test, naming the
// scenario and the run, where an invariant breaks.
func runFaultScenario(t *testing.T, b *faultBounds, sc *faultScenario, upkeep bool, every uint64) {
	label := fmt.Sprintf("%s (upkeep %v, every %d ns)", sc.Name, upkeep, every)
	slack, offset := uint64(0), b.offset
	if s := sc.Expect.StepBackNs; s != nil {
		slack = decimal(t, label+": step_back_ns", *s)
	}
	if s := sc.Expect.OffsetNs; s != nil {
		offset = decimal(t, label+": offset_ns", *s)
	}
	sk := newSimKeeper(t, 0)
	sk.setUpkeep(upkeep)
	for _, ev := range sc.FromStart {
		applyEvent(t, sk, ev)
	}
	reader := &faultReader{t: t, label: label, sk: sk}
	var upkeepNext uint64
	turn := func(woken bool) {
		now := sk.sim.mono()
		if woken || now >= upkeepNext {
			upkeepNext = min(sk.upkeepTurn(woken), now+1_000_000)
		}
	}
	// Settle.
	for start := sk.sim.tau(); sk.sim.tau() < start+b.settle; {
		sk.sim.advance(every)
		if upkeep {
			turn(false)
		}
		reader.read()
	}
	settled := modeCounter
	switch sc.Settled {
	case "", "counter":
	case "os":
		settled = modeOS
	default:
		t.Fatalf("%s: settled %q", label, sc.Settled)
	}
	if sk.state.Load().mode != settled {
		t.Fatalf("%s: not settled on the %s", label, sc.Settled)
	}
	// Just before the events.
	p0, b0, _ := reader.read()
	mono0, boot0, _ := sk.truth()
	sk.mu.Lock()
	rebases0 := sk.k.rebases
	sk.mu.Unlock()
	s0 := sk.state.Load()
	woken := false
	type laterEvent struct {
		after uint64
		ev    map[string]string
	}
	var later []laterEvent
	for _, ev := range sc.Events {
		if after, ok := ev["after_ns"]; ok {
			rest := make(map[string]string, len(ev)-1)
			for k, v := range ev {
				if k != "after_ns" {
					rest[k] = v
				}
			}
			later = append(later, laterEvent{decimal(t, label+": after_ns", after), rest})
			continue
		}
		woken = applyEvent(t, sk, ev) || woken
	}
	reader.slack = slack
	monoAfter, _, _ := sk.truth()
	if upkeep && woken {
		// The kernel wakes the upkeep's clock-was-set timerfd at a resume
		// and at a step of the system clock.
		turn(true)
	}
	// The first reading after: at most one period and its grace ahead of
	// where CLOCK_MONOTONIC puts the timeline.
	p1, _, _ := reader.read()
	mono1, _, _ := sk.truth()
	if kept := p0 + (mono1 - mono0); p1 > kept+b.standStillMax {
		t.Fatalf("%s: %d ns ahead of CLOCK_MONOTONIC right after", label, p1-kept)
	}
	// Follow, until the first update after the events has come and gone (a
	// sparse reader may take several readings to get there) and follow_ns
	// has passed.
	followFrom := sk.sim.tau()
	checked := 0
	asked := false
	var ref struct {
		set                bool
		p, boot, mono, btr uint64
	}
	for {
		tau := sk.sim.tau()
		if tau >= followFrom+b.follow && sk.state.Load() != s0 {
			break
		}
		sk.sim.advance(every)
		// Without the upkeep, the kernel's verdict is read by Source
		// (readers read it only where a reading showed cause): a program
		// asks it a second after the events.
		if !upkeep && !asked && tau >= followFrom+askAfterNs {
			asked = true
			_ = sk.info()
		}
		for i := 0; i < len(later); {
			if tau >= followFrom+later[i].after {
				applyEvent(t, sk, later[i].ev)
				later = append(later[:i], later[i+1:]...)
				continue
			}
			i++
		}
		if upkeep {
			turn(false)
		}
		p, boot, wall := reader.read()
		mono, bootTruth, real := sk.truth()
		if mono-monoAfter < b.inStepAfter || tau < followFrom+b.inStepAfter {
			continue
		}
		if moved := p - p0; absDiff(moved, mono-mono0) > offset {
			t.Fatalf("%s: the precise readings moved %d ns, CLOCK_MONOTONIC %d", label, moved, mono-mono0)
		}
		if moved := boot - b0; absDiff(moved, bootTruth-boot0) > offset {
			t.Fatalf("%s: the boot readings moved %d ns, CLOCK_BOOTTIME %d", label, moved, bootTruth-boot0)
		}
		if !ref.set {
			ref.set, ref.p, ref.boot, ref.mono, ref.btr = true, p, boot, mono, bootTruth
		}
		if d := absDiff(p-ref.p, mono-ref.mono); d > b.interval {
			t.Fatalf("%s: an interval of %d ns of CLOCK_MONOTONIC measured %d ns", label, mono-ref.mono, p-ref.p)
		}
		if d := absDiff(boot-ref.boot, bootTruth-ref.btr); d > b.interval {
			t.Fatalf("%s: an interval of %d ns of CLOCK_BOOTTIME measured %d ns", label, bootTruth-ref.btr, boot-ref.boot)
		}
		if d := absDiff(wall, real); d > b.wall {
			t.Fatalf("%s: the wall tier is %d ns off CLOCK_REALTIME", label, int64(wall-real))
		}
		checked++
	}
	if checked == 0 {
		t.Fatalf("%s: nothing checked in step", label)
	}
	// What the introspection says.
	info := sk.info()
	switch want := sc.Expect.Source; {
	case want == "counter" && info.Source != SourceCounter, want == "os" && info.Source != SourceOS:
		t.Fatalf("%s: source %s, want %s: %v", label, info.Source, want, info)
	case want != "counter" && want != "os":
		t.Fatalf("%s: source %q", label, want)
	}
	switch fb := sc.Expect.Fallback; {
	case fb == nil:
		if info.Fallback != FallbackNone {
			t.Fatalf("%s: fallback %v: %v", label, info.Fallback, info)
		}
	case *fb == "kernel_clocksource":
		if info.Fallback != FallbackKernelClocksource {
			t.Fatalf("%s: fallback %v, want the kernel's clocksource: %v", label, info.Fallback, info)
		}
	case *fb == "clocksource_unknown":
		if info.Fallback != FallbackClocksourceUnknown {
			t.Fatalf("%s: fallback %v, want the clocksource unknown: %v", label, info.Fallback, info)
		}
	default:
		t.Fatalf("%s: fallback %q", label, *fb)
	}
	if want := sc.Expect.VerdictUnavailable; want != nil && (info.ClocksourceErr != nil) != *want {
		t.Fatalf("%s: the verdict's failure reported %v, want %v: %v", label, info.ClocksourceErr != nil, *want, info)
	}
	jumped := info.CounterJumps > rebases0
	switch cj := strings.TrimSpace(string(sc.Expect.CounterJump)); cj {
	case "true", "false":
		if want := cj == "true"; jumped != want {
			t.Fatalf("%s: counter jump reported %v, want %v: %v", label, jumped, want, info)
		}
	case `"maybe"`:
	default:
		t.Fatalf("%s: counter_jump %s", label, cj)
	}
	if jumped && info.Source == SourceCounter {
		if info.LastCounterJump.At.IsZero() {
			t.Fatalf("%s: no last counter jump: %+v", label, info)
		}
		if !strings.Contains(info.String(), "re-based") {
			t.Fatalf("%s: the text does not say it re-based: %v", label, info)
		}
	}
}

// askAfterNs is when, after the events, a run without the upkeep asks
// Source.
const askAfterNs = 1_000_000_000

// Every scenario of the fault model keeps every invariant of the file,
// without and with the upkeep, with frequent and with sparse readers.
// (Before re-basing, a suspend the counter counted moved the precise
// readings by the whole time asleep, a reset sent them back by the
// counter's value, and a jump back stepped them back.)
func TestEveryScenarioKeepsEveryInvariant(t *testing.T) {
	raw, err := os.ReadFile("../../spec/vectors/scenarios.json")
	if err != nil {
		t.Fatal(err)
	}
	var file scenarioFile
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	if hz := decimal(t, "counter_hz", file.CounterHz); hz != simFreq {
		t.Fatalf("the simulated counter runs at %d Hz, the file says %d", uint64(simFreq), hz)
	}
	b := faultBounds{
		settle:        decimal(t, "settle_ns", file.SettleNs),
		follow:        decimal(t, "follow_ns", file.FollowNs),
		standStillMax: decimal(t, "stand_still_max_ns", file.StandStillMaxNs),
		inStepAfter:   decimal(t, "in_step_after_ns", file.InStepAfterNs),
		offset:        decimal(t, "offset_ns", file.OffsetNs),
		interval:      decimal(t, "interval_ns", file.IntervalNs),
		wall:          decimal(t, "wall_ns", file.WallNs),
	}
	// The bound on standing still is one update period and its grace.
	if b.standStillMax != maxPeriodNs+maxGraceNs {
		t.Fatalf("stand_still_max_ns %d, not one period and its grace", b.standStillMax)
	}
	cadences := []uint64{decimal(t, "read_every_ns", file.ReadEveryNs), decimal(t, "sparse_read_every_ns", file.SparseReadEveryNs)}
	if len(file.Scenarios) < 15 {
		t.Fatalf("the fault model lost scenarios: %d", len(file.Scenarios))
	}
	// The demotion scenarios need a kernel verdict the simulated machine can
	// change: the simulated machine's detection follows one on every target
	// (its kernel names the counter "tsc").
	sk := newSimKeeper(t, 0)
	sk.published()
	followsKernel := sk.k.decision.followsKernel()
	runs := 0
	for i := range file.Scenarios {
		sc := &file.Scenarios[i]
		demotes := false
		for _, ev := range append(sc.Events[:len(sc.Events):len(sc.Events)], sc.FromStart...) {
			demotes = demotes || ev["clocksource"] != "" || ev["clocksource_error"] != ""
		}
		if demotes && !followsKernel {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			for _, upkeep := range []bool{false, true} {
				for _, every := range cadences {
					runFaultScenario(t, &b, sc, upkeep, every)
					runs++
				}
			}
		})
	}
	if runs < 4*15 {
		t.Fatalf("only %d runs", runs)
	}
}
