// Command fastnow-faults injects clock faults into the real kernel and
// checks fastnow's Go clocks through each against the bounds of
// spec/SEMANTICS.md (the Go side of make test-faults):
//
//   - adjtimex(ADJ_FREQUENCY) +500 ppm, and back to 0
//   - adjtimex(ADJ_TICK) 10000 → 10080 (a 0.8 % slew), and back
//   - clock_settime(CLOCK_REALTIME) +1 s and −1 s
//   - the kernel's clocksource switched from tsc to another (sysfs), last,
//     because it moves the process to the OS clock for good
//
// Every change is undone in a deferred guard, even when a check fails or
// panics. Each rate event watches the wall tier against CLOCK_REALTIME
// (integer nanoseconds) and 1 s intervals against CLOCK_MONOTONIC, while
// two goroutines, each locked to its own thread, count strict
// cross-goroutine violations and per-goroutine steps back.
//
//	go run ./cmd/fastnow-faults [-upkeep] [-quick]
//
// -upkeep runs with the upkeep goroutine doing the state updates (readers
// only load); without it readers update. -quick shortens each rate event to
// 4 s (too short for the bounds from 3 s on, which are then left out).
// Needs CAP_SYS_TIME (root) and Linux: prints SKIPPED with the reason and
// exits 0 otherwise. It moves the machine's clock for about a minute: run
// it alone, never while timing anything.
package main

import (
	"flag"
	"os"
)

func main() {
	upkeep := flag.Bool("upkeep", false, "the upkeep goroutine does the state updates")
	quick := flag.Bool("quick", false, "4 s per rate event instead of 12 (no bounds from 3 s on)")
	flag.Parse()
	os.Exit(run(*upkeep, *quick))
}
