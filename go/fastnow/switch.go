package fastnow

import "math"

// The writer's source switches (spec/SEMANTICS.md, "Source switches"; the
// Rust crate's timekeeper/switch.rs is the same design): detection and the
// first state, the warm-up's end and the promotion to the counter, the OS
// clock for good, and the demotion when the kernel drops the counter.
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

// switchSampleTries is how many more samples a source switch takes when
// one was preempted.
const switchSampleTries = 8

// narrowSample is a sample for matching two sources, where the bracket's
// width becomes a forward step of every reading (switchMargin): a
// preempted one is taken again, a few times (a switch happens once; a
// thread preempted mid-sample usually runs on undisturbed once it is back).
func (tk *timekeeper) narrowSample() sample {
	best := tk.sampleOf(bracketsPerSample)
	for i := 0; i < switchSampleTries && tk.preempted(&best); i++ {
		if s := tk.sampleOf(bracketsPerSample); s.width < best.width {
			best = s
		}
	}
	return best
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
	if tk.awaitVerdict() {
		return
	}
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
	tk.publish(state{mode: modeOS, trigger: trigger, end: end}, nil)
}

// runOut lets the current counter piece run to its end before the OS clock
// takes over (see demote): its readers stay on the fast path up to the end
// (its trigger moves there; conversions do not change), no piece follows
// it, and the upkeep's next turn comes before the end, to wait for it.
func (tk *timekeeper) runOut(now uint64) {
	s := tk.k.state
	if s.trigger < s.end {
		s.trigger = s.end
		tk.publish(s, nil)
	}
	if tk.upkeep.Load() {
		endDue := saturatingSub(saturatingAdd(tk.clocks.mono(), tk.pace(&s).NanosFor(saturatingSub(s.end, now))), upkeepSlackNs)
		tk.upkeepDue.Store(min(tk.upkeepDue.Load(), endDue))
	}
}

// warmUpStep ends the warm-up: the first window (at least a millisecond)
// gives the rate, and the counter takes over from the OS clock.
func (tk *timekeeper) warmUpStep() {
	if tk.retryVerdict() {
		return
	}
	k := &tk.k
	smp := tk.sample()
	k.minWidth = min(k.minWidth, smp.width)
	if tk.preempted(&smp) {
		// Try again a little later; the OS state just moves its end.
		s := k.state
		s.trigger = smp.mono + minPeriodNs/4
		s.end = s.trigger + grace(minPeriodNs)
		tk.publish(s, nil)
		return
	}
	first, ok := k.window.first()
	if ok && discontinuous(&first, &smp) {
		// The counter went back or jumped (a reset at a resume, a
		// migration), or the machine suspended, during the first
		// millisecond: measure again from here.
		k.window.clear()
		k.window.push(smp)
		s := k.state
		s.trigger = smp.mono + minPeriodNs
		s.end = s.trigger + grace(minPeriodNs)
		tk.publish(s, nil)
		return
	}
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
		takeover = saturatingAdd(s.ticks, rate.TicksFor(old.end-s.mono))
	} else {
		takeover = saturatingSub(s.ticks, rate.TicksFor(s.mono-old.end))
	}
	value := old.end + old.osOffset + switchMargin(&s)
	line := through(takeover, value, slope)
	// The counter's readings continue the OS clock's margin above it: the
	// timeline is kept there from now on (see rebase).
	k.monoOffset = old.osOffset + switchMargin(&s)
	k.rate = slope
	k.origin = origin
	k.counterSince = max(s.mono, 1)
	if origin == OriginMeasured {
		k.windowNs = 0
		if f, ok := k.window.first(); ok {
			k.windowNs = saturatingSub(s.mono, f.mono)
		}
		k.window.push(s)
		k.refinements++
	}
	k.periodNs = min(max(k.windowNs, minPeriodNs), maxPeriodNs)
	// The piece being replaced, as nextPiece sees it: it ends (and the new
	// line starts) at the take-over point.
	k.state.mode, k.state.end, k.state.line = modeCounter, takeover, line
	next := tk.nextPiece(s.ticks)
	tk.publish(next, &s)
}

