package fastnow

// The timekeeper on a simulated machine: a counter at a fixed frequency, a
// CLOCK_MONOTONIC whose rate NTP changes (frequency corrections, tick
// slews), a CLOCK_REALTIME that can be stepped, a kernel that can demote the
// counter. The real read and update paths run against it, in random seeded
// scenarios, and every promise of the timekeeper is checked:
//
//   - consecutive counter pieces meet exactly at take-over points, prev is
//     the old line, slopes never drop below 7/8, a new piece is published
//     only once the current one has started;
//   - any conversion by any state a goroutine could hold equals the newest
//     function's, and readings never step back (across forced updates,
//     recalibrations, wall- and upkeep-driven updates, preempted samples and
//     demotion);
//   - intervals follow CLOCK_MONOTONIC's current rate, and the wall tier
//     stays within its bounds of CLOCK_REALTIME (steady state, after a rate
//     change, after a step);
//   - the counter is dropped when the kernel demotes it, without a step back.

import (
	"fmt"
	"math"
	"math/bits"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

const (
	simFreq = 2_445_405_696
	sec     = uint64(1_000_000_000)
)

// world is the simulated machine. Every clock read advances true time by
// step.
type world struct {
	tau, step       uint64
	segTau, segMono uint64
	ratePpb         int64 // CLOCK_MONOTONIC's rate against true time, in parts per billion
	realMinusMono   int64
	verdict         verdict
	publishedFreq   uint64
	hiccupEvery     uint64 // every Nth clock read takes hiccupNs longer (a preempted goroutine)
	hiccupNs        uint64
	hiccupBurst     uint64 // the next this many reads each take hiccupNs longer (preempted through a whole sample)
	reads           uint64
	suspended       uint64 // CLOCK_BOOTTIME - CLOCK_MONOTONIC: the time suspended
	bootJitter      uint64 // after each boot clock read, up to this much passes (a pair interrupted between its reads)
	// The counter: its value cSegTicks at true time cSegTau, and its rate
	// against its nominal simFreq from there, in parts per billion (a
	// migration to a host whose counter runs at another rate).
	cSegTau, cSegTicks uint64
	cRatePpb           int64
	// The first ordered counter read between two monotonic reads for more
	// than a millisecond (a sample's first bracket, the update's code cold
	// since the last one) takes orderedColdNs longer, inside the bracket.
	orderedColdNs, lastColdTau uint64
	lastReadMono               bool
}

// suspendCounter is what the counter does across a suspend.
type suspendCounter struct {
	kind    int    // counterCounting, counterStopped or counterReset
	resetTo uint64 // counterReset: the value it restarts from
}

const (
	counterCounting = iota // an invariant TSC in suspend-to-idle: it counts on
	counterStopped         // suspend-to-RAM keeping the TSC: it stops
	counterReset           // suspend-to-RAM resetting the TSC: it restarts near zero
)

func (c suspendCounter) String() string {
	switch c.kind {
	case counterCounting:
		return "counting"
	case counterStopped:
		return "stopped"
	}
	return fmt.Sprintf("reset to %d", c.resetTo)
}

func (w *world) monoAt(tau uint64) uint64 {
	d := int64(tau - w.segTau)
	return uint64(int64(w.segMono) + d + d*w.ratePpb/1_000_000_000)
}

func (w *world) ticksAt(tau uint64) uint64 {
	hi, lo := bits.Mul64(tau-w.cSegTau, simFreq)
	nominal, _ := bits.Div64(hi, lo, sec)
	return w.cSegTicks + nominal + uint64(ppbOf(nominal, w.cRatePpb))
}

// ppbOf is n × ppb / 10^9, rounded toward zero, for any n and |ppb| < 10^9.
func ppbOf(n uint64, ppb int64) int64 {
	abs := uint64(ppb)
	if ppb < 0 {
		abs = uint64(-ppb)
	}
	hi, lo := bits.Mul64(n, abs)
	q, _ := bits.Div64(hi, lo, sec)
	if ppb < 0 {
		return -int64(q)
	}
	return int64(q)
}

// counterSegment starts a new segment of the counter at the current true
// time.
func (w *world) counterSegment() {
	w.cSegTicks, w.cSegTau = w.ticksAt(w.tau), w.tau
}

// jumpCounter makes the counter jump by ticks (negative: back, never below
// 0), as when a virtual machine moves to a host with another counter
// offset.
func (w *world) jumpCounter(ticks int64) {
	w.counterSegment()
	if ticks < 0 && uint64(-ticks) > w.cSegTicks {
		w.cSegTicks = 0
	} else {
		w.cSegTicks += uint64(ticks)
	}
}

// setCounterRate sets the counter's rate, ppb against its nominal one.
func (w *world) setCounterRate(ppb int64) {
	w.counterSegment()
	w.cRatePpb = ppb
}

func (w *world) realAt(tau uint64) uint64 { return clampUnix(int64(w.monoAt(tau)), w.realMinusMono) }

func (w *world) tick() uint64 {
	w.reads++
	w.lastReadMono = false
	w.tau += w.step
	if w.hiccupEvery != 0 && w.reads%w.hiccupEvery == 0 {
		w.tau += w.hiccupNs
	}
	if w.hiccupBurst > 0 {
		w.hiccupBurst--
		w.tau += w.hiccupNs
	}
	return w.tau
}

// suspendWith is a suspend of ns true nanoseconds: CLOCK_BOOTTIME and
// CLOCK_REALTIME move on, CLOCK_MONOTONIC does not; the counter keeps
// counting (an invariant TSC in suspend-to-idle), stops, or restarts at a
// small value (a TSC reset by suspend-to-RAM).
func (w *world) suspendWith(ns uint64, c suspendCounter) {
	mono, ticks := w.monoAt(w.tau), w.ticksAt(w.tau)
	w.tau += ns
	w.segMono, w.segTau = mono, w.tau
	w.suspended += ns
	w.realMinusMono += int64(ns)
	switch c.kind {
	case counterStopped:
		w.cSegTicks, w.cSegTau = ticks, w.tau
	case counterReset:
		w.cSegTicks, w.cSegTau = c.resetTo, w.tau
	}
}

// suspend is suspendWith with the counter counting on, or stopped.
func (w *world) suspend(ns uint64, counting bool) {
	c := suspendCounter{kind: counterStopped}
	if counting {
		c.kind = counterCounting
	}
	w.suspendWith(ns, c)
}

func (w *world) bootAt(tau uint64) uint64 { return w.monoAt(tau) + w.suspended }

func (w *world) setRate(ppb int64) {
	w.segMono = w.monoAt(w.tau)
	w.segTau = w.tau
	w.ratePpb = ppb
}

type sim struct {
	mu sync.Mutex
	w  world
	// gate, when set, parks the goroutine that reads the real clock next
	// (one preempted there): it closes parked, then waits for resume.
	gate *gate
}

type gate struct{ parked, resume chan struct{} }

func newSim(publishedFreq uint64) *sim {
	return &sim{w: world{
		tau:           5 * sec,
		step:          11,
		segMono:       3 * sec,
		realMinusMono: 1_700_000_000 * int64(sec),
		verdict:       verdict{kind: verdictNamed, name: "tsc"},
		publishedFreq: publishedFreq,
		cSegTicks:     1_000_000_000_000,
	}}
}

// with runs f on the world, locked.
func (s *sim) with(f func(w *world)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.w)
}

func (s *sim) tau() (tau uint64) {
	s.with(func(w *world) { tau = w.tau })
	return tau
}

func (s *sim) advance(d uint64) { s.with(func(w *world) { w.tau += d }) }

