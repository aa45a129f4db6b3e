package fastnow

// The published state (spec/SEMANTICS.md, "The timeline"): what readers
// load, and how a reading is converted.
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

const (
	modeOS      uint64 = 1 // readings come from CLOCK_MONOTONIC (+ osOffset)
	modeCounter uint64 = 2 // readings come from the counter
)

// state is what readers see: immutable once published. The amd64 assembly
// (read_amd64.s) reads takeover, span, line, wall and wallDeadline
// through the go_asm.h offsets; the tests check the layout it relies on.
type state struct {
	// Counter mode: the counter value where this piece starts. OS mode: the
	// CLOCK_MONOTONIC value where it starts.
	takeover uint64
	// span is trigger - takeover in counter mode, the range of the read fast
	// path; 0 in OS mode, which keeps every fast path away from the counter.
	span uint64
	line line
	wall line
	// wallDeadline is the counter value at which a wall reader resyncs; 0
	// sends wall readers to the system clock.
	wallDeadline uint64
	mode         uint64
	trigger, end uint64
	prev         line
	osOffset     uint64 // OS mode: readings are CLOCK_MONOTONIC + osOffset (mod 2^64)
	// bootOffset is what BootNanotime adds (mod 2^64) to this state's
	// reading — the boot clock less the precise reading, measured at each
	// publish and never lowered (boot.go) — or, on the OS clock for good
	// (modeOS, trigger never), to the boot clock, which readers then read.
	bootOffset uint64
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
