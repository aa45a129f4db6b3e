package fastnow_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fastnow/fastnow/go/fastnow"
)

// Most examples read a ManualClock (UseClock), so that their output is the
// same on every run; the ones that read the real clocks print only what
// holds on every machine.

// Timing a piece of work on the real clocks.
func ExampleNow() {
	start := fastnow.Now()
	time.Sleep(2 * time.Millisecond)
	elapsed := start.Elapsed()
	// About 2 ms. Not "at least 2 ms" everywhere: time.Sleep keeps time by
	// package time's clock, which on Windows moves in steps of the timer
	// interrupt, so a sleep can end early by the clock fastnow follows.
	fmt.Println(elapsed > 0)
	// Output: true
}

func ExampleNanotime() {
	clock := fastnow.NewManualClock(time.Unix(1_700_000_000, 0))
	defer fastnow.UseClock(clock)()
	a := fastnow.Nanotime()
	clock.Advance(250 * time.Microsecond)
	fmt.Println(time.Duration(fastnow.Nanotime() - a))
	// Output: 250µs
}

// A stamp for an event log that several goroutines write: a later event
// never gets an earlier stamp.
func ExampleMonotonicNanotime() {
	stamps := make(chan int64, 2)
	first := fastnow.MonotonicNanotime()
	go func() { stamps <- fastnow.MonotonicNanotime() }()
	second := <-stamps
	fmt.Println(second >= first)
	// Output: true
}

func ExampleMonotonicNow() {
	clock := fastnow.NewManualClock(time.Unix(0, 0))
	defer fastnow.UseClock(clock)()
	fmt.Println(fastnow.MonotonicNow())
	// Output: 1s after the package loaded
}

// A reading ordered after the load that saw a flag: it is not earlier than
// the time the flag was set.
func ExampleOrderedNanotime() {
	var setAt fastnow.AtomicInstant
	setAt.Store(fastnow.OrderedNow())
	seen := setAt.Load()
	fmt.Println(fastnow.OrderedNanotime() >= seen.Nanotime())
	// Output: true
}

func ExampleOrderedNow() {
	clock := fastnow.NewManualClock(time.Unix(0, 0))
	defer fastnow.UseClock(clock)()
	clock.Advance(time.Second)
	fmt.Println(fastnow.OrderedNow())
	// Output: 2s after the package loaded
}

func ExampleUnixNano() {
	clock := fastnow.NewManualClock(time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC))
	defer fastnow.UseClock(clock)()
	fmt.Println(fastnow.UnixNano())
	// Output: 1893553445000000006
}

func ExampleWallTime() {
	clock := fastnow.NewManualClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	defer fastnow.UseClock(clock)()
	fmt.Println(fastnow.WallTime().UTC())
	// Output: 2030-01-02 03:04:05 +0000 UTC
}

// An event loop that stamps requests with the coarse tier, refreshed once
// per iteration instead of by the upkeep goroutine.
func ExampleRefresh() {
	clock := fastnow.NewManualClock(time.Unix(1_700_000_000, 0))
	defer fastnow.UseClock(clock)()
	for i := 0; i < 3; i++ {
		fastnow.Refresh()
		fmt.Println(fastnow.Recent(), fastnow.RecentUnixNano())
		clock.Advance(time.Millisecond)
	}
	// Output:
	// 1s after the package loaded 1700000000000000000
	// 1.001s after the package loaded 1700000000001000000
	// 1.002s after the package loaded 1700000000002000000
}

func ExampleRecentNanotime() {
	clock := fastnow.NewManualClock(time.Unix(0, 0))
	defer fastnow.UseClock(clock)()
	fmt.Println(fastnow.RecentNanotime())
	// Output: 1000000000
}

func ExampleRecentUnixNano() {
	clock := fastnow.NewManualClock(time.Unix(1_700_000_000, 0))
	defer fastnow.UseClock(clock)()
	fmt.Println(time.Unix(0, fastnow.RecentUnixNano()).UTC())
	// Output: 2023-11-14 22:13:20 +0000 UTC
}