func (s *sim) counter() (v uint64) {
	s.with(func(w *world) { v = w.ticksAt(w.tick()) })
	return v
}
func (s *sim) boot() (v uint64) {
	s.with(func(w *world) {
		v = w.bootAt(w.tick())
		if j := w.bootJitter; j != 0 {
			w.tau += w.tau * 0x9e3779b97f4a7c15 % (j + 1)
		}
	})
	return v
}
func (s *sim) counterOrdered() uint64 {
	s.with(func(w *world) {
		if w.lastReadMono && w.tau-w.lastColdTau > 1_000_000 {
			w.tau += w.orderedColdNs
			w.lastColdTau = w.tau
		}
	})
	return s.counter()
}
func (s *sim) mono() (v uint64) {
	s.with(func(w *world) { v, w.lastReadMono = w.monoAt(w.tick()), true })
	return v
}
func (s *sim) real() (v uint64) {
	s.mu.Lock()
	g := s.gate
	s.gate = nil
	s.mu.Unlock()
	if g != nil {
		close(g.parked)
		<-g.resume
	}
	s.with(func(w *world) { v = w.realAt(w.tick()) })
	return v
}
func (s *sim) verdict() (v verdict) {
	s.with(func(w *world) { v = w.verdict })
	return v
}
func (s *sim) waitMono(until uint64) {
	s.with(func(w *world) {
		for m := w.monoAt(w.tau); m < until; m = w.monoAt(w.tau) {
			w.tau += until - m
		}
	})
}
func (s *sim) observe() decision {
	var p probe
	s.with(func(w *world) {
		p = probe{counter: "simulated", invariant: true, freqHz: w.publishedFreq, freqOrigin: OriginCPUID,
			orderedRead: "sim", orderedReadAlt: "sim"}
	})
	d := decision{probe: p, env: EnvUnset, kernelName: "tsc"}
	d.settle(s.verdict())
	return d
}

// rng is xorshift64*, seeded by the scenario.
type rng uint64

func (r *rng) next() uint64 {
	x := uint64(*r)
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	*r = rng(x)
	return x * 0x2545_f491_4f6c_dd1d
}

func (r *rng) below(n uint64) uint64 { return r.next() % n }

// log returns a value log-uniform in [lo, hi).
func (r *rng) log(lo, hi uint64) uint64 {
	a, b := math.Log(float64(lo)), math.Log(float64(hi))
	x := a + (b-a)*float64(r.next()>>11)/float64(uint64(1)<<53)
	return min(max(uint64(math.Exp(x)), lo), hi-1)
}

// published is one state as it was published, with the counter value at
// that moment (every reader that loads it reads the counter later).
type published struct {
	s     state
	ticks uint64
	prev  state // the state it replaced
}

// simKeeper is a timekeeper on a simulated machine, recording every state
// it publishes.
type simKeeper struct {
	*timekeeper
	sim    *sim
	states []published
}

func newSimKeeper(t testing.TB, publishedFreq uint64) *simKeeper {
	s := newSim(publishedFreq)
	sk := &simKeeper{timekeeper: &timekeeper{clocks: s}, sim: s}
	sk.onPublish = func(st *state) {
		var ticks uint64
		s.with(func(w *world) { ticks = w.ticksAt(w.tau) })
		var prev state
		if n := len(sk.states); n > 0 {
			prev = sk.states[n-1].s
		}
		// A new counter piece only once the current one has started (a
		// re-base takes over where the counter is).
		if prev.mode == modeCounter && st.mode == modeCounter && !samePiece(&prev, st) && continues(&prev, st) && ticks < prev.takeover {
			t.Errorf("a new piece was published at %d, before the current one took over at %d", ticks, prev.takeover)
		}
		sk.states = append(sk.states, published{s: *st, ticks: ticks, prev: prev})
	}
	return sk
}

func samePiece(a, b *state) bool {
	return a.mode == b.mode && a.takeover == b.takeover && a.end == b.end && a.line == b.line && a.prev == b.prev
}

// continues reports whether b continues a as an ordinary next piece: it
// takes over at a's end, from a's value there, with a's line below.
func continues(a, b *state) bool {
	return b.takeover == a.end && b.prev == a.line && b.line.At(b.takeover) == a.line.At(b.takeover)
}

// atAny is what a counter state gives for t, floor aside (a state converts
// no value below its floor; what it would give there is what its prev line
// does).
func atAny(s *state, t uint64) uint64 {
	if v, ok := s.beforeSample(t); ok {
		return v
	}
	return s.line.At(t)
}

// reference is the conversion every counter state must agree with, while
// the pieces only continue each other: the newest piece whose take-over
// point is at or below t. ok is false once a re-base came between.
func (sk *simKeeper) reference(t uint64) (uint64, bool) {
	var counters []*state
	for i := range sk.states {
		if s := &sk.states[i].s; s.mode == modeCounter {
			if n := len(counters); n > 0 && !samePiece(counters[n-1], s) && !continues(counters[n-1], s) {
				return 0, false
			}
			counters = append(counters, s)
		}
	}
	for i := len(counters) - 1; i >= 0; i-- {
		if counters[i].takeover <= t {
			return counters[i].line.At(t), true
		}
	}
	if len(counters) > 0 {
		// Below the first piece: its prev, which is its own line.
		return counters[0].prev.At(t), true
	}
	return 0, false
}

type scenario struct {
	seed                               uint64
	published, upkeep, demote, hiccups bool
	wallIntervals, recalibrate         bool
	jumps                              bool // the counter meets suspends, resets, jumps and rate changes
}

