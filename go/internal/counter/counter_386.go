//go:build linux

package counter

// Implemented in counter_386.s: the same instructions as on amd64, for
// 32-bit x86 (i686) Linux.

// Rdtsc is the bare time-stamp counter read (RDTSC), not ordered with
// earlier loads.
func Rdtsc() uint64

// Rdtscp reads the counter after every earlier instruction has completed.
// Only for CPUs whose CPUID.80000001H:EDX[27] says RDTSCP exists.
func Rdtscp() uint64

// LfenceRdtsc is the ordered read for CPUs without RDTSCP. Only for CPUs
// whose CPUID.01H:EDX[26] says SSE2 (and so LFENCE) exists.
func LfenceRdtsc() uint64

// Cpuid runs CPUID with the given leaf and sub-leaf.
func Cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
