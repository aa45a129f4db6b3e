package fastnow

import "math"

// The writer's state machine (spec/SEMANTICS.md, "The timeline"): one
// writer at a time, under timekeeper.mu, measures, decides and publishes
// the next state (state.go says what a state converts and how pieces
// follow each other); its source switches are in switch.go and its offset
// bookkeeping in offsets.go.
//
// # Work off the read path
//
// An update costs a sample (when undisturbed one bracket of monotonic clock
// reads around the counter and one around the real clock) and, when one is
// due, a re-check of the kernel's clocksource (one pread). Without upkeep it
// falls on the reader that reaches trigger, once per period (1, 2, 4 ... ms
// in the first second, then at most every second; twice a second where the
// kernel's verdict is followed, x86 Linux, FreeBSD and Windows), and the
// work it does is bounded: up to readerBrackets of each kind (a sample
// whose brackets are all disturbed measures nothing: the rate in use
// continues), and the kernel's verdict
// only where a reading showed cause (checkWanted: a re-base, or samples
// that show the kernel's clock turned into a system call). The upkeep
// goroutine re-checks the verdict once a second, and Source when a check
// is due. While the upkeep goroutine runs it updates
// before trigger, at least four times a second, and readers' triggers come
// 2 ms later, so readers only load.

// stateBlock is how many states are allocated at a time (3.3 KiB).
const stateBlock = 32

// publish makes s the state readers see, with every offset it keeps
// (offsets.go) measured; smp is the update's sample (nil for the states
// published without one: the OS states, a piece's run-out).
//
// Each published state is a new object, never written again once readers
// may hold it: that is what makes a reader's state whole without a sequence
// check. The objects are carved from blocks of stateBlock allocated at once,
// not allocated one by one, so that only one publish in stateBlock enters
// the allocator: without upkeep a publish runs on a reader's goroutine,
// with cold caches, where an allocation is dear (BENCHMARKS.md, "AMD
// EPYC", its Go tables). A block is garbage once every state
// in it is unreferenced; none is ever recycled.
func (tk *timekeeper) publish(s state, smp *sample) {
	s.derive()
	tk.offsets(&s, smp)
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
		tk.view.Store(viewOf(p))
	}
}

// viewOf is what timekeeper.view holds while s is the published state
// and no mock is in use: s if it is a counter state, else nil (the fast
// paths read the counter once the view is not nil, and nothing else).
func viewOf(s *state) *state {
	if s != nil && s.mode == modeCounter {
		return s
	}
	return nil
}

// sample is a sample for an update: up to readerBrackets of each kind
// where a reader makes it (the first, cold, is often disturbed; where both
// are, it measures nothing, and the next update samples again), up to the
// full set otherwise.
func (tk *timekeeper) sample() sample {
	if tk.k.reader {
		return tk.sampleOf(readerBrackets)
	}
	return tk.sampleOf(bracketsPerSample)
}

// sampleOf is a sample of up to brackets brackets of each kind.
func (tk *timekeeper) sampleOf(brackets int) sample {
	// Twice the tightest bracket seen; until there is one, all brackets.
	good := uint64(0)
	if w := tk.k.minWidth; w != math.MaxUint64 {
		good = saturatingAdd(w, w)
	}
	return takeSample(tk.clocks, good, brackets)
}

// noteSlowSample counts samples whose every bracket was wide: three in a
// row is how the kernel's clock turning into a system call looks (the vDSO
// falls back to one once the kernel keeps time with a clocksource user
// space cannot read, such as the HPET), and asks for the kernel's verdict
// at the next update, a reader's included.
func (tk *timekeeper) noteSlowSample(s *sample) {
	k := &tk.k
	if !tk.preempted(s) {
		k.slowSamples = 0
		return
	}
	k.slowSamples++
	if k.slowSamples >= slowSamplesForACheck {
		k.checkWanted = true
		k.slowSamples = 0
	}
}

// Why an update is asked for: a reader's reading (each of the four kinds
// is re-checked under the lock, and update treats each its own way), the
// upkeep's turn, or a forced update.
type cause int

const (
	causeReader      cause = iota // a reading reached trigger
	causeReaderLate               // a reading is past end
	causeReaderBelow              // a counter value is below the floor: the counter went back
	causeUpkeep
	causeForced
)

