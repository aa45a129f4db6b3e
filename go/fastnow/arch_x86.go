//go:build amd64 || (linux && 386)

package fastnow

import "github.com/fastnow/fastnow/go/internal/counter"

// disabledWhy completes FallbackDisabled's sentence on this target.
const disabledWhy = "prctl(PR_SET_TSC) makes RDTSC fault, or the CPU lacks RDTSC or an ordered read"

func readCounter() uint64 { return counter.Rdtsc() }

func readCounterOrdered(alt bool) uint64 {
	if alt {
		return counter.LfenceRdtsc()
	}
	return counter.Rdtscp()
}

// probeCounter reads what the CPU says about its time-stamp counter; the
// same rules as the Rust crate's x86 backend, on amd64 and on 32-bit x86
// Linux alike (the instructions are the same; internal/counter has one
// assembly file for each).
func probeCounter() probe {
	maxLeaf, _, _, _ := counter.Cpuid(0, 0)
	maxExt, _, _, _ := counter.Cpuid(0x8000_0000, 0)
	p := probe{
		counter:        "TSC (RDTSC)",
		orderedRead:    "RDTSCP",
		orderedReadAlt: "LFENCE;RDTSC",
	}
	if maxExt >= 0x8000_0007 {
		_, _, _, edx := counter.Cpuid(0x8000_0007, 0)
		p.invariant = edx&(1<<8) != 0
	}
	hasRdtscp := false
	if maxExt >= 0x8000_0001 {
		_, _, _, edx := counter.Cpuid(0x8000_0001, 0)
		hasRdtscp = edx&(1<<27) != 0
	}
	// Leaf 1 EDX: bit 4 is the TSC (RDTSC), bit 26 SSE2 (LFENCE). Every
	// amd64 CPU has both; a 32-bit one may lack SSE2 (Go's GO386=softfloat
	// runs there). Without RDTSC, or without either ordered read, the
	// counter is not used, so neither instruction ever runs where it would
	// fault.
	var ecx1, edx1 uint32
	if maxLeaf >= 1 {
		_, _, ecx1, edx1 = counter.Cpuid(1, 0)
	}
	hasTSC, hasLfence := edx1&(1<<4) != 0, edx1&(1<<26) != 0
	hvMax := uint32(0)
	if ecx1&(1<<31) != 0 {
		a, b, c, d := counter.Cpuid(0x4000_0000, 0)
		hvMax = a
		sig := make([]byte, 0, 12)
		for _, r := range []uint32{b, c, d} {
			sig = append(sig, byte(r), byte(r>>8), byte(r>>16), byte(r>>24))
		}
		p.hypervisor = trimNUL(sig)
	}
	if maxLeaf >= 0x15 {
		a, b, c, _ := counter.Cpuid(0x15, 0)
		if a != 0 && b != 0 && c != 0 {
			p.freqHz, p.freqOrigin = uint64(c)*uint64(b)/uint64(a), OriginCPUID
		}
	}
	if p.freqHz == 0 && p.hypervisor != "" && hvMax >= 0x4000_0010 {
		if khz, _, _, _ := counter.Cpuid(0x4000_0010, 0); khz != 0 {
			p.freqHz, p.freqOrigin = uint64(khz)*1000, OriginHypervisor
		}
	}
	if p.freqHz == 0 {
		if hz := kernelTSCFrequency(); hz != 0 {
			p.freqHz, p.freqOrigin = hz, OriginKernel
		}
	}
	p.disabled = !hasTSC || !(hasRdtscp || hasLfence) || tscDisabledByPrctl()
	// Only a counter that can be read is timed.
	p.useAlt = !p.disabled && useLfence(hasRdtscp, hasLfence, lfenceSerialises(maxExt), orderedAltIsCheaper)
	return p
}

// useLfence says whether the ordered read is LFENCE;RDTSC rather than
// RDTSCP: where RDTSCP is missing, and where the CPU says LFENCE is
// dispatch-serialising and cheaper says it costs less. RDTSCP is ordered on
// every vendor; LFENCE;RDTSC is on every Intel CPU (Intel SDM vol. 3A, 8.3)
// and on AMD/Hygon CPUs that set CPUID 8000_0021h:EAX[2], "LFENCE always
// serialising" (AMD APM vol. 3). Which of the two is cheaper differs
// between cores and decides most of what OrderedNanotime costs. The same
// rule as the Rust crate's x86 backend.
func useLfence(hasRdtscp, hasLfence, serialises bool, cheaper func() bool) bool {
	return hasLfence && (!hasRdtscp || (serialises && cheaper()))
}

// lfenceSerialises says whether the CPU documents LFENCE as
// dispatch-serialising (older AMD parts serialise it only when the kernel
// sets an MSR bit, which user space cannot see: they keep RDTSCP).
func lfenceSerialises(maxExt uint32) bool {
	_, b, c, d := counter.Cpuid(0, 0)
	vendor := make([]byte, 0, 12)
	for _, r := range []uint32{b, d, c} {
		vendor = append(vendor, byte(r), byte(r>>8), byte(r>>16), byte(r>>24))
	}
	switch string(vendor) {
	case "GenuineIntel":
		return true
	case "AuthenticAMD", "HygonGenuine":
		if maxExt < 0x8000_0021 {
			return false
		}
		a, _, _, _ := counter.Cpuid(0x8000_0021, 0)
		return a&(1<<2) != 0
	}
	return false
}

// orderedAltIsCheaper times LFENCE;RDTSC against RDTSCP on this core: the
// fastest of three batches of 32 calls of each, timed with the counter
// (a few microseconds, once, at detection). The reads are assembly
// functions, which the compiler never removes.
func orderedAltIsCheaper() bool {
	const calls = 32
	rdtscp, lfence := ^uint64(0), ^uint64(0)
	for i := 0; i < 3; i++ {
		t0 := counter.LfenceRdtsc()
		for j := 0; j < calls; j++ {
			counter.Rdtscp()
		}
		t1 := counter.LfenceRdtsc()
		for j := 0; j < calls; j++ {
			counter.LfenceRdtsc()
		}
		t2 := counter.LfenceRdtsc()
		rdtscp, lfence = min(rdtscp, t1-t0), min(lfence, t2-t1)
	}
	return lfence < rdtscp
}

func trimNUL(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
