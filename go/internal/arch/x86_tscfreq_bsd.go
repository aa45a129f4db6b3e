//go:build amd64 && (freebsd || darwin)

package arch

import (
	"runtime"
	"syscall"
)

// kernelTSCFrequency is the TSC frequency the kernel measured at boot and
// publishes (macOS machdep.tsc.frequency, FreeBSD machdep.tsc_freq; both 64
// bits), 0 where it cannot be read.
func kernelTSCFrequency() uint64 {
	name := "machdep.tsc_freq"
	if runtime.GOOS == "darwin" {
		name = "machdep.tsc.frequency"
	}
	raw, err := syscall.Sysctl(name)
	if err != nil {
		return 0
	}
	return sysctlUint64(raw)
}
