package fastnow

import (
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Nanotime returns monotonic nanoseconds on the process's timeline (which
// starts near zero when the package loads), from the CPU counter, for a
// fraction of time.Since's cost.
//
// Guarantee: never decreases within a goroutine (the conversion is one
// non-decreasing function of the counter across every recalibration and
// source switch: see state.go). Across goroutines, readings can be out
// of order by the CPU's speculation window (microseconds); use
// MonotonicNanotime when a later event must never get an earlier stamp.
// Like CLOCK_MONOTONIC on Linux it does not count the time the machine was
// suspended, whatever the counter did meanwhile (see the package docs;
// BootNanotime counts it).
//
// The first call in a process decides the source and publishes the first
// state without waiting: it reads the OS clock until the counter's rate
// has been measured (1 ms; a frequency the CPU publishes is used only when
// that measurement agrees with it).
func Nanotime() int64 { return nanotimeCounter() }

// OrderedNanotime is Nanotime with the counter read only after every
// earlier load has completed (RDTSCP or LFENCE;RDTSC; on arm64 ISB, the
// counter read and a load that depends on it, so that the read is also
// complete before any later store), so it is not earlier than anything an
// atomic load before it observed.
func OrderedNanotime() int64 { return orderedNanotimeCounter() }

// MonotonicNanotime's two strategies, as in the Rust crate (whose
// precise.rs explains the choice at length): a high-water mark that every
// reading raises with a compare-and-swap, or an ordered counter read. The
// mark is nearly free on cores whose compare-and-swap overlaps the counter
// read (AMD Zen) and costs more than an ordered read on Intel; either way it
// costs a cache-line transfer per call once several cores use it. So the
// strategy is timed when the clock is first read and the cheaper one starts;
// from the mark it moves, once and for good, to ordered reads after
// switchAfter lost compare-and-swaps within contentionWindowNs (readers on
// several cores at once lose that many within a millisecond; losses further
// apart are chance collisions, and start the count again). The coarse
// tier's refresh (the upkeep goroutine's) takes its own reading
// (readingForCache): it neither chooses the strategy nor counts as
// contention.
//
// Why the switch is safe: the mode only goes from high-water to ordered.
// If reading A happens before reading B, B loads the mode after A did, so B
// is ordered if A was. Every value A returns is the conversion of a counter
// value read before A returned; B's ordered read executes after its
// earlier loads, so after A returned, and reads a larger counter value; the
// conversion is one non-decreasing function of the counter value for every
// goroutine, across source switches too (state.go). So B >= A. (The
// same holds on the OS clock, which the kernel keeps strictly monotonic.)
const (
	monoUndecided uint32 = iota
	monoHighWater
	monoOrdered
	// monoMocked is or'ed into monoMode while a test's ManualClock is in
	// use (UseClock): no case of MonotonicNanotime's switch matches, and
	// its slow path reads the mock, so mock readings never reach the mark.
	monoMocked uint32 = 4
)

// MonotonicMode is MonotonicNanotime's strategy (Info.MonotonicMode).
type MonotonicMode uint8

const (
	MonotonicUndecided MonotonicMode = iota // no MonotonicNanotime reading yet; the first times both
	MonotonicHighWater                      // a plain reading raised to a shared high-water mark
	MonotonicOrdered                        // an ordered counter read (or the OS clock); nothing shared
)

// String returns "undecided", "high-water" or "ordered".
func (m MonotonicMode) String() string {
	switch m {
	case MonotonicUndecided:
		return "undecided"
	case MonotonicHighWater:
		return "high-water"
	case MonotonicOrdered:
		return "ordered"
	}
	return "MonotonicMode(" + strconv.Itoa(int(m)) + ")"
}

// MarshalText encodes m as its String.
func (m MonotonicMode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

const (
	// switchAfter is how many lost compare-and-swaps on the mark, within
	// contentionWindowNs, move MonotonicNanotime to ordered reads.
	switchAfter = 256
	// contentionWindowNs is how close together switchAfter losses must come
	// to count as contention.
	contentionWindowNs = 1_000_000_000
	// markFreshNs is how far below an ordered reading taken now the mark may
	// be and still be the coarse tier's cached value (readingForCache).
	markFreshNs = 1_000
)

var (
	monoMode atomic.Uint32
	// switchHeld is set by tests that exercise the mark under contention.
	switchHeld atomic.Bool
)

// mark is the high-water mark and its contention count (the losses since
// the reading since, within contentionWindowNs), on a cache line of their
// own.
var mark struct {
	_     [64]byte
	v     atomic.Int64
	lost  atomic.Uint32
	since atomic.Int64
	_     [40]byte
}

// MonotonicNanotime is strictly monotonic across goroutines: if reading B
// happens after reading A (in the Go memory model's sense), B >= A. It costs
// the cheaper, on this core, of Nanotime plus a compare-and-swap on a shared
// word and OrderedNanotime; once that word is contended it uses ordered reads
// for good, which share nothing (Source().MonotonicMode says which). The
// first reading in a process times both (a few microseconds). On ordered
// reads this holds as far as the cores' counters agree, which the kernel
// checks before it uses the counter (a hypervisor can still set virtual
// CPUs' counters a few ticks apart, and CLOCK_MONOTONIC is then early by as
// much; the repository's spec/SEMANTICS.md).
func MonotonicNanotime() int64 {
	switch monoMode.Load() {
	case monoHighWater:
		v := nanotimeReal()
		seen := mark.v.Load()
		if v <= seen {
			return seen
		}
		if mark.v.CompareAndSwap(seen, v) {
			return v
		}
		return monotonicContended(v)
	case monoOrdered:
		return orderedNanotimeReal()
	}
	return monotonicSlow()
}

// monotonicSlow is MonotonicNanotime before its strategy is chosen, or
// while a test's ManualClock is in use.
//
//go:noinline
func monotonicSlow() int64 {
	if monoMode.Load()&monoMocked != 0 {
		if c := mocked.Load(); c != nil {
			return c.nanotime()
		}
	}
	return monotonicReal()
}

// monotonicReal is MonotonicNanotime on the real clocks, whatever a
// test's ManualClock says. Its high-water step is MonotonicNanotime's,
// written twice on purpose: as a shared function it is not inlined (its
// cost exceeds the inliner's budget), and the call would land on
// MonotonicNanotime's fast path.
func monotonicReal() int64 {
	for {
		switch monoMode.Load() &^ monoMocked {
		case monoHighWater:
			v := nanotimeReal()
			seen := mark.v.Load()
			if v <= seen {
				return seen
			}
			if mark.v.CompareAndSwap(seen, v) {
				return v
			}
			return monotonicContended(v)
		case monoOrdered:
			return orderedNanotimeReal()
		}
		chooseStrategy()
	}
}

// setMonoMocked sets or clears monoMocked in monoMode, keeping the
// strategy bits.
func setMonoMocked(on bool) {
	for {
		m := monoMode.Load()
		n := m &^ monoMocked
		if on {
			n |= monoMocked
		}
		if monoMode.CompareAndSwap(m, n) {
			return
		}
	}
}

//go:noinline
func monotonicContended(v int64) int64 {
	// The count restarts where the last window began more than
	// contentionWindowNs ago (racing goroutines may each restart it: the
	// count is a rate, and contention makes hundreds of losses a
	// millisecond).
	var lost uint32
	if since := mark.since.Load(); v-since > contentionWindowNs {
		mark.since.Store(v)
		mark.lost.Store(1)
		lost = 1
	} else {
		lost = mark.lost.Add(1)
	}
	if lost >= switchAfter && !switchHeld.Load() {
		// Only from the mark, and keeping monoMocked.
		for {
			m := monoMode.Load()
			if m&^monoMocked != monoHighWater || monoMode.CompareAndSwap(m, m&monoMocked|monoOrdered) {
				break
			}
		}
	}
	m, _ := raiseMark(v)
	return m
}

// raiseMark raises the mark to v, if it is below, and returns the mark and
// whether this call wrote it.
func raiseMark(v int64) (int64, bool) {
	for {
		seen := mark.v.Load()
		if v <= seen {
			return seen, false
		}
		if mark.v.CompareAndSwap(seen, v) {
			return v, true
		}
	}
}

// refreshMark is raiseMark for the coarse tier's refresh. Each write of the
// mark the upkeep goroutine's refresh makes may cost one of the program's
// readers, in the instant between its load of the mark and its
// compare-and-swap, one lost compare-and-swap that is not the program's
// contention: that refresh (upkeep) takes one loss off the count for each
// write. With a single reading goroutine the count then never exceeds one,
// however often the upkeep writes and however slow the reader's instant
// (an emulator's is long). A refresh the program makes is its own
// contention, and counts.
func refreshMark(v int64, upkeep bool) int64 {
	m, raised := raiseMark(v)
	if upkeep && raised {
		for {
			lost := mark.lost.Load()
			if lost == 0 || mark.lost.CompareAndSwap(lost, lost-1) {
				break
			}
		}
	}
	return m
}

// readingForCache is a reading for the coarse tier's cache, which every
// MonotonicNanotime read after the cache is loaded is at or above, and
// which never makes the strategy switch (the refreshing goroutine is the
// upkeep's, not the program's contention) nor chooses it (the program's
// first reading does). On ordered reads, an ordered reading: later ones
// are at or above it by their order. On the mark, while the program keeps
// it fresh (within markFreshNs of an ordered reading taken now) the mark
// itself, a reading already taken, with no write to its line (a write
// there every refresh was a lost compare-and-swap for the program's
// readers, or the refresh's own, often enough to look like contention);
// otherwise the ordered reading, raised into the mark first (refreshMark:
// the write takes back the loss it may cost a reader). Before the
// first MonotonicNanotime reading, the ordered reading, raised into the
// mark too, so that a strategy chosen later starts at or above it. The
// machine's reading, never a test's ManualClock's: the mark is the
// process's.
func readingForCache(upkeep bool) int64 {
	v := orderedNanotimeReal()
	switch monoMode.Load() &^ monoMocked {
	case monoOrdered:
		return v
	case monoHighWater:
		if seen := mark.v.Load(); seen >= v-markFreshNs {
			return seen
		}
	}
	return refreshMark(v, upkeep)
}

// chooseStrategy picks MonotonicNanotime's strategy at its first reading:
// the cheaper on this core, timed. The OS clock is already strictly
// monotonic across goroutines, so it never needs the mark.
//
//go:noinline
func chooseStrategy() {
	chosen := monoOrdered
	if proc.counterChosen() && (switchHeld.Load() || !orderedReadsAreCheaper()) {
		chosen = monoHighWater
	}
	// Only the first decision counts; monoMocked is kept.
	for {
		m := monoMode.Load()
		if m&^monoMocked != monoUndecided || monoMode.CompareAndSwap(m, m|chosen) {
			return
		}
	}
}

var probeScratch struct {
	_ [64]byte
	v atomic.Uint64
	_ [56]byte
}

// orderedReadsAreCheaper reports whether an ordered counter read costs
// less, on this core, than a bare read plus the high-water mark's
// compare-and-swap: the fastest of three batches of 32 calls each, timed
// with ordered reads of the counter itself. A scratch word on a line of its
// own stands in for the mark.
func orderedReadsAreCheaper() bool {
	const calls = 32
	alt := orderedAlt
	highWater, ordered := ^uint64(0), ^uint64(0)
	for i := 0; i < 3; i++ {
		t0 := readCounterOrdered(alt)
		for j := 0; j < calls; j++ {
			t := readCounter()
			if seen := probeScratch.v.Load(); t > seen {
				probeScratch.v.CompareAndSwap(seen, t)
			}
		}
		t1 := readCounterOrdered(alt)
		var sum uint64
		for j := 0; j < calls; j++ {
			sum += readCounterOrdered(alt)
		}
		t2 := readCounterOrdered(alt)
		probeSink.Add(sum)
		highWater, ordered = min(highWater, t1-t0), min(ordered, t2-t1)
	}
	return ordered < highWater
}

var probeSink atomic.Uint64

// holdHighWater, for tests: true puts MonotonicNanotime on the mark and keeps
// it there under contention; false lets it switch again. Holding is safe only
// while no other goroutine reads MonotonicNanotime.
func holdHighWater(hold bool) {
	switchHeld.Store(hold)
	if hold && proc.counterChosen() {
		monoMode.Store(monoMode.Load()&monoMocked | monoHighWater)
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

// Elapsed is the time since i, never negative; like time.Since for a
// monotonic reading, it saturates at the largest Duration when the
// interval does not fit in one.
func (i Instant) Elapsed() time.Duration { return max(0, subSat(Nanotime(), i.ns)) }

// Sub returns i-j, negative if j is later. Like time.Time.Sub, it returns
// the largest (or smallest) Duration when the result does not fit in one,
// never a wrapped value.
func (i Instant) Sub(j Instant) time.Duration { return subSat(i.ns, j.ns) }

// Add returns i+d (d may be negative). A result beyond the Instant's range
// is its largest (or smallest) value, never a wrapped one, so that
// Now().Add(math.MaxInt64) is after every reading, as a time.Time would be.
func (i Instant) Add(d time.Duration) Instant { return Instant{addSat(i.ns, int64(d))} }

// subSat is a-b, saturated to the Duration range (as package time's Sub).
func subSat(a, b int64) time.Duration {
	d := a - b
	switch {
	case d < 0 && a > b:
		return math.MaxInt64
	case d > 0 && a < b:
		return math.MinInt64
	}
	return time.Duration(d)
}

// addSat is a+d, saturated to the int64 range.
func addSat(a, d int64) int64 {
	s := a + d
	switch {
	case d > 0 && s < a:
		return math.MaxInt64
	case d < 0 && s > a:
		return math.MinInt64
	}
	return s
}

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

// String says what the reading is: how long after the package loaded it
// was taken, the zero of Nanotime's timeline ("1h30m0s after the package
// loaded"; "… before …" for an Instant moved back past it). A ManualClock's
// readings count as if the package had loaded a second before its start.
// Nanotime gives the number itself.
func (i Instant) String() string { return sinceLoad(i.ns, "") }

// sinceLoad is ns on Nanotime's timeline in words, with a last phrase.
func sinceLoad(ns int64, also string) string {
	side := " after the package loaded"
	if ns < 0 {
		side = " before the package loaded"
	}
	// Duration's own text, unsigned (its minimum prints without overflow).
	return strings.TrimPrefix(time.Duration(ns).String(), "-") + side + also
}
