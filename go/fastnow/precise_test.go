package fastnow

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fastnow/fastnow/go/internal/measure"

	"github.com/fastnow/fastnow/go/internal/osclock"
)

func TestInstantAPI(t *testing.T) {
	a := Now()
	sleepAtLeast(3 * time.Millisecond) // time.Sleep may end early by the OS clock on Windows
	b := Now()
	if !b.After(a) || !a.Before(b) || a.Compare(b) != -1 || b.Compare(a) != 1 || a.Compare(a) != 0 {
		t.Fatalf("ordering: %v %v", a, b)
	}
	d := b.Sub(a)
	if d < 2*time.Millisecond || a.Sub(b) != -d {
		t.Fatalf("Sub: %v", d)
	}
	if a.Elapsed() < d {
		t.Fatalf("Elapsed %v < %v", a.Elapsed(), d)
	}
	if Now().Add(time.Hour).Elapsed() != 0 {
		t.Fatal("Elapsed of a future instant must be 0")
	}
	if a.Add(d) != b || InstantOf(a.Nanotime()) != a {
		t.Fatal("Add/InstantOf")
	}
}

// fastnow's interval lies between an inner interval of the OS clock it
// follows (started after it, ended before it: monoNow, which is package
// time's clock except on Windows, where that one moves in steps of the timer
// interrupt) and an outer one, up to a calibration error of
// 1 % and a microsecond of rounding, however long the reads around them take
// (under an emulator, tens of milliseconds the first time; and there the
// first 100 ms use rates measured over milliseconds with microsecond-wide
// brackets). This checks the calibration is sane (a wrong frequency is off
// by far more); the simulation tests check its precision.
func TestAgreesWithTheOSClock(t *testing.T) {
	_ = Source() // the first state published and the warm-up over
	outer := osclock.Mono()
	ours := Now()
	inner := osclock.Mono()
	time.Sleep(100 * time.Millisecond)
	innerLen := time.Duration(osclock.Mono() - inner)
	got := ours.Elapsed()
	outerLen := time.Duration(osclock.Mono() - outer)
	slack := func(d time.Duration) time.Duration { return d + d/100 + time.Microsecond }
	if got > slack(outerLen) || innerLen > slack(got) {
		t.Fatalf("fastnow %v vs time: between %v and %v", got, innerLen, outerLen)
	}
}

func TestNeverBackwardsPerGoroutine(t *testing.T) {
	var wg sync.WaitGroup
	for _, read := range []func() int64{Nanotime, OrderedNanotime, MonotonicNanotime} {
		for g := 0; g < 2; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				last := read()
				for i := 0; i < 200_000; i++ {
					now := read()
					if now < last {
						t.Errorf("went back %d ns", last-now)
						return
					}
					last = now
				}
			}()
		}
	}
	wg.Wait()
}

// Issue 9 item 1: Nanotime stepped back on one goroutine after
// Recalibrate (a forced refinement took over before the previous one).
// Readers on several goroutines check their own monotonicity while another
// recalibrates, resyncs and changes the wall interval in a loop.
func TestRecalibrateNeverStepsBack(t *testing.T) {
	worst, stop := watchStepsBack()
	defer SetWallResyncInterval(time.Second)
	for i := 0; i < 60 && worst() == 0; i++ {
		Recalibrate()
		time.Sleep(time.Duration(i%7) * 300 * time.Microsecond)
		switch i % 3 {
		case 0:
			ResyncWall()
		case 1:
			SetWallResyncInterval(time.Duration(i) * time.Microsecond)
		}
	}
	if w := stop(); w > 0 {
		t.Errorf("went back by up to %d ns", w)
	}
}

// Issue 9 item 1 as reported: with the old design it took a recalibration
// after the process's first minute (the 64 s anchor roll) to step back, so
// this runs Recalibrate under readers until the process is 70 s old. Set
// FASTNOW_LONG_TESTS=1 to run it.
func TestRecalibrateAfterAMinute(t *testing.T) {
	if os.Getenv("FASTNOW_LONG_TESTS") == "" {
		t.Skip("set FASTNOW_LONG_TESTS=1 to run it (about 70 s)")
	}
	_, stop := watchStepsBack()
	for time.Since(osclock.Start) < 70*time.Second {
		Recalibrate()
		time.Sleep(100 * time.Millisecond)
	}
	if w := stop(); w > 0 {
		t.Errorf("went back by up to %d ns", w)
	}
}

// watchStepsBack starts readers of Nanotime (two) and OrderedNanotime, each
// checking its own readings never decrease. worst says the largest step
// back seen so far (ns); stop ends the readers and returns it.
func watchStepsBack() (worst func() int64, stop func() int64) {
	var done atomic.Bool
	var wg sync.WaitGroup
	var back atomic.Int64
	for _, read := range []func() int64{Nanotime, Nanotime, OrderedNanotime} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := read()
			for n := 0; !done.Load(); n++ {
				now := read()
				if d := last - now; d > back.Load() {
					back.Store(d)
				}
				last = max(last, now)
				if n%1024 == 0 {
					runtime.Gosched()
				}
			}
		}()
	}
	return back.Load, func() int64 {
		done.Store(true)
		wg.Wait()
		return back.Load()
	}
}