// updateFromReader is a reader asking for an update; it never blocks. got
// reports whether this goroutine got the lock (so the state is now up to
// date for its reading). published is the state it published, if it
// published one in place of loaded, the state the reader converted with:
// computed from a sample taken after the reading, it is the state to
// convert that reading with (state.beforeSample).
//
//go:noinline
func (tk *timekeeper) updateFromReader(c cause, reading uint64, loaded *state) (got bool, published *state) {
	if !tk.mu.TryLock() {
		return false, nil
	}
	defer tk.mu.Unlock()
	if !tk.k.decided {
		tk.detect()
		return true, nil
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
	case causeReaderBelow:
		due = s.mode == modeCounter && reading < s.floor
	}
	if !due {
		return true, nil
	}
	before := tk.state.Load()
	tk.updateAsReader(c)
	if after := tk.state.Load(); after != before && before == loaded {
		return true, after
	}
	return true, nil
}

// updateAsReader is the update a reader makes (under tk.mu): its work is
// bounded (see keeper.reader).
func (tk *timekeeper) updateAsReader(c cause) {
	tk.k.reader = true
	tk.update(c)
	tk.k.reader = false
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
		// readers need not. Otherwise a regular turn (the wall offset).
		t := tk.clocks.counterOrdered()
		if left := tk.pace(&s).NanosFor(saturatingSub(s.end, t)); t >= s.floor && t < s.end && left <= upkeepSlackNs {
			tk.mu.Unlock()
			tk.clocks.waitMono(saturatingAdd(now, left+2_000))
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

// preempted reports whether a sample's brackets were all wide (the
// goroutine was preempted or interrupted in each): its moment is too
// uncertain to use.
func (tk *timekeeper) preempted(s *sample) bool { return tk.wide(s.width) }

// wide reports whether a bracket width is more than 4 times the tightest
// seen plus 200 ns: the goroutine was preempted or interrupted in it.
func (tk *timekeeper) wide(width uint64) bool {
	if width == math.MaxUint64 {
		return true // no bracket was valid
	}
	m := min(tk.k.minWidth, width)
	return m <= math.MaxUint64/8 && width > 4*m+200
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
	// Every update samples: the wall clock's offset is measured again at
	// each (offsets.go), and pieces last no longer than the wall resync
	// interval. The kernel's verdict is re-checked first when a check is
	// due (once a second) by the upkeep goroutine and a forced update (and
	// by Source), and by a reader only where a reading showed cause
	// (checkWanted: a re-base, or the kernel's clock turned into a system
	// call): the pread of sysfs it takes costs tens of microseconds from
	// cold caches, which no reading should pay as a matter of course
	// (spec/SEMANTICS.md, "Who updates").
	checkDue := k.decision.followsKernel() && tk.clocks.mono() >= k.nextCheckMono && (!k.reader || k.checkWanted)
	if checkDue && tk.checkKernel() {
		return
	}
	if k.demoting.why != FallbackNone {
		// Until the end only the counter is read: every reader past trigger
		// comes here while the switch waits. A counter that went back below
		// the floor never gets there: switch now (see demote).
		if now := tk.clocks.counterOrdered(); now >= s.end || now < s.floor {
			tk.demote(k.demoting)
			return
		}
	}
	smp := tk.sample()
	tk.noteSlowSample(&smp)
	// Right after a re-base the window began past the jump: its rate is the
	// one to judge the line by, and to re-base with (the jump may have come
	// with a new rate, as a migration's does). None follows once the kernel
	// has dropped the counter: the switch takes care of a jump (demote).
	trusted := k.trustNext
	if trusted {
		tk.measure(&smp)
	}
	if k.demoting.why == FallbackNone && tk.rebase(&smp) {
		return
	}
	if !trusted {
		tk.measure(&smp)
	}
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
			// Its regular turn (the wall offset), or before the end, to wait for it.
			endDue := saturatingSub(saturatingAdd(smp.mono, tk.pace(&s).NanosFor(saturatingSub(s.end, smp.ticks))), upkeepSlackNs)
			tk.upkeepDue.Store(min(endDue, saturatingAdd(smp.mono, min(k.periodNs, tk.wallIntervalNs()))))
		} else {
			tk.upkeepDue.Store(saturatingAdd(smp.mono, tk.pace(&s).NanosFor(saturatingSub(s.takeover, smp.ticks))))
		}
	}
	tk.publish(next, &smp)
}

