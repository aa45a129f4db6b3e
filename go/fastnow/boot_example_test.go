package fastnow_test

import (
	"fmt"
	"time"

	"github.com/fastnow/fastnow/go/fastnow"
)

// A lease that must expire after 30 minutes of real time, however long the
// machine sleeps meanwhile (a ManualClock's Suspend stands in for a sleep).
func ExampleBootNanotime() {
	clock := fastnow.NewManualClock(time.Unix(1_700_000_000, 0))
	defer fastnow.UseClock(clock)()
	expires := fastnow.BootNanotime() + int64(30*time.Minute)
	clock.Advance(time.Minute)
	clock.Suspend(time.Hour)
	fmt.Println(fastnow.BootNanotime() >= expires, fastnow.Now().Nanotime())
	// Output: true 61000000000
}

func ExampleBootNow() {
	clock := fastnow.NewManualClock(time.Unix(0, 0))
	defer fastnow.UseClock(clock)()
	start, boot := fastnow.Now(), fastnow.BootNow()
	clock.Suspend(8 * time.Hour)
	fmt.Println(start.Elapsed(), boot.Elapsed())
	// Output: 0s 8h0m0s
}

func ExampleBootInstant() {
	clock := fastnow.NewManualClock(time.Unix(0, 0))
	defer fastnow.UseClock(clock)()
	deadline := fastnow.BootNow().Add(10 * time.Second)
	clock.Suspend(15 * time.Second)
	fmt.Println(fastnow.BootNow().After(deadline))
	// Output: true
}

func ExampleBootInstantOf() {
	i := fastnow.BootInstantOf(1_500_000_000)
	fmt.Println(i, i.Nanotime())
	// Output: 1.5s after the package loaded, suspends since boot included 1500000000
}

func ExampleBootInstant_Nanotime() {
	fmt.Println(fastnow.BootInstantOf(42).Nanotime())
	// Output: 42
}

func ExampleBootInstant_Elapsed() {
	clock := fastnow.NewManualClock(time.Unix(0, 0))
	defer fastnow.UseClock(clock)()
	start := fastnow.BootNow()
	clock.Advance(2 * time.Second)
	clock.Suspend(3 * time.Second)
	fmt.Println(start.Elapsed())
	// Output: 5s
}

func ExampleBootInstant_Sub() {
	a, b := fastnow.BootInstantOf(5_000), fastnow.BootInstantOf(2_000)
	fmt.Println(a.Sub(b), b.Sub(a))
	// Output: 3µs -3µs
}

func ExampleBootInstant_Add() {
	fmt.Println(fastnow.BootInstantOf(0).Add(1500 * time.Millisecond))
	// Output: 1.5s after the package loaded, suspends since boot included
}

func ExampleBootInstant_Before() {
	a, b := fastnow.BootInstantOf(1), fastnow.BootInstantOf(2)
	fmt.Println(a.Before(b), b.Before(a))
	// Output: true false
}

func ExampleBootInstant_After() {
	a, b := fastnow.BootInstantOf(1), fastnow.BootInstantOf(2)
	fmt.Println(a.After(b), b.After(a))
	// Output: false true
}

func ExampleBootInstant_Compare() {
	a, b := fastnow.BootInstantOf(1), fastnow.BootInstantOf(2)
	fmt.Println(a.Compare(b), b.Compare(a), a.Compare(a))
	// Output: -1 1 0
}

func ExampleBootInstant_String() {
	fmt.Println(fastnow.BootInstantOf(int64(90 * time.Second)).String())
	// Output: 1m30s after the package loaded, suspends since boot included
}

// Suspend moves the boot clock and the Unix time, not the monotonic time.
func ExampleManualClock_Suspend() {
	clock := fastnow.NewManualClock(time.Unix(0, 0))
	start, boot := clock.Now(), clock.BootNow()
	clock.Suspend(time.Hour)
	fmt.Println(clock.Since(start), clock.BootNow().Sub(boot), clock.UnixNano())
	// Output: 0s 1h0m0s 3600000000000
}

func ExampleManualClock_BootNow() {
	clock := fastnow.NewManualClock(time.Unix(0, 0))
	clock.Advance(time.Second)
	clock.Suspend(time.Minute)
	fmt.Println(clock.Now(), clock.BootNow())
	// Output: 2s after the package loaded 1m2s after the package loaded, suspends since boot included
}
