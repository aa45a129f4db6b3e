package fastnow

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/quick"
	"time"
	"unsafe"

	"github.com/fastnow/fastnow/go/internal/measure"
)

func TestDecideRules(t *testing.T) {
	good := probe{counter: "c", invariant: true}
	for _, c := range []struct {
		p        probe
		cs, env  string
		fallback string
	}{
		{good, "", EnvUnset, ""},
		{good, "", EnvInvalid, ""},
		{good, "", EnvOS, FallbackForced},
		{probe{counter: "c"}, "", EnvUnset, FallbackNotInvariant},
		{probe{counter: "c"}, "", EnvCounter, ""},
		{probe{counter: "c", invariant: true, disabled: true}, "", EnvCounter, FallbackDisabled},
		{probe{}, "", EnvCounter, FallbackNoCounter},
	} {
		if got := decide(c.p, c.cs, c.env); got != c.fallback {
			t.Errorf("decide(%+v, %q, %q) = %q, want %q", c.p, c.cs, c.env, got, c.fallback)
		}
	}
	if kernelCounterName != "" {
		if got := decide(good, "kvm-clock", EnvUnset); !strings.Contains(got, "kvm-clock") {
			t.Errorf("clocksource rule: %q", got)
		}
		if got := decide(good, "hpet", EnvCounter); got != "" {
			t.Errorf("counter override: %q", got)
		}
	}
	for in, want := range map[string]string{"": EnvUnset, " Counter\n": EnvCounter, "OS": EnvOS, "tsc": EnvInvalid} {
		if got := parseEnv(in); got != want {
			t.Errorf("parseEnv(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestInstantAPI(t *testing.T) {
	a := Now()
	time.Sleep(3 * time.Millisecond)
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

// fastnow's interval lies inside time.Since's; loose bounds check the
// calibration is sane (the benchmarks measure its precision).
func TestAgreesWithTimeSince(t *testing.T) {
	start := time.Now()
	ours := Now()
	time.Sleep(100 * time.Millisecond)
	got := ours.Elapsed()
	theirs := time.Since(start)
	if got > theirs+theirs/1000 || got+20*time.Millisecond < theirs {
		t.Fatalf("fastnow %v vs time %v", got, theirs)
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

func TestStrictCrossGoroutine(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two cores to race")
	}
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
	if Source().MonotonicMode != "high-water" {
		t.Fatalf("held: %s", Source().MonotonicMode)
	}
	holdHighWater(false)
	mark.lost.Store(0)
	start := MonotonicNanotime()
	for i := 0; i < switchAfter; i++ {
		if v := monotonicContended(start + int64(i)); v < start+int64(i) {
			t.Fatalf("a contended raise returned %d below its value %d", v, start+int64(i))
		}
	}
	if Source().MonotonicMode != "ordered" {
		t.Fatalf("after %d lost compare-and-swaps: %s", switchAfter, Source().MonotonicMode)
	}
	if v := MonotonicNanotime(); v < mark.v.Load() {
		t.Fatalf("an ordered reading %d below the mark %d", v, mark.v.Load())
	}
}

// A refinement's params convert like the old ones below the take-over point
// and continue from there without a step back: one non-decreasing function.
func TestRebasedIsOneFunction(t *testing.T) {
	f := func(freq uint64, base uint64, baseNs int64, ahead uint32, ppm int16, offsets [8]uint32) bool {
		freq = freq%6_000_000_000 + 1_000_000
		s, ok := NanosPerTick(freq)
		if !ok {
			return false
		}
		base >>= 2
		old := &params{baseTicks: base, baseNs: baseNs >> 2, scale: s}
		old.setNextCheck(base + uint64(ahead))
		// The new rate differs by up to ±3.2% (twice the sanity bound).
		mult := int64(s.Mult) + int64(s.Mult)/1_000_000*int64(ppm)
		next := old.rebased(old.nextCheck+uint64(offsets[0]), Scale{Mult: uint64(mult), Shift: s.Shift})
		r := next.baseTicks
		if next.at(r) != old.at(r) {
			t.Logf("step at the take-over: %d vs %d", next.at(r), old.at(r))
			return false
		}
		prev := next.at(base)
		for _, o := range offsets {
			for _, tk := range []uint64{r - uint64(o)%(r-base+1), r + uint64(o)} {
				if tk < r && next.at(tk) != old.at(tk) {
					t.Logf("below the take-over, t=%d: %d vs old %d", tk, next.at(tk), old.at(tk))
					return false
				}
			}
		}
		for tk := base; tk < r+5000 && tk >= base; tk += 1 + (r-base)/997 {
			if v := next.at(tk); v < prev {
				t.Logf("t=%d: %d after %d", tk, v, prev)
				return false
			} else {
				prev = v
			}
		}
		return true
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 3000}); err != nil {
		t.Error(err)
	}
}

func TestSourceDescribesTheDecision(t *testing.T) {
	info := Source()
	if info.FreqHz == 0 || info.String() == "" {
		t.Fatalf("%+v", info)
	}
	if info.Source == "counter" {
		if !Supported() || info.Fallback != "" || info.Counter == "" {
			t.Fatalf("%+v", info)
		}
	} else if info.Fallback == "" || info.FreqHz != 1_000_000_000 {
		t.Fatalf("%+v", info)
	}
	after := Recalibrate()
	if after.Source == "counter" && (after.FreqOrigin != OriginMeasured || after.Baseline < time.Millisecond) {
		t.Fatalf("after Recalibrate: %+v", after)
	}
}

// runChild re-runs this test binary with FASTNOW_CLOCK set (detection runs
// once per process). Under an emulator, FASTNOW_TEST_RUNNER names it.
func runChild(t *testing.T, test, clock string) {
	t.Helper()
	args := []string{"-test.run", "^" + test + "$", "-test.v"}
	var cmd *exec.Cmd
	if runner := os.Getenv("FASTNOW_TEST_RUNNER"); runner != "" {
		cmd = exec.Command(runner, append([]string{os.Args[0]}, args...)...)
	} else {
		cmd = exec.Command(os.Args[0], args...)
	}
	cmd.Env = append(os.Environ(), "FASTNOW_TEST_CHILD=1", "FASTNOW_CLOCK="+clock)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatalf("child %s with FASTNOW_CLOCK=%q: %v\n%s", test, clock, err, out)
	}
}

func TestOverrides(t *testing.T) {
	if runtime.GOARCH == "wasm" {
		t.Skip("this target cannot start processes")
	}
	if forcedTimePackage {
		t.Skip("with the fastnow_time tag every read goes through package time, whatever FASTNOW_CLOCK says")
	}
	runChild(t, "TestChildOS", "os")
	runChild(t, "TestChildInvalid", "rdtsc please")
	runChild(t, "TestChildCounter", "counter")
}

func inChild(t *testing.T) {
	if os.Getenv("FASTNOW_TEST_CHILD") == "" {
		t.Skip("run by TestOverrides in a child process")
	}
}

func TestChildOS(t *testing.T) {
	inChild(t)
	a := Now()
	info := Source()
	if info.Source != "os" || info.Fallback != FallbackForced || info.EnvOverride != EnvOS || Supported() {
		t.Fatalf("%+v", info)
	}
	time.Sleep(2 * time.Millisecond)
	if a.Elapsed() < 2*time.Millisecond || MonotonicNanotime() < a.Nanotime() || OrderedNanotime() < a.Nanotime() {
		t.Fatal("OS fallback API")
	}
	if d := UnixNano() - time.Now().UnixNano(); d > int64(time.Millisecond) || d < -int64(time.Millisecond) {
		t.Fatalf("UnixNano off by %d", d)
	}
}

func TestChildInvalid(t *testing.T) {
	inChild(t)
	info := Source()
	if info.EnvOverride != EnvInvalid || info.EnvValue != "rdtsc please" || info.Fallback == FallbackForced {
		t.Fatalf("%+v", info)
	}
	if !strings.Contains(info.String(), "ignored") {
		t.Fatal(info.String())
	}
}

func TestChildCounter(t *testing.T) {
	inChild(t)
	info := Source()
	if info.EnvOverride != EnvCounter {
		t.Fatalf("%+v", info)
	}
	if info.Counter != "" && info.Fallback != FallbackDisabled && info.Source != "counter" {
		t.Fatalf("counter override not applied: %+v", info)
	}
}

// nanotimeCounter (assembly on amd64) reads the atomics state and cur with
// plain loads at offset 0 of each: their value word must be all there is.
func TestAtomicsLayoutForAssembly(t *testing.T) {
	if unsafe.Sizeof(state) != 4 || unsafe.Sizeof(cur) != unsafe.Sizeof(uintptr(0)) {
		t.Fatalf("sync/atomic layout changed: state %d bytes, cur %d bytes", unsafe.Sizeof(state), unsafe.Sizeof(cur))
	}
}

// The fast path of Nanotime converts as params.at does, for the published
// conversion and for one with a shift below 64 (counters slower than 2 GHz),
// which the real one here may not exercise: the result lies between the
// conversions of counter values read just before and just after.
func TestNanotimeFastPathConverts(t *testing.T) {
	if !Supported() {
		t.Skip("the OS clock is in use")
	}
	Nanotime() // calibrated
	real := cur.Load()
	check := func(name string, p *params) {
		for i := 0; i < 1000; i++ {
			lo := p.at(readCounter())
			v := Nanotime()
			hi := p.at(readCounter())
			if cur.Load() != p {
				return // a refinement replaced it; the next test run checks again
			}
			if v < lo || v > hi {
				t.Fatalf("%s: Nanotime %d outside [%d, %d] (scale %+v)", name, v, lo, hi, p.scale)
			}
		}
	}
	check("published", real)

	// The same rate at a shift 4 below: equal up to rounding (2^-58).
	shifted := *real
	shifted.scale = Scale{Mult: real.scale.Mult >> 4, Shift: real.scale.Shift - 4}
	if shifted.scale.Shift >= 64 {
		shifted.scale = Scale{Mult: real.scale.Mult >> (shifted.scale.Shift - 60), Shift: 60}
	}
	shifted.setNextCheck(real.nextCheck)
	if cur.CompareAndSwap(real, &shifted) {
		check("shift below 64", &shifted)
		cur.CompareAndSwap(&shifted, real)
	}
}
