package fastnow

import "math"

// The writer's state machine (spec/SEMANTICS.md, "The timeline"): one
// writer at a time, under timekeeper.mu, measures, decides and publishes
// the next state (state.go says what a state converts and how pieces
// follow each other).
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
// line margin above it. Readings move forward by that margin at a switch,
// never back.
//
// # Work off the read path
//
// An update costs a sample (when undisturbed one bracket of monotonic clock
// reads around the counter and one around the real clock) or a re-check of
// the kernel's clocksource (one pread). Without upkeep it falls on the
// reader that reaches trigger, once per period (1, 2, 4 ... ms in the first
// second, then at most every second; twice a second where the kernel's
// verdict is followed, x86 Linux, FreeBSD and Windows, as a sample and a
// check alternate). While the upkeep goroutine runs it updates
// before trigger, at least four times a second, and readers' triggers come
// 2 ms later, so readers only load.

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
	lastWasCheck  bool
	firstMono     uint64
	counterSince  uint64 // monotonic time the counter took over (0: not yet)
	demoting      reason // the kernel dropped the counter: the fallback reason, until the switch
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
// the allocator: without upkeep a publish runs on a reader's goroutine,
// with cold caches, where an allocation is dear (BENCHMARKS.md, "AMD
// EPYC", its Go tables). A block is garbage once every state
// in it is unreferenced; none is ever recycled.
func (tk *timekeeper) publish(s state) {
	s.span = 0
	if s.mode == modeCounter {
		s.span = satSub(s.trigger, s.takeover)
	}
	// Every update measures the boot offset again, so a resume is followed
	// at the first update after it (boot.go).
	s.bootOffset = tk.bootOffset(&s)
	k := &tk.k
	k.state = s
	if s.mode == modeCounter {
		tk.counterRead.Store(true)
	} else if s.mode == modeOS && s.trigger == never {
		// No counter state comes any more: ordered readers go straight to
		// the OS clock, without a counter read first.
		tk.counterRead.Store(false)
	}
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
	if counter && tk.k.demoting.why != FallbackNone && now >= tk.upkeepDue.Load() {
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
	counter := k.decision.fallback.why == FallbackNone
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
		if tk.checkKernel() || k.demoting.why != FallbackNone {
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
	if k.demoting.why != FallbackNone && tk.clocks.counterOrdered() >= s.end {
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
	if smp.ticks >= s.takeover && k.demoting.why == FallbackNone {
		next = tk.nextPiece(smp.ticks)
	} else if tk.upkeep.Load() {
		// The upkeep's next turn: where the current piece starts, or, with
		// a switch pending, just past its end.
		if k.demoting.why != FallbackNone {
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
	slope, ok := slopeOf(smp.mono-first.mono, smp.ticks-first.ticks)
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
		if published, ok := slopeOfFreq(hz); ok && absDiff(published, slope) <= slope>>suspectShift {
			tk.promote(smp, published, FallbackNone, k.decision.probe.freqOrigin)
			return
		}
	}
	tk.promote(smp, slope, FallbackNone, OriginMeasured)
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
	if r := k.decision.recheck(v); r.why != FallbackNone && k.demoting.why == FallbackNone {
		k.demoting = r
	}
	if k.demoting.why == FallbackNone {
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
func (tk *timekeeper) wallLine(s *sample, nextTrigger uint64) (line, uint64) {
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
		return line{Slope: slope}, 0
	}
	line := through(s.ticks, s.real, slope)
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
	line := through(takeover, s.line.At(takeover), slope)
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
// ends; a fallback other than FallbackNone keeps the OS clock for good
// instead.
func (tk *timekeeper) promote(s sample, slope uint64, why Fallback, origin Origin) {
	if why != FallbackNone {
		tk.stayOnOS(why)
		return
	}
	k := &tk.k
	old := k.state
	// The counter value matching the OS state's end, and the value the
	// counter continues from there (see "Source switches").
	rate := line{Slope: slope}
	var takeover uint64
	if old.end >= s.mono {
		takeover = satAdd(s.ticks, rate.TicksFor(old.end-s.mono))
	} else {
		takeover = satSub(s.ticks, rate.TicksFor(s.mono-old.end))
	}
	value := old.end + old.osOffset + switchMargin(&s)
	line := through(takeover, value, slope)
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
func (tk *timekeeper) stayOnOS(why Fallback) {
	k := &tk.k
	k.decision.fallback = reason{why: why}
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
func (tk *timekeeper) demote(r reason) {
	k := &tk.k
	smp := tk.narrowSample()
	old := k.state
	rate := line{Slope: k.rate}
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
	k.demoted, k.demotedAt, k.demoting = true, smp.real, reason{}
	k.decision.fallback = r
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
