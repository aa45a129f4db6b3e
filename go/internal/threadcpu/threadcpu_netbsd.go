package threadcpu

// ClockID is NetBSD's CLOCK_THREAD_CPUTIME_ID (sys/time.h),
// which golang.org/x/sys/unix does not define for NetBSD.
const ClockID = 0x20000000