// runScenario runs one scenario; it checks as it goes and returns the
// keeper and the readings (true time, reading) for the checks at the end.
func runScenario(t *testing.T, sc scenario) (*simKeeper, [][2]uint64) {
	var freq uint64
	if sc.published {
		freq = 2_445_406_000 // 0.24 ppm off, as hypervisors publish
	}
	sk := newSimKeeper(t, freq)
	if sc.hiccups {
		sk.sim.with(func(w *world) { w.hiccupEvery, w.hiccupNs = 97, 50_000 })
	}
	r := rng(sc.seed | 1)
	var reads [][2]uint64
	var stale []*state
	var lastRead, lastBoot uint64
	demoted := false
	// Events come for 20 s of CLOCK_MONOTONIC (a suspend does not end
	// them).
	eventsUntil := sk.sim.mono() + 20*sec
	var upkeepNext uint64
	if sc.upkeep {
		sk.setUpkeep(true)
	}
	// Accuracy: from 3 s of sampling after the last rate change (or
	// recalibration, or the start), intervals of a second or more agree
	// with CLOCK_MONOTONIC within 0.5 ppm, and the wall tier, from 2.5 s
	// after the last step of the system clock too, agrees with
	// CLOCK_REALTIME within 2 µs (20 µs after a slew larger than 500 ppm).
	// (An idle gap stops the sampling, the upkeep's too: a window that
	// spans both the gap and the change measures a mix of the two rates.)
	// Checked without preempted reads, whose moment is not known here. A
	// suspend, a jump or a new rate of the counter counts as a rate change
	// and a step of the system clock (the wall is re-anchored at its next
	// update).
	changedAt := sk.sim.tau()
	settledAt, steppedAt := changedAt+3*sec, uint64(0)
	wallBound := uint64(2_000)
	var from [2]uint64 // (mono, reading) where the current interval starts
	haveFrom, lastMode := false, uint64(0)
	unsettle := func(until uint64) {
		settledAt, haveFrom = max(settledAt, until), false
	}
	jumped := func() {
		changedAt = sk.sim.tau()
		unsettle(changedAt + 3*sec)
		steppedAt = changedAt
	}
	// A re-base (after a jump, or after NTP changed the rate by more than
	// it lets the timeline stray) restarts the rate window: from 3 s after
	// it, as after a rate change.
	seenRebases := 0
	rebased := func() bool {
		if sk.k.rebases == seenRebases {
			return false
		}
		seenRebases = sk.k.rebases
		unsettle(sk.sim.tau() + 3*sec)
		return true
	}
	// After the events, 5 s of quiet readings, to see the timeline back in
	// step with CLOCK_MONOTONIC.
	var quietNs uint64
	for quietNs < 5*sec && !t.Failed() {
		var quiet bool
		sk.sim.with(func(w *world) { quiet = w.monoAt(w.tau) >= eventsUntil })
		// Time passes: mostly small steps, sometimes an idle second or more.
		dt := r.log(1_000, 5_000_000)
		if r.below(200) == 0 {
			dt = r.log(sec/2, 4*sec)
			if sk.sim.tau() < changedAt+3*sec {
				unsettle(sk.sim.tau() + dt + 3*sec)
			}
		}
		sk.sim.advance(dt)
		if quiet {
			quietNs += dt
		}
		switch ev := r.below(1000); {
		case quiet:
		case ev <= 3: // NTP at work: a frequency correction or a tick slew
			var ppb int64
			switch r.below(4) {
			case 0:
			case 1:
				ppb = int64(r.below(1_000_001)) - 500_000
			case 2:
				ppb = 8_000_000
			default:
				ppb = -200_000
			}
			var old int64
			sk.sim.with(func(w *world) { old = w.ratePpb; w.setRate(ppb) })
			changedAt = sk.sim.tau()
			unsettle(changedAt + 3*sec)
			wallBound = 2_000
			if d := ppb - old; d > 500_000 || d < -500_000 {
				wallBound = 20_000
			}
		case ev <= 5: // the system clock is set
			step := int64(r.below(2*sec)) - int64(sec)
			sk.sim.with(func(w *world) { w.realMinusMono += step })
			steppedAt = sk.sim.tau()
		case ev == 6:
			sk.forceUpdate()
		case ev == 7 && sc.demote && !demoted && sk.sim.tau() > 12*sec:
			sk.sim.with(func(w *world) { w.verdict = verdict{kind: verdictNamed, name: "hpet"} })
			demoted = true
		case ev == 8 && sc.recalibrate:
			sk.recalibrate()
			changedAt = sk.sim.tau()
			unsettle(changedAt + 3*sec)
		case ev == 9 && sc.wallIntervals:
			sk.setWallInterval(r.log(1, 2*sec))
		case (ev == 10 || ev == 11) && sc.jumps:
			// The machine suspends: the counter counts on, stops, or
			// restarts near zero (by more than a piece lasts, as a reset of
			// a counter that counted since boot does).
			ns := r.log(100_000, 7_200*sec)
			var now uint64
			sk.sim.with(func(w *world) { now = w.ticksAt(w.tau) })
			c := suspendCounter{kind: counterStopped}
			switch r.below(3) {
			case 0:
				c.kind = counterCounting
			case 2:
				if now > 3*simFreq {
					c = suspendCounter{kind: counterReset, resetTo: r.below(now - 2*simFreq)}
				}
			}
			sk.sim.with(func(w *world) { w.suspendWith(ns, c) })
			jumped()
			if sc.upkeep && r.below(2) == 0 {
				// The kernel wakes the upkeep goroutine at a resume.
				upkeepNext = sk.upkeepTurn(true)
			}
		case ev == 12 && sc.jumps:
			// A migration: the counter jumps forward, or back by more than
			// a piece lasts (a jump back by less lands inside the piece in
			// use, where no reader can tell it from an earlier moment: the
			// fault model's "counter jumps back a little" has that).
			ticks := int64(r.log(10_000, 100*simFreq))
			if r.below(2) == 0 {
				ticks = -int64(r.log(2*simFreq, 100*simFreq))
			}
			sk.sim.with(func(w *world) { w.jumpCounter(ticks) })
			jumped()
		case ev == 13 && sc.jumps:
			// A migration to a host without TSC scaling: the counter's rate
			// changes.
			ppb := [...]int64{0, 50_000_000, -50_000_000}[r.below(3)]
			sk.sim.with(func(w *world) { w.setCounterRate(ppb) })
			jumped()
		}
		if sc.upkeep {
			now := sk.sim.mono()
			if now >= upkeepNext {
				upkeepNext = min(sk.upkeepTurn(false), now+1_000_000)
			}
		}
		// A reader that loaded the state a while ago converts a value now.
		if n := len(stale); n > 0 {
			old := stale[n-1]
			stale = stale[:n-1]
			tk := sk.sim.counter()
			fresh := sk.read(false)
			if old != nil && old.mode == modeCounter {
				if nanos, _, m := old.convert(tk); m == converted {
					if nanos > fresh {
						t.Fatalf("%+v: a stale state converts %d to %d, after a fresh %d", sc, tk, nanos, fresh)
					}
					if want, ok := sk.reference(tk); ok && sk.state.Load().mode == modeCounter && nanos != want {
						t.Fatalf("%+v: a stale state converts %d to %d, the newest function to %d\nstale %+v", sc, tk, nanos, want, *old)
					}
				}
			}
			lastRead = max(lastRead, fresh)
		}
		if r.below(8) == 0 {
			stale = append(stale, sk.state.Load())
		}
		rebased()
		var tau, reads0, reads1, mono uint64
		sk.sim.with(func(w *world) { tau, reads0, mono = w.tau, w.reads, w.monoAt(w.tau+w.step) })
		v := sk.read(r.below(2) == 0)
		if v < lastRead {
			t.Fatalf("%+v: stepped back %d ns at %d", sc, lastRead-v, tau)
		}
		lastRead = v
		reads = append(reads, [2]uint64{tau, v})
		sk.sim.with(func(w *world) { reads1 = w.reads })
		if b := sk.readBoot(); b < lastBoot {
			t.Fatalf("%+v: a boot reading stepped back %d ns at %d", sc, lastBoot-b, tau)
		} else {
			lastBoot = b
		}
		// The reading is the conversion of the first clock read it made,
		// one step after tau, unless a hiccup struck in the call (or it
		// re-based).
		clean := (!sc.hiccups || reads0/97 == reads1/97) && !rebased()
		if mode := sk.state.Load().mode; mode != lastMode {
			// A switch of source moves readings by about a microsecond,
			// and the reading that made it came later than its first read.
			lastMode, haveFrom, clean = mode, false, false
		}
		if tau < settledAt || !clean {
			haveFrom = haveFrom && clean && tau >= settledAt
		} else if !haveFrom {
			from, haveFrom = [2]uint64{mono, v}, true
		} else if dm := mono - from[0]; dm >= sec {
			if d := absDiff(v-from[1], dm); d*2_000_000 > dm+100_000_000 {
				t.Fatalf("%+v: an interval of %d ns is %d ns off CLOCK_MONOTONIC's at %d", sc, dm, d, tau)
			}
			from = [2]uint64{mono, v}
		}
		if r.below(2) == 0 {
			var real uint64
			sk.sim.with(func(w *world) { tau, reads0, real = w.tau, w.reads, w.realAt(w.tau+w.step) })
			u := sk.unixNano()
			sk.sim.with(func(w *world) { reads1 = w.reads })
			clean := !sc.hiccups || reads0/97 == reads1/97
			if clean && tau >= settledAt && tau >= steppedAt+2_500_000_000 {
				if d := absDiff(u, real); d > wallBound {
					t.Fatalf("%+v: the wall tier is %d ns off CLOCK_REALTIME at %d (bound %d)", sc, d, tau, wallBound)
				}
			}
		}
	}
	// Back in step with CLOCK_MONOTONIC (the timeline of the first state),
	// within the re-base threshold and the margins of the switches and
	// re-bases so far.
	v, mono := sk.read(true), sk.sim.mono()
	margins := int64(sk.k.rebases) * 200_000
	if off := int64(v - mono); !t.Failed() && max(off, -off) > rebaseNs+20_000+margins {
		t.Fatalf("%+v: the timeline is %d ns off CLOCK_MONOTONIC after 5 quiet seconds (%d re-bases)", sc, off, sk.k.rebases)
	}
	return sk, reads
}

