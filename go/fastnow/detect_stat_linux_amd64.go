package fastnow

import "syscall"

// sysFstat is the system call that fills a syscall.Stat_t (ours).
const sysFstat = syscall.SYS_FSTAT
