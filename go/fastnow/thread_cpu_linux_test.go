package fastnow

import (
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/fastnow/fastnow/go/internal/threadcpu"
)

// threadCPUOSCall is clock_gettime(CLOCK_THREAD_CPUTIME_ID) through
// syscall.Syscall, as golang.org/x/sys/unix.ClockGettime makes it.
func threadCPUOSCall() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, threadcpu.ClockID, uintptr(unsafe.Pointer(&ts)), 0)
	return int64(ts.Sec)*1_000_000_000 + int64(ts.Nsec)
}

// ThreadCPUNanotime lies within the kernel's own readings around it, and
// over a busy loop advances as the kernel's clock does.
func TestThreadCPUNanotimeAgreesWithKernel(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	k0 := threadCPUOSCall()
	a := ThreadCPUNanotime()
	burnCPU(20 * time.Millisecond)
	b := ThreadCPUNanotime()
	k1 := threadCPUOSCall()
	if a < k0 || b > k1 || b-a < 20_000_000 {
		t.Fatalf("kernel %d..%d, ThreadCPUNanotime %d..%d", k0, k1, a, b)
	}
}
