package fastnow_test

import (
	"fmt"
	"runtime"
	"time"

	"github.com/fastnow/fastnow/go/fastnow"
)

// The CPU a piece of work burnt, on a goroutine locked to its OS thread (a
// sleep burns none, so the CPU time stays below the wall time).
func ExampleThreadCPUNanotime() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	wall := time.Now()
	start := fastnow.ThreadCPUNanotime()
	sum := int64(0)
	for i := int64(0); i < 1_000_000; i++ {
		sum += i
	}
	time.Sleep(20 * time.Millisecond)
	cpu := time.Duration(fastnow.ThreadCPUNanotime() - start)
	fmt.Println(sum, cpu < time.Since(wall))
	// Output: 499999500000 true
}

func ExampleMeasuresThreadCPUTime() {
	// False under js/wasm and wasip1, where ThreadCPUClock says so.
	measured := fastnow.MeasuresThreadCPUTime()
	fmt.Println(measured == (fastnow.ThreadCPUClock() != "none (every duration is zero)"))
	// Output: true
}

func ExampleThreadCPUClock() {
	clock := fastnow.ThreadCPUClock()
	fmt.Println(clock != "")
	// Output: true
}