// Expiring cache entries by the coarse tier: one atomic load per check.
func ExampleRecent() {
	clock := fastnow.NewManualClock(time.Unix(0, 0))
	defer fastnow.UseClock(clock)()
	expires := fastnow.Recent().Add(30 * time.Second)
	clock.Advance(31 * time.Second)
	fmt.Println(fastnow.Recent().After(expires))
	// Output: true
}

func ExampleStartUpkeep() {
	fastnow.StopUpkeep()
	if err := fastnow.StartUpkeep(500 * time.Microsecond); err != nil {
		fmt.Println(err)
		return
	}
	err := fastnow.StartUpkeep(time.Millisecond)
	fmt.Println(errors.Is(err, fastnow.ErrUpkeepRunning))
	resolution, running := fastnow.UpkeepResolution()
	fmt.Println(resolution, running)
	fmt.Println(fastnow.StopUpkeep(), fastnow.StopUpkeep())
	// Output:
	// true
	// 500µs true
	// true false
}

func ExampleStopUpkeep() {
	fastnow.StopUpkeep()
	_ = fastnow.StartUpkeep(time.Millisecond)
	fmt.Println(fastnow.StopUpkeep())
	// Output: true
}

func ExampleUpkeepResolution() {
	fastnow.StopUpkeep()
	_, running := fastnow.UpkeepResolution()
	fmt.Println(running)
	// Output: false
}

// A program that calls Refresh itself turns the automatic upkeep off.
func ExampleSetAutoUpkeep() {
	fastnow.StopUpkeep()
	fastnow.SetAutoUpkeep(false)
	defer fastnow.SetAutoUpkeep(true)
	fastnow.Refresh()
	_ = fastnow.RecentUnixNano()
	_, running := fastnow.UpkeepResolution()
	fmt.Println(running)
	// Output: false
}

func ExampleSetWallResyncInterval() {
	// Re-anchor the wall tier to the system clock every 100 ms at the latest.
	fastnow.SetWallResyncInterval(100 * time.Millisecond)
	defer fastnow.SetWallResyncInterval(time.Second)
	d := time.Since(fastnow.WallTime())
	fmt.Println(d < time.Second && d > -time.Second)
	// Output: true
}

func ExampleResyncWall() {
	// After the program itself set the system clock:
	fastnow.ResyncWall()
	d := time.Since(fastnow.WallTime())
	fmt.Println(d < time.Second && d > -time.Second)
	// Output: true
}

func ExampleSource() {
	info := fastnow.Source()
	// On a machine whose counter fastnow uses, Fallback is FallbackNone; on
	// any other it says why the OS clock is used.
	fmt.Println(info.Source == fastnow.SourceCounter && info.Fallback == fastnow.FallbackNone || info.Source == fastnow.SourceOS && info.Fallback != fastnow.FallbackNone)
	// Output: true
}

func ExampleSupported() {
	fmt.Println(fastnow.Supported() == (fastnow.Source().Source == fastnow.SourceCounter))
	// Output: true
}

func ExampleRecalibrate() {
	// After a resume from suspend or a live migration:
	info := fastnow.Recalibrate()
	fmt.Println(info.FreqHz > 0)
	// Output: true
}

func ExampleInfo_String() {
	info := fastnow.Info{
		Source: fastnow.SourceCounter, Counter: "CNTVCT_EL0", FreqHz: 24_000_000, FreqOrigin: fastnow.OriginRegister,
		OrderedRead: "ISB;MRS CNTVCT_EL0;dependent load", MonotonicMode: fastnow.MonotonicOrdered,
	}
	fmt.Println(info)
	// Output: counter CNTVCT_EL0 at 24 MHz (register); ordered read ISB;MRS CNTVCT_EL0;dependent load; MonotonicNanotime ordered
}

func ExampleCounterJump() {
	// The precise clocks follow the OS clock across a suspend the counter
	// counted, a reset at a resume or a migration; Source says how often
	// they re-based, and when last.
	info := fastnow.Source()
	fmt.Println(info.LastCounterJump.At.IsZero() == (info.CounterJumps == 0))
	// Output: true
}