// stayOnOS publishes the OS clock for good, continuing the current readings.
func (tk *timekeeper) stayOnOS(why Fallback) {
	k := &tk.k
	k.decision.fallback = reason{why: why}
	k.origin = OriginOS
	s := k.state
	s.mode, s.trigger, s.end = modeOS, never, never
	tk.publish(s, nil)
}

// demote switches from the counter to the OS clock, for good (the kernel
// no longer vouches for the counter), continuing the counter's readings
// margin above them.
//
// Readers holding the counter state may still convert any counter value
// below its end, so CLOCK_MONOTONIC + offset must stay above every such
// conversion. checkKernel and update call this only once the counter has
// passed the state's end (or gone back below its floor): then no such
// conversion is above the line's value now, and one sample fixes the
// offset, whatever the rates. Called before the end it would have to
// extrapolate CLOCK_MONOTONIC to the end, and the state's lines are
// measurements that may run at a rate a little different from
// CLOCK_MONOTONIC's (after NTP changed it; or the previous piece's line, up
// to a take-over point ahead); both are linear on each stretch, so the
// offset is the largest difference at the ends of the stretches still
// ahead (now, the take-over point, the end), with CLOCK_MONOTONIC
// extrapolated at the newest measured rate, plus margin: exact for those
// rates, and no more. (Past the end the timeline runs at the next piece's
// rate: the piece's own, unless it stood still.)
//
// Where the counter jumped, or went back, since the piece began (the
// sample finds it astray, or below the floor), the OS clock continues
// instead from where the timeline kept to CLOCK_MONOTONIC stands, or from
// the piece's last value when that is higher, standing still (a flat line
// below the OS state's take-over point) until CLOCK_MONOTONIC gets there,
// as a re-base does.
func (tk *timekeeper) demote(r reason) {
	k := &tk.k
	smp := tk.narrowSample()
	old := k.state
	margin := switchMargin(&smp)
	var takeover, offset uint64
	if smp.ticks >= old.floor && !tk.astray(&smp) {
		rate := line{Slope: tk.nextSlope()}
		monoAt := func(t uint64) uint64 {
			if t >= smp.ticks {
				return saturatingAdd(smp.mono, rate.NanosFor(t-smp.ticks))
			}
			return saturatingSub(smp.mono, rate.NanosFor(smp.ticks-t))
		}
		at := func(t uint64) uint64 {
			switch {
			case t < old.takeover:
				return old.prev.At(t)
			case t < old.end:
				return old.line.At(t)
			}
			return old.line.At(old.end) + rate.NanosFor(t-old.end)
		}
		ahead := int64(math.MinInt64)
		for _, t := range [...]uint64{smp.ticks, old.takeover, old.end} {
			if t >= smp.ticks {
				// Both below 2^63 on any timeline a process reaches.
				ahead = max(ahead, int64(at(t)-monoAt(t)))
			}
		}
		takeover, offset = monoAt(old.end), uint64(ahead)+margin
	} else {
		kept := smp.mono + k.monoOffset
		from := old.line.At(old.end)
		if int64(kept-from) >= 0 {
			from = kept
		}
		takeover, offset = smp.mono+(from-kept), from+margin-(smp.mono+(from-kept))
	}
	k.demoted, k.demotedAt, k.demoting = true, smp.real, reason{}
	k.decision.fallback = r
	k.origin = OriginOS
	s := old
	s.mode, s.takeover, s.trigger, s.end = modeOS, takeover, never, never
	// Below the take-over point (only where it stands still, or where it
	// was called before the end) the readings stay at its value.
	s.osOffset, s.prev = offset, line{Offset: takeover + offset}
	tk.publish(s, nil)
}

// switchMargin is how far ahead of the old source a new one starts:
// marginNs plus twice the sample's bracket.
func switchMargin(s *sample) uint64 { return marginNs + 2*min(s.width, 1_000_000) }
