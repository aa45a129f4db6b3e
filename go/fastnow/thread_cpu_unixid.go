//go:build unix && !linux && !netbsd && !aix

package fastnow

import "golang.org/x/sys/unix"

const clockThreadCPUTimeID = unix.CLOCK_THREAD_CPUTIME_ID
