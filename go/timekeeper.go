package fastnow

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The one state every clock reads, and its one writer (spec/SEMANTICS.md,
// "The timeline"; the Rust crate's timekeeper.rs is the same design).
//
// Everything a reader needs (which source to read, the line that converts
// the counter, the wall clock's line) is one immutable state value behind
// one atomic pointer. One writer at a time (timekeeper.mu) builds the next
// state and publishes it; readers only load the pointer, and only ever
// TryLock the mutex, so a reader never combines parts of two states and
// never blocks on the writer's lock.
//
// # Pieces and take-over points
//
// Readings are nanoseconds, converted at the read. A counter state is a
// piece of one non-decreasing function of the counter value:
//
//   - takeover <= t < trigger: the reader converts t with line (the fast
//     path: one unsigned compare, t-takeover < span);
//   - t < takeover: with prev, the line of the previous piece;
//   - trigger <= t < end: with line, and the reader (unless the upkeep
//     goroutine runs) tries the lock and publishes the next state;
//   - t >= end: the reader needs a newer state; it publishes one itself or
//     waits for the goroutine that is doing it (runtime.Gosched). (The Rust
//     crate returns a lower bound there instead, because its reader may be a
//     signal handler that interrupted the writer; Go code never is.)
//
// A new piece takes over exactly at the old piece's end, from the old
// line's value there, with the old line as its prev; and it is published
// only once the current piece has started (now >= takeover), so prev is
// always the right line below takeover. So any goroutine, whichever state it
// holds, converts every counter value it may convert as the newest state
// does: the conversion is one non-decreasing function across every update,
// forced or not (a new slope is never below 7/8 of the old one).
//
// # Source switches
//
// An OS state has a trigger and an end too, in CLOCK_MONOTONIC nanoseconds,
// and its readers read the clock and then check that the state pointer did
// not change (retrying if it did), so no OS reading is taken after a newer
// state is published. The first reading of a process publishes an OS state
// (readings are Go's monotonic clock, unchanged) while the counter's rate is
// measured; the counter takes over 1 ms later (at the frequency the
// hardware publishes, if any, when the millisecond's measurement agrees with
// it within 1/64) at the counter value matching the OS state's end, starting
// margin = 100 ns + twice the sample's bracket above it. If the kernel
// demotes the counter, the OS clock takes over for good at the monotonic
// time matching the counter piece's end, with an offset that continues the
// line margin above it. Readings move forward by a few hundred nanoseconds
// at a switch, never back.
//
// # Work off the read path
//
// An update costs a sample (when undisturbed one bracket of monotonic clock
// reads around the counter and one around the real clock: a few hundred
// nanoseconds of clock reads) or a re-check of the kernel's clocksource (one
// pread). Without upkeep it falls on the reader that reaches trigger, once
// per period (1, 2, 4 ... ms in the first second, then at most every second;
// twice a second on Linux amd64, where a sample and a check alternate).
// While the upkeep goroutine runs it updates before trigger, at least four
// times a second, and readers' triggers come 2 ms later, so readers only
// load.

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
// the upkeep goroutine about a microsecond each, readers nothing).
const upkeepPeriodNs = 250_000_000

// firstSpanNs is how long after the process's first moment readings taken
// while the first state is being published read the monotonic clock at its
// full rate (see beforeFirst): the first state's span, minPeriodNs plus its
// grace.
const firstSpanNs = minPeriodNs + minPeriodNs/4

const (
	modeOS      uint64 = 1 // readings come from CLOCK_MONOTONIC (+ osOffset)
	modeCounter uint64 = 2 // readings come from the counter
)

// state is what readers see: immutable once published. The amd64 assembly
// (counter_amd64.s) reads takeover, span, line, wall and wallDeadline
// through the go_asm.h offsets; the tests check the layout it relies on.
type state struct {
	// Counter mode: the counter value where this piece starts. OS mode: the
	// CLOCK_MONOTONIC value where it starts.
	takeover uint64
	// span is trigger - takeover in counter mode, the range of the read fast
	// path; 0 in OS mode, which keeps every fast path away from the counter.
	span uint64
	line Line
	wall Line
	// wallDeadline is the counter value at which a wall reader resyncs; 0
	// sends wall readers to the system clock.
	wallDeadline uint64
	mode         uint64
	trigger, end uint64
	prev         Line
	osOffset     uint64 // OS mode: readings are CLOCK_MONOTONIC + osOffset (mod 2^64)
}

// convert converts a reading of s's source (counter ticks, or monotonic
// nanoseconds in OS mode); past is true when the reading is at or past
// end, and due when it is at or past trigger.
func (s *state) convert(reading uint64) (nanos uint64, due, past bool) {
	if reading >= s.end {
		return 0, true, true
	}
	switch {
	case s.mode == modeOS:
		nanos = reading + s.osOffset
	case reading < s.takeover:
		nanos = s.prev.At(reading)
	default:
		nanos = s.line.At(reading)
	}
	return nanos, reading >= s.trigger, false
}

// clocks is what a timekeeper reads: the machine's counter and clocks, or
// simulated ones in tests.
type clocks interface {
	counter() uint64        // the bare counter
	counterOrdered() uint64 // the counter, read after every preceding load
	mono() uint64           // CLOCK_MONOTONIC nanoseconds (Go: since the package loaded)
	real() uint64           // CLOCK_REALTIME nanoseconds, clamped to [0, MaxInt64]
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

	onPublish func(*state) // tests: sees every state published, under mu
}

// proc is the process's timekeeper, on the machine's clocks. Its zero
// state is "nothing published": importing the package runs nothing.
var proc = timekeeper{clocks: &theMachine}

// keeper is the writer's private bookkeeping, touched only under mu.
type keeper struct {
	decided  bool
	decision decision
	state    state // the last state published
	window   window
	minWidth uint64 // the tightest bracket seen: the yardstick for preempted ones
	periodNs uint64
	rate     uint64 // the newest accepted slope (the next piece's)
	suspect  uint64 // a slope set aside as suspect (0: none)

	refinements   int
	windowNs      uint64 // the window the rate in use was measured over
	origin        string
	nextCheckMono uint64
	lastWasCheck  bool
	firstMono     uint64
	counterSince  uint64 // monotonic time the counter took over (0: not yet)
	demoting      string // the kernel dropped the counter: the fallback reason, until the switch
	demoted       bool
	demotedAt     uint64 // Unix nanoseconds of the demotion
	// unused is the rest of the block the next published states are
	// taken from (see publish).
	unused []state
}

// stateBlock is how many states are allocated at a time (3.3 KiB).
const stateBlock = 32

// publish makes s the state readers see.
//
// Each published state is a new object, never written again once readers
// may hold it: that is what makes a reader's state whole without a sequence
// check. The objects are carved from blocks of stateBlock allocated at once,
// not allocated one by one, so that only one publish in stateBlock enters
// the allocator. Without upkeep a publish runs on a reader's goroutine about
// twice a second, with cold caches, where an allocation cost 1–3 µs (tens
// of µs when it refilled its span): a reader's rate sample went from about
// 10 µs to 6 µs median (BENCHMARKS.md). A block is garbage once every state
// in it is unreferenced; none is ever recycled.
func (tk *timekeeper) publish(s state) {
	s.span = 0
	if s.mode == modeCounter {
		s.span = satSub(s.trigger, s.takeover)
	}
	k := &tk.k
	k.state = s
	if len(k.unused) == 0 {
		k.unused = make([]state, stateBlock)
	}
	p := &k.unused[0]
	k.unused = k.unused[1:]
	*p = s
	if tk.onPublish != nil {
		tk.onPublish(p)
	}
	tk.state.Store(p)
	if mocked.Load() == nil {
		tk.view.Store(p)
	}
}

func (tk *timekeeper) sample() sample {
	// Twice the tightest bracket seen; until there is one, all brackets.
	good := uint64(0)
	if w := tk.k.minWidth; w != math.MaxUint64 {
		good = satAdd(w, w)
	}
	return takeSample(tk.clocks, good)
}

// Why an update is asked for: a reader's reading (each of the three kinds
// is re-checked under the lock, and update treats each its own way), the
// upkeep's turn, or a forced update.
type cause int

const (
	causeReader     cause = iota // a reading reached trigger
	causeReaderLate              // a reading is past end
	causeReaderWall              // a wall reader's counter value reached the wall deadline
	causeUpkeep
	causeForced
)

// updateFromReader is a reader asking for an update; it never blocks. It
// reports whether this goroutine got the lock (so the state is now up to
// date for its reading).
//
//go:noinline
func (tk *timekeeper) updateFromReader(c cause, reading uint64) bool {
	if !tk.mu.TryLock() {
		return false
	}
	defer tk.mu.Unlock()
	if !tk.k.decided {
		tk.detect()
		return true
	}
	// Re-check under the lock, against what was actually read: another
	// goroutine may have updated meanwhile.
	s := &tk.k.state
	due := false
	switch c {
	case causeReader:
		due = reading >= s.trigger
	case causeReaderLate:
		due = reading >= s.end
	case causeReaderWall:
		due = s.mode == modeCounter && s.wallDeadline != 0 && reading >= s.wallDeadline
	}
	if due {
		tk.update(c)
	}
	return true
}

// ensurePublished runs detection and publishes the first state if nothing
// has; it never blocks. It returns false when another goroutine is doing it
// right now (the caller acts on beforeFirst meanwhile).
func (tk *timekeeper) ensurePublished() bool {
	if tk.state.Load() != nil {
		return true
	}
	if tk.mu.TryLock() {
		if !tk.k.decided {
			tk.detect()
		}
		tk.mu.Unlock()
		return true
	}
	return tk.state.Load() != nil
}

// beforeFirst is the state a reader acts on while another goroutine
// publishes the first one, given its monotonic reading: that clock
// unchanged, up to firstSpanNs past the process's first moment — the first
// reading any goroutine offered here, agreed through one compare-and-swap.
// The detecting goroutine agrees on the moment before it samples, and its
// first state ends no earlier than this one, so the rule of take-over
// points holds from the process's first reading on: a reading taken while
// the detecting goroutine was preempted for long waits for the first
// state, rather than returning a value that a later reading, converted by
// the published states, could lie below.
func (tk *timekeeper) beforeFirst(mono uint64) state {
	first := mono
	if !tk.firstMono.CompareAndSwap(0, max(mono, 1)) {
		first = tk.firstMono.Load()
	}
	end := first + firstSpanNs
	return state{mode: modeOS, trigger: end, end: end}
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

// upkeepTurn is the upkeep goroutine's turn: it updates the state if due,
// re-checks the kernel's verdict every second, and re-anchors the wall tier
// at once when the clock was set. It returns the monotonic time of its next
// turn.
func (tk *timekeeper) upkeepTurn(clockWasSet bool) uint64 {
	tk.published()
	tk.mu.Lock()
	defer tk.mu.Unlock()
	now := tk.clocks.mono()
	s := tk.k.state
	counter := s.mode == modeCounter
	warming := s.mode == modeOS && s.trigger != never
	if counter && tk.k.demoting != "" && now >= tk.upkeepDue.Load() {
		// The switch to the OS clock comes at the counter state's end:
		// when it is near, wait for it here, without the lock, so that
		// readers need not. Otherwise a regular turn (the wall line).
		t := tk.clocks.counterOrdered()
		if left := s.line.NanosFor(satSub(s.end, t)); t < s.end && left <= upkeepSlackNs {
			tk.mu.Unlock()
			tk.clocks.waitMono(satAdd(now, left+2_000))
			tk.mu.Lock()
		}
		tk.update(causeUpkeep)
	} else if (counter && (clockWasSet || now >= tk.upkeepDue.Load())) || (warming && now >= s.trigger) {
		tk.update(causeUpkeep)
	} else if counter && tk.k.decision.followsKernel() && now >= tk.k.nextCheckMono {
		tk.checkKernel()
	}
	s = tk.k.state
	switch {
	case s.mode == modeCounter:
		return min(tk.upkeepDue.Load(), tk.k.nextCheckMono)
	case s.trigger != never:
		return s.trigger
	}
	return never
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

// setWallInterval sets the wall resync interval, within
// [minWallIntervalNs, maxWallIntervalNs]. The floor keeps every piece at
// least a millisecond long (nextPiece schedules the next update no later
// than one interval ahead), so that whatever the interval, a reading stays
// one load and a compare and updates come at most once a millisecond: a
// reader never publishes state after state.
func (tk *timekeeper) setWallInterval(ns uint64) {
	tk.wallInterval.Store(min(max(ns, minWallIntervalNs), maxWallIntervalNs))
	tk.forceUpdate()
}

func (tk *timekeeper) wallIntervalNs() uint64 {
	if ns := tk.wallInterval.Load(); ns != 0 {
		return ns
	}
	return defaultWallIntervalNs
}

func (tk *timekeeper) upkeepSlack() uint64 {
	if tk.upkeep.Load() {
		return upkeepSlackNs
	}
	return 0
}

// switchSampleTries is how many more samples a source switch takes when
// one was preempted.
const switchSampleTries = 8

// narrowSample is a sample for matching two sources, where the bracket's
// width becomes a forward step of every reading (switchMargin): a
// preempted one is taken again, a few times (a switch happens once; a
// thread preempted mid-sample usually runs on undisturbed once it is back).
func (tk *timekeeper) narrowSample() sample {
	best := tk.sample()
	for i := 0; i < switchSampleTries && tk.preempted(&best); i++ {
		if s := tk.sample(); s.width < best.width {
			best = s
		}
	}
	return best
}

// preempted reports whether a sample's brackets were all wide (the
// goroutine was preempted or interrupted in each): its moment is too
// uncertain to use.
func (tk *timekeeper) preempted(s *sample) bool {
	if s.width == math.MaxUint64 {
		return true // no bracket was valid
	}
	m := min(tk.k.minWidth, s.width)
	return m <= math.MaxUint64/8 && s.width > 4*m+200
}

// detect observes the machine and publishes the first state: the OS clock,
// for good or for the first millisecond, while the counter's rate is
// measured (see warmUpStep).
func (tk *timekeeper) detect() {
	k := &tk.k
	k.decision = tk.clocks.observe()
	k.decided = true
	k.minWidth = math.MaxUint64
	k.periodNs = minPeriodNs
	// The counter is read only once it is chosen: a rejected one may fault
	// (PR_SET_TSC) or mean nothing. Before the sample, this goroutine agrees
	// on the process's first moment, so that the state it publishes ends no
	// earlier than the one readers act on meanwhile (beforeFirst); an OS
	// state for good has no end to agree on.
	counter := k.decision.fallback == ""
	var first sample
	var agreedEnd uint64
	if counter {
		agreedEnd = tk.beforeFirst(tk.clocks.mono()).end
		first = tk.sample()
	} else {
		first.mono = tk.clocks.mono()
	}
	k.firstMono = first.mono
	k.nextCheckMono = first.mono + checkPeriodNs
	trigger, end := uint64(never), uint64(never)
	if counter {
		k.window.push(first)
		k.minWidth = first.width
		k.origin = OriginPending
		promoteAt := first.mono + minPeriodNs
		trigger, end = promoteAt, max(promoteAt+grace(minPeriodNs), agreedEnd)
	} else {
		k.origin = OriginOS
	}
	tk.publish(state{mode: modeOS, trigger: trigger, end: end})
}

// update is one state update.
func (tk *timekeeper) update(c cause) {
	k := &tk.k
	if !k.decided {
		return
	}
	s := k.state
	if s.mode == modeOS {
		if s.trigger != never && tk.clocks.mono() >= s.trigger {
			tk.warmUpStep()
		}
		return
	}
	// Readers without upkeep alternate a sample with a re-check of the
	// kernel's verdict, so a reader at the trigger pays for one of them,
	// not both (a few hundred nanoseconds, or one pread).
	// A reader past the state's end samples, whatever the turn: the new
	// piece converts everything since that end, which must be done at a
	// measured rate, not at the one in use before (which the kernel may have
	// changed meanwhile, during a pause of the program). When a check is
	// due it checks too: a program reading the clock less often than a
	// grace period (every 30 ms, say) only ever arrives past the end, and
	// would never check otherwise. A wall reader always samples: the wall
	// line must be re-anchored when its deadline comes, or its error would
	// grow past one interval's.
	checkDue := k.decision.followsKernel() && tk.clocks.mono() >= k.nextCheckMono
	if checkDue && c == causeReader && !k.lastWasCheck {
		k.lastWasCheck = true
		if tk.checkKernel() || k.demoting != "" {
			return // demoted, or the current piece runs out first
		}
		// Nothing measured: the next piece at the rate in use, if the
		// current one has started (a wall reader can get here before).
		if now := tk.clocks.counterOrdered(); now >= s.takeover {
			tk.publish(tk.nextPiece(now))
		}
		return
	}
	k.lastWasCheck = false
	if checkDue && (c == causeUpkeep || c == causeForced || c == causeReaderLate) && tk.checkKernel() {
		return
	}
	if k.demoting != "" && tk.clocks.counterOrdered() >= s.end {
		tk.demote(k.demoting)
		return
	}
	smp := tk.sample()
	tk.measure(&smp)
	// A new piece can only follow one that has started: a reader holding
	// the next state converts counter values below its take-over point with
	// prev, the current line, which must be the right one there. (Readers
	// get here past trigger, which is past the take-over point; forced,
	// wall and upkeep updates can come earlier.) And none follows once the
	// kernel has dropped the counter: the current piece runs out first.
	next := s
	if smp.ticks >= s.takeover && k.demoting == "" {
		next = tk.nextPiece(smp.ticks)
	} else if tk.upkeep.Load() {
		// The upkeep's next turn: where the current piece starts, or, with
		// a switch pending, just past its end.
		if k.demoting != "" {
			// Its regular turn (the wall line), or before the end, to wait for it.
			endDue := satSub(satAdd(smp.mono, s.line.NanosFor(satSub(s.end, smp.ticks))), upkeepSlackNs)
			tk.upkeepDue.Store(min(endDue, satAdd(smp.mono, min(k.periodNs, tk.wallIntervalNs()))))
		} else {
			tk.upkeepDue.Store(satAdd(smp.mono, s.line.NanosFor(satSub(s.takeover, smp.ticks))))
		}
	}
	next.wall, next.wallDeadline = tk.wallLine(&smp, next.trigger)
	tk.publish(next)
}

// runOut lets the current counter piece run to its end before the OS clock
// takes over (see demote): its readers stay on the fast path up to the end
// (its trigger moves there; conversions do not change), no piece follows
// it, and the upkeep's next turn comes before the end, to wait for it.
func (tk *timekeeper) runOut(now uint64) {
	s := tk.k.state
	if s.trigger < s.end {
		s.trigger = s.end
		tk.publish(s)
	}
	if tk.upkeep.Load() {
		endDue := satSub(satAdd(tk.clocks.mono(), s.line.NanosFor(satSub(s.end, now))), upkeepSlackNs)
		tk.upkeepDue.Store(min(tk.upkeepDue.Load(), endDue))
	}
}

// warmUpStep ends the warm-up: the first window (at least a millisecond)
// gives the rate, and the counter takes over from the OS clock.
func (tk *timekeeper) warmUpStep() {
	k := &tk.k
	smp := tk.sample()
	k.minWidth = min(k.minWidth, smp.width)
	if tk.preempted(&smp) {
		// Try again a little later; the OS state just moves its end.
		s := k.state
		s.trigger = smp.mono + minPeriodNs/4
		s.end = s.trigger + grace(minPeriodNs)
		tk.publish(s)
		return
	}
	first, ok := k.window.first()
	if !ok || smp.ticks <= first.ticks || smp.mono <= first.mono {
		tk.promote(smp, 0, FallbackStalled, OriginMeasured)
		return
	}
	slope, ok := Slope(smp.mono-first.mono, smp.ticks-first.ticks)
	if !ok {
		tk.promote(smp, 0, FallbackTooSlow, OriginMeasured)
		return
	}
	// A frequency the hardware publishes (CPUID, the hypervisor's leaf,
	// CNTFRQ_EL0, the device tree) is exact when right, a crystal's ratio
	// where a millisecond's measurement is good to tens of ppm; but
	// firmware and emulators publish wrong ones too. So it is used only
	// when the measurement agrees with it within 1/64.
	if hz := k.decision.probe.freqHz; hz != 0 {
		if published, ok := SlopeOfFreq(hz); ok && absDiff(published, slope) <= slope>>suspectShift {
			tk.promote(smp, published, "", k.decision.probe.freqOrigin)
			return
		}
	}
	tk.promote(smp, slope, "", OriginMeasured)
}

// checkKernel reads the kernel's verdict again. When the kernel no longer
// vouches for the counter, the counter is dropped for good: the current
// piece runs out, and the OS clock takes over at the first update past its
// end (see demote). It returns true once demoted.
func (tk *timekeeper) checkKernel() bool {
	k := &tk.k
	v := tk.clocks.verdict()
	k.nextCheckMono = tk.clocks.mono() + checkPeriodNs
	if v.kind == verdictNamed {
		k.decision.clocksource = v.name
	}
	if reason := k.decision.recheck(v); reason != "" && k.demoting == "" {
		k.demoting = reason
	}
	if k.demoting == "" {
		return false
	}
	if now := tk.clocks.counterOrdered(); now < k.state.end {
		tk.runOut(now)
		return false
	}
	tk.demote(k.demoting)
	return true
}

// measure takes a sample into account (the rate, the window).
func (tk *timekeeper) measure(s *sample) {
	k := &tk.k
	k.minWidth = min(k.minWidth, s.width)
	if tk.preempted(s) {
		return
	}
	start, ok := k.window.startFor(s)
	if !ok {
		k.window.push(*s)
		return
	}
	slope, measured := slopeBetween(&start, s)
	if !measured {
		// The counter or the OS clock did not advance over the window (a
		// suspend?): start a new one.
		k.window.clear()
		k.window.push(*s)
		return
	}
	span := s.mono - start.mono
	if span < minPeriodNs {
		k.window.push(*s)
		return
	}
	if slope, accept := judge(k.rate, slope, k.suspect); accept {
		k.rate = slope
		k.suspect = 0
		k.window.push(*s)
		k.windowNs = span
		k.origin = OriginMeasured
		k.refinements++
		k.periodNs = min(max(span, minPeriodNs), maxPeriodNs)
	} else {
		k.suspect = slope
		k.window.clear()
		k.window.push(*s)
		k.periodNs = max(minPeriodNs, k.periodNs/4)
	}
}

// wallLine returns the wall line through a sample and its deadline (0
// sends wall readers to the system clock); nextTrigger is when the next
// update comes anyway.
func (tk *timekeeper) wallLine(s *sample, nextTrigger uint64) (Line, uint64) {
	old := &tk.k.state
	slope := tk.k.rate
	interval := tk.wallIntervalNs() + tk.upkeepSlack()
	if tk.preempted(s) {
		// The sample's moment is uncertain by its bracket: keep the old
		// line until the next update, unless the old line is further off
		// than that (the clock was set), or there is none.
		if old.wallDeadline == 0 {
			return old.wall, 0
		}
		if absDiff(old.wall.At(s.ticks), s.real) <= satAdd(s.width, marginNs) {
			return old.wall, max(nextTrigger, 1)
		}
		interval = 0 // a line through an uncertain sample: until the next update
	}
	if s.real < wallGuardNs || s.real > maxUnixNano-wallGuardNs {
		return Line{Slope: slope}, 0
	}
	line := Through(s.ticks, s.real, slope)
	deadline := satAdd(s.ticks, line.TicksFor(interval))
	if interval == 0 {
		deadline = nextTrigger
	}
	return line, max(deadline, 1)
}

// nextPiece returns the counter piece that takes over where the current
// one ends, at the newest rate (never below 7/8 of the current one), with
// the schedule of the update after it. The wall fields are the current ones.
func (tk *timekeeper) nextPiece(now uint64) state {
	k := &tk.k
	s := k.state
	slope := max(k.rate, floor(s.line.Slope))
	takeover := s.end
	line := Through(takeover, s.line.At(takeover), slope)
	// Never shorter than minPeriodNs, whatever the wall interval (both
	// are at least that long; max says it where the piece is made).
	period := max(min(k.periodNs, tk.wallIntervalNs()), minPeriodNs)
	switch {
	case tk.upkeep.Load():
		period = min(period, upkeepPeriodNs)
		tk.upkeepDue.Store(satAdd(tk.clocks.mono(), period))
		period += upkeepSlackNs
	case k.decision.followsKernel():
		period = min(period, readerPeriodNs)
	}
	trigger := max(satAdd(now, line.TicksFor(period)), takeover)
	end := satAdd(trigger, max(line.TicksFor(grace(period)), 1))
	s.mode, s.takeover, s.trigger, s.end = modeCounter, takeover, trigger, end
	s.line, s.prev, s.osOffset = line, s.line, 0
	return s
}

// promote switches from the OS clock to the counter where the OS state
// ends; a non-empty reason keeps the OS clock for good instead.
func (tk *timekeeper) promote(s sample, slope uint64, reason, origin string) {
	if reason != "" {
		tk.stayOnOS(reason)
		return
	}
	k := &tk.k
	old := k.state
	// The counter value matching the OS state's end, and the value the
	// counter continues from there (see "Source switches").
	rate := Line{Slope: slope}
	var takeover uint64
	if old.end >= s.mono {
		takeover = satAdd(s.ticks, rate.TicksFor(old.end-s.mono))
	} else {
		takeover = satSub(s.ticks, rate.TicksFor(s.mono-old.end))
	}
	value := old.end + old.osOffset + switchMargin(&s)
	line := Through(takeover, value, slope)
	k.rate = slope
	k.origin = origin
	k.counterSince = max(s.mono, 1)
	if origin == OriginMeasured {
		k.windowNs = 0
		if f, ok := k.window.first(); ok {
			k.windowNs = satSub(s.mono, f.mono)
		}
		k.window.push(s)
		k.refinements++
	}
	k.periodNs = min(max(k.windowNs, minPeriodNs), maxPeriodNs)
	// The piece being replaced, as nextPiece sees it: it ends (and the new
	// line starts) at the take-over point.
	k.state.mode, k.state.end, k.state.line = modeCounter, takeover, line
	next := tk.nextPiece(s.ticks)
	next.wall, next.wallDeadline = tk.wallLine(&s, next.trigger)
	tk.publish(next)
}

// stayOnOS publishes the OS clock for good, continuing the current readings.
func (tk *timekeeper) stayOnOS(reason string) {
	k := &tk.k
	k.decision.fallback = reason
	k.origin = OriginOS
	s := k.state
	s.mode, s.trigger, s.end = modeOS, never, never
	tk.publish(s)
}

// demote switches from the counter to the OS clock, for good (the kernel
// no longer vouches for the counter), continuing the counter's readings
// margin above them.
//
// Readers holding the counter state may still convert any counter value
// below its end, so CLOCK_MONOTONIC + offset must stay above every such
// conversion. checkKernel calls this only once the counter has passed the
// state's end: then no such conversion is above the line's value now, and
// one sample fixes the offset, whatever the rates. Called before the end it
// would have to extrapolate CLOCK_MONOTONIC to the end, and the state's
// lines are measurements that may run at a rate a little different from
// CLOCK_MONOTONIC's (after NTP changed it; or the previous piece's line,
// up to a take-over point ahead); both are linear on each stretch, so the
// offset is the largest difference at the ends of the stretches still
// ahead (now, the take-over point, the end), with CLOCK_MONOTONIC
// extrapolated at the newest measured rate, plus margin: exact for those
// rates, and no more.
func (tk *timekeeper) demote(reason string) {
	k := &tk.k
	smp := tk.narrowSample()
	old := k.state
	rate := Line{Slope: k.rate}
	if rate.Slope == 0 {
		rate = old.line
	}
	monoAt := func(t uint64) uint64 {
		if t >= smp.ticks {
			return satAdd(smp.mono, rate.NanosFor(t-smp.ticks))
		}
		return satSub(smp.mono, rate.NanosFor(smp.ticks-t))
	}
	at := func(t uint64) uint64 {
		if t < old.takeover {
			return old.prev.At(t)
		}
		return old.line.At(t)
	}
	ahead := int64(math.MinInt64)
	for _, t := range [...]uint64{smp.ticks, old.takeover, old.end} {
		if t >= smp.ticks {
			// Both below 2^63 on any timeline a process reaches.
			ahead = max(ahead, int64(at(t)-monoAt(t)))
		}
	}
	k.demoted, k.demotedAt, k.demoting = true, smp.real, ""
	k.decision.fallback = reason
	k.origin = OriginOS
	s := old
	s.mode, s.takeover, s.trigger, s.end = modeOS, monoAt(old.end), never, never
	s.osOffset, s.wallDeadline = uint64(ahead)+switchMargin(&smp), 0
	tk.publish(s)
}

// switchMargin is how far ahead of the old source a new one starts:
// marginNs plus twice the sample's bracket.
func switchMargin(s *sample) uint64 { return marginNs + 2*min(s.width, 1_000_000) }

// grace is the time between trigger and end for a period.
func grace(periodNs uint64) uint64 { return min(periodNs/4, maxGraceNs) }

// readSlow is everything off the read fast path: a counter value below the
// piece (read just before a new state took over) or past its trigger, the
// OS clock, the first reading of the process, a source switch. haveTicks
// says whether t is a counter value the caller already read.
func (tk *timekeeper) readSlow(t uint64, haveTicks, ordered bool) uint64 {
	for {
		s := tk.state.Load()
		if s == nil {
			if tk.ensurePublished() {
				continue
			}
			// Another goroutine is publishing the first state; until it
			// lands, act on the one every goroutine agrees on.
			m := tk.clocks.mono()
			first := tk.beforeFirst(m)
			if tk.state.Load() == nil {
				if nanos, _, past := first.convert(m); !past {
					return nanos
				}
				runtime.Gosched()
			}
			continue
		}
		var reading uint64
		if s.mode == modeCounter {
			if !haveTicks {
				if ordered {
					t = tk.clocks.counterOrdered()
				} else {
					t = tk.clocks.counter()
				}
				haveTicks = true
			}
			reading = t
		} else {
			reading = tk.clocks.mono()
			if tk.state.Load() != s {
				continue // a newer state: no OS reading after it was published
			}
		}
		nanos, due, past := s.convert(reading)
		if past {
			// A newer state is needed: publish it, or let the goroutine
			// publishing it run.
			if !tk.updateFromReader(causeReaderLate, reading) {
				runtime.Gosched()
			}
			continue
		}
		if due {
			tk.updateFromReader(causeReader, reading)
		}
		return nanos
	}
}

// unixSlow is the wall tier past its deadline (resync, or use the line
// while another goroutine does), or without a line to use: the system
// clock, after switching to the counter if the warm-up is over (a program
// that only reads the wall tier must get the counter too).
func (tk *timekeeper) unixSlow(t uint64, haveTicks bool) uint64 {
	s := tk.state.Load()
	if s == nil {
		tk.ensurePublished()
		return tk.clocks.real()
	}
	if s.mode == modeOS {
		if s.trigger == never {
			return tk.clocks.real()
		}
		if m := tk.clocks.mono(); m >= s.trigger {
			tk.updateFromReader(causeReader, m)
		}
		if s = tk.state.Load(); s.mode == modeOS {
			return tk.clocks.real()
		}
		t, haveTicks = tk.clocks.counter(), true
	}
	if haveTicks {
		if s.wallDeadline != 0 && t >= s.wallDeadline {
			tk.updateFromReader(causeReaderWall, t)
		}
		// The freshest line: the one just published, or, while another
		// goroutine publishes one, the old one (still about as good).
		if fresh := tk.state.Load(); fresh.wallDeadline != 0 {
			return fresh.wall.At(t)
		}
	}
	return tk.clocks.real()
}

// info is what Source reports.
func (tk *timekeeper) info() Info {
	tk.finishWarmUp()
	tk.mu.Lock()
	k := tk.k
	tk.mu.Unlock()
	d := &k.decision
	p := &d.probe
	counter := d.fallback == ""
	info := Info{
		Source:          "os",
		Counter:         p.counter,
		OrderedRead:     osClockName,
		FreqHz:          1_000_000_000,
		FreqOrigin:      k.origin,
		PublishedFreqHz: max(p.freqHz, p.publishedHz),
		Refinements:     k.refinements,
		Fallback:        d.fallback,
		EnvOverride:     d.env,
		Clocksource:     d.clocksource,
		Invariant:       p.invariant,
		Hypervisor:      p.hypervisor,
		Upkeep:          tk.upkeep.Load(),
	}
	if d.env == EnvInvalid {
		info.EnvValue = d.raw
	}
	if counter {
		info.Source = "counter"
		info.OrderedRead = p.orderedRead
		if p.useAlt {
			info.OrderedRead = p.orderedReadAlt
		}
		info.FreqHz = 0
		if k.state.mode == modeCounter {
			info.FreqHz = k.state.line.FreqHz()
		}
	}
	if k.origin == OriginMeasured {
		info.Baseline = time.Duration(k.windowNs)
	}
	if k.counterSince != 0 {
		info.CalibrationWait = time.Duration(satSub(k.counterSince, k.firstMono))
	}
	if k.demoted {
		info.DemotedAt = time.Unix(0, int64(k.demotedAt))
	}
	return info
}
