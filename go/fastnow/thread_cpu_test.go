package fastnow

import (
	"runtime"
	"testing"
	"time"
)

// burnCPU spins on the calling thread until ThreadCPUNanotime has advanced
// by d (or, where it does not measure, for d of wall time).
func burnCPU(d time.Duration) {
	start, wall := ThreadCPUNanotime(), time.Now()
	x := 0
	for {
		for i := 0; i < 1000; i++ {
			x += i
		}
		sink += int64(x)
		if MeasuresThreadCPUTime() && time.Duration(ThreadCPUNanotime()-start) >= d {
			return
		}
		if !MeasuresThreadCPUTime() && time.Since(wall) >= d {
			return
		}
	}
}

func TestThreadCPUNanotimeRoute(t *testing.T) {
	want := map[string]string{
		"linux": "clock_gettime(CLOCK_THREAD_CPUTIME_ID)", "android": "clock_gettime(CLOCK_THREAD_CPUTIME_ID)",
		"darwin": "clock_gettime(CLOCK_THREAD_CPUTIME_ID)", "freebsd": "clock_gettime(CLOCK_THREAD_CPUTIME_ID)",
		"windows": "GetThreadTimes", "js": "none (every duration is zero)", "wasip1": "none (every duration is zero)",
	}[runtime.GOOS]
	if want != "" && ThreadCPUClock() != want {
		t.Fatalf("ThreadCPUClock() = %q, want %q", ThreadCPUClock(), want)
	}
	if MeasuresThreadCPUTime() != (ThreadCPUClock() != "none (every duration is zero)") {
		t.Fatalf("MeasuresThreadCPUTime() = %v but ThreadCPUClock() = %q", MeasuresThreadCPUTime(), ThreadCPUClock())
	}
	if !MeasuresThreadCPUTime() {
		// No clock: the reading stands still, never wall time.
		a := ThreadCPUNanotime()
		time.Sleep(2 * time.Millisecond)
		if b := ThreadCPUNanotime(); a != 0 || b != 0 {
			t.Fatalf("readings %d, %d where nothing is measured", a, b)
		}
	}
}

// On one locked thread, a busy loop advances the clock by the CPU it
// burnt, and a sleep barely does while wall time passes.
func TestThreadCPUNanotimeBusyAndAsleep(t *testing.T) {
	if !MeasuresThreadCPUTime() {
		t.Skip("no thread CPU clock here")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	wall := time.Now()
	a := ThreadCPUNanotime()
	burnCPU(30 * time.Millisecond)
	b := ThreadCPUNanotime()
	if cpu := time.Duration(b - a); cpu < 30*time.Millisecond || cpu > time.Since(wall)+16*time.Millisecond {
		t.Fatalf("busy loop: %v of CPU over %v of wall time", cpu, time.Since(wall))
	}
	time.Sleep(40 * time.Millisecond)
	c := ThreadCPUNanotime()
	// Windows counts in scheduler ticks (15.6 ms by default).
	if asleep := time.Duration(c - b); asleep < 0 || asleep > 16*time.Millisecond {
		t.Fatalf("%v of CPU while asleep for 40 ms", asleep)
	}
}

// Another thread's work does not move this thread's clock.
func TestThreadCPUNanotimeIsPerThread(t *testing.T) {
	if !MeasuresThreadCPUTime() || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("no thread CPU clock here")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	mine := ThreadCPUNanotime()
	done := make(chan time.Duration)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		start := ThreadCPUNanotime()
		burnCPU(40 * time.Millisecond)
		done <- time.Duration(ThreadCPUNanotime() - start)
	}()
	theirs := <-done
	if used := time.Duration(ThreadCPUNanotime() - mine); used > 20*time.Millisecond || theirs < 40*time.Millisecond {
		t.Fatalf("this thread used %v while the other burnt %v", used, theirs)
	}
}

func BenchmarkThreadCPUNanotime(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for i := 0; i < b.N; i++ {
		sink += ThreadCPUNanotime()
	}
}

// The OS call ThreadCPUNanotime stands beside, made the way
// golang.org/x/sys/unix and package syscall make it (Syscall, with the
// runtime's bookkeeping): the baseline for its cost.
func BenchmarkThreadCPUOSCall(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for i := 0; i < b.N; i++ {
		sink += threadCPUOSCall()
	}
}
