package threadcpu

import (
	"syscall"
	"unsafe"
)

const Name = "clock_gettime(CLOCK_THREAD_CPUTIME_ID)"

// ClockID is CLOCK_THREAD_CPUTIME_ID (linux/time.h), the
// same on every architecture.
const ClockID = 3

// Nanotime makes the system call without the runtime's
// entersyscall/exitsyscall bookkeeping (RawSyscall): clock_gettime never
// blocks, so the scheduler need not hand the thread's P to another thread,
// and the call costs what the kernel does. 0 if the call fails (a kernel
// without CPU clocks, before 2.6.12).
func Nanotime() int64 {
	var ts syscall.Timespec
	_, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, ClockID, uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		return 0
	}
	return int64(ts.Sec)*1_000_000_000 + int64(ts.Nsec)
}

func Works() bool {
	var ts syscall.Timespec
	_, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, ClockID, uintptr(unsafe.Pointer(&ts)), 0)
	return errno == 0
}
