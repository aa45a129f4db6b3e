// Package measure holds the measurements the tests and the report share,
// so both run one implementation.
package measure

import (
	"runtime"
	"sync/atomic"
)

// Strict runs the strict cross-goroutine test: a writer goroutine keeps
// publishing readings with an atomic store; the checking goroutine loads the
// latest one and then reads the clock, and a reading smaller than the one it
// saw is a violation. Returns the number of violations in checks checks.
func Strict(read func() int64, checks int) (violations int) {
	v, _ := StrictPinned(read, checks, false)
	return v
}

// StrictPinned is Strict with, when pin is set, the writer and the checker
// each locked to its own thread and those threads to two different CPUs
// (Linux: sched_setaffinity), so that they run truly in parallel, which
// is when an unordered counter read shows its violations. pinned reports
// whether both threads were pinned (false where pinning is not possible:
// one CPU available, or not Linux).
func StrictPinned(read func() int64, checks int, pin bool) (violations int, pinned bool) {
	cpus := [2]int{-1, -1}
	if pin {
		cpus = twoCPUs()
	}
	var slot atomic.Int64
	slot.Store(read())
	var stop atomic.Bool
	writerPinned := make(chan bool, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if cpus[0] >= 0 {
			// Never unlocked: the pinned thread ends with the goroutine,
			// rather than going back to the scheduler pinned.
			runtime.LockOSThread()
			writerPinned <- pinTo(cpus[0])
		} else {
			writerPinned <- false
		}
		for !stop.Load() {
			slot.Store(read())
		}
	}()
	pinned = <-writerPinned
	if cpus[1] >= 0 {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		pinned = pinTo(cpus[1]) && pinned
		defer restoreAffinity()
	}
	for i := 0; i < checks; i++ {
		seen := slot.Load()
		if read() < seen {
			violations++
		}
	}
	stop.Store(true)
	<-done
	return violations, pinned
}
