package fastnow

// The published state (spec/SEMANTICS.md, "The timeline"): what readers
// load, and how a reading is converted.
//
// # Pieces and take-over points
//
// Readings are nanoseconds, converted at the read. A counter state is a
// piece of one non-decreasing function of the counter value:
//
//   - start <= t < trigger, where start is the larger of takeover and
//     floor: the reader converts t with line (the fast path: one unsigned
//     compare, t-start < span);
//   - floor <= t < takeover: with prev, the line of the previous piece (or,
//     after a re-base, a flat line: see "Suspend, resume and counter
//     jumps" below);
//   - t < floor: the counter went back (a reset at a resume, a migration);
//     the reader needs a newer state, as past end;
//   - trigger <= t < end: with line, and the reader (unless the upkeep
//     goroutine runs) tries the lock and publishes the next state;
//   - t >= end: the reader needs a newer state; it publishes one itself or
//     waits for the goroutine that is doing it (runtime.Gosched). (The Rust
//     crate returns a lower bound there instead, because its reader may be a
//     signal handler that interrupted the writer; Go code never is.)
//
// The floor is the publishing update's sample's counter value less
// floorSlackNs of ticks, never below the previous piece's take-over point:
// a reader that loaded the state reads the counter after it, so only a
// counter that went back reads below. The fast path starts there at the
// earliest, so it never converts a value older than the update that
// published its state.
//
// A new piece takes over exactly at the old piece's end, from the old
// line's value there, with the old line as its prev; and it is published
// only once the current piece has started (now >= takeover), so prev is
// always the right line below takeover. So any goroutine, whichever state it
// holds, converts every counter value it may convert as the newest state
// does: the conversion is one non-decreasing function across every update,
// forced or not (a new slope is never below 7/8 of the old one).
//
// # Suspend, resume and counter jumps
//
// Where the counter leaves CLOCK_MONOTONIC's line (a suspend it counted, a
// reset at a resume, a migration's jump or new rate), the writer re-bases
// (writer.go, rebase): the next piece continues from where CLOCK_MONOTONIC
// plus monoOffset puts the timeline, or from the old piece's last value
// where that is higher, standing still (a flat line) until CLOCK_MONOTONIC
// gets there. Such a piece converts with a flat prev below its take-over
// point, and an OS state that continues a stand-still does the same below
// its take-over point (in CLOCK_MONOTONIC nanoseconds).

const (
	modeOS      uint64 = 1 // readings come from CLOCK_MONOTONIC (+ osOffset)
	modeCounter uint64 = 2 // readings come from the counter
)

// state is what readers see: immutable once published. The amd64 assembly
// (read_amd64.s) reads start, span, line, bootOffset and wallOffset
// through the go_asm.h offsets: they come first, adjacent, so that a fast
// path's loads share a cache line; the tests check the layout it relies
// on.
type state struct {
	// start is where the read fast path starts in counter mode: the larger
	// of takeover and floor. Unused in OS mode.
	start uint64
	// span is trigger - start in counter mode, the range of the read fast
	// path; 0 in OS mode, which keeps the fast paths on proc.state (the
	// *Real variants) away from the counter (those on proc.view never see
	// an OS state: timekeeper.view).
	span uint64
	line line
	// bootOffset is what BootNanotime adds (mod 2^64) to this state's
	// reading — the boot clock less the precise reading, measured at each
	// publish and never lowered but by a re-base (offsets.go) — or, on the
	// OS clock for good (modeOS, trigger never), to the boot clock, which
	// readers then read.
	bootOffset uint64
	// wallOffset is what UnixNano adds (mod 2^64) to this state's reading:
	// CLOCK_REALTIME less the precise reading at the publishing update's
	// sample (offsets.go). 0 sends wall readers to CLOCK_REALTIME (the OS
	// source, near the ends of the range, a piece that stands still).
	wallOffset uint64
	// floor is, in counter mode, the lowest counter value a reader that
	// loaded this state can read, short of the counter going back: the
	// publishing sample's, less floorSlackNs of ticks for counters read on
	// other cores. A reading below it is never converted with this state.
	floor uint64

	mode uint64
	// takeover is, in counter mode, the counter value where this piece
	// starts; in OS mode the CLOCK_MONOTONIC value where it starts.
	takeover     uint64
	trigger, end uint64
	prev         line
	osOffset     uint64 // OS mode: readings are CLOCK_MONOTONIC + osOffset (mod 2^64)
	// monoOffset is the timeline less CLOCK_MONOTONIC (mod 2^64, on
	// mono()'s base), as the publishing update's sample measured it
	// (offsets.go): what the conversions between instants and
	// CLOCK_MONOTONIC subtract. In OS mode it is osOffset.
	monoOffset uint64

	// What the conversions to and from the kernel's clocks are good to
	// (conversion.go); no fast path loads them.
	//
	// monoAt is the CLOCK_MONOTONIC reading of the sample that measured
	// monoOffset, from which it drifts at the rate's error; 0 where it is
	// exact and does not drift (OS mode). monoWidth is that sample's
	// bracket (the offset is within half of it), and monoDrift how fast,
	// in parts per billion, the offset drifts from monoAt on.
	monoAt, monoWidth, monoDrift uint64
	// bootConversion is the boot timeline less the boot clock (mod 2^64,
	// on mono()'s base): what the conversions between boot instants and
	// CLOCK_BOOTTIME subtract; bootWidth twice what it may be off by.
	bootConversion, bootWidth uint64
}

// derive fills in the fields the fast paths read that follow from the
// others: start and span.
func (s *state) derive() {
	s.start, s.span = 0, 0
	if s.mode != modeCounter {
		return
	}
	s.start = max(s.takeover, s.floor)
	s.span = saturatingSub(s.trigger, s.start)
}

// miss says why a state does not convert a reading.
type miss uint8

const (
	converted  miss = iota // it does
	pastEnd                // the reading is at or past end: a newer state is needed
	belowFloor             // the counter went back below the floor: a newer state is needed, which re-bases
)

// convert converts a reading of s's source (counter ticks, or monotonic
// nanoseconds in OS mode); due is true when the reading is at or past
// trigger. Below takeover the prev line converts: the previous piece's, or,
// where the state stands still until CLOCK_MONOTONIC catches up (a re-base,
// an OS state after one), a flat line.
func (s *state) convert(reading uint64) (nanos uint64, due bool, m miss) {
	if s.mode == modeCounter && reading < s.floor {
		return 0, true, belowFloor
	}
	if reading >= s.end {
		return 0, true, pastEnd
	}
	switch {
	case reading < s.takeover:
		nanos = s.prev.At(reading)
	case s.mode == modeOS:
		nanos = reading + s.osOffset
	default:
		nanos = s.line.At(reading)
	}
	return nanos, reading >= s.trigger, converted
}

// beforeSample converts a counter value a reader read before the sample of
// the update it then made itself, which published s: as convert, but below
// the floor too, which that later sample placed (the piece converts the
// reading as it would were the floor lower: with prev below takeover — the
// previous line there, or a flat line after a re-base). ok is false past
// the end.
func (s *state) beforeSample(reading uint64) (nanos uint64, ok bool) {
	lowered := *s
	lowered.floor = 0
	nanos, _, m := lowered.convert(reading)
	return nanos, m == converted
}

// stillAt reports whether s converts reading, which it converts, with a
// line that stands still: a piece re-based until CLOCK_MONOTONIC catches
// up, or the flat line below its take-over point.
func (s *state) stillAt(reading uint64) bool {
	if reading < s.takeover {
		return s.prev.Slope == 0
	}
	return s.mode == modeCounter && s.line.Slope == 0
}