// checkScenario runs the checks every scenario must pass.
func checkScenario(t *testing.T, sc scenario, sk *simKeeper, reads [][2]uint64) {
	t.Helper()
	pieces := 0
	for i := 1; i < len(sk.states); i++ {
		a, b := &sk.states[i-1].s, &sk.states[i].s
		if a.mode != modeCounter || b.mode != modeCounter || samePiece(a, b) {
			continue
		}
		pieces++
		if b.end <= b.takeover || b.trigger > b.end || b.start != max(b.takeover, b.floor) || b.span != saturatingSub(b.trigger, b.start) {
			t.Fatalf("%+v: piece %d: %+v", sc, i, *b)
		}
		if continues(a, b) && b.line.Slope != 0 {
			// An ordinary next piece: it takes over at the old end, from the
			// old line's value, with the old line below; a new rate is
			// never below 7/8 of the old (a piece that stands still has no
			// rate to keep).
			if a.line.Slope != 0 && b.line.Slope < floor(a.line.Slope) {
				t.Fatalf("%+v: piece %d: slope %d below 7/8 of %d", sc, i, b.line.Slope, a.line.Slope)
			}
		} else {
			// A re-base: below its take-over point it stands still, or
			// keeps the old line up to the old end; everywhere it is at or
			// above what a reader holding the old state could have returned
			// before.
			if b.prev.Slope != 0 && (b.prev != a.line || b.takeover != a.end) {
				t.Fatalf("%+v: piece %d re-based below its take-over point: %+v", sc, i, *b)
			}
			span := b.end - b.floor
			for _, k := range [...]uint64{0, 1, span / 3, span / 2, span - 1} {
				tk := b.floor + k
				seen := atAny(a, a.end-1)
				if tk >= a.floor {
					seen = atAny(a, min(tk, a.end-1))
				}
				if got := atAny(b, tk); got < seen {
					t.Fatalf("%+v: piece %d re-based below the old piece at %d: %d < %d\nold %+v\nnew %+v", sc, i, tk, got, seen, *a, *b)
				}
			}
		}
		// One non-decreasing function over the state's range.
		pts := [...]uint64{b.floor, max(b.takeover, b.floor), b.trigger, b.end - 1}
		for j := 1; j < len(pts); j++ {
			if atAny(b, pts[j-1]) > atAny(b, pts[j]) {
				t.Fatalf("%+v: piece %d decreases between %d and %d: %+v", sc, i, pts[j-1], pts[j], *b)
			}
		}
	}
	if pieces < 1 {
		t.Fatalf("%+v: only %d pieces", sc, pieces)
	}
	// Any state a goroutine could hold converts every counter value it may
	// read (at or past the counter when the state was published, below its
	// end) as the newest function does (while the pieces only continue each
	// other).
	r := rng(sc.seed*7 | 1)
	for i := range sk.states {
		p := &sk.states[i]
		if p.s.mode != modeCounter {
			continue
		}
		for j := 0; j < 8; j++ {
			if p.s.end <= p.ticks {
				break
			}
			tk := p.ticks + r.below(p.s.end-p.ticks)
			if j == 0 {
				tk = p.ticks
			} else if j == 1 {
				tk = p.s.end - 1
			}
			got, _, m := p.s.convert(tk)
			if want, ok := sk.reference(tk); ok && (m != converted || got != want) {
				t.Fatalf("%+v: state %d converts %d to %d (%d), the newest function to %d", sc, i, tk, got, m, want)
			}
		}
	}
	for i := 1; i < len(reads); i++ {
		if reads[i][1] < reads[i-1][1] {
			t.Fatalf("%+v: reading %d stepped back", sc, i)
		}
	}
}

// The white-box property test: random seeded scenarios (rate changes of
// ±500 ppm and +0.8 % tick slews, clock steps, idle gaps of seconds, forced
// updates and recalibrations, wall- and upkeep-driven updates, demotion,
// preempted samples). FASTNOW_SIM_SEED reruns one seed.
func TestRandomScenarios(t *testing.T) {
	cases := 400
	if n, err := strconv.Atoi(os.Getenv("FASTNOW_SIM_CASES")); err == nil {
		cases = n
	}
	if testing.Short() {
		cases = 48
	}
	base := uint64(time.Now().UnixNano())
	if s := os.Getenv("FASTNOW_SIM_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			t.Fatal(err)
		}
		base, cases = v, 1
	}
	t.Logf("seeds from %#x (FASTNOW_SIM_SEED reruns one)", base)
	for i := 0; i < cases; i++ {
		seed := base + uint64(i)*0x9e37_79b9_7f4a_7c15
		flags := rng(seed | 1)
		f := flags.next()
		sc := scenario{seed: seed, published: f&1 != 0, upkeep: f&2 != 0, demote: f&4 != 0, hiccups: f&8 != 0,
			wallIntervals: f&16 != 0, recalibrate: f&32 != 0, jumps: f&64 != 0}
		t.Run(fmt.Sprintf("%#x", seed), func(t *testing.T) {
			sk, reads := runScenario(t, sc)
			if !t.Failed() {
				checkScenario(t, sc, sk, reads)
			}
		})
	}
}

// settle reads the simulated clocks every dt for n steps.
func (sk *simKeeper) settle(n int, dt uint64, upkeep bool) {
	for i := 0; i < n; i++ {
		sk.sim.advance(dt)
		_ = sk.read(false)
		_ = sk.unixNano()
		if upkeep {
			sk.upkeepTurn(false)
		}
	}
}

// settleAsking is settle by a program that, without the upkeep, also asks
// Source once a second: readers do not read the kernel's verdict, the
// upkeep and Source do.
func (sk *simKeeper) settleAsking(n int, dt uint64, upkeep bool) {
	for i := 0; i < n; i++ {
		sk.settle(1, dt, upkeep)
		if !upkeep && uint64(i+1)*dt/sec != uint64(i)*dt/sec {
			_ = sk.info()
		}
	}
}

// Rate changes are followed: intervals between readings from 3 s after the
// change agree with CLOCK_MONOTONIC's within 0.5 ppm, and the wall tier
// with CLOCK_REALTIME within 2 µs (20 µs after a 0.8 % slew), and right
// after the change within the change over one resync interval plus 1 µs.
func TestFollowsAFrequencyCorrection(t *testing.T) {
	for _, c := range []struct {
		ppb             int64
		wallBound, cold uint64
	}{{500_000, 2_000, 0}, {-500_000, 2_000, 0}, {8_000_000, 20_000, 0}, {500_000, 2_000, 5_000}, {-500_000, 2_000, 5_000}} {
		sk := newSimKeeper(t, 0)
		type obs struct{ v, mono, u, real uint64 }
		step := func(dt uint64) obs {
			sk.sim.advance(dt)
			v, u := sk.read(false), sk.unixNano()
			var o obs
			sk.sim.with(func(w *world) { o = obs{v, w.monoAt(w.tau), u, w.realAt(w.tau)} })
			return o
		}
		for i := 0; i < 500; i++ { // 5 s at the nominal rate
			step(10_000_000)
		}
		// c.cold: the first bracket of every reader's update is disturbed,
		// its code cold, as a cold first call can make it (before, a
		// reader's update took that one bracket alone, measured nothing,
		// and the rate stayed the old one for seconds).
		sk.sim.with(func(w *world) { w.orderedColdNs = c.cold; w.setRate(c.ppb) })
		changed := sk.sim.tau()
		var worstPpb float64
		var worstWall, worstEarly uint64
		prev := step(1)
		for i := 1; i <= 1000; i++ {
			cur := step(10_000_000)
			since := sk.sim.tau() - changed
			wallErr := absDiff(cur.u, cur.real)
			if since >= 3*sec {
				worstWall = max(worstWall, wallErr)
			} else {
				worstEarly = max(worstEarly, wallErr)
			}
			if i%100 == 0 {
				if since >= 3*sec {
					ours, kernel := float64(cur.v-prev.v), float64(cur.mono-prev.mono)
					worstPpb = max(worstPpb, math.Abs(ours-kernel)/kernel*1e9)
				}
				prev = cur
			}
		}
		if early := uint64(max(c.ppb, -c.ppb)) + 1_000; worstEarly > early {
			t.Errorf("%d ppb (cold %d): early wall error %d ns > %d", c.ppb, c.cold, worstEarly, early)
		}
		if worstWall > c.wallBound {
			t.Errorf("%d ppb (cold %d): wall error %d ns from 3 s after the change", c.ppb, c.cold, worstWall)
		}
		if worstPpb >= 500 {
			t.Errorf("%d ppb (cold %d): 1 s intervals off by %.1f ppb from 3 s after the change", c.ppb, c.cold, worstPpb)
		}
	}
}

// A step of the system clock is followed at the next resync without
// upkeep, and at once through the upkeep's clock-set path; the precise tier
// ignores it.
func TestFollowsAStep(t *testing.T) {
	for _, upkeep := range []bool{false, true} {
		sk := newSimKeeper(t, 0)
		sk.setUpkeep(upkeep)
		sk.settle(300, 10_000_000, upkeep)
		before := sk.read(false)
		sk.sim.with(func(w *world) { w.realMinusMono -= 5 * int64(sec) })
		if upkeep {
			sk.upkeepTurn(true) // the kernel wakes the upkeep (timerfd): at once
		} else {
			sk.sim.advance(1_200_000_000)
			_ = sk.read(false)
		}
		u := sk.unixNano()
		var real uint64
		sk.sim.with(func(w *world) { real = w.realAt(w.tau) })
		if absDiff(u, real) >= 2_000 {
			t.Errorf("upkeep %v: wall %d vs %d after a step", upkeep, u, real)
		}
		if sk.read(false) < before {
			t.Errorf("upkeep %v: the precise tier stepped back", upkeep)
		}
	}
}

