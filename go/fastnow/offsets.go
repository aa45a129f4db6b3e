package fastnow

import (
	"math"

	"github.com/fastnow/fastnow/go/internal/osclock"
)

// The clocks kept as offsets from the precise timeline, and the writer's
// bookkeeping of those offsets (the Rust crate's timekeeper/offsets.rs is
// the same design).
//
// Like the kernel's boot and TAI clocks (mono + offs_boot, mono +
// offs_tai), every clock besides the precise timeline is the precise
// reading plus an offset the writer keeps: a word of the published state,
// loaded with the counter's line in the same state load. clock says what
// the read base needs to know of each (read.go: one fast path and one slow
// path for all of them), and offsets computes every offset of a state
// about to be published:
//
//   - boot (state.bootOffset): the boot clock less the reading the state
//     gives at that moment, measured again at every update (see "Boot"
//     below);
//   - wall (state.wallOffset): CLOCK_REALTIME less the precise reading at
//     the update's sample, which brackets CLOCK_REALTIME with the counter
//     read (spec/SEMANTICS.md, "Wall tier"). Every update samples and no
//     piece lasts longer than the wall resync interval, so the wall clock
//     is re-anchored at every update. 0 means "read CLOCK_REALTIME": on
//     the OS clock, within wallGuardNs of either end of the range of Unix
//     nanoseconds, while a piece stands still after a re-base (a wall
//     reading that stood still with the precise one would be wrong by as
//     long as it stands), and where the state's next update is further
//     than the resync interval away (after the interval was shortened, a
//     piece begun before still runs); a measured 0 is published as 1;
//   - mono (state.monoOffset): the timeline less CLOCK_MONOTONIC as the
//     update's sample measured it — the published state's reading at the
//     sample's counter value less the sample's CLOCK_MONOTONIC, within
//     half the sample's bracket — for the conversions between instants and
//     the kernel's clocks (conversion.go). Measured, not the offset the
//     writer keeps the timeline to (keeper.monoOffset, which only the
//     switches and re-bases move): below the re-base threshold the
//     timeline strays from that by what calibration strays by, which a
//     conversion would carry. A disturbed sample keeps the last
//     measurement; on the OS clock it is the OS offset itself; while a
//     piece stands still after a re-base it is the kept offset, where the
//     timeline resumes.
//
// On the OS clock for good no update comes any more to keep an offset, so
// there a clock kept as an offset reads its own OS clock (clock.os) plus
// its word: the boot word is chosen, when that state is published, so that
// boot readings continue above the ones before; the wall word is 0.
//
// A new clock of this kind — the precise reading plus an offset the writer
// keeps — is a field of state, a clock here and its measurement in
// offsets; a tier file reads it through the read base (read.go's readClock,
// the fast paths in read_generic.go and read_amd64.s).

// clock is a clock the read base reads: the precise timeline, or a clock
// the writer keeps as an offset from it.
type clock uint8

const (
	clockPrecise clock = iota // Nanotime and its siblings
	clockBoot                 // BootNanotime
	clockWall                 // UnixNano
)

// kept is the offset s keeps for c.
func (c clock) kept(s *state) uint64 {
	switch c {
	case clockBoot:
		return s.bootOffset
	case clockWall:
		return s.wallOffset
	}
	return 0
}

// exact reports whether a reading of c must be the time of its moment (the
// wall clock) rather than never go back (the boot clock): such a clock
// reads its OS clock where the precise reading is not the time of its
// moment (a reading that stands still) and where the state keeps no offset
// for it (0).
func (c clock) exact() bool { return c == clockWall }

// os is the OS clock c's offset is kept to, read where the writer keeps
// none (on the boot clock's base, as the offset is: see "Boot").
func (c clock) os(tk *timekeeper) uint64 {
	switch c {
	case clockBoot:
		mono, bound := tk.bootMinusMonoNow(bootSamplePairs)
		return mono + bound
	case clockWall:
		return tk.clocks.real()
	}
	return tk.clocks.mono()
}

// beforeFirst is the offset of c's readings taken while the first state is
// being published (timekeeper.beforeFirst).
func (c clock) beforeFirst(tk *timekeeper) uint64 {
	if c == clockBoot {
		return tk.firstBootOffset()
	}
	return 0
}

