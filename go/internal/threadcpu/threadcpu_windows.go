package threadcpu

import (
	"syscall"
	"unsafe"
)

const Name = "GetThreadTimes"

var procGetThreadTimes = syscall.NewLazyDLL("kernel32.dll").NewProc("GetThreadTimes") // a KnownDLL: always the system's

// currentThread is GetCurrentThread's pseudo-handle, the constant
// (HANDLE)-2 (golang.org/x/sys/windows.CurrentThread returns the same),
// which saves a call per reading.
const currentThread = ^uintptr(1)

// Nanotime is the thread's kernel plus user time, which Windows
// keeps in 100 ns units. (QueryThreadCycleTime is finer, but counts cycles
// at a rate Windows does not state, and its documentation says not to
// convert them to time.)
func Nanotime() int64 {
	var creation, exit, kernel, user syscall.Filetime
	r, _, _ := syscall.SyscallN(procGetThreadTimes.Addr(), currentThread,
		uintptr(unsafe.Pointer(&creation)), uintptr(unsafe.Pointer(&exit)),
		uintptr(unsafe.Pointer(&kernel)), uintptr(unsafe.Pointer(&user)))
	if r == 0 {
		return 0
	}
	ticks := func(f syscall.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return (ticks(kernel) + ticks(user)) * 100
}

func Works() bool { return procGetThreadTimes.Find() == nil }
