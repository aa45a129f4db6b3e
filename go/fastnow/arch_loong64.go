//go:build linux && loong64

package fastnow

import "github.com/fastnow/fastnow/go/internal/counter"

// loong64: the Stable Counter, read with RDTIME.D (internal/counter's
// assembly explains the ordered read): one constant-rate counter that every
// core sees. As on Arm, the kernel's clocksource is not checked.

// disabledWhy completes FallbackDisabled's sentence on this target (its
// probe never disables the counter).
const disabledWhy = "not set up"

func readCounter() uint64 { return counter.Rdtimed() }

func readCounterOrdered(bool) uint64 { return counter.BarrierRdtimed() }

func probeCounter() probe {
	p := probe{
		counter:        "Stable Counter (RDTIME.D)",
		invariant:      true,
		orderedRead:    "DBAR 0;IBAR 0;RDTIME.D;dependent load",
		orderedReadAlt: "DBAR 0;IBAR 0;RDTIME.D;dependent load",
	}
	// The frequency CPUCFG publishes describes the CPU model, and an
	// emulator's counter need not tick at it: qemu-user's reads the host's
	// time-stamp counter, many times faster than the 100 MHz its CPUCFG
	// says, and a rate off by that much would take many updates to correct
	// (a new slope is never below 7/8 of the old one). So the rate is always
	// measured, during the first millisecond (the OS clock is read
	// meanwhile), and CPUCFG's frequency is only reported
	// (Info.PublishedFreqHz).
	p.publishedHz = cpucfgFrequency(counter.Cpucfg)
	return p
}

// cpucfgFrequency is the Stable Counter's frequency from the CPU
// configuration words: word 4 (the base frequency) times word 5's
// multiplier (bits 0-15) over its divisor (bits 16-31), when word 2's bit
// 14 (LLFTP, the constant-frequency timer) is set; 0 otherwise.
func cpucfgFrequency(cpucfg func(uint32) uint32) uint64 {
	if cpucfg(2)&(1<<14) == 0 {
		return 0
	}
	base, w5 := uint64(cpucfg(4)), cpucfg(5)
	mul, div := uint64(w5&0xffff), uint64(w5>>16)
	if base == 0 || mul == 0 || div == 0 {
		return 0
	}
	return base * mul / div
}
