//go:build !amd64

package fastnow

import "math/bits"

// lineShift is the number of fractional bits of a line's slope: 54 on
// targets other than amd64, so that counters down to about 1 MHz (a tick
// worth up to 2^10 ns) fit; a shift by a constant costs one or two
// instructions there.
const lineShift = 54

// scaled is (t * slope) >> lineShift.
func scaled(t, slope uint64) uint64 {
	hi, lo := bits.Mul64(t, slope)
	return hi<<(64-lineShift) | lo>>lineShift
}
