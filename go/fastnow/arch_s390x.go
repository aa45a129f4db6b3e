//go:build linux && s390x

package fastnow

import "github.com/fastnow/fastnow/go/internal/counter"

// s390x: the TOD clock, read with STORE CLOCK FAST, between two
// serializations where ordered (internal/counter's assembly explains both,
// and why the ordered read is not STORE CLOCK).
// z/Architecture has one TOD clock for all CPUs of a configuration, whose
// bit 51 ticks once a microsecond: 4096 units a microsecond, a rate the
// architecture fixes rather than firmware publishing it (reported as
// OriginRegister, as the Rust crate does). Any program may read it. As on
// Arm, there is nothing to verify between CPUs, so the kernel's clocksource
// ("tod") is not checked.
//
// The 64-bit clock counts from 1900 and wraps in 2042, and fastnow's
// conversion needs a counter that does not wrap, so readings are counted
// from the start of 2020 instead (todEpoch2020 subtracted modulo 2^64):
// they wrap in 2162. A clock that is not running, or whose readings would
// wrap within 71 years (a clock set after 2090, or to 1948-2019), is not
// used (todUsable).

// disabledWhy completes FallbackDisabled's sentence on this target.
const disabledWhy = "the TOD clock is not running, or not set to a date from 2020 to 2090"

func readCounter() uint64 { return counter.Stckf() - todEpoch2020 }

func readCounterOrdered(bool) uint64 { return counter.SyncStckf() - todEpoch2020 }

func probeCounter() probe {
	return probe{
		counter:        "TOD clock (STCKF)",
		invariant:      true,
		freqHz:         todHz,
		freqOrigin:     OriginRegister,
		orderedRead:    "BCR 14,0;STCKF;BCR 14,0",
		orderedReadAlt: "BCR 14,0;STCKF;BCR 14,0",
		disabled:       !todUsable(counter.StckfState()),
	}
}