func ExampleCounterJump_String() {
	jump := fastnow.CounterJump{At: time.Unix(1_700_000_000, 0), WentBack: true}
	fmt.Println(jump)
	// Output: counter went back at 2023-11-14T22:13:20Z
}

func ExampleInfo_FallbackReason() {
	info := fastnow.Info{Source: fastnow.SourceOS, Fallback: fastnow.FallbackKernelClocksource, FallbackClocksource: "hpet"}
	fmt.Println(info.FallbackReason())
	// Output: the kernel's clocksource is hpet, not the counter (set FASTNOW_CLOCK=counter to override)
}

func ExampleSourceKind() {
	info := fastnow.Source()
	fmt.Println(info.Source == fastnow.SourceCounter || info.Source == fastnow.SourceOS)
	// Output: true
}

func ExampleSourceKind_String() {
	fmt.Println(fastnow.SourceCounter, fastnow.SourceOS)
	// Output: counter os
}

func ExampleSourceKind_MarshalText() {
	b, _ := json.Marshal(struct{ Source fastnow.SourceKind }{fastnow.SourceOS})
	fmt.Println(string(b))
	// Output: {"Source":"os"}
}

func ExampleOrigin() {
	info := fastnow.Source()
	// The OS clock counts nanoseconds: its frequency needs no origin.
	fmt.Println(info.Source == fastnow.SourceCounter || info.FreqOrigin == fastnow.OriginOS)
	// Output: true
}

func ExampleOrigin_String() {
	fmt.Println(fastnow.OriginCPUID, fastnow.OriginMeasured)
	// Output: cpuid measured
}

func ExampleOrigin_MarshalText() {
	b, _ := json.Marshal(struct{ FreqOrigin fastnow.Origin }{fastnow.OriginDeviceTree})
	fmt.Println(string(b))
	// Output: {"FreqOrigin":"device-tree"}
}

func ExampleFallback() {
	info := fastnow.Source()
	// A fallback is given exactly when the OS clock is in use.
	fmt.Println((info.Fallback == fastnow.FallbackNone) == (info.Source == fastnow.SourceCounter))
	// Output: true
}

func ExampleFallback_String() {
	fmt.Println(fastnow.FallbackForced)
	fmt.Println(fastnow.FallbackNotInvariant)
	// Output:
	// FASTNOW_CLOCK=os
	// the counter is not invariant (its rate follows CPU frequency)
}

func ExampleFallback_MarshalText() {
	b, _ := json.Marshal(struct{ Fallback fastnow.Fallback }{fastnow.FallbackStalled})
	fmt.Println(string(b))
	// Output: {"Fallback":"the counter did not advance"}
}

func ExampleEnvOverride() {
	info := fastnow.Source()
	// An invalid FASTNOW_CLOCK is ignored, and reported with its value.
	fmt.Println(info.EnvOverride != fastnow.EnvInvalid || info.EnvValue != "")
	// Output: true
}

func ExampleEnvOverride_String() {
	fmt.Printf("%q %q %q %q\n", fastnow.EnvUnset, fastnow.EnvCounter, fastnow.EnvOS, fastnow.EnvInvalid)
	// Output: "" "counter" "os" "invalid"
}

func ExampleEnvOverride_MarshalText() {
	b, _ := json.Marshal(struct{ EnvOverride fastnow.EnvOverride }{fastnow.EnvCounter})
	fmt.Println(string(b))
	// Output: {"EnvOverride":"counter"}
}

func ExampleMonotonicMode() {
	fastnow.MonotonicNanotime() // the first reading chooses the strategy
	fmt.Println(fastnow.Source().MonotonicMode != fastnow.MonotonicUndecided)
	// Output: true
}

func ExampleMonotonicMode_String() {
	fmt.Println(fastnow.MonotonicUndecided, fastnow.MonotonicHighWater, fastnow.MonotonicOrdered)
	// Output: undecided high-water ordered
}

