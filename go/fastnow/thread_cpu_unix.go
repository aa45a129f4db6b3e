//go:build unix && !linux && !aix

package fastnow

import "golang.org/x/sys/unix"

const threadCPUName = "clock_gettime(CLOCK_THREAD_CPUTIME_ID)"

// threadCPUNanotime asks the C library, as Go must on these systems
// (darwin, the BSDs, Solaris: no raw system calls); 0 if the call fails.
func threadCPUNanotime() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(clockThreadCPUTimeID, &ts) != nil {
		return 0
	}
	return ts.Nano()
}

func threadCPUWorks() bool {
	var ts unix.Timespec
	return unix.ClockGettime(clockThreadCPUTimeID, &ts) == nil
}
