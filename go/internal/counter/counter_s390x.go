//go:build linux

package counter

// Implemented in counter_s390x.s.

// Stckf is the bare read of the TOD clock (STORE CLOCK FAST): bit 51 is
// one microsecond, so it counts 4096 units a microsecond. Not ordered with
// earlier loads.
func Stckf() uint64

// SyncStckf reads the TOD clock as Stckf does, after every earlier
// storage access has completed and before any later one (between two
// serializations, see counter_s390x.s).
func SyncStckf() uint64

// StckfState is one STORE CLOCK FAST with the condition code it sets: 0
// (the clock is set) or 1 (not set) for a running clock, 2 (error) or 3
// (stopped, or not operational) otherwise.
func StckfState() (tod uint64, cc uint8)