func ExampleMonotonicMode_MarshalText() {
	b, _ := json.Marshal(struct{ MonotonicMode fastnow.MonotonicMode }{fastnow.MonotonicHighWater})
	fmt.Println(string(b))
	// Output: {"MonotonicMode":"high-water"}
}

// Code that takes a Clock runs on the real clocks in production and on a
// ManualClock in its tests.
type session struct {
	clock    fastnow.Clock
	lastSeen fastnow.Instant
}

func (s *session) touch()                 { s.lastSeen = s.clock.Now() }
func (s *session) idle() bool             { return s.clock.Since(s.lastSeen) > 5*time.Minute }
func newSession(c fastnow.Clock) *session { s := &session{clock: c}; s.touch(); return s }

func ExampleClock() {
	clock := fastnow.NewManualClock(time.Unix(1_700_000_000, 0))
	s := newSession(clock)
	clock.Advance(4 * time.Minute)
	fmt.Println(s.idle())
	clock.Advance(2 * time.Minute)
	fmt.Println(s.idle())
	fmt.Println(newSession(fastnow.System).idle())
	// Output:
	// false
	// true
	// false
}

// A test of code that calls the package functions directly. In a test
// function: t.Cleanup(fastnow.UseClock(clock)).
func ExampleUseClock() {
	clock := fastnow.NewManualClock(time.Unix(1_700_000_000, 0))
	restore := fastnow.UseClock(clock)
	deadline := fastnow.Now().Add(30 * time.Second)
	done := make(chan bool)
	go func() { // goroutines see the clock too
		clock.Advance(30 * time.Second)
		done <- !fastnow.Now().Before(deadline)
	}()
	fmt.Println(<-done, fastnow.WallTime().UTC().Format(time.RFC3339))
	restore()
	// Output: true 2023-11-14T22:13:50Z
}

func ExampleNewManualClock() {
	clock := fastnow.NewManualClock(time.Date(2001, 9, 9, 1, 46, 40, 0, time.UTC))
	fmt.Println(clock)
	// Output: ManualClock(monotonic 1s, Unix 2001-09-09T01:46:40Z)
}

func ExampleManualClock_Advance() {
	clock := fastnow.NewManualClock(time.Unix(0, 0))
	start := clock.Now()
	clock.Advance(90 * time.Second)
	fmt.Println(clock.Since(start), clock.UnixNano())
	// Output: 1m30s 90000000000
}

// Set steps the Unix time only, as setting the system clock does.
func ExampleManualClock_Set() {
	clock := fastnow.NewManualClock(time.Unix(1_000, 0))
	before := clock.Now()
	clock.Set(time.Unix(500, 0))
	fmt.Println(clock.UnixNano(), clock.Now() == before)
	// Output: 500000000000 true
}

func ExampleManualClock_Now() {
	clock := fastnow.NewManualClock(time.Unix(0, 0))
	fmt.Println(clock.Now())
	// Output: 1s after the package loaded
}

func ExampleManualClock_Since() {
	clock := fastnow.NewManualClock(time.Unix(0, 0))
	start := clock.Now()
	clock.Advance(time.Millisecond)
	fmt.Println(clock.Since(start))
	// Output: 1ms
}

func ExampleManualClock_UnixNano() {
	clock := fastnow.NewManualClock(time.Unix(7, 0))
	fmt.Println(clock.UnixNano())
	// Output: 7000000000
}

func ExampleManualClock_String() {
	clock := fastnow.NewManualClock(time.Unix(0, 0))
	clock.Advance(time.Hour)
	fmt.Println(clock.String())
	// Output: ManualClock(monotonic 1h0m1s, Unix 1970-01-01T01:00:00Z)
}

func ExampleInstantOf() {
	i := fastnow.InstantOf(1_500_000_000)
	fmt.Println(i, i.Nanotime())
	// Output: 1.5s after the package loaded 1500000000
}

