package fastnow

import (
	"math"
	"math/bits"
)

// The conversions between the timelines and the kernel's clocks
// (spec/SEMANTICS.md, "Clock snapshot and the kernel's clocks"; the Rust
// crate's timekeeper conversion is the same design): the precise timeline
// is CLOCK_MONOTONIC plus an offset the writer measures at every state
// update's sample (offsets.go), the boot timeline the boot clock plus an
// offset measured alike. A conversion loads the published state; it is
// not on any reading's path.
//
// One difference with the Rust crate: mono() here counts from the
// package's load (package time's monotonic clock), so the offsets are on
// that base, and the public conversions (snapshot.go) add the kernel's
// clock at the load, measured once (osclock.MonoBase), whose bracket adds
// to the stated error.

// conversion is the offsets between the timelines and the kernel's clocks
// (on mono()'s base) that the published state gives now, and what they are
// good to.
type conversion struct {
	// monoOffset is the precise timeline less CLOCK_MONOTONIC (mod 2^64);
	// monoError how far CLOCK_MONOTONIC + monoOffset may be from an
	// instant read now, in ns.
	monoOffset, monoError uint64
	// bootOffset is the boot timeline less the boot clock (mod 2^64);
	// bootError how far the boot clock + bootOffset may be from a boot
	// instant read now, in ns.
	bootOffset, bootError uint64
}

// mulDivSat is a*b/c rounded down, saturated at the end of the uint64
// range (c > 0).
func mulDivSat(a, b, c uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi >= c {
		return math.MaxUint64
	}
	q, _ := bits.Div64(hi, lo, c)
	return q
}

// rateError is ns times a rate error of ppb parts per billion, rounded up.
func rateError(ns, ppb uint64) uint64 {
	hi, lo := bits.Mul64(ns, ppb)
	lo, c := bits.Add64(lo, 999_999_999, 0)
	hi += c
	if hi >= 1_000_000_000 {
		return math.MaxUint64
	}
	q, _ := bits.Div64(hi, lo, 1_000_000_000)
	return q
}

// conversion is the process's conversions between its timelines and the
// kernel's clocks; it waits for the first state if there is none yet. Not
// mocked: the conversions are between the process's timelines and the
// machine's clocks.
func (tk *timekeeper) conversion() conversion {
	tk.published()
	s := tk.state.Load()
	mono := tk.clocks.mono()
	// Half the measuring sample's bracket, and the rate's error since
	// (none where the offset is the OS clock's own).
	drift := uint64(0)
	if s.monoAt != 0 {
		drift = rateError(absDiff(mono, s.monoAt), s.monoDrift)
	}
	// Readings that stand still after a re-base are ahead of
	// CLOCK_MONOTONIC plus the offset they resume at, by what they have not
	// caught up yet; boot readings were measured against them as they
	// stood, and drift from that by as long as they stood since.
	source := mono
	if s.mode == modeCounter {
		source = tk.clocks.counter()
	}
	var ahead, stood uint64
	if nanos, _, m := s.convert(source); m == converted && s.stillAt(source) {
		if a := int64(nanos - (mono + s.monoOffset)); a > 0 {
			ahead = uint64(a)
		}
		stood = saturatingSub(mono, s.monoAt)
	}
	// (monoWidth and bootWidth are MaxUint64 where nothing was measured:
	// so is the error.)
	return conversion{
		monoOffset: s.monoOffset,
		monoError:  saturatingAdd(saturatingAdd(s.monoWidth/2, drift), ahead),
		bootOffset: s.bootConversion,
		bootError:  saturatingAdd(saturatingAdd(saturatingAdd(s.bootWidth/2, drift), ahead), stood),
	}
}
