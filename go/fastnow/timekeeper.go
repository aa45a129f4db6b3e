package fastnow

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The one state every clock reads, and its one writer (spec/SEMANTICS.md,
// "The timeline"; the Rust crate's timekeeper module is the same design).
//
// Everything a reader needs (which source to read, the line that converts
// the counter, the wall clock's line) is one immutable state value behind
// one atomic pointer. One writer at a time (timekeeper.mu) builds the next
// state and publishes it; readers only load the pointer, and only ever
// TryLock the mutex, so a reader never combines parts of two states and
// never blocks on the writer's lock.
//
// This file holds the timekeeper, the clocks it reads and its controls;
// state.go the published state and its conversion; read.go every reader's
// slow path (the fast paths are read_amd64.s and read_generic.go);
// writer.go the writer's state machine, which measures with calibrate.go
// and converts with line.go.

const (
	marginNs              = 100           // how far ahead of the old source a new one starts, beyond twice the bracket
	minPeriodNs           = 1_000_000     // the first update period, and the shortest
	maxPeriodNs           = 1_000_000_000 // the longest time between two updates
	readerPeriodNs        = 500_000_000   // without upkeep, where the kernel is re-checked
	checkPeriodNs         = 1_000_000_000 // how often the kernel's verdict is read again
	maxGraceNs            = 2_000_000     // the longest grace between trigger and end
	upkeepSlackNs         = 2_000_000     // while upkeep runs, readers update only this late
	minWallIntervalNs     = minPeriodNs   // the shortest wall resync interval (see setWallInterval)
	maxWallIntervalNs     = 1 << 40       // the longest wall resync interval
	defaultWallIntervalNs = 1_000_000_000
	// The wall line is used only well inside [0, MaxInt64] Unix nanoseconds,
	// so that a reading a little before or after its anchor cannot leave
	// the range; otherwise the wall tier reads the system clock.
	wallGuardNs = 1 << 41
	never       = math.MaxUint64
)

// upkeepPeriodNs is how often, at least, the upkeep goroutine updates: a
// new rate takes over at the end of the piece in use, so short pieces let it
// take over soon after it is measured (a sample four times a second costs
// the upkeep goroutine little, and readers nothing).
const upkeepPeriodNs = 250_000_000

// firstSpanNs is how long after the process's first moment readings taken
// while the first state is being published read the monotonic clock at its
// full rate (see beforeFirst): the first state's span, minPeriodNs plus its
// grace.
const firstSpanNs = minPeriodNs + minPeriodNs/4

// clocks is what a timekeeper reads: the machine's counter and clocks, or
// simulated ones in tests.
type clocks interface {
	counter() uint64        // the bare counter
	counterOrdered() uint64 // the counter, read after every preceding load
	mono() uint64           // CLOCK_MONOTONIC nanoseconds (Go: since the package loaded)
	real() uint64           // CLOCK_REALTIME nanoseconds, clamped to [0, MaxInt64]
	boot() uint64           // mono() plus the time suspended since boot (CLOCK_BOOTTIME on mono's base)
	observe() decision      // detection: what the hardware, kernel and environment say
	verdict() verdict       // the kernel's verdict on the counter, read again
	waitMono(until uint64)  // returns once mono() >= until (not for read paths)
}

// timekeeper is the published state, the writer's lock and bookkeeping, and
// the clocks it samples. The process has one, proc; tests build others.
type timekeeper struct {
	// state must stay the first field: the amd64 assembly loads it at
	// proc+timekeeper_state, and the pointer is atomic.Pointer's only word.
	state atomic.Pointer[state]
	// view is what the package-level read functions load (at
	// proc+timekeeper_view in the assembly): the same pointer as state,
	// except while a test's ManualClock is in use (UseClock), when it is
	// mockView, whose zero span and wall deadline send every fast path to
	// its slow path, where the mock is read. Stored under mu.
	view   atomic.Pointer[state]
	mu     sync.Mutex
	k      keeper // guarded by mu
	clocks clocks

	upkeep       atomic.Bool   // the upkeep goroutine runs (and does the updates)
	upkeepDue    atomic.Uint64 // monotonic time of the upkeep's next update
	wallInterval atomic.Uint64 // the wall resync interval in ns (0: default)
	firstMono    atomic.Uint64 // the process's first moment (0: none yet); see beforeFirst
	firstBoot    atomic.Uint64 // the agreed first boot offset xor noBootOffset (0: none yet); see firstBootOffset
	bootSeen     atomic.Pointer[bootSeen]
	// counterRead is set before a counter state is published: from then on
	// reading the counter cannot fault (detection accepted it), so the
	// ordered fast path reads it before loading the state
	// (orderedNanotimeCounter; read_amd64.s loads it at
	// proc+timekeeper_counterRead, atomic.Bool's only word). It is cleared
	// on the OS clock for good, where that read would be wasted.
	counterRead atomic.Bool

	onPublish func(*state) // tests: sees every state published, under mu
}

// proc is the process's timekeeper, on the machine's clocks. Its zero
// state is "nothing published": importing the package runs nothing.
var proc = timekeeper{clocks: &theMachine}

// machine is the clocks of this machine, for proc. Its fields are touched
// only under proc.mu.
type machine struct {
	cs clocksourceFile
}

var theMachine machine

func (*machine) counter() uint64        { return readCounter() }
func (*machine) counterOrdered() uint64 { return readCounterOrdered(orderedAlt) }
func (*machine) mono() uint64           { return uint64(monoNow()) }
func (*machine) real() uint64           { return realNow() }
func (*machine) boot() uint64           { return bootNow() }
func (m *machine) observe() decision    { return observe(&m.cs) }
func (m *machine) verdict() verdict     { return kernelVerdict(&m.cs) }

func (*machine) waitMono(until uint64) {
	for {
		now := uint64(monoNow())
		if now >= until {
			return
		}
		if d := until - now; d > 50_000 {
			time.Sleep(time.Duration(d))
		} else {
			runtime.Gosched()
		}
	}
}

// published waits until the first state is published (not for read paths).
func (tk *timekeeper) published() {
	for !tk.ensurePublished() {
		runtime.Gosched()
	}
}

// counterChosen reports whether the counter is, or is about to be, the
// source.
func (tk *timekeeper) counterChosen() bool {
	tk.published()
	s := tk.state.Load()
	return s.mode == modeCounter || (s.mode == modeOS && s.trigger != never)
}

// setUpkeep records that the upkeep goroutine started or stopped.
func (tk *timekeeper) setUpkeep(running bool) {
	tk.upkeep.Store(running)
	tk.upkeepDue.Store(0)
}

// forceUpdate updates the state now (recalibrate, resync, a new interval).
func (tk *timekeeper) forceUpdate() {
	tk.published()
	tk.mu.Lock()
	tk.update(causeForced)
	tk.mu.Unlock()
}

// finishWarmUp waits out the first millisecond, if it is not over, and
// switches to the counter (not for read paths).
func (tk *timekeeper) finishWarmUp() {
	tk.published()
	for {
		s := tk.state.Load()
		if s.mode != modeOS || s.trigger == never {
			return
		}
		tk.clocks.waitMono(s.trigger)
		tk.forceUpdate()
	}
}

// recalibrate restarts the rate window with a fresh millisecond.
func (tk *timekeeper) recalibrate() {
	tk.published()
	tk.mu.Lock()
	counter := tk.k.state.mode == modeCounter
	var start uint64
	if counter {
		s := tk.sample()
		tk.k.window.clear()
		tk.k.window.push(s)
		tk.k.suspect = 0
		tk.k.periodNs = minPeriodNs
		start = s.mono
	}
	tk.mu.Unlock()
	if counter {
		// Measure over a fresh millisecond, without holding the lock.
		tk.clocks.waitMono(start + minPeriodNs)
		tk.forceUpdate()
	}
}

func (tk *timekeeper) upkeepSlack() uint64 {
	if tk.upkeep.Load() {
		return upkeepSlackNs
	}
	return 0
}
