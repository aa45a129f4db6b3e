package fastnow

import (
	"math"
	"math/bits"

	"github.com/fastnow/fastnow/go/internal/osclock"
)

// Measuring the counter against the kernel's clocks (spec/SEMANTICS.md,
// "Calibration"; the Rust crate's timekeeper/calibrate.rs is the same design).
//
// A sample pairs a counter value with CLOCK_MONOTONIC (and CLOCK_REALTIME,
// for the wall tier) at one moment: the tightest of up to 7 brackets
// "monotonic, ordered counter read, monotonic", the counter matched to the
// bracket's midpoint, so its error is at most half the bracket.
// A sample whose every bracket was wide (the goroutine was preempted in
// each) measures nothing.
//
// The rate is measured over the most recent window of about a second:
// between the newest sample and the newest earlier sample at least 7/8 s
// older, or the oldest kept in a process's first second (windows of 1, 2,
// 4 ... ms). Over a second the brackets' error is negligible in the rate,
// and because the window is recent, the rate follows CLOCK_MONOTONIC's current
// rate, which NTP, chrony or PTP change at will, within about two seconds.
//
// A measurement more than 1/64 from the rate in use is suspect (the window
// may span a suspend or a migration): it is set aside and the window
// restarts; the next is believed if it agrees with the suspect one or with
// the rate in use. A new rate is never below 7/8 of the one in use, so a
// larger drop takes several windows.

const (
	windowNs = 1_000_000_000 // preferred length of a rate window
	// minWindowNs is the shortest window once samples are that far apart.
	// Samples come about a second apart, a little earlier or later; were a
	// window at least a full second, one that came early would double the
	// window, and the time the rate takes to follow a change (a window
	// after it, then a piece).
	minWindowNs       = windowNs - windowNs/8
	bracketsPerSample = 7 // the most brackets per counter sample; the narrowest wins
	realBrackets      = 3 // the most for the real-time offset
	// readerBrackets is the most brackets of each kind a reader's update
	// takes. The first is read with the update's code cold, about a second
	// after it last ran, and is often wider than a disturbed one (here
	// more often than in the crate: the path to the clocks goes through
	// the runtime); the second, warm, rarely is. With one, a reader's
	// samples measured nothing for seconds on end, and the rate stopped
	// following CLOCK_MONOTONIC's after NTP changed it.
	readerBrackets = 2
	suspectShift   = 6 // a rate more than 1/64 off is suspect
	windowSlots    = 12
)

// sample is one moment seen by the counter and the kernel's clocks.
type sample struct {
	ticks uint64 // the counter, read ordered
	mono  uint64 // CLOCK_MONOTONIC at that moment (the bracket's midpoint)
	width uint64 // width of the bracket mono came from
	real  uint64 // CLOCK_REALTIME at that moment, within [0, MaxInt64]
	// realWidth is the width of the bracket real came from (MaxUint64:
	// every one spanned a backward step, and real was read unbracketed).
	realWidth uint64
}

// takeSample takes a sample from c's counter and clocks.
//
// The brackets are chained (each monotonic reading closes one bracket and
// opens the next), and sampling stops at the first bracket no wider than
// goodWidth (0: take them all). A bracket within twice the tightest ever
// seen puts the counter within one such width of the moment, as good as the
// tightest of several over a window; so a warm sample costs one bracket and
// one more read of each clock for the real time, and only a disturbed one
// (cold caches, an interrupt) costs more: up to bracketsOfEach of each kind
// (a reader's update takes up to readerBrackets, so its cost is bounded; a
// sample whose brackets are all disturbed then measures nothing).
func takeSample(c clocks, goodWidth uint64, bracketsOfEach int) sample {
	t, m, w, last := brackets(c, min(bracketsOfEach, bracketsPerSample), c.counterOrdered, c.mono(), goodWidth)
	best := sample{ticks: t, mono: m, width: w}
	// CLOCK_REALTIME - CLOCK_MONOTONIC only changes when the clock is set, so
	// the narrowest bracket "monotonic, real, monotonic" gives it, and the
	// real time at the counter sample follows.
	if r, at, rw, _ := brackets(c, min(bracketsOfEach, realBrackets), c.real, last, goodWidth); rw != math.MaxUint64 {
		// Both below 2^63: the difference fits.
		best.real = clampUnix(int64(best.mono), int64(r)-int64(at))
		best.realWidth = rw
	} else {
		best.realWidth = rw
		best.real = c.real()
	}
	return best
}

