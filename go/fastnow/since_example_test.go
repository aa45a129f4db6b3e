package fastnow_test

import (
	"fmt"
	"time"

	"github.com/fastnow/fastnow/go/fastnow"
)

func ExampleSince() {
	clock := fastnow.NewManualClock(time.Unix(1_700_000_000, 0))
	defer fastnow.UseClock(clock)()
	start := fastnow.Now()
	clock.Advance(1500 * time.Millisecond)
	fmt.Println(fastnow.Since(start))
	// Unlike Elapsed, Since is negative for an Instant still to come.
	soon := fastnow.Now().Add(time.Second)
	fmt.Println(fastnow.Since(soon), soon.Elapsed())
	// Output:
	// 1.5s
	// -1s 0s
}

// A deadline on the precise clock, as with time.Until.
func ExampleUntil() {
	clock := fastnow.NewManualClock(time.Unix(1_700_000_000, 0))
	defer fastnow.UseClock(clock)()
	deadline := fastnow.Now().Add(50 * time.Millisecond)
	for steps := 0; fastnow.Until(deadline) > 0; steps++ {
		fmt.Println(steps, fastnow.Until(deadline))
		clock.Advance(20 * time.Millisecond)
	}
	fmt.Println(fastnow.Until(deadline))
	// Output:
	// 0 50ms
	// 1 30ms
	// 2 10ms
	// -10ms
}
