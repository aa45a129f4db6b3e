//go:build linux && loong64

package arch

// loong64: the Stable Counter, read with RDTIME.D
// (loongarch64_loong64.s explains the ordered read): one constant-rate counter that every
// core sees. As on Arm, the kernel's clocksource is not checked.

// DisabledWhy completes FallbackDisabled's sentence on this target (its
// probe never disables the counter).
const DisabledWhy = "not set up"

func Counter() uint64 { return Rdtimed() }

func CounterOrdered(bool) uint64 { return BarrierRdtimed() }

func ProbeCounter() Probe {
	p := Probe{
		Counter:        "Stable Counter (RDTIME.D)",
		Invariant:      true,
		OrderedRead:    "DBAR 0;IBAR 0;RDTIME.D;dependent load",
		OrderedReadAlt: "DBAR 0;IBAR 0;RDTIME.D;dependent load",
	}
	// The frequency CPUCFG publishes describes the CPU model, and an
	// emulator's counter need not tick at it: qemu-user's reads the host's
	// time-stamp counter, many times faster than the 100 MHz its CPUCFG
	// says, and a rate off by that much would take many updates to correct
	// (a new slope is never below 7/8 of the old one). So the rate is always
	// measured, during the first millisecond (the OS clock is read
	// meanwhile), and CPUCFG's frequency is only reported
	// (Info.PublishedFreqHz).
	p.PublishedHz = cpucfgFrequency(Cpucfg)
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

// Implemented in loongarch64_loong64.s.

// Rdtimed is the bare read of the Stable Counter (RDTIME.D), not ordered
// with earlier loads.
func Rdtimed() uint64

// BarrierRdtimed reads the Stable Counter after every earlier load and
// store has completed (DBAR 0; IBAR 0), and makes a load that depends on
// the value, so that the read completes before any later store (see
// loongarch64_loong64.s).
func BarrierRdtimed() uint64

// Cpucfg reads one CPU configuration word (0 for words not implemented).
func Cpucfg(word uint32) uint32

// Raw is the bare counter instruction as an assembly function call, as Go
// requires, with its name: the floor the report compares Nanotime against.
// It never faults where the counter exists (RawFaults).
func Raw() (string, func() int64) {
	return "asm RDTIME.D function", func() int64 { return int64(Rdtimed()) }
}

// RawFaults: Raw may be called whatever the source.
const RawFaults = false