// A wall reader at the trigger re-anchors the wall even when its update
// re-checks the kernel's verdict too (the check's update samples too, or
// the wall would outlive its resync interval), at the trigger as past the
// end.
func TestWallReaderResyncsWhenACheckIsDue(t *testing.T) {
	for _, pastEnd := range []bool{false, true} {
		wallReaderResyncs(t, pastEnd)
	}
}

func wallReaderResyncs(t *testing.T, pastEnd bool) {
	sk := newSimKeeper(t, 0)
	sk.setWallInterval(20_000_000)
	for i := 0; i < 200; i++ {
		sk.sim.advance(5_000_000)
		_ = sk.unixNano()
	}
	sk.sim.with(func(w *world) { w.realMinusMono += 7 * int64(sec) })
	s := sk.state.Load()
	to := s.trigger
	if pastEnd {
		to = s.end
	}
	sk.sim.advance(s.line.NanosFor(to-sk.sim.counter()) + 1_000)
	sk.k.nextCheckMono, sk.k.checkWanted = 0, true
	u := sk.unixNano()
	var real uint64
	sk.sim.with(func(w *world) { real = w.realAt(w.tau) })
	if d := absDiff(u, real); d >= 2_000 {
		t.Fatalf("past the end %v: wall %d ns off, at its update with a check due", pastEnd, d)
	}
}

// A resync whose sample is preempted (every bracket wide) keeps the old
// wall offset, unless it is further off than the sample's uncertainty:
// a step is followed even then.
func TestFollowsAStepWithAPreemptedSample(t *testing.T) {
	sk := newSimKeeper(t, 0)
	sk.settle(300, 10_000_000, false)
	sk.sim.with(func(w *world) {
		w.realMinusMono -= 5 * int64(sec)
		w.hiccupEvery, w.hiccupNs = 1, 20_000 // every clock read is slow
	})
	sk.forceUpdate()
	u := sk.unixNano()
	var real uint64
	sk.sim.with(func(w *world) { real = w.realAt(w.tau); w.hiccupEvery = 0 })
	if d := absDiff(u, real); d >= 100_000 {
		t.Fatalf("wall %d ns off after a step and a preempted resync", d)
	}
}

// The kernel demotes the counter: readings move to CLOCK_MONOTONIC without
// stepping back, an interval across the switch stays within 10 µs of
// CLOCK_MONOTONIC's, and the introspection says so.
func TestDemotionKeepsTheTimeline(t *testing.T) {
	sk := demotion(t, 0)
	info := sk.info()
	if info.Source != SourceOS || (info.Fallback != FallbackKernelClocksource || info.FallbackClocksource != "kvm-clock") || info.DemotedAt.IsZero() || info.Clocksource != "kvm-clock" {
		t.Errorf("%+v", info)
	}
	// And a verdict that can no longer be read demotes too.
	sk2 := newSimKeeper(t, 0)
	sk2.settle(300, 10_000_000, false)
	sk2.sim.with(func(w *world) { w.verdict = verdict{kind: verdictUnreadable} })
	sk2.settleAsking(300, 10_000_000, false)
	if info := sk2.info(); info.Fallback != FallbackClocksourceUnknown || info.DemotedAt.IsZero() {
		t.Errorf("unreadable verdict: %+v", info)
	}
}

// The same while every sample's first brackets are preempted (300 µs each,
// all of a first sample's): the switch samples again, as a bracket's width
// would become a forward step of every reading (485 µs once in CI).
func TestDemotionWithPreemptedSamples(t *testing.T) { demotion(t, 300_000) }

// demotion runs the kernel's demotion of the counter under readers every
// 10 ms, each of whose first reads is slowed by hiccupNs, and checks the
// timeline across it.
func demotion(t *testing.T, hiccupNs uint64) *simKeeper {
	t.Helper()
	sk := newSimKeeper(t, 0)
	sk.settle(300, 10_000_000, false)
	a, monoA := sk.read(true), sk.sim.mono()
	sk.sim.with(func(w *world) {
		w.verdict = verdict{kind: verdictNamed, name: "kvm-clock"}
		w.hiccupNs = hiccupNs
	})
	_ = sk.info() // reads the kernel's verdict (readers do not)
	last := a
	for i := 0; i < 300; i++ {
		sk.sim.with(func(w *world) {
			w.tau += 10_000_000
			if hiccupNs > 0 {
				w.hiccupBurst = 25 // more than a sample's reads
			}
		})
		v := sk.read(true)
		if v < last {
			t.Fatalf("stepped back %d ns", last-v)
		}
		last = v
	}
	sk.sim.with(func(w *world) { w.hiccupBurst = 0 })
	s := sk.state.Load()
	if s.mode != modeOS || s.wallOffset != 0 {
		t.Fatalf("not demoted, or the wall tier still extrapolates: %+v", *s)
	}
	if sk.counterRead.Load() {
		t.Error("ordered readers still read the counter first on the OS clock for good")
	}
	b, monoB := sk.read(true), sk.sim.mono()
	if d := absDiff(b-a, monoB-monoA); d >= 10_000 {
		t.Errorf("an interval across the switch is %d ns off CLOCK_MONOTONIC's", d)
	}
	return sk
}

// Readers never read the kernel's verdict as a matter of course (a pread of
// sysfs, tens of microseconds from cold caches, on a read path): a demotion
// is seen by Source, the upkeep, or a reader only where its reading showed
// cause: the kernel's clock turned into a system call (slowSamplesForACheck
// samples in a row whose every bracket was wide), or a re-base. (Before,
// every other update a reader made read the file.)
func TestReadersReadTheKernelsVerdictOnlyWithCause(t *testing.T) {
	demoted := func(sk *simKeeper) bool {
		sk.mu.Lock()
		defer sk.mu.Unlock()
		return sk.k.demoting.why != FallbackNone || sk.k.state.mode == modeOS
	}
	onTheCounter := func() *simKeeper {
		sk := newSimKeeper(t, 0)
		sk.settle(300, 10_000_000, false)
		if sk.state.Load().mode != modeCounter {
			t.Fatal("not on the counter")
		}
		if !sk.k.decision.followsKernel() {
			t.Skip("the simulated machine's kernel verdict is not followed here")
		}
		return sk
	}
	readFor := func(sk *simKeeper, n int, every uint64) {
		last := sk.read(false)
		for i := 0; i < n; i++ {
			sk.sim.advance(every)
			v := sk.read(false)
			if v < last {
				t.Fatalf("stepped back %d ns", last-v)
			}
			last = v
		}
	}
	// Readers every 30 ms (each past a piece's end) for 3 s: no check.
	sk := onTheCounter()
	sk.sim.with(func(w *world) { w.verdict = verdict{kind: verdictNamed, name: "kvm-clock"} })
	readFor(sk, 100, 30_000_000)
	if demoted(sk) {
		t.Fatal("a reader read the kernel's verdict")
	}
	// The fast paths read the counter behind a non-nil view, and only a
	// counter state is one (timekeeper.view).
	if v := sk.view.Load(); v == nil || v != sk.state.Load() {
		t.Fatalf("on the counter the view is %p, the state %p", v, sk.state.Load())
	}
	// Source reads it (and readers past the piece's end then switch).
	_ = sk.info()
	readFor(sk, 10, 30_000_000)
	if sk.state.Load().mode != modeOS {
		t.Fatal("not demoted once asked")
	}
	if v := sk.view.Load(); v != nil {
		t.Fatalf("on the OS clock the view is a state (mode %d): the fast paths would read the counter", v.mode)
	}

	// The kernel's clock turned into a system call: its reads take long,
	// every bracket of slowSamplesForACheck samples in a row is wide.
	sk = onTheCounter()
	sk.sim.with(func(w *world) {
		w.verdict = verdict{kind: verdictNamed, name: "hpet"}
		w.step = 3_000
	})
	readFor(sk, 400, 10_000_000)
	if !demoted(sk) {
		t.Fatal("slow samples did not make a reader read the kernel's verdict")
	}

	// A re-base (a suspend the counter counted): the next reader's update
	// reads it.
	sk = onTheCounter()
	sk.sim.with(func(w *world) {
		w.verdict = verdict{kind: verdictNamed, name: "kvm-clock"}
		w.suspend(60*sec, true)
	})
	for i := 0; i < 10; i++ {
		sk.sim.advance(10_000_000)
		_ = sk.read(false)
	}
	if !demoted(sk) {
		t.Fatal("a re-base did not make a reader read the kernel's verdict")
	}
}

