package fastnow

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"
)

// The hybrid logical clock (spec/SEMANTICS.md, "Hybrid logical clock";
// Kulkarni et al., "Logical Physical Clocks", 2014): stamps that order
// events across machines whose clocks disagree, each one UnixNano reading,
// a conversion and a compare-and-swap on one word. The layout, the rules
// and the vectors (spec/vectors/hlc.json) are the Rust crate's
// fastnow::hlc, so the two exchange stamps as uint64 words or as text.

const (
	hlcNanosPerSec = 1_000_000_000
	// hlcLogicalBits is the counter's width: the lower part of the word.
	hlcLogicalBits = 16
	// hlcMaxPhysical is the largest physical part, 2^48 − 1 units.
	hlcMaxPhysical = 1<<(64-hlcLogicalBits) - 1
	// hlcEndNanos is the first nanosecond after the last unit (2^32 s,
	// 2106-02-07T06:28:16Z).
	hlcEndNanos = (1 << 32) * hlcNanosPerSec
)

// hlcWordOfNanos is the word with counter 0 whose physical part is the
// unit (2^-16 s) containing unixNano, floor(unixNano × 2^16 / 10^9), or
// the last unit from 2106-02-07T06:28:16Z on; times before 1970 are the
// first unit. Seconds and fraction apart, so that both divisions are by
// constants (multiplications): 2^16 / 10^9 = 2^7 / 5^9.
func hlcWordOfNanos(unixNano int64) uint64 {
	if unixNano <= 0 {
		return 0
	}
	ns := uint64(unixNano)
	if ns >= hlcEndNanos {
		return hlcMaxPhysical << hlcLogicalBits
	}
	secs := ns / hlcNanosPerSec
	frac := (ns % hlcNanosPerSec << 7) / 1_953_125
	return (secs<<16 | frac) << hlcLogicalBits
}

// hlcNanosOfPhysical is the first whole nanosecond of the unit physical,
// ceil(physical × 10^9 / 2^16), so that hlcWordOfNanos inverts it.
func hlcNanosOfPhysical(physical uint64) uint64 {
	return physical>>16*hlcNanosPerSec + (physical&0xffff*hlcNanosPerSec+0xffff)>>16
}

// HLCTimestamp is a hybrid logical clock's stamp, ordered as the integer
// it is: the upper 48 bits are the physical part, in units of 2^-16 s
// (about 15.26 µs) since 1970-01-01T00:00:00Z, the lower 16 bits the
// logical counter. The same word as the Rust crate's hlc::Timestamp, and an
// NTP-format time (seconds and a 32-bit fraction since the Unix epoch)
// whose last 16 bits count events; it covers 1970 to
// 2106-02-07T06:28:15.99998474Z. Compare stamps with < and ==; send them as
// uint64(t) or as text (String, MarshalText).
type HLCTimestamp uint64

// NewHLCTimestamp returns the stamp whose physical part is the unit (2^-16
// s) containing unixNano, with counter logical. The physical part keeps the
// unit, not the nanosecond: UnixNano gives back the unit's first
// nanosecond, at most 15.26 µs earlier. Times before 1970 are taken as the
// first unit, times from 2106-02-07T06:28:16Z on as the last.
func NewHLCTimestamp(unixNano int64, logical uint16) HLCTimestamp {
	return HLCTimestamp(hlcWordOfNanos(unixNano) | uint64(logical))
}

// UnixNano returns the physical part as Unix nanoseconds: the first whole
// nanosecond of its unit.
func (t HLCTimestamp) UnixNano() int64 {
	return int64(hlcNanosOfPhysical(uint64(t) >> hlcLogicalBits))
}

// Logical returns the counter: how many events before this one had the
// same physical part, on this node or on the nodes whose stamps it heard.
func (t HLCTimestamp) Logical() uint16 { return uint16(t) }

// Time returns the physical part as a time.Time in UTC.
func (t HLCTimestamp) Time() time.Time { return time.Unix(0, t.UnixNano()).UTC() }

// DefaultHLCMaxDrift is how far ahead of the local wall clock a remote
// stamp may be until SetMaxDrift says otherwise: 500 ms, as uhlc's default
// and CockroachDB's default maximum clock offset.
const DefaultHLCMaxDrift = 500 * time.Millisecond

// HLC is a hybrid logical clock: stamps for local and sent events (Now) and
// received ones (Update). Each stamp is one compare-and-swap on one word,
// without a lock. Stamps strictly increase across all the goroutines that
// share the clock: if one call returns before another starts, the second
// stamp is greater, and no two calls return the same stamp (except past
// 2106, see below).
//
// The zero value is a clock that has issued no stamp, with the maximum
// drift DefaultHLCMaxDrift; NewHLC returns one. An HLC must not be copied
// after first use.
//
// The physical part comes from UnixNano, and so follows UseClock's
// ManualClock in tests. When the wall clock steps back, stamps keep their
// physical part and count up in the counter until the wall clock passes it
// again; when the counter is full the next stamp borrows from the physical
// part (the word goes up by one), running ahead of the wall clock by one
// unit per 65,536 stamps issued without the wall clock passing it. A wall
// clock past 2106-02-07T06:28:16Z reads as the last unit; the stamps then
// count up to the largest word and stay there, never wrapping.
type HLC struct {
	last atomic.Uint64
	// drift is the maximum drift minus DefaultHLCMaxDrift, so that the
	// zero value has the default.
	drift atomic.Int64
}