func ExampleInstant_Elapsed() {
	clock := fastnow.NewManualClock(time.Unix(0, 0))
	defer fastnow.UseClock(clock)()
	start := fastnow.Now()
	clock.Advance(42 * time.Millisecond)
	fmt.Println(start.Elapsed())
	// Output: 42ms
}

func ExampleInstant_Sub() {
	a, b := fastnow.InstantOf(5_000), fastnow.InstantOf(2_000)
	fmt.Println(a.Sub(b), b.Sub(a))
	// Output: 3µs -3µs
}

func ExampleInstant_Add() {
	fmt.Println(fastnow.InstantOf(0).Add(1500 * time.Millisecond))
	// Output: 1.5s after the package loaded
}

func ExampleInstant_Before() {
	fmt.Println(fastnow.InstantOf(1).Before(fastnow.InstantOf(2)))
	// Output: true
}

func ExampleInstant_After() {
	fmt.Println(fastnow.InstantOf(1).After(fastnow.InstantOf(2)))
	// Output: false
}

func ExampleInstant_Compare() {
	a, b := fastnow.InstantOf(1), fastnow.InstantOf(2)
	fmt.Println(a.Compare(b), a.Compare(a), b.Compare(a))
	// Output: -1 0 1
}

func ExampleInstant_Nanotime() {
	fmt.Println(fastnow.InstantOf(123).Nanotime())
	// Output: 123
}

func ExampleInstant_String() {
	fmt.Println(fastnow.InstantOf(int64(90 * time.Minute)))
	fmt.Println(fastnow.InstantOf(int64(-5 * time.Second)))
	// Output:
	// 1h30m0s after the package loaded
	// 5s before the package loaded
}

// The "last seen" stamp of a connection, written by every goroutine that
// uses it.
func ExampleAtomicInstant() {
	var lastSeen fastnow.AtomicInstant
	lastSeen.StoreMax(fastnow.InstantOf(200))
	lastSeen.StoreMax(fastnow.InstantOf(100)) // a late writer does not move it back
	fmt.Println(lastSeen.Load().Nanotime())
	// Output: 200
}

func ExampleAtomicInstant_StoreIfNewer() {
	var a fastnow.AtomicInstant
	fmt.Println(a.StoreIfNewer(fastnow.InstantOf(10)), a.StoreIfNewer(fastnow.InstantOf(5)), a.Load())
	// Output: true false 10ns after the package loaded
}

func ExampleAtomicInstant_StoreMax() {
	var a fastnow.AtomicInstant
	a.Store(fastnow.InstantOf(10))
	old := a.StoreMax(fastnow.InstantOf(20))
	fmt.Println(old, a.Load())
	// Output: 10ns after the package loaded 20ns after the package loaded
}

func ExampleAtomicInstant_StoreMin() {
	var a fastnow.AtomicInstant
	a.Store(fastnow.InstantOf(10))
	old := a.StoreMin(fastnow.InstantOf(3))
	fmt.Println(old, a.Load())
	// Output: 10ns after the package loaded 3ns after the package loaded
}

func ExampleAtomicInstant_CompareAndSwap() {
	var a fastnow.AtomicInstant
	fmt.Println(a.CompareAndSwap(fastnow.InstantOf(0), fastnow.InstantOf(7)), a.CompareAndSwap(fastnow.InstantOf(0), fastnow.InstantOf(8)))
	// Output: true false
}

func ExampleAtomicInstant_Swap() {
	var a fastnow.AtomicInstant
	a.Store(fastnow.InstantOf(1))
	fmt.Println(a.Swap(fastnow.InstantOf(2)), a.Load())
	// Output: 1ns after the package loaded 2ns after the package loaded
}

func ExampleAtomicInstant_Load() {
	var a fastnow.AtomicInstant
	fmt.Println(a.Load())
	// Output: 0s after the package loaded
}

func ExampleAtomicInstant_Store() {
	var a fastnow.AtomicInstant
	a.Store(fastnow.InstantOf(int64(time.Second)))
	fmt.Println(a.Load())
	// Output: 1s after the package loaded
}

