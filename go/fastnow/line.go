package fastnow

import (
	"fmt"
	"math/bits"
	"strings"
)

// line is a conversion from counter ticks to nanoseconds:
//
//	At(t) = Offset + (t * Slope) >> lineShift   (mod 2^64)
//
// with a 128-bit product and a shift by a compile-time constant: 64 on
// amd64, where the answer is the high half of one multiply, and 54
// elsewhere. Slope is nanoseconds per tick with lineShift fractional bits,
// so a tick may be worth at most 2^(64-lineShift) ns: counters of 1 GHz and
// faster on amd64, about 1 MHz and faster elsewhere; slower counters are not
// used. A line is stored through a point, as Offset, so that the read path
// needs no subtraction and two lines meet exactly where one takes over from
// the other. The rules are shared with the Rust crate (spec/SEMANTICS.md,
// "Conversion") and pinned down by spec/vectors/line.json.
type line struct {
	Offset uint64 // the value at counter value 0, modulo 2^64
	Slope  uint64 // nanoseconds per tick, lineShift fractional bits
}

// shl128 returns x << s as a 128-bit value, for 0 <= s <= 64. s is a
// variable on purpose: Go defines x >> 64 and x << 64 as 0, which covers
// both ends without a branch.
func shl128(x uint64, s uint) (hi, lo uint64) {
	return x >> (64 - s), x << s
}

// slopeOf returns round((nanos << lineShift) / ticks), rounding half up: the
// slope of nanos nanoseconds per ticks ticks. ok is false when ticks is 0,
// or the result is 0 or does not fit in 64 bits.
func slopeOf(nanos, ticks uint64) (slope uint64, ok bool) {
	if ticks == 0 {
		return 0, false
	}
	hi, lo := shl128(nanos, lineShift)
	var carry uint64
	lo, carry = bits.Add64(lo, ticks>>1, 0)
	hi += carry // cannot overflow: (nanos << lineShift) + ticks/2 < 2^128
	if hi >= ticks {
		return 0, false // the quotient needs more than 64 bits
	}
	q, _ := bits.Div64(hi, lo, ticks)
	return q, q != 0
}

// slopeOfFreq returns the slope of a counter ticking freqHz times a second.
func slopeOfFreq(freqHz uint64) (uint64, bool) { return slopeOf(1_000_000_000, freqHz) }

// through returns the line of the given slope through (ticks, value):
// Offset = value - (ticks * slope) >> lineShift, modulo 2^64.
func through(ticks, value, slope uint64) line {
	return line{Offset: value - scaled(ticks, slope), Slope: slope}
}

// At returns the line's value at counter value t, modulo 2^64: exact
// whenever the true value fits in 64 bits.
func (l line) At(t uint64) uint64 { return l.Offset + scaled(t, l.Slope) }

// NanosFor returns the nanoseconds ticks ticks take at this slope (rounded
// down).
func (l line) NanosFor(ticks uint64) uint64 { return scaled(ticks, l.Slope) }

// TicksFor returns the ticks nanos nanoseconds take at this slope (rounded
// down, saturating at the largest uint64), for scheduling.
func (l line) TicksFor(nanos uint64) uint64 {
	if l.Slope == 0 {
		return ^uint64(0)
	}
	hi, lo := shl128(nanos, lineShift)
	if hi >= l.Slope {
		return ^uint64(0)
	}
	q, _ := bits.Div64(hi, lo, l.Slope)
	return q
}

// FreqHz returns the counter frequency the slope implies, rounded, for
// reports (0 for a zero slope).
func (l line) FreqHz() uint64 {
	if l.Slope == 0 {
		return 0
	}
	hi, lo := shl128(1_000_000_000, lineShift)
	var carry uint64
	lo, carry = bits.Add64(lo, l.Slope>>1, 0)
	hi += carry
	if hi >= l.Slope {
		return ^uint64(0)
	}
	q, _ := bits.Div64(hi, lo, l.Slope)
	return q
}

// String shows the line as its formula, with the slope in nanoseconds per
// tick and the frequency it implies: "Line(at(t) = 1234 + t × 0.408937 ns, 2.445384 GHz)".
func (l line) String() string {
	// Nanoseconds per tick with six decimals, from the fixed-point slope:
	// 10^6 × slope >> lineShift, rounded, by the line's own arithmetic.
	micro := scaled(1_000_000, l.Slope) // floor(10^6 × slope / 2^lineShift)
	return fmt.Sprintf("Line(at(t) = %d + t × %d.%06d ns, %s)", l.Offset, micro/1_000_000, micro%1_000_000, formatHz(l.FreqHz()))
}

// formatHz formats a frequency with six significant decimals in the
// largest unit that keeps it at 1 or more: "2.445384 GHz", "24 MHz".
func formatHz(hz uint64) string {
	units := []struct {
		name string
		size uint64
	}{{"GHz", 1e9}, {"MHz", 1e6}, {"kHz", 1e3}}
	for _, u := range units {
		if hz >= u.size {
			whole, frac := hz/u.size, hz%u.size
			if frac == 0 {
				return fmt.Sprintf("%d %s", whole, u.name)
			}
			digits := fmt.Sprintf("%0*d", len(fmt.Sprint(u.size))-1, frac)
			if len(digits) > 6 {
				digits = digits[:6]
			}
			return fmt.Sprintf("%d.%s %s", whole, strings.TrimRight(digits, "0"), u.name)
		}
	}
	return fmt.Sprintf("%d Hz", hz)
}