// mocked is a test's ManualClock's reading of c (UseClock): its
// monotonic reading plus its offsets, its simulated suspends and its Unix
// time less its monotonic time.
func (c clock) mocked(m *ManualClock) int64 {
	switch c {
	case clockBoot:
		return m.bootNanotime()
	case clockWall:
		return m.UnixNano()
	}
	return m.nanotime()
}

// offsets sets every offset of next, the state about to be published
// (tk.k.state is still the old one); smp is the update's sample (nil for
// the states published without one). Called under tk.mu.
func (tk *timekeeper) offsets(next *state, smp *sample) {
	m := tk.monoOffsetOf(next, smp)
	next.monoOffset, next.monoAt, next.monoWidth = m.offset, m.at, m.width
	next.monoDrift = tk.driftPpb(&m)
	// Every update measures the boot offset again, so a resume is followed
	// at the first update after it.
	var boot measured
	next.bootOffset, boot = tk.bootOffset(next)
	next.bootConversion, next.bootWidth = boot.offset, boot.width
	next.wallOffset = tk.wallOffset(next, smp)
}

// monoMeasured is the timeline less CLOCK_MONOTONIC as an update's sample
// measured it: the published state's reading at the sample's counter value
// less the sample's CLOCK_MONOTONIC (offset), the sample's bracket (the
// offset is within half of it) and its CLOCK_MONOTONIC, from which the
// offset drifts at the rate's error (at; 0 where it is exact and does not
// drift). ok is false for none.
type monoMeasured struct {
	offset, width, at uint64
	ok                bool
}

// measured is an offset between a timeline and a kernel's clock, and twice
// what it may be off by (ok false: none).
type measured struct {
	offset, width uint64
	ok            bool
}

// driftPpb is how fast the published offset m may drift (state.monoDrift):
// at least conversionRateErrorPpb; more while the rate in use was measured
// over a short window (the warm-up's, or one after a re-base: two
// brackets' error over its length), and where the last updates saw the
// timeline drift faster (measuredMono).
func (tk *timekeeper) driftPpb(m *monoMeasured) uint64 {
	k := &tk.k
	window := uint64(0)
	if k.windowNs != 0 {
		window = mulDivSat(saturatingAdd(m.width, m.width), 1_000_000_000, k.windowNs)
	}
	return max(k.driftPpb[0], k.driftPpb[1], window, conversionRateErrorPpb)
}

// measuredMono records m, a new measurement of the timeline less
// CLOCK_MONOTONIC, and how fast the timeline drifted since the last one:
// what it moved beyond the two measurements' uncertainty, over the time
// between them. In steady state that is a fraction of a ppm, and
// conversionRateErrorPpb bounds the drift; after NTP changed
// CLOCK_MONOTONIC's rate the pieces run at the old rate until the new one
// is measured, and the conversions' stated error grows with what the
// updates see, the larger of the last two.
func (tk *timekeeper) measuredMono(m monoMeasured) {
	k := &tk.k
	drift := uint64(0)
	if p := k.monoMeasured; p.ok && m.at > p.at {
		moved := int64(m.offset - p.offset)
		if moved < 0 {
			moved = -moved
		}
		beyond := saturatingSub(uint64(moved), saturatingAdd(m.width/2, p.width/2))
		drift = mulDivSat(beyond, 1_000_000_000, m.at-p.at)
	}
	k.driftPpb = [2]uint64{drift, k.driftPpb[0]}
	k.monoMeasured = m
}

// monoOffsetOf is the timeline less CLOCK_MONOTONIC that next publishes
// (see above), with its sample's width and moment: measured at the sample
// where it can be, and recorded for the states that follow.
func (tk *timekeeper) monoOffsetOf(next *state, smp *sample) monoMeasured {
	k := &tk.k
	if next.mode != modeCounter {
		// Readings are CLOCK_MONOTONIC plus the OS offset, exactly (but
		// below a take-over that stands still, where they resume at it).
		k.monoMeasured = monoMeasured{}
		return monoMeasured{offset: next.osOffset, ok: true}
	}
	width, at := uint64(0), uint64(0)
	if smp != nil {
		width, at = smp.width, smp.mono
	} else {
		at = tk.clocks.mono()
	}
	// The kept offset: what a piece that stands still resumes at, and
	// what a re-base just moved the timeline to, within its margin.
	kept := monoMeasured{offset: k.monoOffset, width: width, at: max(at, 1), ok: true}
	if next.line.Slope == 0 {
		// A piece that stands still until CLOCK_MONOTONIC plus the kept
		// offset catches up (what its readings stand ahead of that is the
		// conversions' to add: conversion.go).
		k.monoMeasured = monoMeasured{}
		return kept
	}
	if smp != nil && !tk.preempted(smp) && !next.stillAt(smp.ticks) {
		if reading, ok := next.beforeSample(smp.ticks); ok {
			m := monoMeasured{offset: reading - smp.mono, width: smp.width, at: max(smp.mono, 1), ok: true}
			tk.measuredMono(m)
			return m
		}
	}
	// A disturbed sample (its moment is uncertain by far more than the
	// last good one's) keeps the last measurement, which a new piece
	// continues; right after a re-base there is none.
	if k.monoMeasured.ok {
		return k.monoMeasured
	}
	return kept
}