// checkKernel reads the kernel's verdict again. When the kernel no longer
// vouches for the counter, the counter is dropped for good: the current
// piece runs out, and the OS clock takes over at the first update past its
// end (see demote). It returns true once demoted. A verdict that cannot be
// read for now changes nothing and is read again at the next check
// (verdict.go).
func (tk *timekeeper) checkKernel() bool {
	k := &tk.k
	k.checkWanted = false
	v := tk.clocks.verdict()
	k.nextCheckMono = tk.clocks.mono() + checkPeriodNs
	tk.noteVerdict(v, k.nextCheckMono-checkPeriodNs)
	if v.kind == verdictNamed {
		k.decision.clocksource = v.name
	}
	if r := k.decision.recheck(v); r.why != FallbackNone && k.demoting.why == FallbackNone {
		k.demoting = r
	}
	if k.demoting.why == FallbackNone {
		return false
	}
	if now := tk.clocks.counterOrdered(); now < k.state.end && now >= k.state.floor {
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
	if !measured || discontinuous(&start, s) {
		// The counter or the OS clock did not advance over the window (a
		// suspend?), or the counter did something other than count time (it
		// went back, or jumped): nothing is measured across it, and a new
		// window starts here.
		k.window.clear()
		k.window.push(*s)
		return
	}
	span := s.mono - start.mono
	if span < minPeriodNs {
		k.window.push(*s)
		return
	}
	accept := false
	if k.trustNext {
		// The window began at a re-base, past the jump.
		k.trustNext = false
		slope, accept = max(slope, floor(k.rate)), true
	} else {
		slope, accept = judge(k.rate, slope, k.suspect)
	}
	if accept {
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

// nextPiece returns the counter piece that takes over where the current
// one ends, at the newest rate (never below 7/8 of the current one), with
// the schedule of the update after it; now is the counter value of the
// update's sample. The offsets are the current ones, until publish
// measures them.
func (tk *timekeeper) nextPiece(now uint64) state {
	s := tk.k.state
	slope := tk.nextSlope()
	takeover := s.end
	line := through(takeover, s.line.At(takeover), slope)
	trigger, end := tk.schedule(slope, now, takeover)
	// The floor never lies below the current piece's take-over point:
	// prev, this piece's line, converts from there only.
	floor := max(tk.floorAt(now), s.takeover)
	s.mode, s.takeover, s.trigger, s.end, s.floor = modeCounter, takeover, trigger, end, floor
	s.line, s.prev, s.osOffset = line, s.line, 0
	return s
}

// nextSlope is the slope of the next piece: the newest rate, never below
// 7/8 of the current piece's (a piece that stands still has no such floor).
func (tk *timekeeper) nextSlope() uint64 { return max(tk.k.rate, floor(tk.k.state.line.Slope)) }

// floorAt is the floor of a state published from a sample at counter
// value now (see state.floor).
func (tk *timekeeper) floorAt(now uint64) uint64 {
	return saturatingSub(now, line{Slope: tk.k.rate}.TicksFor(floorSlackNs))
}

// pace is the line that says how fast s's counter values come, for
// scheduling: s's own, or the rate in use where s stands still.
func (tk *timekeeper) pace(s *state) line {
	if s.line.Slope != 0 {
		return s.line
	}
	return line{Slope: tk.k.rate}
}

// schedule returns the trigger and end of a piece at slope whose update's
// sample read the counter at now: a period after it (never shorter than
// minPeriodNs, whatever the wall interval: a piece ending a few ticks after
// its sample would send every reader to the update), and never before
// notBefore. It also tells the upkeep goroutine when to update.
func (tk *timekeeper) schedule(slope, now, notBefore uint64) (trigger, end uint64) {
	rate := line{Slope: slope}
	period := max(min(tk.k.periodNs, tk.wallIntervalNs()), minPeriodNs)
	switch {
	case tk.upkeep.Load():
		period = min(period, upkeepPeriodNs)
		tk.upkeepDue.Store(saturatingAdd(tk.clocks.mono(), period))
		period += upkeepSlackNs
	case tk.k.decision.followsKernel():
		period = min(period, readerPeriodNs)
	}
	trigger = max(saturatingAdd(now, rate.TicksFor(period)), notBefore)
	end = saturatingAdd(trigger, max(rate.TicksFor(grace(period)), 1))
	return trigger, end
}

// rebase re-bases the timeline when the sample smp finds the counter line
// astray from CLOCK_MONOTONIC plus monoOffset by more than rebaseNs (and
// the sample's width), or the counter below the state's floor; it reports
// whether it did (and published).
//
// That is what a counter does across a suspend it counts (an invariant TSC
// in suspend-to-idle runs on while CLOCK_MONOTONIC stops), a reset at
// resume (the TSC restarts near zero after suspend-to-RAM on much hardware,
// and the kernel re-bases its own clocksource), a migration to a host with
// another counter offset or rate, or a long idle while NTP changed the
// rate. Continuing the line across it would carry the jump into every later
// reading; instead the next piece continues from where CLOCK_MONOTONIC says
// the timeline is — or, where readings already went further than that (the
// piece in use counted part of the jump before anyone could tell), from
// there, standing still until CLOCK_MONOTONIC catches up. No reading steps
// back: the value each case continues from is at or above everything a
// reader holding the old state can have returned (spec/SEMANTICS.md,
// "Suspend, resume and counter jumps").
func (tk *timekeeper) rebase(smp *sample) bool {
	k := &tk.k
	old := k.state
	if !tk.astray(smp) {
		if old.mode == modeCounter && smp.ticks >= old.takeover && !tk.preempted(smp) {
			k.settling = false
		}
		return false
	}
	// The piece after a re-base is short: the rate is measured again a
	// millisecond later (a jump may come with a new rate, as a migration's
	// does), over a window that begins here.
	k.periodNs = minPeriodNs
	// A re-base moves every later reading by what this sample says: take
	// one that was not preempted, as a source switch does.
	s := *smp
	if tk.preempted(&s) {
		s = tk.narrowSample()
	}
	slope := tk.nextSlope()
	rate := line{Slope: slope}
	// Where the timeline kept to CLOCK_MONOTONIC stands at the sample.
	kept := s.mono + k.monoOffset
	atEnd := old.line.At(old.end)
	jump := rebaseSeen{at: s.real}
	var next state
	if s.ticks >= old.floor && s.ticks < old.end {
		// The counter is inside the piece: readers holding it may still
		// convert any value below its end with its line, so the new piece
		// takes over there, from the old line's value.
		diff := int64(atEnd - (kept + rate.NanosFor(old.end-s.ticks)))
		jump.ahead = diff
		if diff < 0 {
			// Behind: the line ends at the end, and the first reading past
			// it updates again, re-basing from its own sample (below).
			// Stepping forward at the end within this state would move the
			// boot readings forward with it, while its boot offset,
			// measured now against the line readers are still on, could not
			// come down after.
			next = old
			next.mode, next.takeover, next.trigger, next.end = modeCounter, old.end, old.end, saturatingAdd(old.end, 1)
			next.line, next.prev = through(old.end, atEnd, slope), old.line
			next.floor = max(tk.floorAt(s.ticks), old.takeover)
		} else {
			// Ahead: stand still at the end's value until CLOCK_MONOTONIC
			// gets there.
			catchUp := saturatingAdd(old.end, rate.TicksFor(catchUpNs(uint64(diff), &s)))
			next = tk.standStill(&old, old.end, atEnd, catchUp, s.ticks)
		}
	} else {
		// Past the end, or below the floor (the counter went back): no
		// reader holding the old state converts such a value, and none
		// returned more than the old line's value at the end (a Go reader
		// past the end waits for a newer state; the Rust crate's returns a
		// lower bound instead, and its re-base continues from above that).
		if s.ticks >= old.floor {
			counted := atEnd + rate.NanosFor(s.ticks-old.end)
			jump.ahead = int64(counted - kept)
		} else {
			jump.wentBack = true
		}
		from := atEnd
		if int64(kept-atEnd) >= 0 {
			from = kept
		}
		value := from + switchMargin(&s)
		if from == kept {
			k.monoOffset = value - s.mono
			// What the readings were on: the old line past its end, or (the
			// counter went back) its end.
			on := atEnd
			if !jump.wentBack {
				on = kept + uint64(jump.ahead)
			}
			if int64(value-on) > 0 {
				k.bootLowering = value - on
			}
			trigger, end := tk.schedule(slope, s.ticks, s.ticks)
			next = old
			next.mode, next.takeover, next.trigger, next.end = modeCounter, s.ticks, trigger, end
			next.line, next.prev = through(s.ticks, value, slope), line{Offset: value}
			next.floor = tk.floorAt(s.ticks)
		} else {
			catchUp := saturatingAdd(s.ticks, rate.TicksFor(catchUpNs(value-kept, &s)))
			next = tk.standStill(&old, s.ticks, value, catchUp, s.ticks)
		}
	}
	k.rebases++
	k.lastRebase = jump
	// The rate window would span the jump: start a new one here, and
	// measure again at the next update.
	k.window.clear()
	k.window.push(s)
	k.suspect = 0
	k.trustNext = true
	k.settling = true
	// The kernel may have changed its mind about the counter at the same
	// event (a resume, a migration): the next update reads its verdict, a
	// reader's included.
	k.checkWanted = true
	// The offset the timeline kept to CLOCK_MONOTONIC moved: the next
	// measurement starts afresh (offsets.go), not as a drift from the
	// last.
	k.monoMeasured, k.driftPpb = monoMeasured{}, [2]uint64{}
	tk.publish(next, &s)
	return true
}

// rebaseSeen is a re-base as the keeper remembers it: the wall time of the
// update that found it, and how far the counter had moved beyond what
// CLOCK_MONOTONIC did, in ns (negative: it fell behind), unless it went
// back below what readers had seen (a reset).
type rebaseSeen struct {
	at       uint64
	ahead    int64
	wentBack bool
}

// astray reports whether sample s finds the counter off the timeline kept
// to CLOCK_MONOTONIC (see rebase): below the floor, or, at the point where
// the next piece would take over (or at the sample, past the end), more
// than rebaseNs (settleNs while a re-base settles) and the sample's width
// from it.
func (tk *timekeeper) astray(s *sample) bool {
	old := &tk.k.state
	switch {
	case old.mode != modeCounter:
		return false
	case s.ticks < old.floor:
		return true
	case s.ticks < old.takeover:
		// An early update (the upkeep's, a forced one): a new piece can
		// only follow one that has started (readers holding the next state
		// convert values below its take-over point with prev, which must be
		// this piece's line there). A later update sees the same jump.
		return false
	}
	rate := line{Slope: tk.nextSlope()}
	counted, kept := old.line.At(old.end), s.mono+tk.k.monoOffset
	if s.ticks < old.end {
		kept += rate.NanosFor(old.end - s.ticks)
	} else {
		counted += rate.NanosFor(s.ticks - old.end)
	}
	diff := counted - kept
	if int64(diff) < 0 {
		diff = -diff
	}
	bound := uint64(rebaseNs)
	if tk.k.settling {
		bound = settleNs
	}
	return diff > saturatingAdd(bound, s.width)
}

// standStill returns a piece that stands still at value from counter value
// takeover until catchUp, where the next update continues it at the rate in
// use; now is the sample's counter value.
func (tk *timekeeper) standStill(old *state, takeover, value, catchUp, now uint64) state {
	end := max(catchUp, saturatingAdd(takeover, 1))
	// The update comes a little before the end, as for any piece.
	rate := line{Slope: tk.k.rate}
	graceTicks := min(rate.TicksFor(grace(minPeriodNs)), end-min(takeover, end))
	// A millisecond after the sample at the latest: the update there
	// measures the rate from the re-base on (a migration's new one), and
	// the piece after it stands still as long, or continues at it.
	trigger := max(min(saturatingSub(end, graceTicks), saturatingAdd(now, rate.TicksFor(minPeriodNs))), takeover)
	if tk.upkeep.Load() {
		tk.upkeepDue.Store(saturatingAdd(tk.clocks.mono(), rate.NanosFor(saturatingSub(trigger, now))))
	}
	s := *old
	s.mode, s.takeover, s.trigger, s.end = modeCounter, takeover, trigger, end
	s.line = line{Offset: value}
	// Below the take-over point: the old line up to the old end (and the
	// floor never below the old take-over point, where that line starts),
	// or, re-based from the sample, the same flat line.
	if takeover == old.end {
		s.prev, s.floor = old.line, max(tk.floorAt(now), old.takeover)
	} else {
		s.prev, s.floor = s.line, tk.floorAt(now)
	}
	return s
}

// catchUpNs is how long a piece re-based from ahead nanoseconds ahead of
// the timeline kept to CLOCK_MONOTONIC stands still: a little less, so that
// it never outlasts the moment CLOCK_MONOTONIC gets there (the rate and the
// sample are a little off).
func catchUpNs(ahead uint64, s *sample) uint64 {
	return saturatingSub(ahead, ahead/64+s.width)
}

// grace is the time between trigger and end for a period.
func grace(periodNs uint64) uint64 { return min(periodNs/4, maxGraceNs) }
