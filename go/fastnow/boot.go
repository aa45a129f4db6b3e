package fastnow

import "time"

// Time across suspend (spec/SEMANTICS.md, "Time across suspend"; the Rust
// crate's timekeeper/boot.rs is the same design).
//
// BootNanotime is Nanotime plus the state's boot offset: the boot clock
// (CLOCK_BOOTTIME on Linux, mach_continuous_time's on Apple platforms, on
// the base of mono(), the monotonic clock since the package loaded) less
// the precise reading, measured at every publish (the largest lower bound
// of up to bootSamplePairs brackets: the boot clock read first is at most
// the offset ahead of the reading taken after it), and never lowered, so
// that a reading never goes back within a goroutine. Measured
// against the precise reading rather than the monotonic clock, it does not
// count a suspend twice when the counter kept counting through it (the
// precise timeline then counted the suspend itself). On the OS clock for
// good no update comes any more: readers read the boot clock themselves
// and the offset is what they add to it.
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
// largest of bootSamplePairs lower bounds, each a boot clock reading less
// the monotonic reading after it; and the narrowest bracket around a boot
// reading (the monotonic readings are chained: each closes one bracket and
// opens the next).
func (tk *timekeeper) bootMinusMono() (bound, width uint64) {
	width = ^uint64(0)
	m := tk.clocks.mono()
	for i := 0; i < bootSamplePairs; i++ {
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
// CLOCK_MONOTONIC moved since (see above). The bound never decreases, so
// mono + bound never does.
func (tk *timekeeper) bootMinusMonoNow() (mono, bound uint64) {
	mono = tk.clocks.mono()
	rm := tk.clocks.real() - mono
	seen := tk.bootSeen.Load()
	if seen != nil && !seen.loose && absDiff(rm, seen.realMinusMono) <= bootRemeasureNs {
		return mono, seen.bootMinusMono
	}
	measured, width := tk.bootMinusMono()
	for {
		next := &bootSeen{realMinusMono: rm, bootMinusMono: measured, loose: width > bootRemeasureNs}
		if seen != nil {
			next.bootMinusMono = laterOffset(seen.bootMinusMono, measured)
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
	_, mine := tk.bootMinusMonoNow()
	if mine == noBootOffset {
		mine++
	}
	if tk.firstBoot.CompareAndSwap(0, mine^noBootOffset) {
		return mine
	}
	return tk.firstBoot.Load() ^ noBootOffset
}

// bootOffset is the boot offset of next, the state about to be published
// (tk.k.state is still the old one). Called under tk.mu.
func (tk *timekeeper) bootOffset(next *state) uint64 {
	old := &tk.k.state
	oldOffset := old.bootOffset
	if old.mode == 0 { // the first state
		oldOffset = tk.firstBootOffset()
	}
	if next.mode == modeOS && next.trigger == never {
		if old.mode == modeOS && old.trigger == never {
			return old.bootOffset
		}
		// Readers move from reading+oldOffset to boot()+offset. The offset
		// is 0 (a reading is then the boot clock itself, a suspend not yet
		// measured included) unless the old readings were ahead of that:
		// then the value that continues them from above (next's reading plus
		// oldOffset, plus how far a lower bound of boot-mono falls short).
		// Readers then read mono + the bound + offset, the bound never
		// lower than this one.
		_, bound := tk.bootMinusMonoNow()
		return laterOffset(0, next.osOffset+oldOffset-bound)
	}
	// Brackets "reading, monotonic clock, reading", chained (each reading
	// closes one and opens the next), the boot clock being the monotonic
	// clock plus the bound; each gives a lower bound of the offset at the
	// second reading's moment. The largest is kept, and the measurement
	// stops at the first bracket within twice the tightest seen.
	_, bound := tk.bootMinusMonoNow()
	counter := next.mode == modeCounter
	read := tk.clocks.mono
	if counter {
		read = tk.clocks.counterOrdered
	}
	good := uint64(0) // until a bracket was seen, all of them
	if w := tk.k.bootWidth; w != 0 {
		good = satAdd(w-1, w-1)
	}
	measured, ok := uint64(0), false
	before := read()
	for i := 0; i < bootSamplePairs; i++ {
		b := tk.clocks.mono() + bound
		after := read()
		if nanos, _, past := next.convert(after); !past {
			if d := b - nanos; !ok {
				measured, ok = d, true
			} else {
				measured = laterOffset(measured, d)
			}
		}
		width := after - before
		if counter {
			width = next.line.NanosFor(width)
		}
		if w := tk.k.bootWidth; w == 0 || width < w-1 {
			tk.k.bootWidth = satAdd(width, 1)
		}
		if width <= good {
			break
		}
		before = after
	}
	if !ok {
		return oldOffset
	}
	return laterOffset(oldOffset, measured)
}

// BootNanotime returns nanoseconds on Nanotime's timeline plus the time the
// machine spent suspended since it booted (CLOCK_BOOTTIME − CLOCK_MONOTONIC
// at the first reading, later suspends added): a clock that keeps counting
// while the machine sleeps, at Nanotime's cost, for timeouts and ages that
// must include the time a laptop's lid was closed. Nanotime, like
// CLOCK_MONOTONIC and package time's monotonic readings on Linux, does not
// count suspend.
//
// The offset is measured again at every state update, so after a resume the
// clock jumps forward by the time suspended at the first update: at once
// while the upkeep goroutine runs on Linux (the kernel wakes it at resume),
// otherwise at the first reading that updates, within a second of reading.
// Like Nanotime it never decreases within a goroutine.
//
// Linux and Android read CLOCK_BOOTTIME, Apple platforms
// mach_continuous_time's clock (CLOCK_MONOTONIC_RAW); Windows'
// QueryPerformanceCounter, the OS clock there, already counts suspend, and
// this follows it. Elsewhere (wasm, the BSDs) no clock tells suspend apart
// and it advances as Nanotime does. A ManualClock in use (UseClock) gives
// its monotonic reading plus its simulated suspends (ManualClock.Suspend).
func BootNanotime() int64 { return bootNanotimeCounter() }

// BootInstant is a reading of BootNanotime; compare and subtract them like
// Instants. BootInstants and Instants are on different timelines: do not
// mix them.
type BootInstant struct{ ns int64 }

// BootNow reads BootNanotime.
func BootNow() BootInstant { return BootInstant{BootNanotime()} }

// BootInstantOf wraps a BootNanotime value.
func BootInstantOf(nanotime int64) BootInstant { return BootInstant{nanotime} }

// Nanotime returns the reading in nanoseconds (BootNanotime's).
func (i BootInstant) Nanotime() int64 { return i.ns }

// Elapsed is the time since i, suspend included, never negative; it
// saturates as Instant.Elapsed does.
func (i BootInstant) Elapsed() time.Duration { return max(0, subSat(BootNanotime(), i.ns)) }

// Sub returns i-j, negative if j is later, saturated as Instant.Sub.
func (i BootInstant) Sub(j BootInstant) time.Duration { return subSat(i.ns, j.ns) }

// Add returns i+d (d may be negative), saturated as Instant.Add.
func (i BootInstant) Add(d time.Duration) BootInstant {
	return BootInstant{addSat(i.ns, int64(d))}
}

// Before reports whether i is before j.
func (i BootInstant) Before(j BootInstant) bool { return i.ns < j.ns }

// After reports whether i is after j.
func (i BootInstant) After(j BootInstant) bool { return i.ns > j.ns }

// Compare returns -1, 0 or +1 as i is before, equal to or after j.
func (i BootInstant) Compare(j BootInstant) int { return Instant(i).Compare(Instant(j)) }

// String formats the reading as a duration, as Instant.String does.
func (i BootInstant) String() string { return time.Duration(i.ns).String() }
