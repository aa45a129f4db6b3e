package fastnow

import "math/bits"

// LineShift is the number of fractional bits of a Line's slope: 64 on
// amd64, so that a conversion is the high half of one multiply (MULQ leaves
// it in DX) plus an add.
const LineShift = 64

// scaled is (t * slope) >> LineShift.
func scaled(t, slope uint64) uint64 {
	hi, _ := bits.Mul64(t, slope)
	return hi
}
