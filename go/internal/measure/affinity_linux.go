package measure

import (
	"syscall"
	"unsafe"
)

// cpuMask is a sched_setaffinity mask for up to 1024 CPUs.
type cpuMask [16]uint64

func getAffinity() (cpuMask, bool) {
	var m cpuMask
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0, unsafe.Sizeof(m), uintptr(unsafe.Pointer(&m)))
	return m, errno == 0
}

func setAffinity(m cpuMask) bool {
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, unsafe.Sizeof(m), uintptr(unsafe.Pointer(&m)))
	return errno == 0
}

// processMask is the affinity the process started with, restored on the
// checker's thread after the test.
var processMask, haveProcessMask = getAffinity()

// twoCPUs returns two CPUs this process may run on, or -1s if it may use
// fewer than two.
func twoCPUs() [2]int {
	cpus := [2]int{-1, -1}
	if !haveProcessMask {
		return cpus
	}
	n := 0
	for i := 0; i < len(processMask)*64 && n < 2; i++ {
		if processMask[i/64]&(1<<(i%64)) != 0 {
			cpus[n] = i
			n++
		}
	}
	if n < 2 {
		return [2]int{-1, -1}
	}
	return cpus
}

// pinTo pins the calling thread (locked by the caller) to cpu.
func pinTo(cpu int) bool {
	var m cpuMask
	m[cpu/64] = 1 << (cpu % 64)
	return setAffinity(m)
}

// restoreAffinity lets the calling thread run anywhere the process may.
func restoreAffinity() {
	if haveProcessMask {
		setAffinity(processMask)
	}
}
