// Package threadcpu is the operating system's clock of the calling
// thread's CPU time (the Rust crate's source/thread_cpu/): one backend per
// system, under its build constraint, and a fallback that measures
// nothing where there is none. fastnow's ThreadCPUNanotime reads it.
//
//	threadcpu_linux.go    clock_gettime(CLOCK_THREAD_CPUTIME_ID), a raw system call
//	threadcpu_unix.go     the same through the C library (darwin, the BSDs, Solaris),
//	                      with the clock's id from threadcpu_unixid.go or threadcpu_netbsd.go
//	threadcpu_windows.go  GetThreadTimes
//	threadcpu_other.go    none (wasm, AIX, Plan 9)
package threadcpu
