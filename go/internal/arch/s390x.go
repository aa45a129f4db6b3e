//go:build linux && s390x

package arch

// s390x: the TOD clock, read with STORE CLOCK FAST, between two
// serializations where ordered (s390x_s390x.s explains both,
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

// DisabledWhy completes FallbackDisabled's sentence on this target.
const DisabledWhy = "the TOD clock is not running, or not set to a date from 2020 to 2090"

func Counter() uint64 { return Stckf() - todEpoch2020 }

func CounterOrdered(bool) uint64 { return SyncStckf() - todEpoch2020 }

func ProbeCounter() Probe {
	return Probe{
		Counter:        "TOD clock (STCKF)",
		Invariant:      true,
		FreqHz:         todHz,
		FreqOrigin:     OriginRegister,
		OrderedRead:    "BCR 14,0;STCKF;BCR 14,0",
		OrderedReadAlt: "BCR 14,0;STCKF;BCR 14,0",
		Disabled:       !todUsable(StckfState()),
	}
}

// Implemented in s390x_s390x.s.

// Stckf is the bare read of the TOD clock (STORE CLOCK FAST): bit 51 is
// one microsecond, so it counts 4096 units a microsecond. Not ordered with
// earlier loads.
func Stckf() uint64

// SyncStckf reads the TOD clock as Stckf does, after every earlier
// storage access has completed and before any later one (between two
// serializations, see s390x_s390x.s).
func SyncStckf() uint64

// StckfState is one STORE CLOCK FAST with the condition code it sets: 0
// (the clock is set) or 1 (not set) for a running clock, 2 (error) or 3
// (stopped, or not operational) otherwise.
func StckfState() (tod uint64, cc uint8)

// Raw is the bare counter instruction as an assembly function call, as Go
// requires, with its name: the floor the report compares Nanotime against.
// It never faults where the counter exists (RawFaults).
func Raw() (string, func() int64) {
	return "asm STCKF function", func() int64 { return int64(Stckf()) }
}

// RawFaults: Raw may be called whatever the source.
const RawFaults = false
