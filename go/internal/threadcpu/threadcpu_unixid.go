//go:build unix && !linux && !netbsd && !aix

package threadcpu

import "golang.org/x/sys/unix"

const ClockID = unix.CLOCK_THREAD_CPUTIME_ID
