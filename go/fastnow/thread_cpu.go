package fastnow

import "github.com/fastnow/fastnow/go/internal/threadcpu"

// ThreadCPUNanotime returns the CPU time, in nanoseconds, that the OS thread
// running the calling goroutine has used (in user and kernel mode) since it
// started: a clock that stops while the thread sleeps, waits or is
// descheduled. Differences of two readings are time.Durations of CPU.
//
// It is the OS thread's time, not the goroutine's: the scheduler may move a
// goroutine to another thread between two readings, and the difference is
// then one thread's reading minus another's, which means nothing. Read it
// from a goroutine locked to its thread with runtime.LockOSThread, for
// the span between the two readings:
//
//	runtime.LockOSThread()
//	defer runtime.UnlockOSThread()
//	start := fastnow.ThreadCPUNanotime()
//	work()
//	cpu := time.Duration(fastnow.ThreadCPUNanotime() - start)
//
// Where it comes from: clock_gettime(CLOCK_THREAD_CPUTIME_ID) on Linux
// (a raw system call: the vDSO has no CPU clocks) and the other Unix
// systems, GetThreadTimes on Windows (kept by Windows at its scheduler's
// tick, about 15.6 ms by default, so short spans read zero or a tick).
// Under js/wasm and wasip1 (and on AIX) there is no thread clock: it returns 0, every
// duration is zero, and MeasuresThreadCPUTime is false — never the wall
// clock passed off as CPU time. ThreadCPUClock names the call.
//
// Unlike the Rust crate's ThreadCpuInstant, it never reads a Linux perf
// event's page: that per-thread state would need the goroutine locked to
// its thread for as long as the event lives, and finding the thread's
// event without a system call is not possible from Go (see the
// repository's spec/SEMANTICS.md, "Thread CPU time"). Not affected by
// UseClock or the fastnow_time tag: CPU time cannot be set like a clock.
func ThreadCPUNanotime() int64 { return threadcpu.Nanotime() }

// MeasuresThreadCPUTime reports whether ThreadCPUNanotime measures the
// calling thread's CPU time here (false under js/wasm and wasip1, or where
// the OS call fails).
func MeasuresThreadCPUTime() bool { return threadcpu.Name != "" && threadcpu.Works() }

// ThreadCPUClock names the OS call behind ThreadCPUNanotime, or says that
// there is none.
func ThreadCPUClock() string {
	if !MeasuresThreadCPUTime() {
		return "none (every duration is zero)"
	}
	return threadcpu.Name
}