// wallOffset is CLOCK_REALTIME less next's reading at the sample, or 0
// where wall readers are to read CLOCK_REALTIME (see above).
func (tk *timekeeper) wallOffset(next *state, smp *sample) uint64 {
	if next.mode != modeCounter || next.line.Slope == 0 {
		return 0
	}
	old := tk.k.state.wallOffset
	if smp == nil {
		// The same piece, published again without a sample (its run-out
		// before a demotion): the offset measured for it still holds.
		return old
	}
	// Well inside the range, so that a reading up to a piece (at most a
	// second and its grace) from the sample can leave it neither way.
	if smp.real < wallGuardNs || smp.real > osclock.MaxUnixNano-wallGuardNs {
		return 0
	}
	// The offset is measured again at next's trigger, or (a piece taken
	// over at the end of one that began before the resync interval was
	// shortened) read the system clock until then: a wall reading is never
	// older than the interval allows.
	if next.trigger-min(smp.ticks, next.trigger) > next.line.TicksFor(tk.wallIntervalNs()+tk.upkeepSlack()+maxGraceNs) {
		return 0
	}
	precise, ok := next.beforeSample(smp.ticks)
	if !ok {
		return 0
	}
	// The real time at the sample is uncertain by both its brackets (the
	// counter's and the real clock's: a reader's update takes at most two
	// of each, so either may be the disturbed one).
	if width := max(smp.width, smp.realWidth); tk.wide(width) {
		// A disturbed bracket measures nothing: keep the old offset (or
		// none) until the next update, unless it is further off than the
		// sample's uncertainty (the clock was set), or was measured more
		// than a resync interval ago (after an idle gap: kept longer, the
		// wall would drift by the rates' difference; read the system clock
		// until the next update instead).
		if old != 0 && saturatingSub(smp.mono, tk.k.wallAt) > tk.wallIntervalNs() {
			return 0
		}
		if old == 0 || absDiff(precise+old, smp.real) <= saturatingAdd(width, marginNs) {
			return old
		}
	}
	tk.k.wallAt = smp.mono
	if off := smp.real - precise; off != 0 {
		return off
	}
	return 1
}

// # Boot
//
// BootNanotime is Nanotime plus the state's boot offset (spec/SEMANTICS.md,
// "Time across suspend"): the boot clock
// (CLOCK_BOOTTIME on Linux, mach_continuous_time's on Apple platforms, on
// the base of mono(), the monotonic clock since the package loaded) less
// the precise reading, measured at every publish (the largest lower bound
// of up to bootSamplePairs brackets: the boot clock read first is at most
// the offset ahead of the reading taken after it), and never lowered but
// by what a re-base just moved the precise readings forward (the step
// lands in the state that lowers it), so that a reading never goes back
// within a goroutine. Measured against the precise reading rather than the
// monotonic clock, it stays right while the precise readings stand still
// after a resume (state.go, "Suspend, resume and counter jumps"): what they
// have not caught up yet is added. On the OS clock for good no update comes
// any more: readers read the boot clock themselves and the offset is what
// they add to it.
//
// One difference with the Rust crate: Go reads CLOCK_BOOTTIME through a
// system call (package time reads only CLOCK_MONOTONIC and CLOCK_REALTIME
// through the vDSO), which can cost a microsecond on a VM. So the boot
// clock is read as the monotonic clock plus a lower bound of boot - mono
// (bootSeen), measured again only when CLOCK_REALTIME - CLOCK_MONOTONIC
// moved since the last measurement. Every suspend moves it, by the time
// suspended: the kernel adds the time suspended to the realtime and the
// boot offsets alike, and to neither clock's rate (NTP slews both clocks
// together). A clock step moves it too, which only costs a measurement.

