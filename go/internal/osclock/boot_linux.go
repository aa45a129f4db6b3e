//go:build linux

package osclock

import (
	"syscall"
	"unsafe"
)

// The boot clock on Linux (and Android): CLOCK_BOOTTIME, which counts the
// time suspended, through the system call (package time reads only
// CLOCK_MONOTONIC and CLOCK_REALTIME, through the vDSO), beside
// CLOCK_MONOTONIC, the clock of package time's monotonic readings.

const bootClockBoot = 7 // CLOCK_BOOTTIME

// clockNanos reads clock id through the system call.
func clockNanos(id uintptr) (uint64, bool) {
	var ts syscall.Timespec
	_, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, id, uintptr(unsafe.Pointer(&ts)), 0)
	return uint64(ts.Nano()), errno == 0
}

// BootTime is CLOCK_BOOTTIME on its own base, and whether the kernel gave
// it (tests compare the boot clock with it).
func BootTime() (uint64, bool) { return clockNanos(bootClockBoot) }
