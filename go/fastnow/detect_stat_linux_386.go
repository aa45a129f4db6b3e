package fastnow

import "syscall"

// sysFstat is the system call that fills a syscall.Stat_t (ours): on 32-bit
// x86 that structure is the kernel's struct stat64, which fstat64 fills
// (fstat's older structure has 32-bit fields and another layout).
const sysFstat = syscall.SYS_FSTAT64