// NewHLC returns a clock that has issued no stamp, with the maximum drift
// DefaultHLCMaxDrift.
func NewHLC() *HLC { return new(HLC) }

// SetMaxDrift sets how far ahead of the local wall clock a remote stamp
// may be for Update to accept it; negative durations are taken as 0. It
// may be called at any time, from any goroutine.
//
// The bound is the stamps' promise: a clock's physical part is never
// further ahead of its own wall clock than the largest maximum drift of
// the clocks it heard from (plus what the counter borrowed). Set it above
// the worst offset between the machines' clocks that you tolerate; a stamp
// from a machine whose clock is further ahead is refused rather than
// dragging every clock it reaches into the future. (The Rust crate's bound
// is a u64 of nanoseconds; time.Duration's largest, 292 years, accepts
// every stamp just as its largest does.)
func (h *HLC) SetMaxDrift(d time.Duration) {
	h.drift.Store(int64(max(d, 0) - DefaultHLCMaxDrift))
}

// MaxDrift returns how far ahead of the local wall clock a remote stamp
// may be.
func (h *HLC) MaxDrift() time.Duration {
	return time.Duration(h.drift.Load()) + DefaultHLCMaxDrift
}

// Now returns the stamp of a local event or of a message about to be sent:
// above every stamp this clock issued before, and with the wall clock's
// physical part unless an earlier stamp's is later.
func (h *HLC) Now() HLCTimestamp { return h.now(UnixNano()) }

// Update returns the stamp of the receipt of a message stamped remote:
// above remote and above every stamp this clock issued before; the clock's
// later stamps are above remote too.
//
// When remote's physical part is more than the maximum drift (SetMaxDrift)
// ahead of the local wall clock, it returns a *HLCDriftError that says by
// how much, and leaves the clock as it was, so that one machine with a
// wrong clock cannot drag the others' stamps into the future.
func (h *HLC) Update(remote HLCTimestamp) (HLCTimestamp, error) {
	return h.update(remote, UnixNano())
}

// now is Now with the wall clock reading wall (the tests drive it so).
func (h *HLC) now(wall int64) HLCTimestamp { return h.advance(hlcWordOfNanos(wall), 0) }

// update is Update with the wall clock reading wall.
func (h *HLC) update(remote HLCTimestamp, wall int64) (HLCTimestamp, error) {
	wall = max(wall, 0)
	remoteNanos := remote.UnixNano()
	maxDrift := h.MaxDrift()
	if remoteNanos > wall && remoteNanos-wall > int64(maxDrift) {
		return 0, &HLCDriftError{Remote: remote, Wall: wall, AheadBy: time.Duration(remoteNanos - wall), MaxDrift: maxDrift}
	}
	return h.advance(hlcWordOfNanos(wall), satInc(uint64(remote))), nil
}

// satInc is w + 1, or w at the largest word.
func satInc(w uint64) uint64 {
	if w == math.MaxUint64 {
		return w
	}
	return w + 1
}

// advance moves the clock to the largest of wall (the wall reading's
// word), floor, and the last stamp plus one, and returns it: on (physical
// part, counter) pairs the paper's rule, with the counter carrying into the
// physical part when full.
func (h *HLC) advance(wall, floor uint64) HLCTimestamp {
	for {
		last := h.last.Load()
		next := max(wall, floor, satInc(last))
		if h.last.CompareAndSwap(last, next) {
			return HLCTimestamp(next)
		}
	}
}

// HLCDriftError is Update's error for a remote stamp further ahead of the
// local wall clock than the maximum drift; the clock was left as it was.
type HLCDriftError struct {
	// Remote is the refused stamp.
	Remote HLCTimestamp
	// Wall is the local wall clock's reading, in Unix nanoseconds.
	Wall int64
	// AheadBy is how far Remote's physical part (its UnixNano) was ahead
	// of Wall: more than MaxDrift.
	AheadBy time.Duration
	// MaxDrift is the maximum drift of the clock that refused it.
	MaxDrift time.Duration
}

func (e *HLCDriftError) Error() string {
	return fmt.Sprintf("remote HLC timestamp %s is %v ahead of the local wall clock (%s), more than the maximum drift of %v: refused, the clock left as it was",
		e.Remote, e.AheadBy, time.Unix(0, e.Wall).UTC().Format("2006-01-02T15:04:05.000000000Z"), e.MaxDrift)
}