// A reader's update is bounded: readerBrackets brackets of each kind and
// one pair for the boot offset, whatever the brackets it meets (the
// upkeep's and a forced update take up to bracketsPerSample and
// bootSamplePairs).
func TestAReadersUpdateIsBounded(t *testing.T) {
	sk := newSimKeeper(t, 0)
	sk.settle(300, 10_000_000, false)
	if sk.state.Load().mode != modeCounter {
		t.Fatal("not on the counter")
	}
	reads := func(update func()) uint64 {
		var before, after uint64
		sk.sim.with(func(w *world) { before = w.reads })
		update()
		sk.sim.with(func(w *world) { after = w.reads })
		return after - before
	}
	// Undisturbed: one bracket of each kind, as counted below, and no
	// boot pair (CLOCK_REALTIME - CLOCK_MONOTONIC did not move).
	s := sk.state.Load()
	sk.sim.advance(s.line.NanosFor(s.trigger-sk.sim.counter()) + 1_000)
	calm := reads(func() {
		sk.mu.Lock()
		sk.updateAsReader(causeReader)
		sk.mu.Unlock()
	})
	if want := uint64(1 + 1 + 4 + 2 + 3); calm != want {
		t.Errorf("an undisturbed reader's update made %d clock reads, not %d", calm, want)
	}
	// Every bracket disturbed: each one is wider than twice the tightest.
	sk.sim.with(func(w *world) { w.hiccupEvery, w.hiccupNs = 1, 50_000 })
	s = sk.state.Load()
	sk.sim.advance(s.line.NanosFor(s.trigger-sk.sim.counter()) + 1_000)
	reader := reads(func() {
		sk.mu.Lock()
		sk.updateAsReader(causeReader)
		sk.mu.Unlock()
	})
	forced := reads(sk.forceUpdate)
	// The monotonic read that says whether a check is due; readerBrackets
	// brackets of each kind: the monotonic read that opens them, then for
	// each a counter and a monotonic read, a real and a monotonic read; the
	// boot offset: the real and monotonic reads that say whether boot -
	// mono moved, its one pair (mono, boot, mono), and one pair of the
	// offset itself (counter, mono, counter).
	if want := uint64(1 + 1 + 4*readerBrackets + 2 + 3 + 3); reader != want {
		t.Errorf("a reader's update made %d clock reads, not %d", reader, want)
	}
	if forced <= reader+2*(bracketsPerSample-1) {
		t.Errorf("a forced update made %d clock reads, a reader's %d: the forced one should take every bracket", forced, reader)
	}
}

// The OS clock takes over from the counter so that every conversion a
// reader still holding the counter state can make stays below the OS
// readings, even where that state's lines run slower or faster than
// CLOCK_MONOTONIC (its previous piece's line, measured before NTP changed
// the rate, until a take-over point a while ahead).
func TestDemotionStaysAboveTheCounterState(t *testing.T) {
	for _, ppm := range []int64{300, -300} {
		sk := newSimKeeper(t, 0)
		sk.settle(300, 10_000_000, false)
		sk.mu.Lock()
		s := sk.k.state
		now := sk.sim.counter()
		off := line{Slope: uint64(int64(s.line.Slope) + int64(s.line.Slope)/1_000_000*ppm)}
		s.prev = through(now, s.line.At(now), off.Slope)
		s.takeover = now + s.line.TicksFor(400_000_000)
		s.line = through(s.takeover, s.prev.At(s.takeover), s.line.Slope)
		s.trigger, s.end = s.takeover+s.line.TicksFor(100_000_000), s.takeover+s.line.TicksFor(102_000_000)
		sk.publish(s, nil)
		sk.demote(reason{FallbackKernelClocksource, "hpet"})
		sk.mu.Unlock()
		os := *sk.state.Load()
		for {
			var ticks, mono uint64
			sk.sim.with(func(w *world) { w.tau += 1_000_000; ticks, mono = w.ticksAt(w.tau), w.monoAt(w.tau) })
			counter, _, m := s.convert(ticks)
			if m != converted {
				break
			}
			if v, _, _ := os.convert(mono); v < counter {
				t.Fatalf("%d ppm: the OS reading %d is below a conversion %d of the counter state still in use", ppm, v, counter)
			}
		}
	}
}

// When the kernel drops the counter, no new piece is published and the OS
// clock takes over once the current state has ended (the upkeep re-checks
// the kernel on its own schedule, wall and forced updates come at any time:
// the end may be far ahead).
func TestDemotionWaitsForTheEndOfThePiece(t *testing.T) {
	for _, upkeep := range []bool{false, true} {
		sk := newSimKeeper(t, 0)
		sk.setUpkeep(upkeep)
		sk.settle(300, 10_000_000, upkeep)
		sk.sim.with(func(w *world) { w.verdict = verdict{kind: verdictNamed, name: "hpet"} })
		var next uint64
		for i := 0; i < 40_000 && sk.state.Load().mode == modeCounter; i++ {
			sk.sim.advance(100_000)
			if upkeep {
				if now := sk.sim.mono(); now >= next {
					next = sk.upkeepTurn(false)
				}
			}
			_ = sk.read(i%2 == 0)
			if i%3 == 0 {
				_ = sk.unixNano()
			}
			if i%1000 == 0 {
				sk.forceUpdate()
			}
		}
		n := len(sk.states)
		last := sk.states[n-1]
		if last.s.mode != modeOS || last.prev.mode != modeCounter {
			t.Fatalf("upkeep %v: not demoted", upkeep)
		}
		if last.ticks < last.prev.end {
			t.Errorf("upkeep %v: the OS clock took over %d ticks before the counter state's end", upkeep, last.prev.end-last.ticks)
		}
	}
}

// The wall tier near the ends of its range reads the system clock,
// saturated to [0, MaxInt64], and does not update the state on every read
// to do so.
func TestWallNearTheEndsOfItsRange(t *testing.T) {
	for _, c := range []struct {
		realMinusMono int64
		want          uint64 // 0: follow the real clock
		clamp         bool
	}{
		{-100 * int64(sec), 0, true},
		{1_000_000 * int64(sec), 0, false},
		{math.MaxInt64 - 100, math.MaxInt64, true},
	} {
		sk := newSimKeeper(t, 0)
		sk.sim.with(func(w *world) { w.realMinusMono = c.realMinusMono })
		for i := 0; i < 200; i++ {
			sk.sim.advance(10_000_000)
			_ = sk.read(false)
		}
		published := len(sk.states)
		for i := 0; i < 1000; i++ {
			u := sk.unixNano()
			var real uint64
			sk.sim.with(func(w *world) { real = w.realAt(w.tau) })
			switch {
			case c.clamp && u != c.want:
				t.Fatalf("%d: %d, want %d", c.realMinusMono, u, c.want)
			case !c.clamp && absDiff(u, real) >= 2_000:
				t.Fatalf("%d: %d vs %d", c.realMinusMono, u, real)
			}
		}
		if len(sk.states) != published {
			t.Errorf("%d: the wall tier updated the state %d times in 1000 reads", c.realMinusMono, len(sk.states)-published)
		}
		if (sk.state.Load().wallOffset == 0) != c.clamp {
			t.Errorf("%d: wall offset %d", c.realMinusMono, sk.state.Load().wallOffset)
		}
	}
}

// The first reading reads the OS clock while the rate is measured (no
// wait); the counter takes over a millisecond later, or at once when the
// frequency is published, a little ahead.
func TestWarmUpThenCounter(t *testing.T) {
	for _, published := range []bool{false, true} {
		var freq uint64
		if published {
			freq = simFreq
		}
		sk := newSimKeeper(t, freq)
		first := sk.read(false)
		// A published frequency too waits for the first millisecond's
		// measurement to agree with it.
		if sk.state.Load().mode == modeCounter {
			t.Fatalf("published %v: counter at once", published)
		}
		last := first
		for i := 0; i < 100; i++ {
			sk.sim.advance(100_000)
			v := sk.read(false)
			if v < last {
				t.Fatalf("published %v: stepped back", published)
			}
			last = v
		}
		if sk.state.Load().mode != modeCounter {
			t.Fatalf("published %v: no counter after 10 ms", published)
		}
		info := sk.info()
		if info.Source != SourceCounter || absDiff(info.FreqHz, simFreq) >= simFreq/10_000 {
			t.Errorf("published %v: %+v", published, info)
		}
		if info.CalibrationWait < time.Millisecond || info.CalibrationWait > 2*time.Millisecond {
			t.Errorf("warm-up lasted %v", info.CalibrationWait)
		}
	}
}

