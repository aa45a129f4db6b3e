package fastnow

import "math/bits"

// MaxShift is the largest shift a Scale uses.
const MaxShift = 96

const multLimit = 1 << 63

// Scale converts a count in one unit to another as (x * Mult) >> Shift,
// computed in 128 bits. The rules are the shared spec (spec/SEMANTICS.md);
// the Rust crate computes the same numbers, and both are tested against
// spec/vectors/conversion.json.
type Scale struct {
	Mult  uint64
	Shift uint32
}

// u128 is a minimal unsigned 128-bit integer for calibration-time arithmetic.
type u128 struct{ hi, lo uint64 }

func shl(x uint64, s uint32) (u128, bool) {
	// Reports false if x << s does not fit in 128 bits.
	if x == 0 {
		return u128{}, true
	}
	if uint32(bits.Len64(x))+s > 128 {
		return u128{}, false
	}
	switch {
	case s == 0:
		return u128{0, x}, true
	case s < 64:
		return u128{x >> (64 - s), x << s}, true
	default:
		return u128{x << (s - 64), 0}, true
	}
}

// ceilDiv returns ceil(n / d) if it fits in 64 bits.
func ceilDiv(n u128, d uint64) (uint64, bool) {
	if n.hi >= d {
		return 0, false
	}
	q, r := bits.Div64(n.hi, n.lo, d)
	if r != 0 {
		if q == ^uint64(0) {
			return 0, false
		}
		q++
	}
	return q, true
}

// FromRatio returns the scale for x*out/in: the largest shift in 0..=96 for
// which mult = ceil((out << shift) / in) is below 2^63. ok is false when out
// or in is zero, or the ratio is at least 2^63.
func FromRatio(out, in uint64) (Scale, bool) {
	if out == 0 || in == 0 {
		return Scale{}, false
	}
	for shift := uint32(MaxShift); ; shift-- {
		if n, fits := shl(out, shift); fits {
			if m, ok := ceilDiv(n, in); ok && m < multLimit {
				return Scale{Mult: m, Shift: shift}, true
			}
		}
		if shift == 0 {
			return Scale{}, false
		}
	}
}

// WithShift returns the ratio out/in at a given shift, as calibration
// refinements do to keep the first shift: mult = ceil((out << shift) / in),
// which must be at least 1 and fit in 64 bits.
func WithShift(out, in uint64, shift uint32) (Scale, bool) {
	if out == 0 || in == 0 || shift > MaxShift {
		return Scale{}, false
	}
	n, fits := shl(out, shift)
	if !fits {
		return Scale{}, false
	}
	m, ok := ceilDiv(n, in)
	if !ok || m == 0 {
		return Scale{}, false
	}
	return Scale{Mult: m, Shift: shift}, true
}

// NanosPerTick is the ticks-to-nanoseconds scale of a counter at freqHz.
func NanosPerTick(freqHz uint64) (Scale, bool) { return FromRatio(1_000_000_000, freqHz) }

// TicksPerNano is the nanoseconds-to-ticks scale of a counter at freqHz.
func TicksPerNano(freqHz uint64) (Scale, bool) { return FromRatio(freqHz, 1_000_000_000) }

// Apply returns (x * Mult) >> Shift, and false if it does not fit in 64 bits.
// Shift is at most 96 for every Scale this package makes. Kept small enough
// for the compiler to inline into the read path: Go defines shifts by the
// operand width or more as 0, so Shift 0 and Shift >= 64 need no branch of
// their own beyond the one below.
func (s Scale) Apply(x uint64) (uint64, bool) {
	hi, lo := bits.Mul64(x, s.Mult)
	if s.Shift >= 64 {
		return hi >> (s.Shift - 64), true
	}
	return hi<<(64-s.Shift) | lo>>s.Shift, hi>>s.Shift == 0
}

// ApplySaturating is Apply clamped to the largest uint64.
func (s Scale) ApplySaturating(x uint64) uint64 {
	if v, ok := s.Apply(x); ok {
		return v
	}
	return ^uint64(0)
}

// impliedFreqHz is 1e9 * 2^Shift / Mult, for reporting a ticks-to-ns scale.
func (s Scale) impliedFreqHz() uint64 {
	if s.Mult == 0 {
		return 0
	}
	n, _ := shl(1_000_000_000, s.Shift)
	if n.hi >= s.Mult {
		return ^uint64(0)
	}
	q, _ := bits.Div64(n.hi, n.lo, s.Mult)
	return q
}
