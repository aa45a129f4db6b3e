// Package measure holds the measurements the tests and the report share,
// so both run one implementation.
package measure

import "sync/atomic"

// Strict runs the strict cross-goroutine test: a writer goroutine keeps
// publishing readings with an atomic store; the checking goroutine loads the
// latest one and then reads the clock, and a reading smaller than the one it
// saw is a violation. Returns the number of violations in checks checks.
func Strict(read func() int64, checks int) (violations int) {
	var slot atomic.Int64
	slot.Store(read())
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			slot.Store(read())
		}
	}()
	for i := 0; i < checks; i++ {
		seen := slot.Load()
		if read() < seen {
			violations++
		}
	}
	stop.Store(true)
	<-done
	return violations
}
