package fastnow

import (
	"sync"
	"sync/atomic"
	"time"
)

// Calibration: the same schedule as the Rust crate (spec/SEMANTICS.md,
// "Calibration"), adapted to Go's API, which returns nanoseconds from every
// read. The conversion is published as one immutable params value behind an
// atomic pointer — a reader loads one pointer and sees a consistent set —
// and each refinement re-bases at a fresh counter value, continuing the old
// conversion there, so Nanotime never jumps when the rate is refined.

const (
	minBaselineNs     = int64(time.Millisecond)
	maxCheckPeriodNs  = int64(time.Second)
	rollNs            = 64 * int64(time.Second)
	publishedEquivNs  = 20 * int64(time.Millisecond)
	sanityShift       = 6 // 1/64
	bracketsPerSample = 7
	nanosPerSecond    = 1_000_000_000
)

// procStart anchors the OS clock readings: time.Since(procStart) is
// CLOCK_MONOTONIC through the vDSO, in nanoseconds since the package loaded.
var procStart = time.Now()

func monoNow() int64 { return int64(time.Since(procStart)) }

type params struct {
	baseTicks uint64
	baseNs    int64
	scale     Scale  // ticks -> ns
	nextCheck uint64 // the first read at or past this counter value refines
	// span is nextCheck - baseTicks when every count below it converts
	// without overflow (always, for real counters), else 0: the read path
	// needs one unsigned compare and no overflow check.
	span uint64
	// prev is the conversion this one continues (one level; its own prev is
	// cut), which still converts counter values from before baseTicks.
	prev *params
}

// The conversion is one function of the counter value for every goroutine,
// whichever params it happens to hold, so that a later counter value never
// converts to an earlier time, across goroutines too (OrderedNanotime and
// MonotonicNanotime rest on it). Three rules make it so:
//
//   - a refinement's params take over at a counter value R no smaller than
//     the old params' nextCheck, and convert values below R with the old
//     params (prev), so the old params' fast path [baseTicks, nextCheck)
//     keeps meaning what it meant;
//   - R is read by the refining goroutine after it was triggered, and a
//     reader whose counter value is at or past its params' nextCheck waits
//     for the refinement in progress instead of extrapolating the old params
//     (convertSlow), so no value at or past R is converted before the new
//     params are published;
//   - at R the new params start from the old params' value there, and each
//     piece is non-decreasing.
//
// Only a value older than two refinements (a second or more) converts
// differently through the cut prev, and such a value cannot be within a
// nanosecond of any reading that happens after it.

// rebased returns the params that continue p from counter value r on with
// a new scale (see above).
func (p *params) rebased(r uint64, scale Scale) params {
	ending := *p
	ending.prev = nil
	return params{baseTicks: r, baseNs: p.at(r), scale: scale, prev: &ending}
}

// setNextCheck schedules the next refinement and derives span from it.
func (p *params) setNextCheck(next uint64) {
	p.nextCheck, p.span = next, 0
	if next > p.baseTicks {
		if _, ok := p.scale.Apply(next - p.baseTicks); ok {
			p.span = next - p.baseTicks
		}
	}
}

// at converts a counter value, extrapolating backwards for values read just
// before a concurrent re-base.
func (p *params) at(t uint64) int64 {
	if t >= p.baseTicks {
		return p.baseNs + int64(p.scale.ApplySaturating(t-p.baseTicks))
	}
	if p.prev != nil {
		return p.prev.at(t)
	}
	return p.baseNs - int64(p.scale.ApplySaturating(p.baseTicks-t))
}

var cur atomic.Pointer[params]

var (
	refining atomic.Bool
	cal      struct {
		sync.Mutex
		useAlt                bool
		anchorTicks           uint64
		anchorNs              int64
		ticksPerNs            Scale
		origin                string
		baselineNs            int64
		initWait              time.Duration
		refinements, rejected int
	}
)

// sampleAgainst returns one (counter, reference) pair: the tightest of
// several brackets "reference, ordered counter read, reference", matched to
// the bracket's midpoint.
func sampleAgainst(ref func() int64) (uint64, int64) {
	var bestTicks uint64
	var bestNs, bestWidth int64 = 0, -1
	var lastTicks uint64
	var lastNs int64
	for i := 0; i < bracketsPerSample; i++ {
		before := ref()
		t := readCounterOrdered(cal.useAlt)
		after := ref()
		lastTicks, lastNs = t, after
		width := after - before
		if width < 0 { // the reference stepped back mid-bracket
			continue
		}
		if bestWidth < 0 || width < bestWidth {
			bestTicks, bestNs, bestWidth = t, before+width/2, width
		}
	}
	if bestWidth < 0 {
		return lastTicks, lastNs
	}
	return bestTicks, bestNs
}

