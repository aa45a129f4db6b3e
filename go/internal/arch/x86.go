//go:build amd64 || (linux && 386)

package arch

// DisabledWhy completes FallbackDisabled's sentence on this target.
const DisabledWhy = "prctl(PR_SET_TSC) makes RDTSC fault, or the CPU lacks RDTSC or an ordered read"

func Counter() uint64 { return Rdtsc() }

func CounterOrdered(alt bool) uint64 {
	if alt {
		return LfenceRdtsc()
	}
	return Rdtscp()
}

// ProbeCounter reads what the CPU says about its time-stamp counter; the
// same rules as the Rust crate's x86 backend, on amd64 and on 32-bit x86
// Linux alike (the instructions are the same; each has its assembly
// file).
func ProbeCounter() Probe {
	maxLeaf, _, _, _ := Cpuid(0, 0)
	maxExt, _, _, _ := Cpuid(0x8000_0000, 0)
	p := Probe{
		Counter:        "TSC (RDTSC)",
		OrderedRead:    "RDTSCP",
		OrderedReadAlt: "LFENCE;RDTSC",
	}
	if maxExt >= 0x8000_0007 {
		_, _, _, edx := Cpuid(0x8000_0007, 0)
		p.Invariant = edx&(1<<8) != 0
	}
	hasRdtscp := false
	if maxExt >= 0x8000_0001 {
		_, _, _, edx := Cpuid(0x8000_0001, 0)
		hasRdtscp = edx&(1<<27) != 0
	}
	// Leaf 1 EDX: bit 4 is the TSC (RDTSC), bit 26 SSE2 (LFENCE). Every
	// amd64 CPU has both; a 32-bit one may lack SSE2 (Go's GO386=softfloat
	// runs there). Without RDTSC, or without either ordered read, the
	// counter is not used, so neither instruction ever runs where it would
	// fault.
	var ecx1, edx1 uint32
	if maxLeaf >= 1 {
		_, _, ecx1, edx1 = Cpuid(1, 0)
	}
	hasTSC, hasLfence := edx1&(1<<4) != 0, edx1&(1<<26) != 0
	hvMax := uint32(0)
	if ecx1&(1<<31) != 0 {
		a, b, c, d := Cpuid(0x4000_0000, 0)
		hvMax = a
		sig := make([]byte, 0, 12)
		for _, r := range []uint32{b, c, d} {
			sig = append(sig, byte(r), byte(r>>8), byte(r>>16), byte(r>>24))
		}
		p.Hypervisor = trimNUL(sig)
	}
	if maxLeaf >= 0x15 {
		a, b, c, _ := Cpuid(0x15, 0)
		if a != 0 && b != 0 && c != 0 {
			p.FreqHz, p.FreqOrigin = uint64(c)*uint64(b)/uint64(a), OriginCPUID
		}
	}
	if p.FreqHz == 0 && p.Hypervisor != "" && hvMax >= 0x4000_0010 {
		if khz, _, _, _ := Cpuid(0x4000_0010, 0); khz != 0 {
			p.FreqHz, p.FreqOrigin = uint64(khz)*1000, OriginHypervisor
		}
	}
	if p.FreqHz == 0 {
		if hz := kernelTSCFrequency(); hz != 0 {
			p.FreqHz, p.FreqOrigin = hz, OriginKernel
		}
	}
	p.Disabled = !hasTSC || !(hasRdtscp || hasLfence) || tscDisabledByPrctl()
	// Only a counter that can be read is timed.
	p.UseAlt = !p.Disabled && useLfence(hasRdtscp, hasLfence, lfenceSerialises(maxExt), orderedAltIsCheaper)
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
	_, b, c, d := Cpuid(0, 0)
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
		a, _, _, _ := Cpuid(0x8000_0021, 0)
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
		t0 := LfenceRdtsc()
		for j := 0; j < calls; j++ {
			Rdtscp()
		}
		t1 := LfenceRdtsc()
		for j := 0; j < calls; j++ {
			LfenceRdtsc()
		}
		t2 := LfenceRdtsc()
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

// Implemented in x86_amd64.s, and in x86_386.s for 32-bit x86 Linux (the
// same instructions).

// Rdtsc is the bare time-stamp counter read (RDTSC), not ordered with
// earlier loads.
func Rdtsc() uint64

// Rdtscp reads the counter after every earlier instruction has completed.
// Only for CPUs whose CPUID.80000001H:EDX[27] says RDTSCP exists.
func Rdtscp() uint64

// LfenceRdtsc is the ordered read for CPUs without RDTSCP.
func LfenceRdtsc() uint64

// Cpuid runs CPUID with the given leaf and sub-leaf.
func Cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

// Raw is the bare counter instruction as an assembly function call, as Go
// requires, with its name: the floor the report compares Nanotime against.
// It never faults where the counter exists (RawFaults).
func Raw() (string, func() int64) {
	return "asm RDTSC function", func() int64 { return int64(Rdtsc()) }
}

// RawFaults: Raw may be called whatever the source.
const RawFaults = false