func ExampleAtomicInstant_String() {
	var a fastnow.AtomicInstant
	a.Store(fastnow.InstantOf(int64(time.Minute)))
	fmt.Println(a.String())
	// Output: 1m0s after the package loaded
}

func ExampleAtomicUnixTime() {
	clock := fastnow.NewManualClock(time.Unix(1_700_000_000, 0))
	defer fastnow.UseClock(clock)()
	var lastWrite fastnow.AtomicUnixTime
	lastWrite.StoreIfNewer(fastnow.UnixNano())
	fmt.Println(&lastWrite)
	// Output: 2023-11-14T22:13:20Z
}

func ExampleAtomicUnixTime_StoreIfNewer() {
	var a fastnow.AtomicUnixTime
	fmt.Println(a.StoreIfNewer(5), a.StoreIfNewer(-5), a.Load())
	// Output: true false 5
}

func ExampleAtomicUnixTime_StoreMax() {
	var a fastnow.AtomicUnixTime
	a.Store(10)
	fmt.Println(a.StoreMax(3), a.Load())
	// Output: 10 10
}

func ExampleAtomicUnixTime_StoreMin() {
	var a fastnow.AtomicUnixTime
	a.Store(10)
	fmt.Println(a.StoreMin(3), a.Load())
	// Output: 10 3
}

func ExampleAtomicUnixTime_CompareAndSwap() {
	var a fastnow.AtomicUnixTime
	fmt.Println(a.CompareAndSwap(0, 1), a.CompareAndSwap(0, 2), a.Load())
	// Output: true false 1
}

func ExampleAtomicUnixTime_Swap() {
	var a fastnow.AtomicUnixTime
	fmt.Println(a.Swap(4), a.Load())
	// Output: 0 4
}

func ExampleAtomicUnixTime_Load() {
	var a fastnow.AtomicUnixTime
	fmt.Println(a.Load())
	// Output: 0
}

func ExampleAtomicUnixTime_LoadTime() {
	var a fastnow.AtomicUnixTime
	a.Store(1_000_000_000_000_000_000)
	fmt.Println(a.LoadTime().UTC())
	// Output: 2001-09-09 01:46:40 +0000 UTC
}

func ExampleAtomicUnixTime_Store() {
	var a fastnow.AtomicUnixTime
	a.Store(-1) // before 1970
	fmt.Println(a.String())
	// Output: 1969-12-31T23:59:59.999999999Z
}

func ExampleAtomicUnixTime_String() {
	var a fastnow.AtomicUnixTime
	fmt.Println(a.String())
	// Output: 1970-01-01T00:00:00Z
}

// Logging the clock fastnow chose, once at start-up.
func ExampleInfo() {
	info := fastnow.Source()
	// A program would log info (its String method) here. The fallback
	// reason is set exactly when the OS clock is in use:
	fmt.Println(info.Source == fastnow.SourceCounter && info.Fallback == fastnow.FallbackNone || info.Source == fastnow.SourceOS && info.Fallback != fastnow.FallbackNone)
	// Output: true
}

// Instants compare and subtract like time.Time values with a monotonic
// reading.
func ExampleInstant() {
	clock := fastnow.NewManualClock(time.Unix(0, 0))
	defer fastnow.UseClock(clock)()
	start := fastnow.Now()
	deadline := start.Add(100 * time.Millisecond)
	clock.Advance(60 * time.Millisecond)
	fmt.Println(fastnow.Now().Before(deadline), deadline.Sub(fastnow.Now()))
	// Output: true 40ms
}

func ExampleManualClock() {
	clock := fastnow.NewManualClock(time.Unix(1_700_000_000, 0))
	var c fastnow.Clock = clock
	start := c.Now()
	clock.Advance(3 * time.Second)
	fmt.Println(c.Since(start), time.Unix(0, c.UnixNano()).UTC().Format(time.RFC3339))
	// Output: 3s 2023-11-14T22:13:23Z
}
