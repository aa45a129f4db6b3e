//go:build amd64

package fastnow

import "github.com/fastnow/fastnow/go/internal/counter"

func readCounter() uint64 { return counter.Rdtsc() }

func readCounterOrdered(alt bool) uint64 {
	if alt {
		return counter.LfenceRdtsc()
	}
	return counter.Rdtscp()
}

// probeCounter reads what the CPU says about its time-stamp counter; the
// same rules as the Rust crate's source/arch/x86_64.rs.
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
	p.useAlt = !hasRdtscp
	hvMax := uint32(0)
	if maxLeaf >= 1 {
		if _, _, ecx, _ := counter.Cpuid(1, 0); ecx&(1<<31) != 0 {
			a, b, c, d := counter.Cpuid(0x4000_0000, 0)
			hvMax = a
			sig := make([]byte, 0, 12)
			for _, r := range []uint32{b, c, d} {
				sig = append(sig, byte(r), byte(r>>8), byte(r>>16), byte(r>>24))
			}
			p.hypervisor = trimNUL(sig)
		}
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
	p.disabled = tscDisabledByPrctl()
	return p
}

func trimNUL(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
