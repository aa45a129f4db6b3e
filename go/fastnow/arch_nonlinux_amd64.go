//go:build amd64 && !linux

package fastnow

// tscDisabledByPrctl: only Linux can make RDTSC fault per process
// (arch_linux_x86.go).
func tscDisabledByPrctl() bool { return false }
