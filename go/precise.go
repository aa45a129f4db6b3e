package fastnow

import (
	"math/bits"
	"runtime"
	"sync/atomic"
	"time"
)

// Nanotime returns monotonic nanoseconds (since the package was loaded,
// roughly) from the CPU counter: about a third of time.Since's cost.
//
// Guarantee: never decreases within a goroutine (the conversion is one
// non-decreasing function of the counter, across calibration refinements:
// see calibrate.go). Across goroutines, readings can be out of order by the
// CPU's speculation window (microseconds); use MonotonicNanotime when a
// later event must never get an earlier stamp.
//
// The first call in a process detects the counter and calibrates it, which
// waits up to 1 ms when the CPU does not publish its frequency.
func Nanotime() int64 { return nanotimeCounter() }

// nanotimeSlowCounter is where nanotimeCounter's fast path gives up.
func nanotimeSlowCounter() int64 { return nanotimeSlow(false) }

// OrderedNanotime is Nanotime with the counter read only after every
// earlier load has completed (RDTSCP or LFENCE;RDTSC; ISB on arm64), so it
// is not earlier than anything an atomic load before it observed.
func OrderedNanotime() int64 {
	if state.Load() == stateCounter {
		p := cur.Load()
		if v, ok := p.inRange(readCounterOrdered(decided.probe.useAlt)); ok {
			return v
		}
	}
	return nanotimeSlow(true)
}

// inRange is the conversion's fast path, small enough to inline: one unsigned
// compare covers both ends of the range (baseTicks <= t < nextCheck), and
// within it the multiply and shift cannot overflow (see params.span).
func (p *params) inRange(t uint64) (int64, bool) {
	d := t - p.baseTicks
	if d >= p.span {
		return 0, false
	}
	hi, lo := bits.Mul64(d, p.scale.Mult)
	if p.scale.Shift >= 64 {
		return p.baseNs + int64(hi>>(p.scale.Shift-64)), true
	}
	return p.baseNs + int64(hi<<(64-p.scale.Shift)|lo>>p.scale.Shift), true
}

// convertSlow refines when a check is due and handles counter values from
// before the base (read just before a concurrent re-base) or far beyond it.
//
//go:noinline
func convertSlow(t uint64) int64 {
	for {
		p := cur.Load()
		if t < p.nextCheck {
			return p.at(t)
		}
		// Refine, or wait for the goroutine refining: converting t with the
		// old params now could disagree with the params about to be
		// published (see "one function" in calibrate.go).
		if !refine() {
			runtime.Gosched()
		}
	}
}

//go:noinline
func nanotimeSlow(ordered bool) int64 {
	if ensureDecided() != stateCounter {
		return monoNow()
	}
	if ordered {
		return convertSlow(readCounterOrdered(decided.probe.useAlt))
	}
	return convertSlow(readCounter())
}

// MonotonicNanotime's two strategies, as in the Rust crate (whose
// precise.rs explains the choice at length): a high-water mark that every
// reading raises with a compare-and-swap, or an ordered counter read. The
// mark is nearly free on cores whose compare-and-swap overlaps the counter
// read (AMD Zen) and costs more than an ordered read on Intel; either way it
// costs a cache-line transfer per call once several cores use it. So the
// strategy is timed when the clock is first read and the cheaper one starts;
// from the mark it moves, once and for good, to ordered reads after
// switchAfter lost compare-and-swaps.
//
// Why the switch is safe: the mode only goes from high-water to ordered.
// If reading A happens before reading B, B loads the mode after A did, so B
// is ordered if A was. Every value A returns is the conversion of a counter
// value read before A returned; B's ordered read executes after its
// earlier loads, so after A returned, and reads a larger counter value; the
// conversion is one non-decreasing function of the counter value for every
// goroutine (calibrate.go). So B >= A.
const (
	monoHighWater uint32 = iota
	monoOrdered
)

const switchAfter = 256

var (
	monoMode atomic.Uint32
	// switchHeld is set by tests that exercise the mark under contention.
	switchHeld atomic.Bool
)

// mark is the high-water mark and its contention count, on a cache line of
// their own.
var mark struct {
	_    [64]byte
	v    atomic.Int64
	lost atomic.Uint32
	_    [52]byte
}

