package fastnow

import "math/bits"

// lineShift is the number of fractional bits of a line's slope: 64 on
// amd64, so that a conversion is the high half of one multiply (MULQ leaves
// it in DX) plus an add.
const lineShift = 64

// scaled is (t * slope) >> lineShift.
func scaled(t, slope uint64) uint64 {
	hi, _ := bits.Mul64(t, slope)
	return hi
}
