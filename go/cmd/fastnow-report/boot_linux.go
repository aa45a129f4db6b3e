//go:build linux

package main

import (
	"syscall"
	"unsafe"
)

const bootClockName = "CLOCK_BOOTTIME"

// kernelBoot is clock_gettime(CLOCK_BOOTTIME) through the system call, as
// the fastnow package reads it.
func kernelBoot() (int64, bool) {
	var ts syscall.Timespec
	_, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, 7, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano(), errno == 0
}

// kernelMono is clock_gettime(CLOCK_MONOTONIC) through the system call, the
// clock fastnow's conversions convert to.
func kernelMono() (int64, bool) {
	var ts syscall.Timespec
	_, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano(), errno == 0
}
