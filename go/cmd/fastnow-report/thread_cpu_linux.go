package main

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// kernelThreadCPU is clock_gettime(CLOCK_THREAD_CPUTIME_ID) through
// syscall.Syscall, the way golang.org/x/sys/unix makes it: the baseline
// ThreadCPUNanotime's raw system call is held to.
func kernelThreadCPU() (int64, bool) {
	var ts syscall.Timespec
	_, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return int64(ts.Sec)*1_000_000_000 + int64(ts.Nsec), errno == 0
}

// perfRoute is the perf route the Go package does not take, for the report
// to measure beside the OS call: a task-clock event of the calling (locked)
// thread, read as the Rust crate reads it where the page offers no
// user-space time (ioctl(PERF_EVENT_IOC_RESET), then the page), after the
// gettid system call Go would need to find the thread's event, having no
// thread-local storage. nil where perf events cannot be opened.
type perfRoute struct {
	fd   int
	page []byte
}

func openPerfRoute() *perfRoute {
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_SOFTWARE,
		Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Config: unix.PERF_COUNT_SW_TASK_CLOCK,
		Bits:   unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv,
	}
	fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return nil
	}
	page, err := unix.Mmap(fd, 0, unix.Getpagesize(), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		return nil
	}
	return &perfRoute{fd: fd, page: page}
}

// read is one reading by that route: the event's running time.
func (p *perfRoute) read() int64 {
	tid, _, _ := syscall.RawSyscall(syscall.SYS_GETTID, 0, 0, 0)
	syscall.RawSyscall(syscall.SYS_IOCTL, uintptr(p.fd), unix.PERF_EVENT_IOC_RESET, 0)
	return int64(tid) + *(*int64)(unsafe.Pointer(&p.page[32])) // time_running
}

func (p *perfRoute) close() {
	unix.Munmap(p.page)
	unix.Close(p.fd)
}