// A program that only reads the wall tier gets the counter too, once the
// warm-up is over, and then reads the counter plus the wall offset, not the
// system clock.
func TestWallReadersEndTheWarmUp(t *testing.T) {
	sk := newSimKeeper(t, 0)
	for i := 0; i < 50; i++ {
		sk.sim.advance(100_000)
		_ = sk.unixNano()
	}
	s := sk.state.Load()
	if s.mode != modeCounter || s.wallOffset == 0 {
		t.Fatalf("after 5 ms of wall readings: %+v", *s)
	}
	var reads, reads2 uint64
	sk.sim.with(func(w *world) { reads = w.reads })
	_ = sk.unixNano()
	sk.sim.with(func(w *world) { reads2 = w.reads })
	if reads2-reads != 1 {
		t.Fatalf("a wall reading took %d clock reads, not one counter read", reads2-reads)
	}
}

// Readings taken while another goroutine publishes the first state are
// never above a later reading — even when that goroutine was preempted
// between its sample and the publish, so that the first state's end lies
// in the past (under qemu, a thread preempted for 10 ms there stepped the
// Rust crate's Instant back by up to 320 µs). The first state covers them
// all, and the first reading after it is not below them.
func TestReadingsDuringDetectionStayBelowLaterOnes(t *testing.T) {
	for _, freq := range []uint64{0, simFreq} {
		sk := newSimKeeper(t, freq)
		g := &gate{make(chan struct{}), make(chan struct{})}
		sk.sim.with(func(*world) { sk.sim.gate = g })
		done := make(chan bool)
		go func() { done <- sk.ensurePublished() }()
		<-g.parked // the writer sampled the counter and is preempted
		type reading struct {
			v              uint64
			beforeTheFirst bool // returned before the first state was published
		}
		read := func() reading {
			v := sk.read(false)
			return reading{v, sk.state.Load() == nil}
		}
		early := read()
		sk.sim.advance(5_000_000) // past the first moment's span
		late := make(chan reading, 1)
		go func() { late <- read() }()
		var lateReading reading
		select {
		case lateReading = <-late: // the old code returned at once
		case <-time.After(50 * time.Millisecond): // it waits for the first state
		}
		close(g.resume)
		if !<-done {
			t.Fatal("the writer did not publish")
		}
		if lateReading == (reading{}) {
			lateReading = <-late
		}
		first := sk.states[0].s
		for _, r := range []reading{early, lateReading} {
			if r.beforeTheFirst && r.v >= first.end {
				t.Errorf("freq %d: %d, returned before the first state, is past its end %d", freq, r.v, first.end)
			}
		}
		after := sk.read(false)
		if lateReading.v < early.v || after < lateReading.v {
			t.Errorf("freq %d: stepped back: %d %d %d", freq, early.v, lateReading.v, after)
		}
	}
}

// A reading past the state's end while another goroutine holds the lock
// waits for it (Go readers may wait; none ever blocks on the lock itself),
// then gets the new state's value.
func TestPastTheEndWaitsForTheWriter(t *testing.T) {
	sk := newSimKeeper(t, simFreq)
	sk.settle(100, 10_000_000, false)
	waitsForTheWriter(t, sk, func(w *world) { w.tau += 3 * sec }) // far past the end
}

// A reading below the state's floor (the counter went back: a reset at a
// resume) while another goroutine holds the lock waits for it, as a reading
// past the end does, then gets a value of the state that re-based, never one
// below the readings before (the old code converted it with the previous
// line, far back).
func TestBelowTheFloorWaitsForTheWriter(t *testing.T) {
	sk := newSimKeeper(t, 0)
	sk.settle(100, 10_000_000, false)
	waitsForTheWriter(t, sk, func(w *world) { w.suspendWith(sec, suspendCounter{kind: counterReset, resetTo: 1_000}) })
	if info := sk.info(); info.CounterJumps != 1 || !info.LastCounterJump.WentBack {
		t.Fatalf("the re-base is not reported: %v", info)
	}
}

// waitsForTheWriter holds the writers' lock while event happens to the
// machine and a goroutine reads: the reading must wait for the lock, and
// then lie between the readings before and after.
func waitsForTheWriter(t *testing.T, sk *simKeeper, event func(w *world)) {
	t.Helper()
	before := sk.read(false)
	sk.mu.Lock()
	sk.sim.with(event)
	got := make(chan uint64)
	go func() { got <- sk.read(false) }()
	select {
	case v := <-got:
		sk.mu.Unlock()
		t.Fatalf("returned %d without a newer state", v)
	case <-time.After(20 * time.Millisecond):
	}
	sk.mu.Unlock()
	stuck := <-got
	after := sk.read(false)
	if stuck < before || stuck > after {
		t.Fatalf("%d %d %d", before, stuck, after)
	}
}

// A forced recalibration never moves a take-over point back, and the
// function stays one (issue 9 item 1, in the simulation): recalibrations,
// forced updates and ordinary updates in a tight random order.
func TestRecalibrationsKeepOneFunction(t *testing.T) {
	sk := newSimKeeper(t, 0)
	r := rng(0x5eed)
	var last uint64
	for i := 0; i < 3000; i++ {
		sk.sim.advance(r.log(1_000, 3_000_000))
		switch r.below(10) {
		case 0:
			sk.recalibrate()
		case 1:
			sk.forceUpdate()
		case 2:
			sk.setWallInterval(r.log(1, sec))
		}
		v := sk.read(r.below(2) == 0)
		if v < last {
			t.Fatalf("step %d: stepped back %d ns", i, last-v)
		}
		last = v
	}
	checkScenario(t, scenario{seed: 0x5eed}, sk, nil)
}

// While the upkeep runs, up to 1.5 ms late (its scheduling delay, within
// the readers' 2 ms slack), it does every state update, the wall
// re-anchoring and the clocksource re-check (it demotes the counter), and
// readers only load (after the first millisecond's switch to the counter).
func TestUpkeepDoesTheUpdates(t *testing.T) {
	sk := newSimKeeper(t, 0)
	sk.setUpkeep(true)
	_ = sk.read(false)
	var next uint64
	byReaders, byUpkeep := 0, 0
	for i := 0; i < 200_000; i++ { // 20 s in steps of 100 µs
		sk.sim.advance(100_000)
		if i == 150_000 {
			sk.sim.with(func(w *world) { w.verdict = verdict{kind: verdictNamed, name: "hpet"} })
		}
		n := len(sk.states)
		if now := sk.sim.mono(); now >= saturatingAdd(next, 1_500_000) {
			next = sk.upkeepTurn(false)
		}
		byUpkeep += len(sk.states) - n
		n = len(sk.states)
		_ = sk.read(i%2 == 0)
		_ = sk.unixNano()
		if len(sk.states) != n && i >= 200 { // past the warm-up, which has no slack
			byReaders++
			t.Errorf("step %d: a reader updated the state", i)
			if byReaders > 5 {
				t.FailNow()
			}
		}
	}
	t.Logf("%d updates by the upkeep", byUpkeep)
	if byUpkeep < 20 {
		t.Errorf("the upkeep updated the state only %d times", byUpkeep)
	}
	if info := sk.info(); info.Source != SourceOS || info.DemotedAt.IsZero() || !info.Upkeep {
		t.Errorf("the upkeep did not demote the counter: %+v", info)
	}
}

// The read base's fast path (read_amd64.s, read_generic.go), through the
// simulated clocks (tests only).

// readAs is a reading of clock c through the clocks interface: what the
// fast path does with the machine's counter, and the slow path after it.
func (tk *timekeeper) readAs(c clock, ordered bool) uint64 {
	if s := tk.state.Load(); s != nil && s.span != 0 && (c == clockPrecise || c.kept(s) != 0) {
		var t uint64
		if ordered {
			t = tk.clocks.counterOrdered()
		} else {
			t = tk.clocks.counter()
		}
		if t-s.start < s.span {
			return s.line.At(t) + c.kept(s)
		}
		return tk.readClock(c, t, true, ordered)
	}
	return tk.readClock(c, 0, false, ordered)
}

// read is a precise reading: Nanotime's and OrderedNanotime's.
func (tk *timekeeper) read(ordered bool) uint64 { return tk.readAs(clockPrecise, ordered) }

