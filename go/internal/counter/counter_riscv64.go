//go:build linux

package counter

// Implemented in counter_riscv64.s.

// Rdtime is the bare read of the time CSR (RDTIME), not ordered with
// earlier loads.
func Rdtime() uint64

// FenceRdtime reads the time CSR after every earlier load (FENCE R,I), and
// makes a load that depends on the value, so that the read completes
// before any later store (see counter_riscv64.s).
func FenceRdtime() uint64