// brackets reads value between monotonic readings up to n times, the first
// bracket opened by opened, and returns the narrowest bracket's value, its
// midpoint and width (MaxUint64 when every bracket spanned a backward step,
// the value and midpoint then the last ones read), and the last monotonic
// reading, which opens the next bracket.
func brackets(c clocks, n int, value func() uint64, opened, goodWidth uint64) (v, mid, width, last uint64) {
	width = math.MaxUint64
	before := opened
	for i := 0; i < n; i++ {
		x := value()
		after := c.mono()
		if after >= before { // a bracket across a backward step means nothing
			w := after - before
			if w < width {
				v, mid, width = x, before+w/2, w
			}
			if w <= goodWidth {
				return v, mid, width, after
			}
		} else if width == math.MaxUint64 {
			v, mid = x, after
		}
		before = after
	}
	return v, mid, width, before
}

// clampUnix returns a+b clamped to [0, MaxInt64], for a >= 0.
func clampUnix(a, b int64) uint64 {
	s := a + b
	switch {
	case b > 0 && s < a: // overflowed
		return osclock.MaxUnixNano
	case s < 0:
		return 0
	}
	return uint64(s)
}

// maxCounterHz is the fastest counter believed: a measured rate that says
// the counter ran faster than this spanned a jump of it (or a suspend it
// counted), not a rate. (Counters run at tens of MHz to a few GHz.)
const maxCounterHz = 20_000_000_000

// discontinuous reports whether the counter did something other than count
// time between two samples: it went back, or ran faster against
// CLOCK_MONOTONIC than any counter does (it jumped, or counted a suspend).
func discontinuous(a, b *sample) bool {
	if b.ticks < a.ticks {
		return true
	}
	hi, lo := bits.Mul64(saturatingSub(b.mono, a.mono), maxCounterHz)
	if hi >= 1_000_000_000 {
		return false // the fastest count does not fit in 64 bits: no tick count exceeds it
	}
	fastest, _ := bits.Div64(hi, lo, 1_000_000_000)
	return b.ticks-a.ticks > saturatingAdd(fastest, 1)
}

// slopeBetween is the rate between two samples, as a line slope.
func slopeBetween(a, b *sample) (uint64, bool) {
	if b.ticks <= a.ticks || b.mono <= a.mono {
		return 0, false
	}
	return slopeOf(b.mono-a.mono, b.ticks-a.ticks)
}

// window holds the samples of the current rate window, oldest first: the
// newest sample at least a window old (the start of the next measurement),
// then samples at least an eighth of a window apart, so a dozen slots
// always suffice.
type window struct {
	points [windowSlots]sample
	n      int
}

func (w *window) clear() { w.n = 0 }

func (w *window) first() (sample, bool) { return w.points[0], w.n > 0 }

// push adds a sample (unless it follows the last one too closely) and drops
// those no longer needed: everything before the newest sample at least a
// window old.
func (w *window) push(s sample) {
	if w.n > 0 && saturatingSub(s.mono, w.points[w.n-1].mono) < windowNs/8 {
		return
	}
	keep := 0
	for i := w.n - 1; i >= 0; i-- {
		if saturatingSub(s.mono, w.points[i].mono) >= minWindowNs {
			keep = i
			break
		}
	}
	w.n = copy(w.points[:], w.points[keep:w.n])
	if w.n == len(w.points) {
		w.n = copy(w.points[:], w.points[1:w.n])
	}
	w.points[w.n] = s
	w.n++
}

// startFor returns where a window ending at s starts: the newest sample at
// least minWindowNs before it, else the oldest kept.
func (w *window) startFor(s *sample) (sample, bool) {
	for i := w.n - 1; i >= 0; i-- {
		if saturatingSub(s.mono, w.points[i].mono) >= minWindowNs {
			return w.points[i], true
		}
	}
	return w.points[0], w.n > 0
}

// judge decides what to make of a measured slope, given the one in use and
// the last suspect one (0: none): accept it (held to the 7/8 floor), or
// set it aside as suspect.
func judge(inUse, measured, suspect uint64) (slope uint64, accept bool) {
	near := func(a, b uint64) bool { return absDiff(a, b) <= b>>suspectShift }
	if near(measured, inUse) || (suspect != 0 && near(measured, suspect)) {
		return max(measured, floor(inUse)), true
	}
	return measured, false
}

// floor is the smallest slope a new piece may have after one with slope
// inUse: 7/8 of it.
func floor(inUse uint64) uint64 { return inUse - inUse>>3 }

func absDiff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

// saturatingAdd and saturatingSub are a+b and a-b on uint64 readings and
// counter values, clamped to [0, MaxUint64] (Rust's u64::saturating_add and
// saturating_sub). The int64 arithmetic of Instant values is addSat and
// subSat (precise.go).
func saturatingAdd(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxUint64
}

func saturatingSub(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return 0
}