func TestStrictCrossGoroutine(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two cores to race")
	}
	defer monoMode.Store(monoOrdered)
	// Both strategies of MonotonicNanotime, whichever this core starts on.
	holdHighWater(true)
	if v := measure.Strict(MonotonicNanotime, 300_000); v != 0 {
		t.Errorf("MonotonicNanotime on the high-water mark: %d violations", v)
	}
	holdHighWater(false)
	monoMode.Store(monoOrdered)
	if v := measure.Strict(MonotonicNanotime, 300_000); v != 0 {
		t.Errorf("MonotonicNanotime on ordered reads: %d violations", v)
	}
	if v := measure.Strict(OrderedNanotime, 300_000); v != 0 {
		t.Errorf("OrderedNanotime: %d violations", v)
	}
	var n atomic.Int64
	backwards := func() int64 { return -n.Add(1) }
	if v := measure.Strict(backwards, 1000); v != 1000 {
		t.Errorf("the harness must catch a backwards clock: %d of 1000", v)
	}
}

// Lost compare-and-swaps are what contention produces; feeding them directly
// makes the switch deterministic.
func TestContentionSwitchesToOrderedReads(t *testing.T) {
	if !Supported() {
		t.Skip("the OS clock is always ordered")
	}
	holdHighWater(true)
	if Source().MonotonicMode != MonotonicHighWater {
		t.Fatalf("held: %s", Source().MonotonicMode)
	}
	holdHighWater(false)
	// Losses further apart than contentionWindowNs are chance collisions:
	// however many, they start the count again. (Before, every loss
	// counted, whenever it came.)
	// (Values from the last three seconds: the mark stays below the
	// readings to come.)
	const apart = contentionWindowNs/(switchAfter-1) + 1
	past := MonotonicNanotime() - 3*int64(time.Second)
	mark.lost.Store(0)
	mark.since.Store(past - 2*contentionWindowNs)
	for i := int64(0); i < 2*switchAfter; i++ {
		monotonicContended(past + i*apart)
	}
	if m := Source().MonotonicMode; m != MonotonicHighWater {
		t.Fatalf("after %d losses %d ns apart: %s", 2*switchAfter, apart, m)
	}
	// Losses the upkeep's refresh explains are not contention: each write
	// of the mark it makes may cost a reader one lost compare-and-swap,
	// and takes one off the count. (Before, a refresh every millisecond
	// beside one reading goroutine switched it under an emulator, where
	// many refreshes hit a reader between its load and its
	// compare-and-swap.)
	for i := 0; i < 2*switchAfter; i++ {
		if m := Source().MonotonicMode; m != MonotonicHighWater {
			t.Fatalf("after %d refreshes, each followed by the loss it caused: %s", i, m)
		}
		for orderedNanotimeReal() <= mark.v.Load()+markFreshNs {
		}
		before := mark.v.Load()
		readingForCache(true)
		if mark.v.Load() <= before {
			t.Fatalf("the refresh did not write a stale mark (%d)", before)
		}
		monotonicContended(mark.v.Load())
	}
	if lost := mark.lost.Load(); lost > 1 {
		t.Fatalf("%d losses counted against the program", lost)
	}
	// A refresh the program makes is its own contention: it takes nothing
	// off the count.
	monotonicContended(mark.v.Load())
	lost := mark.lost.Load()
	for orderedNanotimeReal() <= mark.v.Load()+markFreshNs {
	}
	before := mark.v.Load()
	readingForCache(false)
	if mark.v.Load() <= before || mark.lost.Load() != lost {
		t.Fatalf("a program's refresh: mark %d (was %d), %d losses (were %d)", mark.v.Load(), before, mark.lost.Load(), lost)
	}
	start := MonotonicNanotime()
	for i := 0; i < switchAfter; i++ {
		if v := monotonicContended(start + int64(i)); v < start+int64(i) {
			t.Fatalf("a contended raise returned %d below its value %d", v, start+int64(i))
		}
	}
	if Source().MonotonicMode != MonotonicOrdered {
		t.Fatalf("after %d lost compare-and-swaps: %s", switchAfter, Source().MonotonicMode)
	}
	if v := MonotonicNanotime(); v < mark.v.Load() {
		t.Fatalf("an ordered reading %d below the mark %d", v, mark.v.Load())
	}
}

func TestSourceDescribesTheDecision(t *testing.T) {
	info := Source()
	if info.FreqHz == 0 || info.String() == "" || info.FreqOrigin == OriginPending {
		t.Fatalf("%+v", info)
	}
	if info.Source == SourceCounter {
		if !Supported() || info.Fallback != FallbackNone || info.Counter == "" || !info.DemotedAt.IsZero() {
			t.Fatalf("%+v", info)
		}
	} else if info.Fallback == FallbackNone || info.FreqHz != 1_000_000_000 {
		t.Fatalf("%+v", info)
	}
	after := Recalibrate()
	if after.Source == SourceCounter && (after.FreqOrigin != OriginMeasured || after.Baseline < time.Millisecond) {
		t.Fatalf("after Recalibrate: %+v", after)
	}
	t.Log(after)
}