// bootSamplePairs is the most brackets a measurement of the boot offset
// takes (and of boot - mono).
const bootSamplePairs = 3

// noBootOffset is an offset no measurement gives (-2^63 ns: one that
// would is taken as its neighbour). firstBoot holds the agreed offset xor
// this, so that its zero value means "none yet".
const noBootOffset = 1 << 63

// bootRemeasureNs is how far CLOCK_REALTIME - CLOCK_MONOTONIC must move
// for boot - mono to be measured again: more than two reads' latency, far
// less than any suspend.
const bootRemeasureNs = 20_000

// bootSeen is the newest measurement of boot - mono (a lower bound, never
// lowered), and CLOCK_REALTIME - CLOCK_MONOTONIC when it was taken; loose
// when every bracket of it was wide (the goroutine was interrupted), and
// the next reading measures again.
type bootSeen struct {
	realMinusMono, bootMinusMono uint64
	loose                        bool
	// width is the bracket of the measurement that gave bootMinusMono:
	// the true value is at most that much above it.
	width uint64
}

// laterOffset is the larger of two offsets, compared as signed (an offset
// is negative where a time namespace puts CLOCK_BOOTTIME behind
// CLOCK_MONOTONIC).
func laterOffset(a, b uint64) uint64 {
	if int64(a) >= int64(b) {
		return a
	}
	return b
}

// bootMinusMono is the boot clock less the monotonic clock (mod 2^64): the
// largest of pairs lower bounds, each a boot clock reading less
// the monotonic reading after it; and the narrowest bracket around a boot
// reading (the monotonic readings are chained: each closes one bracket and
// opens the next).
func (tk *timekeeper) bootMinusMono(pairs int) (bound, width uint64) {
	width = ^uint64(0)
	m := tk.clocks.mono()
	for i := 0; i < pairs; i++ {
		b := tk.clocks.boot()
		next := tk.clocks.mono()
		if d := b - next; i == 0 {
			bound = d
		} else {
			bound = laterOffset(bound, d)
		}
		width, m = min(width, next-m), next
	}
	return bound, width
}

// bootMinusMonoNow returns the monotonic clock now and a lower bound of
// boot - mono: the newest measurement, or a new one if CLOCK_REALTIME -
// CLOCK_MONOTONIC moved since (see above), of up to pairs brackets. The
// bound never decreases, so mono + bound never does.
func (tk *timekeeper) bootMinusMonoNow(pairs int) (mono, bound uint64) {
	mono = tk.clocks.mono()
	rm := tk.clocks.real() - mono
	seen := tk.bootSeen.Load()
	if seen != nil && !seen.loose && absDiff(rm, seen.realMinusMono) <= bootRemeasureNs {
		return mono, seen.bootMinusMono
	}
	measured, width := tk.bootMinusMono(pairs)
	for {
		next := &bootSeen{realMinusMono: rm, bootMinusMono: measured, loose: width > bootRemeasureNs, width: width}
		if seen != nil {
			next.bootMinusMono = laterOffset(seen.bootMinusMono, measured)
			if next.bootMinusMono != measured {
				next.width = seen.width
			}
		}
		if tk.bootSeen.CompareAndSwap(seen, next) {
			// mono was read before the measurement: still a lower bound.
			return mono, next.bootMinusMono
		}
		seen = tk.bootSeen.Load()
	}
}

// firstBootOffset is the boot offset readers add to the readings they take
// while another goroutine publishes the first state (beforeFirst), agreed
// through one compare-and-swap; the first state's offset is never below it.
func (tk *timekeeper) firstBootOffset() uint64 {
	if seen := tk.firstBoot.Load(); seen != 0 {
		return seen ^ noBootOffset
	}
	_, mine := tk.bootMinusMonoNow(bootSamplePairs)
	if mine == noBootOffset {
		mine++
	}
	if tk.firstBoot.CompareAndSwap(0, mine^noBootOffset) {
		return mine
	}
	return tk.firstBoot.Load() ^ noBootOffset
}

// bootUnsure is how far below the boot clock the newest bound of boot -
// mono may put it (the bracket of the measurement that gave it).
func (tk *timekeeper) bootUnsure() uint64 {
	if seen := tk.bootSeen.Load(); seen != nil {
		return seen.width
	}
	return 0
}

