package main

import (
	"syscall"
	"unsafe"
)

// kernelThreadCPU is clock_gettime(CLOCK_THREAD_CPUTIME_ID) through
// syscall.Syscall, the way golang.org/x/sys/unix makes it: the baseline
// ThreadCPUNanotime's raw system call is held to.
func kernelThreadCPU() (int64, bool) {
	var ts syscall.Timespec
	_, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return int64(ts.Sec)*1_000_000_000 + int64(ts.Nsec), errno == 0
}
