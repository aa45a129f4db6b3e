//go:build amd64 && !linux

package arch

// tscDisabledByPrctl: only Linux can make RDTSC fault per process
// (x86_prctl_linux.go).
func tscDisabledByPrctl() bool { return false }