// bootOffset is the boot offset of next, the state about to be published
// (tk.k.state is still the old one), and the boot timeline less the boot
// clock with it, for the conversions. Called under tk.mu.
func (tk *timekeeper) bootOffset(next *state) (uint64, measured) {
	old := &tk.k.state
	oldOffset := old.bootOffset
	if old.mode == 0 { // the first state
		oldOffset = tk.firstBootOffset()
	}
	if next.mode == modeOS && next.trigger == never {
		offset := old.bootOffset
		if old.mode != modeOS || old.trigger != never {
			offset = tk.bootOffsetForGood(next, oldOffset)
		}
		// Boot readings are mono plus the bound of boot - mono plus the
		// offset: the bound may be below the boot clock by its bracket.
		tk.k.bootMeasured = measured{}
		w := tk.bootUnsure()
		return offset, measured{offset: offset - w/2, width: w}
	}
	// Lowered only by what a re-base just added to the precise readings
	// (keeper.bootLowering): the boot readings it makes are then no smaller
	// than before it.
	lowering := tk.k.bootLowering
	tk.k.bootLowering = 0
	// Brackets "reading, monotonic clock, reading", chained (each reading
	// closes one and opens the next), the boot clock being the monotonic
	// clock plus the bound; each gives a lower bound of the offset at the
	// second reading's moment. The largest is kept, and the measurement
	// stops at the first bracket within twice the tightest seen.
	// One pair where a reader makes the update (its work is bounded).
	pairs := bootSamplePairs
	if tk.k.reader {
		pairs = 1
	}
	_, bound := tk.bootMinusMonoNow(pairs)
	counter := next.mode == modeCounter
	read := tk.clocks.mono
	if counter {
		read = tk.clocks.counterOrdered
	}
	good := uint64(0) // until a bracket was seen, all of them
	if w := tk.k.bootWidth; w != 0 {
		good = saturatingAdd(w-1, w-1)
	}
	best, bestWidth, ok := uint64(0), uint64(0), false
	before := read()
	for i := 0; i < pairs; i++ {
		b := tk.clocks.mono() + bound
		after := read()
		width := after - before
		if counter {
			width = next.line.NanosFor(width)
		}
		if nanos, _, m := next.convert(after); m == converted {
			if d := b - nanos; !ok || laterOffset(best, d) != best || best == d {
				best, bestWidth, ok = d, width, true
			}
		}
		if w := tk.k.bootWidth; w == 0 || width < w-1 {
			tk.k.bootWidth = saturatingAdd(width, 1)
		}
		if width <= good {
			break
		}
		before = after
	}
	if !ok {
		kept := tk.k.bootMeasured
		if !kept.ok {
			kept = measured{width: math.MaxUint64}
		}
		return oldOffset, kept
	}
	offset := laterOffset(oldOffset-lowering, best)
	// best is within bestWidth, and the bound of boot - mono within its
	// bracket, below the boot clock less the precise reading; the boot
	// readings add offset instead, so they are that much more ahead of
	// the boot clock (the ratchet's excess), taken at the middle.
	w := saturatingAdd(bestWidth, tk.bootUnsure())
	conv := measured{offset: offset - best - w/2, width: w, ok: true}
	tk.k.bootMeasured = conv
	return offset, conv
}

// bootOffsetForGood is the boot offset of next, the state that moves
// readers to the OS clock for good, from oldOffset, the one before.
func (tk *timekeeper) bootOffsetForGood(next *state, oldOffset uint64) uint64 {
	// Readers move from reading+oldOffset to boot()+offset. The offset
	// is 0 (a reading is then the boot clock itself, a suspend not yet
	// measured included) unless the old readings were ahead of that:
	// then the value that continues them from above (next's reading plus
	// oldOffset, plus how far a lower bound of boot-mono falls short).
	// Readers then read mono + the bound + offset, the bound never
	// lower than this one. (Where next stands still until
	// CLOCK_MONOTONIC catches up with the counter's last readings, its
	// reading now is above mono + osOffset: continue from that.)
	mono, bound := tk.bootMinusMonoNow(bootSamplePairs)
	reading, _, _ := next.convert(mono)
	return laterOffset(0, reading-mono+oldOffset-bound)
}
