package fastnow

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// Nanotime returns monotonic nanoseconds (since the package was loaded,
// roughly) from the CPU counter: about a third of time.Since's cost.
//
// Guarantee: never decreases within a goroutine, except that a reading
// concurrent with a calibration refinement may come out up to the rate
// change times the delay between the refining goroutine's last two
// instructions before publishing (well under a nanosecond unless it is
// descheduled exactly there). Across goroutines, readings can be out of
// order by the CPU's speculation window (about a microsecond); use
// MonotonicNanotime when a later event must never get an earlier stamp.
//
// The first call in a process detects the counter and calibrates it, which
// waits up to 1 ms when the CPU does not publish its frequency.
func Nanotime() int64 { return nanotimeCounter() }

// nanotimeSlowCounter is where nanotimeCounter's fast path gives up.
func nanotimeSlowCounter() int64 { return nanotimeSlow(false) }

// OrderedNanotime is Nanotime with the counter read only after every
// earlier load has completed (RDTSCP or LFENCE;RDTSC; ISB on arm64), so it
// is not earlier than anything an atomic load before it observed, except
// that, like Nanotime, a reading converted while a calibration refinement
// is being published can come out early by the rate change times that
// moment (well under a nanosecond for NTP-sized changes). MonotonicNanotime
// has no such exception.
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
	if t >= cur.Load().nextCheck {
		refine()
	}
	return cur.Load().at(t)
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

// mark is the high-water mark of MonotonicNanotime, on its own cache line.
var mark struct {
	_ [64]byte
	v atomic.Int64
	_ [56]byte
}

// MonotonicNanotime is strictly monotonic across goroutines: if reading B
// happens after reading A (in the Go memory model's sense), B >= A. It
// raises a shared high-water mark with one compare-and-swap, which costs
// little while one goroutine at a time uses it and a cache-line transfer per
// call when several cores do (see BENCHMARKS.md).
func MonotonicNanotime() int64 {
	v := Nanotime()
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