// unixNano is a wall reading: UnixNano's.
func (tk *timekeeper) unixNano() uint64 { return tk.readAs(clockWall, false) }

// A published state is never written again, however many follow it (states
// are carved from blocks, never recycled): a goroutine may hold one for as
// long as it likes, and it stays whole.
func TestPublishedStatesAreNeverWritten(t *testing.T) {
	sk := newSimKeeper(t, 0)
	record := sk.onPublish
	type kept struct {
		p *state
		s state
	}
	var held []kept
	sk.onPublish = func(st *state) {
		record(st)
		held = append(held, kept{st, *st})
	}
	sk.settle(10, 1_000_000, false)
	for len(held) < 3*stateBlock {
		sk.sim.advance(2_000_000)
		sk.forceUpdate()
	}
	seen := make(map[*state]bool)
	for i, h := range held {
		if seen[h.p] {
			t.Fatalf("state %d of %d was published at an address used before", i, len(held))
		}
		seen[h.p] = true
		if *h.p != h.s {
			t.Fatalf("state %d of %d changed after it was published:\nthen %+v\nnow  %+v", i, len(held), h.s, *h.p)
		}
	}
}

// The hook BenchmarkReaderUpdate and BenchmarkColdCall time does the update
// a reader does: each sample publishes a state (it re-anchors the wall
// line), so the figures are its real cost.
func TestReaderUpdateHookPublishes(t *testing.T) {
	StopUpkeep() // the hook gives way to an update in progress
	Nanotime()
	proc.finishWarmUp()
	if Source().Source != SourceCounter {
		t.Skip("the OS clock is in use, and an OS state has no updates")
	}
	for i := 0; i < 50; i++ {
		before := proc.state.Load()
		proc.readerUpdate(false)
		if proc.state.Load() == before {
			t.Fatalf("update %d published nothing", i)
		}
	}
}

// The wall resync interval has a floor of a millisecond (issue 19 item 1):
// set to 1 ns (or 0), every piece was a few ticks long and every reading
// published a state. Now no piece ends sooner than a millisecond after it
// was published (the wall offset is measured again at the piece's update),
// and a run of readings publishes
// about one state per millisecond, whatever the interval asked for.
func TestWallIntervalHasAFloor(t *testing.T) {
	for _, asked := range []uint64{0, 1, 100, minWallIntervalNs - 1} {
		sk := newSimKeeper(t, 0)
		sk.settle(20, 1_000_000, false)
		sk.setWallInterval(asked)
		if got := sk.wallIntervalNs(); got != minWallIntervalNs {
			t.Errorf("interval %d ns taken as %d ns, not the floor", asked, got)
		}
		before := len(sk.states)
		const reads, dt = 20_000, 1_000 // 20 ms of readings
		for i := 0; i < reads; i++ {
			sk.sim.advance(dt)
			if i%2 == 0 {
				_ = sk.read(i%4 == 0)
			} else {
				_ = sk.unixNano()
			}
		}
		// About one per millisecond; the old code published one per reading.
		if n := len(sk.states) - before; n > 2*reads*dt/minPeriodNs {
			t.Errorf("interval %d ns: %d readings published %d states", asked, reads, n)
		}
		const tolerance = 10_000 // the clock reads between the sample and the publish
		for i, p := range sk.states[before:] {
			s := &p.s
			if s.mode != modeCounter {
				continue
			}
			// A new piece (an update before the take-over point keeps the
			// piece's trigger).
			if d := s.line.NanosFor(saturatingSub(s.trigger, p.ticks)); !samePiece(&p.prev, s) && d+tolerance < minPeriodNs {
				t.Fatalf("interval %d ns: piece %d triggers %d ns after it was published", asked, i, d)
			}
		}
		checkScenario(t, scenario{seed: asked + 1}, sk, nil)
	}
}

// A frequency the hardware publishes is used only when the first
// millisecond's measurement agrees with it within 1/64 (SEMANTICS,
// "Calibration"; the Rust crate's warm_up_step): firmware and emulators
// publish wrong ones. Until the measurement the OS clock is read, as
// without a published frequency.
func TestPublishedFrequencyMustAgreeWithTheMeasurement(t *testing.T) {
	for _, c := range []struct {
		published uint64
		used      bool
	}{
		{simFreq, true},
		{2_445_406_000, true},         // 0.24 ppm off, as hypervisors publish
		{simFreq + simFreq/100, true}, // 1 % off: within 1/64
		{simFreq - simFreq/100, true}, // 1 % off: within 1/64
		{simFreq + simFreq/50, false}, // 2 % off
		{simFreq - simFreq/50, false}, // 2 % off
		{simFreq * 18, false},         // as one emulator published
		{simFreq / 2, false},
		{100_000_000, false}, // a model's nominal frequency
	} {
		sk := newSimKeeper(t, c.published)
		_ = sk.read(false)
		if s := sk.state.Load(); s.mode != modeOS || s.trigger == never {
			t.Errorf("published %d Hz: the counter before the first millisecond's measurement: %+v", c.published, *s)
		}
		info := sk.info() // waits out the first millisecond
		wantOrigin, wantHz := OriginMeasured, uint64(simFreq)
		if c.used {
			wantOrigin, wantHz = OriginCPUID, c.published
		}
		if info.Source != SourceCounter || info.FreqOrigin != wantOrigin || absDiff(info.FreqHz, wantHz) > wantHz/100_000 {
			t.Errorf("published %d Hz (true %d Hz): source %s, %d Hz from %s; want %d Hz from %s",
				c.published, uint64(simFreq), info.Source, info.FreqHz, info.FreqOrigin, wantHz, wantOrigin)
		}
		if info.PublishedFreqHz != c.published {
			t.Errorf("published %d Hz: reported as %d Hz", c.published, info.PublishedFreqHz)
		}
		if info.CalibrationWait < time.Millisecond {
			t.Errorf("published %d Hz: the counter took over after %v", c.published, info.CalibrationWait)
		}
		last := sk.read(false)
		for i := 0; i < 2_000; i++ {
			sk.sim.advance(100_000)
			v := sk.read(i%2 == 0)
			if v < last {
				t.Fatalf("published %d Hz: stepped back", c.published)
			}
			last = v
		}
		checkScenario(t, scenario{seed: c.published}, sk, nil)
	}
}

// A migration that moves the counter and changes its rate (no TSC scaling
// on the new host): the re-base's piece is short, so the new rate is
// measured and in use within a few milliseconds of reading, not at the end
// of a period at the old rate (which strayed by 5 % of it, and re-based
// again). While the readings stand still the introspection gives the rate
// in use, not the flat piece's none, and the upkeep's next turn is not now
// on every turn.
func TestAMigrationWithANewRateIsFollowedAtOnce(t *testing.T) {
	for _, upkeep := range []bool{false, true} {
		sk := onTheCounter(t)
		sk.setUpkeep(upkeep)
		if upkeep {
			sk.upkeepTurn(false)
		}
		old := sk.info().FreqHz
		sk.sim.with(func(w *world) {
			w.jumpCounter(10 * simFreq)
			w.setCounterRate(50_000_000)
		})
		const newHz = simFreq + simFreq/20
		last := sk.read(false)
		at := -1
		for ms := 0; ms < 200; ms++ {
			sk.sim.advance(1_000_000)
			if upkeep {
				now := sk.sim.mono()
				next := sk.upkeepTurn(false)
				if s := sk.state.Load(); s.mode == modeCounter && s.line.Slope == 0 && next <= now {
					t.Fatalf("upkeep %v: the upkeep is due again at once while standing still", upkeep)
				}
			}
			v := sk.read(false)
			if v < last {
				t.Fatalf("upkeep %v: stepped back from %d to %d", upkeep, last, v)
			}
			last = v
			hz := sk.info().FreqHz
			if hz == 0 {
				t.Fatalf("upkeep %v: 0 Hz reported while standing still (%+v)", upkeep, *sk.state.Load())
			}
			if at < 0 && absDiff(hz, newHz) < newHz/1_000 {
				at = ms
			}
		}
		if at < 0 {
			t.Fatalf("upkeep %v: the new rate never in use (was %d Hz)", upkeep, old)
		}
		if at > 20 {
			t.Errorf("upkeep %v: the new rate in use after %d ms", upkeep, at)
		}
	}
}
