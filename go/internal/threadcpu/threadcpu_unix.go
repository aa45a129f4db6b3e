//go:build unix && !linux && !aix

package threadcpu

import "golang.org/x/sys/unix"

const Name = "clock_gettime(CLOCK_THREAD_CPUTIME_ID)"

// Nanotime asks the C library, as Go must on these systems
// (darwin, the BSDs, Solaris: no raw system calls); 0 if the call fails.
func Nanotime() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(ClockID, &ts) != nil {
		return 0
	}
	return ts.Nano()
}

func Works() bool {
	var ts unix.Timespec
	return unix.ClockGettime(ClockID, &ts) == nil
}