// MonotonicNanotime is strictly monotonic across goroutines: if reading B
// happens after reading A (in the Go memory model's sense), B >= A. It costs
// the cheaper, on this core, of Nanotime plus a compare-and-swap on a shared
// word and OrderedNanotime; once that word is contended it uses ordered reads
// for good, which share nothing (Source().MonotonicMode says which).
func MonotonicNanotime() int64 {
	if monoMode.Load() == monoOrdered {
		return OrderedNanotime()
	}
	v := Nanotime()
	seen := mark.v.Load()
	if v <= seen {
		return seen
	}
	if mark.v.CompareAndSwap(seen, v) {
		return v
	}
	return monotonicContended(v)
}

//go:noinline
func monotonicContended(v int64) int64 {
	if mark.lost.Add(1) >= switchAfter && !switchHeld.Load() {
		monoMode.Store(monoOrdered)
	}
	for {
		seen := mark.v.Load()
		if v <= seen {
			return seen
		}
		if mark.v.CompareAndSwap(seen, v) {
			return v
		}
	}
}

// startMonotonic picks MonotonicNanotime's first strategy; detection calls it
// before publishing the state. The OS clock is already strictly monotonic.
func startMonotonic(counter bool, alt bool) {
	if !counter || (!switchHeld.Load() && orderedReadsAreCheaper(cur.Load(), alt)) {
		monoMode.Store(monoOrdered)
	}
}

var probeSink int64

// orderedReadsAreCheaper times, with the counter itself, three batches of 32
// calls of each strategy's work (a conversion plus the mark's compare-and-swap,
// or an ordered read and a conversion) and compares the fastest batches.
func orderedReadsAreCheaper(p *params, alt bool) bool {
	const calls = 32
	highWater, ordered := ^uint64(0), ^uint64(0)
	for i := 0; i < 3; i++ {
		t0 := readCounterOrdered(alt)
		for j := 0; j < calls; j++ {
			// The mark itself: the values are real conversions of current
			// counter values, which is all its invariant asks.
			if v, ok := p.inRange(readCounter()); ok {
				if seen := mark.v.Load(); v > seen {
					mark.v.CompareAndSwap(seen, v)
				}
			}
		}
		t1 := readCounterOrdered(alt)
		for j := 0; j < calls; j++ {
			v, _ := p.inRange(readCounterOrdered(alt))
			probeSink += v
		}
		t2 := readCounterOrdered(alt)
		highWater, ordered = min(highWater, t1-t0), min(ordered, t2-t1)
	}
	return ordered < highWater
}

// holdHighWater, for tests: true puts MonotonicNanotime on the mark and keeps
// it there under contention; false lets it switch again. Holding is safe only
// while no other goroutine reads MonotonicNanotime.
func holdHighWater(hold bool) {
	switchHeld.Store(hold)
	if hold && ensureDecided() == stateCounter {
		monoMode.Store(monoHighWater)
	}
}

// Instant is a reading of Nanotime; compare and subtract them like
// time.Time values with a monotonic reading. The zero Instant is the
// package's load time.
type Instant struct{ ns int64 }

// Now reads Nanotime.
func Now() Instant { return Instant{Nanotime()} }

// MonotonicNow reads MonotonicNanotime.
func MonotonicNow() Instant { return Instant{MonotonicNanotime()} }

// OrderedNow reads OrderedNanotime.
func OrderedNow() Instant { return Instant{OrderedNanotime()} }

// InstantOf wraps a Nanotime value.
func InstantOf(nanotime int64) Instant { return Instant{nanotime} }

// Nanotime returns the reading in nanoseconds.
func (i Instant) Nanotime() int64 { return i.ns }

// Elapsed is the time since i, never negative (like time.Since for a
// monotonic reading).
func (i Instant) Elapsed() time.Duration {
	return max(0, time.Duration(Nanotime()-i.ns))
}

// Sub returns i-j, negative if j is later (like time.Time.Sub).
func (i Instant) Sub(j Instant) time.Duration { return time.Duration(i.ns - j.ns) }

// Add returns i+d (d may be negative).
func (i Instant) Add(d time.Duration) Instant { return Instant{i.ns + int64(d)} }

// Before reports whether i is before j.
func (i Instant) Before(j Instant) bool { return i.ns < j.ns }

// After reports whether i is after j.
func (i Instant) After(j Instant) bool { return i.ns > j.ns }

// Compare returns -1, 0 or +1 as i is before, equal to or after j.
func (i Instant) Compare(j Instant) int {
	switch {
	case i.ns < j.ns:
		return -1
	case i.ns > j.ns:
		return 1
	}
	return 0
}

// String formats the reading as a duration since the package loaded.
func (i Instant) String() string { return time.Duration(i.ns).String() }
