//go:build !amd64

package fastnow

import "math/bits"

// LineShift is the number of fractional bits of a Line's slope: 54 on
// targets other than amd64, so that counters down to about 1 MHz (a tick
// worth up to 2^10 ns) fit; a shift by a constant costs one or two
// instructions there.
const LineShift = 54

// scaled is (t * slope) >> LineShift.
func scaled(t, slope uint64) uint64 {
	hi, lo := bits.Mul64(t, slope)
	return hi<<(64-LineShift) | lo>>LineShift
}
