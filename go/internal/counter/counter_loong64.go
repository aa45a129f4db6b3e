//go:build linux

package counter

// Implemented in counter_loong64.s.

// Rdtimed is the bare read of the Stable Counter (RDTIME.D), not ordered
// with earlier loads.
func Rdtimed() uint64

// BarrierRdtimed reads the Stable Counter after every earlier load and
// store has completed (DBAR 0; IBAR 0), and makes a load that depends on
// the value, so that the read completes before any later store (see
// counter_loong64.s).
func BarrierRdtimed() uint64

// Cpucfg reads one CPU configuration word (0 for words not implemented).
func Cpucfg(word uint32) uint32
