//go:build linux && (amd64 || 386)

package arch

import (
	"syscall"
	"unsafe"
)

// tscDisabledByPrctl reports whether RDTSC would fault in this process
// (prctl(PR_SET_TSC, PR_TSC_SIGSEGV), used by some sandboxes).
func tscDisabledByPrctl() bool {
	const prGetTSC, prTSCSigsegv = 25, 2
	var mode int32
	// PR_GET_TSC writes one int through the pointer, which points to a live
	// local that escapes only for the duration of the call.
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetTSC, uintptr(unsafe.Pointer(&mode)), 0)
	return errno == 0 && mode == prTSCSigsegv
}
