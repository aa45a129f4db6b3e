package fastnow

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fastnow/fastnow/go/internal/osclock"
)

// The one state every clock reads, and its one writer (spec/SEMANTICS.md,
// "The timeline"; the Rust crate's timekeeper module is the same design).
//
// Everything a reader needs (which source to read, the line that converts
// the counter, the offsets of the clocks kept from it) is one immutable
// state value behind one atomic pointer. One writer at a time
// (timekeeper.mu) builds the next state and publishes it; readers only
// load the pointer, and only ever TryLock the mutex, so a reader never combines parts of two states and
// never blocks on the writer's lock.
//
// This file holds the timekeeper, the clocks it reads and its controls;
// state.go the published state and its conversion; read.go the read base,
// every reader's slow path (the fast paths are read_amd64.s and
// read_generic.go); writer.go the writer's state machine, which measures
// with calibrate.go, converts with line.go and keeps the offsets with
// offsets.go.

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
	// The wall offset is used only well inside [0, MaxInt64] Unix
	// nanoseconds, so that a reading a little before or after its anchor
	// cannot leave the range; otherwise the wall tier reads the system
	// clock.
	wallGuardNs = 1 << 41
	never       = math.MaxUint64
)

// Following CLOCK_MONOTONIC where the counter leaves it (spec/SEMANTICS.md,
// "Suspend, resume and counter jumps"; writer.go, rebase).
const (
	// rebaseNs is how far the counter line may stray from CLOCK_MONOTONIC
	// plus the offset the timeline keeps to it (keeper.monoOffset) before
	// an update re-bases it: far above what calibration ever strays by
	// (nanoseconds to microseconds), far below what a suspend the counter
	// counted, a counter reset or a migration's jump moves it by.
	rebaseNs = 1_000_000
	// settleNs: while a re-base settles — from a re-base until an update
	// finds the timeline this close to CLOCK_MONOTONIC plus its offset
	// (beyond the sample's width) — updates re-base again past this instead
	// of rebaseNs. The piece that re-based had the rate measured before the
	// jump, which may be wrong since (a migration to another counter rate),
	// and what it strays by before the new rate is measured would otherwise
	// stay in the timeline.
	settleNs = 10_000
	// conversionRateErrorPpb is the rate error, in parts per billion,
	// that the stated error of a conversion between the timelines and the
	// kernel's clocks allows for over the time since its offset was
	// measured (conversion.go): 1 ppm, what 1 s intervals are held to from
	// 3 s after a change of CLOCK_MONOTONIC's rate (in steady state they
	// agree to a few hundredths of a ppm; in the seconds after a change the
	// rate in use may be off by the whole change).
	conversionRateErrorPpb = 1_000
	// floorSlackNs is how far below the publishing sample's counter value a
	// reader that loaded a state may still read the counter (state.floor):
	// other cores' counters may be a few ticks behind, never this much
	// unless the counter went back.
	floorSlackNs = 100_000
)

// slowSamplesForACheck is how many samples in a row whose every bracket was
// wide ask for the kernel's verdict (see noteSlowSample).
const slowSamplesForACheck = 3

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
	// proc+timekeeper_view in the assembly): the same pointer as state
	// where that is a counter state (viewOf), and nil otherwise — before
	// the first state, on the OS clock, and while a test's ManualClock is
	// in use (UseClock) — which sends every fast path to its slow path,
	// where the mock is read (read.go, viewSlow). So a non-nil view is
	// all a fast path checks before it reads the counter: that read
	// cannot fault once the counter has been the source. Stored under mu.
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

// keeper is the writer's private bookkeeping, touched only under mu.
type keeper struct {
	decided  bool
	decision decision
	state    state // the last state published
	window   window
	minWidth uint64 // the tightest bracket seen: the yardstick for preempted ones

	// bootWidth is the tightest bracket of a boot offset measurement seen,
	// in ns, plus one (0: none yet); see bootOffset.
	bootWidth uint64

	periodNs uint64
	rate     uint64 // the newest accepted slope (the next piece's)
	suspect  uint64 // a slope set aside as suspect (0: none)

	refinements   int
	windowNs      uint64 // the window the rate in use was measured over
	origin        Origin
	nextCheckMono uint64
	// wallAt is the monotonic time of the sample the wall offset in use
	// was measured at (offsets.go, wallOffset).
	wallAt uint64
	// checkWanted: the kernel's verdict is read at the next update once a
	// check is due, a reader's included (a re-base, or samples that show
	// the kernel's clock turned into a system call; see noteSlowSample).
	checkWanted bool
	// slowSamples counts the samples in a row whose every bracket was wide.
	slowSamples int
	// reader: a reader makes the update in progress (updateAsReader), so
	// its work is bounded: readerBrackets of each kind, and the kernel's
	// verdict only where a reading showed cause (checkWanted).
	reader bool

	firstMono    uint64
	counterSince uint64 // monotonic time the counter took over (0: not yet)
	demoting     reason // the kernel dropped the counter: the fallback reason, until the switch
	demoted      bool
	demotedAt    uint64     // Unix nanoseconds of the demotion
	verdicts     verdictLog // what the attempts to read the kernel's verdict gave (verdict.go)

	// monoOffset is the timeline less CLOCK_MONOTONIC that counter pieces
	// are kept to (see rebaseNs): what re-bases move the timeline back to.
	monoOffset uint64
	// monoMeasured is the last measurement of the timeline less
	// CLOCK_MONOTONIC on the timeline as it runs now, which a state
	// published from a disturbed sample keeps (offsets.go); none (ok
	// false) on the OS clock, and from a re-base until an undisturbed
	// sample measures it again.
	monoMeasured monoMeasured
	// bootMeasured is the last measurement of the boot timeline less the
	// boot clock, which a state whose boot measurement read nothing keeps.
	bootMeasured measured
	// driftPpb is how fast the timeline drifted from CLOCK_MONOTONIC plus
	// its offset between the last measurements, and between the two
	// before, in ppb (offsets.go).
	driftPpb [2]uint64
	// lastRebase is the last re-base, and rebases how many there were.
	lastRebase rebaseSeen
	rebases    int
	// bootLowering is how far a re-base just moved the precise readings
	// forward beyond the line they were on: the boot offset may come down
	// by as much at the next publish, and boot readings still never step
	// back (boot.go).
	bootLowering uint64
	// settling: a re-base came and the timeline is not back in step within
	// settleNs yet.
	settling bool
	// trustNext: the next rate measurement is believed as it is (its window
	// began at a re-base, after the jump, so nothing it spans makes it
	// suspect).
	trustNext bool
	// unused is the rest of the block the next published states are
	// taken from (see publish).
	unused []state
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
func (*machine) mono() uint64           { return uint64(osclock.Mono()) }
func (*machine) real() uint64           { return osclock.Real() }
func (*machine) boot() uint64           { return osclock.Boot() }
func (m *machine) observe() decision    { return observe(&m.cs) }
func (m *machine) verdict() verdict     { return kernelVerdict(&m.cs) }

func (*machine) waitMono(until uint64) {
	for {
		now := uint64(osclock.Mono())
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
		// Not while the verdict is awaited: that may last.
		if tk.verdictAwaited() {
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
