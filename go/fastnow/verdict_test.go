package fastnow

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The kernel's verdict when it cannot be read for now (verdict.go): the
// errno classification against the shared vectors, and, on the simulated
// machine, descriptors exhausted at a re-check (the counter stays) and at
// the first reading (the counter waits, on the OS clock, never refused for
// good); every reading on the way continues the one before.

var emfile = verdict{kind: verdictUnavailable, err: syscall.EMFILE}

func named(name string) verdict { return verdict{kind: verdictNamed, name: name} }

// errnoNames maps the errno names spec/vectors/verdict.json and
// spec/vectors/scenarios.json use to this platform's values.
var errnoNames = map[string]syscall.Errno{
	"ENOENT": syscall.ENOENT, "ENOTDIR": syscall.ENOTDIR, "EACCES": syscall.EACCES,
	"EPERM": syscall.EPERM, "ELOOP": syscall.ELOOP, "ENAMETOOLONG": syscall.ENAMETOOLONG,
	"ENODEV": syscall.ENODEV, "ENXIO": syscall.ENXIO, "EISDIR": syscall.EISDIR,
	"EINVAL": syscall.EINVAL, "ENOSYS": syscall.ENOSYS, "EMFILE": syscall.EMFILE,
	"ENFILE": syscall.ENFILE, "ENOMEM": syscall.ENOMEM, "ENOBUFS": syscall.ENOBUFS,
	"EAGAIN": syscall.EAGAIN, "EINTR": syscall.EINTR, "EIO": syscall.EIO, "EBUSY": syscall.EBUSY,
}