func waitUntil(ns int64) {
	for monoNow() < ns {
	}
}

// calibrateStart runs during detection, before the counter state is
// published: the first calibration, waiting up to 1 ms when the hardware
// publishes no frequency.
func calibrateStart(p probe) {
	cal.Lock()
	defer cal.Unlock()
	cal.useAlt = p.useAlt
	t0, n0 := sampleAgainst(monoNow)
	cal.anchorTicks, cal.anchorNs = t0, n0
	var nsScale, tkScale Scale
	ok := false
	if p.freqHz != 0 {
		ns, ok1 := NanosPerTick(p.freqHz)
		tk, ok2 := TicksPerNano(p.freqHz)
		if ok1 && ok2 {
			nsScale, tkScale, ok = ns, tk, true
			cal.origin, cal.baselineNs = p.freqOrigin, publishedEquivNs
		}
	}
	if !ok {
		start := time.Now()
		waitUntil(n0 + minBaselineNs)
		t1, n1 := sampleAgainst(monoNow)
		cal.initWait = time.Since(start)
		dt, dn := t1-t0, uint64(n1-n0)
		nsScale, _ = FromRatio(dn, dt)
		tkScale, _ = FromRatio(dt, dn)
		cal.origin, cal.baselineNs = OriginMeasured, int64(dn)
	}
	cal.ticksPerNs = tkScale
	first := &params{baseTicks: t0, baseNs: n0, scale: nsScale}
	first.setNextCheck(schedule(readCounter(), minBaselineNs))
	cur.Store(first)
}

// schedule returns the counter value of the next refinement check.
func schedule(now uint64, waitNs int64) uint64 {
	waitNs = max(minBaselineNs, min(waitNs, maxCheckPeriodNs))
	return now + cal.ticksPerNs.ApplySaturating(uint64(waitNs))
}

// refine runs on the read path when a check is due, one goroutine at a time;
// it reports false when another goroutine is already refining.
func refine() bool {
	if !refining.CompareAndSwap(false, true) {
		return false
	}
	defer refining.Store(false)
	cal.Lock()
	defer cal.Unlock()
	refineLocked(false)
	return true
}

func refineLocked(force bool) {
	old := cur.Load()
	if force {
		waitUntil(cal.anchorNs + minBaselineNs)
	}
	t1, n1 := sampleAgainst(monoNow)
	measure := func(t0 uint64, n0 int64) (Scale, Scale, bool) {
		if t1 <= t0 || n1 <= n0 {
			return Scale{}, Scale{}, false
		}
		dt, dn := t1-t0, uint64(n1-n0)
		ns, ok1 := WithShift(dn, dt, old.scale.Shift)
		tk, ok2 := WithShift(dt, dn, cal.ticksPerNs.Shift)
		return ns, tk, ok1 && ok2
	}
	ns, tk, ok := measure(cal.anchorTicks, cal.anchorNs)
	// After two rejections in a row, the rate in use is the suspect.
	if ok && cal.rejected < 2 {
		diff := int64(ns.Mult - old.scale.Mult)
		if diff < 0 {
			diff = -diff
		}
		ok = uint64(diff) <= old.scale.Mult>>sanityShift
	}
	if ok {
		cal.rejected = 0
	} else {
		// The anchor no longer describes the counter (suspend, migration).
		cal.rejected++
		cal.anchorTicks, cal.anchorNs = t1, n1
		if force {
			waitUntil(n1 + minBaselineNs)
			t1, n1 = sampleAgainst(monoNow)
			ns, tk, ok = measure(cal.anchorTicks, cal.anchorNs)
		}
	}
	baseline := n1 - cal.anchorNs
	next := *old
	if ok && (force || (baseline >= minBaselineNs && baseline >= min(cal.baselineNs, maxCheckPeriodNs))) {
		// Continue the old conversion from a fresh counter value, or from
		// the old params' end when that is later (a forced recalibration).
		next = old.rebased(max(readCounter(), old.nextCheck), ns)
		cal.ticksPerNs = tk
		cal.baselineNs, cal.origin = baseline, OriginMeasured
		cal.refinements++
	}
	if baseline >= rollNs {
		cal.anchorTicks, cal.anchorNs = t1, n1
	}
	next.setNextCheck(schedule(t1, baseline))
	cur.Store(&next)
}

// Recalibrate measures the counter rate against the OS clock now instead of
// at the next scheduled refinement (fastnow refines by itself; call this
// after a resume from suspend or a VM migration). It may wait up to about a
// millisecond. It returns the updated Source().
func Recalibrate() Info {
	if ensureDecided() == stateCounter {
		cal.Lock()
		refineLocked(true)
		cal.Unlock()
	}
	return Source()
}
