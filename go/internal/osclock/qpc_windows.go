package osclock

import (
	"syscall"
	"unsafe"
)

// Windows: package time's clocks move in steps of the system timer's
// interrupt (0.5 to 15.6 ms), far too coarse to measure a counter's rate
// against or to read in its place. The OS clocks here are the ones Windows
// itself times with: QueryPerformanceCounter (monotonic; on current Windows
// the invariant TSC, scaled to 10 MHz, where the TSC is trustworthy) and
// GetSystemTimePreciseAsFileTime (the system clock in 100 ns units).

var (
	kernel32        = syscall.NewLazyDLL("kernel32.dll") // a KnownDLL: always the system's
	procQPC         = kernel32.NewProc("QueryPerformanceCounter")
	procQPF         = kernel32.NewProc("QueryPerformanceFrequency")
	procPreciseTime = kernel32.NewProc("GetSystemTimePreciseAsFileTime")
)

// QPCFrequency returns QueryPerformanceFrequency, and false if the call
// failed or returned no frequency.
func QPCFrequency() (uint64, bool) {
	var hz int64
	r, _, _ := syscall.SyscallN(procQPF.Addr(), uintptr(unsafe.Pointer(&hz)))
	return uint64(hz), r != 0 && hz > 0
}

func qpcTicks() uint64 {
	var t int64
	syscall.SyscallN(procQPC.Addr(), uintptr(unsafe.Pointer(&t)))
	return uint64(t)
}