// How a failure to read the clocksource file is taken, by its errno,
// against spec/vectors/verdict.json (the Rust crate's tests read it too):
// the sandbox's refusals vouch for nothing, a failure of the moment is only
// that, and so is an errno the file does not list; the retry schedule is
// the file's.
func TestClocksourceFailuresFollowTheSpec(t *testing.T) {
	errnos := errnoNames
	raw, err := os.ReadFile("../../spec/vectors/verdict.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		RetryFirstNs uint64 `json:"retry_first_ns"`
		RetryMaxNs   uint64 `json:"retry_max_ns"`
		Errors       []struct {
			Errno   string `json:"errno"`
			Outcome string `json:"outcome"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	if file.RetryFirstNs != retryFirstNs || file.RetryMaxNs != retryMaxNs {
		t.Errorf("retry schedule %d..%d ns, the spec says %d..%d", retryFirstNs, retryMaxNs, file.RetryFirstNs, file.RetryMaxNs)
	}
	outcomes := map[string]bool{}
	for _, e := range file.Errors {
		errno, ok := errnos[e.Errno]
		if !ok {
			t.Errorf("%s: not known to this test", e.Errno)
			continue
		}
		// As the os package wraps it, too.
		for _, err := range []error{errno, &os.PathError{Op: "open", Path: "x", Err: errno}} {
			v := clocksourceFailure(err)
			switch e.Outcome {
			case "unreadable":
				if v.kind != verdictUnreadable {
					t.Errorf("%s: %+v", e.Errno, v)
				}
			case "unavailable":
				if v.kind != verdictUnavailable || !errors.Is(v.err, errno) {
					t.Errorf("%s: %+v", e.Errno, v)
				}
			default:
				t.Errorf("%s: outcome %q?", e.Errno, e.Outcome)
			}
		}
		outcomes[e.Outcome] = true
	}
	if len(outcomes) != 2 {
		t.Errorf("outcomes listed: %v", outcomes)
	}
	if v := clocksourceFailure(syscall.Errno(4095)); v.kind != verdictUnavailable {
		t.Errorf("an errno not listed: %+v", v)
	}

	// Which changes no decision, at a re-check or at detection.
	good := probe{counter: "c", invariant: true}
	d := decision{probe: good, env: EnvUnset, kernelName: "tsc"}
	d.settle(emfile)
	if d.fallback.why != FallbackNone || d.pending != syscall.EMFILE || d.counter() {
		t.Errorf("awaiting: %+v", d)
	}
	if r := d.recheck(emfile); r.why != FallbackNone {
		t.Errorf("a re-check: %v", r)
	}
	forced := decision{probe: good, env: EnvCounter, kernelName: "tsc"}
	forced.settle(emfile)
	refused := decision{probe: probe{counter: "c"}, env: EnvUnset, kernelName: "tsc"}
	refused.settle(emfile)
	if forced.pending != nil || refused.pending != nil || !forced.counter() || refused.counter() {
		t.Errorf("forced %+v, refused %+v", forced, refused)
	}
	d.settle(named("kvm-clock"))
	if d.pending != nil || d.fallback.why != FallbackKernelClocksource {
		t.Errorf("settled: %+v", d)
	}
}

// What Source says of a verdict unavailable for now.
func TestAnUnavailableVerdictSaysWhy(t *testing.T) {
	got := describeClocksourceErr(syscall.EMFILE, 3, 5_002_345*time.Microsecond)
	if want := "the kernel's clocksource could not be read: too many open files (EMFILE), 3 attempts in a row; last read 5.002s ago"; got != want {
		t.Errorf("%q\nwant %q", got, want)
	}
	got = describeClocksourceErr(syscall.Errno(4095), 1, 0)
	if !strings.HasSuffix(got, ", 1 attempt; not read yet") || strings.Contains(got, "(E") {
		t.Errorf("%q", got)
	}
}

// A daemon closed fastnow's descriptor and is out of descriptors when the
// re-check must open the file again: the counter stays in use (the
// failure says nothing about it), every re-check tries again, Source says
// what failed and for how long, and once the file can be read the
// kernel's verdict is followed again, a demotion included. (Before, the
// re-check took EMFILE for "unreadable" and demoted the counter for good,
// and the text said both "could not be read" and "kernel clocksource tsc".)
func TestDescriptorsExhaustedAtARecheckKeepTheCounter(t *testing.T) {
	for _, upkeep := range []bool{false, true} {
		sk := onTheCounter(t)
		if upkeep {
			sk.setUpkeep(true)
		}
		a, monoA := sk.read(false), sk.sim.mono()
		sk.sim.with(func(w *world) { w.verdict = emfile })
		sk.settleAsking(500, 10_000_000, upkeep)
		if m := sk.state.Load().mode; m != modeCounter {
			t.Fatalf("upkeep %v: mode %d", upkeep, m)
		}
		b, monoB := sk.read(false), sk.sim.mono()
		if d := absDiff(b-a, monoB-monoA); d >= 10_000 {
			t.Errorf("an interval is %d ns off CLOCK_MONOTONIC's", d)
		}
		info := sk.info()
		if info.Source != SourceCounter || info.Fallback != FallbackNone || !info.DemotedAt.IsZero() || info.Clocksource != "tsc" {
			t.Fatalf("upkeep %v: %+v", upkeep, info)
		}
		if !errors.Is(info.ClocksourceErr, syscall.EMFILE) || info.ClocksourceFailures < 4 || info.ClocksourceLastRead < 4*time.Second {
			t.Errorf("upkeep %v: %v, %d, %v", upkeep, info.ClocksourceErr, info.ClocksourceFailures, info.ClocksourceLastRead)
		}
		if text := info.String(); !strings.Contains(text, "too many open files (EMFILE)") || !strings.Contains(text, "stays in use") ||
			!strings.Contains(text, "kernel clocksource tsc when last read") || strings.Contains(text, "fallback") {
			t.Errorf("%s", text)
		}
		if j, err := json.Marshal(info); err != nil || !strings.Contains(string(j), `"ClocksourceErr":"too many open files (EMFILE)"`) {
			t.Errorf("%s, %v", j, err)
		}

		// Descriptors free again: the next check reads the file.
		sk.sim.with(func(w *world) { w.verdict = named("tsc") })
		sk.settleAsking(150, 10_000_000, upkeep)
		if info := sk.info(); info.Source != SourceCounter || info.ClocksourceErr != nil {
			t.Errorf("upkeep %v, readable again: %+v", upkeep, info)
		}
		// And a demotion the kernel makes afterwards is followed.
		sk.sim.with(func(w *world) { w.verdict = named("hpet") })
		sk.settleAsking(250, 10_000_000, upkeep)
		if info := sk.info(); info.Source != SourceOS || info.FallbackClocksource != "hpet" || info.ClocksourceErr != nil {
			t.Errorf("upkeep %v, demoted: %+v", upkeep, info)
		}
	}
}

// A verdict that cannot be read at a re-check because the file is gone
// (ENOENT after a chroot, say) vouches for nothing, as before: the counter
// is dropped, and Source no longer names the clocksource read before
// beside "could not be read".
func TestAnUnreadableRecheckStillDemotes(t *testing.T) {
	sk := onTheCounter(t)
	sk.sim.with(func(w *world) { w.verdict = verdict{kind: verdictUnreadable} })
	sk.settleAsking(250, 10_000_000, false)
	info := sk.info()
	if info.Source != SourceOS || info.Fallback != FallbackClocksourceUnknown || info.Clocksource != "" || info.ClocksourceErr != nil {
		t.Errorf("%+v", info)
	}
	if text := info.String(); strings.Contains(text, "kernel clocksource tsc") {
		t.Errorf("contradicts itself: %s", text)
	}
}

// A process that starts out of descriptors: its first reading cannot read
// the kernel's verdict. The precise clocks read the OS clock (not for good:
// the state has a trigger), Source says the counter awaits the verdict and
// why, without waiting for it, and the verdict is read again after 1 ms,
// then twice as long each time up to a second. Once it reads tsc the
// warm-up runs and the counter takes over, a little ahead, never back.
// (Before, the first reading settled on the OS clock for good.) Driven by
// readers, and by the upkeep.
func TestDescriptorsExhaustedAtTheFirstReadingDelayTheCounter(t *testing.T) {
	for _, upkeep := range []bool{false, true} {
		sk := newSimKeeper(t, 0)
		sk.sim.with(func(w *world) { w.verdict = emfile })
		if upkeep {
			sk.setUpkeep(true)
		}
		first := sk.read(false)
		mono0 := sk.sim.mono()
		if absDiff(first, mono0) >= 1_000 {
			t.Fatalf("first reading %d, CLOCK_MONOTONIC %d", first, mono0)
		}
		s := sk.state.Load()
		if s.mode != modeOS || s.trigger == never || s.trigger > mono0+retryFirstNs {
			t.Fatalf("first state %+v", *s)
		}
		info := sk.info()
		if info.Source != SourceOS || info.Fallback != FallbackNone || info.FreqHz != 1e9 || info.Clocksource != "" {
			t.Fatalf("%+v", info)
		}
		if !errors.Is(info.ClocksourceErr, syscall.EMFILE) || info.ClocksourceFailures != 1 || info.ClocksourceLastRead != 0 {
			t.Errorf("%v %d %v", info.ClocksourceErr, info.ClocksourceFailures, info.ClocksourceLastRead)
		}
		text := info.String()
		if !strings.Contains(text, "counter simulated awaits the kernel's verdict") || !strings.Contains(text, "too many open files (EMFILE)") ||
			!strings.Contains(text, "retrying") || strings.Contains(text, "fallback") {
			t.Errorf("%s", text)
		}

		// Three seconds out of descriptors: the OS clock throughout, the
		// next attempt never more than a second away.
		last := first
		// A millisecond on, a reading (after the upkeep's turn), never
		// below the one before.
		step := func() uint64 {
			sk.sim.advance(1_000_000)
			if upkeep {
				sk.upkeepTurn(false)
			}
			v := sk.read(false)
			if v < last {
				t.Fatalf("stepped back %d ns", last-v)
			}
			last = v
			return v
		}
		var triggers []uint64
		for i := 0; i < 3000; i++ {
			if d := absDiff(step(), sk.sim.mono()); d >= 1_000 {
				t.Fatalf("%d ns off CLOCK_MONOTONIC", d)
			}
			s := sk.state.Load()
			if s.mode != modeOS || s.trigger == never || s.end < s.trigger || saturatingSub(s.trigger, sk.sim.mono()) > retryMaxNs {
				t.Fatalf("step %d: %+v", i, *s)
			}
			if n := len(triggers); n == 0 || triggers[n-1] != s.trigger {
				triggers = append(triggers, s.trigger)
			}
		}
		// 1, 2, 4 ... 512 ms, then a second each time: 12 or 13 attempts.
		if info := sk.info(); info.ClocksourceFailures < 11 || info.ClocksourceFailures > 14 {
			t.Errorf("%d attempts in 3 s", info.ClocksourceFailures)
		}
		for i := 1; i < len(triggers); i++ {
			if triggers[i]-triggers[i-1] > retryMaxNs+3_000_000 {
				t.Errorf("attempts %d ns apart", triggers[i]-triggers[i-1])
			}
		}

		// Descriptors free again: the warm-up runs, and the counter takes
		// over within a second and a few milliseconds.
		sk.sim.with(func(w *world) { w.verdict = named("tsc") })
		a, monoA := last, sk.sim.mono()
		counter := false
		for i := 0; i < 1100; i++ {
			step()
			counter = counter || sk.state.Load().mode == modeCounter
		}
		if !counter {
			t.Fatalf("upkeep %v: the counter did not take over", upkeep)
		}
		b, monoB := sk.read(false), sk.sim.mono()
		if d := absDiff(b-a, monoB-monoA); d >= 10_000 {
			t.Errorf("an interval across the switch is %d ns off CLOCK_MONOTONIC's", d)
		}
		info = sk.info()
		if info.Source != SourceCounter || info.Fallback != FallbackNone || info.ClocksourceErr != nil || info.Clocksource != "tsc" ||
			info.CalibrationWait < 3*time.Second || absDiff(info.FreqHz, simFreq) >= simFreq/10_000 {
			t.Errorf("upkeep %v: %+v", upkeep, info)
		}
	}
}

// Once the first reading's awaited verdict can be read, a verdict against
// the counter settles the OS clock for good, with that reason; the readings
// go on without a step.
func TestAnAwaitedVerdictCanRefuseTheCounter(t *testing.T) {
	for _, c := range []struct {
		v    verdict
		why  Fallback
		name string
	}{
		{named("hpet"), FallbackKernelClocksource, "hpet"},
		{verdict{kind: verdictUnreadable}, FallbackClocksourceUnknown, ""},
	} {
		sk := newSimKeeper(t, 0)
		sk.sim.with(func(w *world) { w.verdict = emfile })
		last := sk.read(false)
		for i := 0; i < 300; i++ {
			if i == 100 {
				sk.sim.with(func(w *world) { w.verdict = c.v })
			}
			sk.sim.advance(1_000_000)
			v := sk.read(false)
			if v < last {
				t.Fatalf("stepped back %d ns", last-v)
			}
			last = v
		}
		if s := sk.state.Load(); s.mode != modeOS || s.trigger != never {
			t.Fatalf("%+v: %+v", c.v, *s)
		}
		info := sk.info()
		if info.Source != SourceOS || info.Fallback != c.why || info.FallbackClocksource != c.name || info.ClocksourceErr != nil || sk.counterRead.Load() {
			t.Errorf("%+v: %+v", c.v, info)
		}
	}
}

// A program that only reads the wall tier ends the wait too, and wall
// readings are the system clock's meanwhile.
func TestWallReadersRetryTheVerdict(t *testing.T) {
	sk := newSimKeeper(t, 0)
	sk.sim.with(func(w *world) { w.verdict = emfile })
	for i := 0; i < 2000; i++ {
		sk.sim.advance(1_000_000)
		u := sk.unixNano()
		var real uint64
		sk.sim.with(func(w *world) { real = w.realAt(w.tau) })
		if d := absDiff(u, real); d >= 10_000 {
			t.Fatalf("step %d: %d ns off the system clock", i, d)
		}
		if i == 500 {
			if sk.state.Load().mode != modeOS {
				t.Fatal("the counter without a verdict")
			}
			sk.sim.with(func(w *world) { w.verdict = named("tsc") })
		}
	}
	if sk.state.Load().mode != modeCounter {
		t.Fatal("wall readers did not end the wait")
	}
}
