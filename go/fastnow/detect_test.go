package fastnow

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestDecideRules(t *testing.T) {
	good := probe{counter: "c", invariant: true}
	na := verdict{kind: verdictNotApplicable}
	tsc := verdict{kind: verdictNamed, name: "tsc"}
	kvm := verdict{kind: verdictNamed, name: "kvm-clock"}
	unreadable := verdict{kind: verdictUnreadable}
	kvmReason := reason{FallbackKernelClocksource, "kvm-clock"}
	for _, c := range []struct {
		p        probe
		v        verdict
		env      EnvOverride
		kname    string
		fallback reason
	}{
		{good, tsc, EnvUnset, "tsc", reason{}},
		{good, na, EnvUnset, "", reason{}},
		{good, na, EnvInvalid, "", reason{}},
		{good, na, EnvOS, "", reason{why: FallbackForced}},
		{probe{counter: "c"}, na, EnvUnset, "", reason{why: FallbackNotInvariant}},
		{probe{counter: "c"}, na, EnvCounter, "", reason{}},
		{probe{counter: "c", invariant: true, disabled: true}, na, EnvCounter, "", reason{why: FallbackDisabled}},
		{probe{}, na, EnvCounter, "", reason{why: FallbackNoCounter}},
		{good, kvm, EnvUnset, "tsc", kvmReason},
		{good, kvm, EnvCounter, "tsc", reason{}},
		// Unknown is not verified: a verdict that cannot be read falls
		// back, unless the caller forces the counter.
		{good, unreadable, EnvUnset, "tsc", reason{why: FallbackClocksourceUnknown}},
		{good, unreadable, EnvCounter, "tsc", reason{}},
		{good, unreadable, EnvUnset, "", reason{}},
	} {
		if got := decide(c.p, c.v, c.env, c.kname); got != c.fallback {
			t.Errorf("decide(%+v, %+v, %q, %q) = %q, want %q", c.p, c.v, c.env, c.kname, got, c.fallback)
		}
	}
	// The run-time re-check applies only when the kernel vouched.
	d := decision{probe: good, kernelName: "tsc"}
	if d.recheck(kvm) != kvmReason || d.recheck(unreadable) != (reason{why: FallbackClocksourceUnknown}) || d.recheck(tsc) != (reason{}) {
		t.Error("recheck with the kernel's word")
	}
	d.env = EnvCounter
	if d.recheck(kvm) != (reason{}) {
		t.Error("FASTNOW_CLOCK=counter skips the re-check")
	}
}

// FASTNOW_CLOCK against the shared vectors (spec/vectors/env.json): ASCII
// white space and ASCII case only, byte by byte (issue 9 item 12: "os\v",
// a no-break space, an em space were read differently by the two languages).
func TestEnvVectors(t *testing.T) {
	raw, err := os.ReadFile("../../spec/vectors/env.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Cases []struct {
			ValueHex string `json:"value_hex"`
			Outcome  string `json:"outcome"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	want := map[string]EnvOverride{"unset": EnvUnset, "counter": EnvCounter, "os": EnvOS, "invalid": EnvInvalid}
	for _, c := range v.Cases {
		b, err := hex.DecodeString(c.ValueHex)
		if err != nil {
			t.Fatal(err)
		}
		w, ok := want[c.Outcome]
		if !ok {
			t.Fatalf("unknown outcome %q", c.Outcome)
		}
		if got := parseEnv(string(b)); got != w {
			t.Errorf("parseEnv(%q) = %q, want %q", b, got, w)
		}
	}
	if len(v.Cases) < 20 {
		t.Fatalf("only %d cases", len(v.Cases))
	}
}

func TestClocksourceNamesArePlausible(t *testing.T) {
	for in, want := range map[string]bool{
		"tsc\n": true, "kvm-clock\n": true, "arch_sys_counter\n": true, "hpet": true,
		"": false, "\n": false, "\x7fELF\x02\x01": false, "Hello world\n": false,
		"a-very-long-clocksource-name-indeed\n": false,
	} {
		if got := plausibleClocksource([]byte(in)); got != want {
			t.Errorf("plausibleClocksource(%q) = %v", in, got)
		}
	}
}

// runChild re-runs this test binary to run one test in a fresh process
// (detection runs once per process), with extra environment and, when
// wrap is set, under a wrapper command (the binary becomes its "$0").
// Under an emulator, FASTNOW_TEST_RUNNER names it. It returns the output
// and whether the child test passed.
func runChild(t *testing.T, test string, env []string, wrap ...string) (string, bool) {
	t.Helper()
	args := []string{os.Args[0], "-test.run", "^" + test + "$", "-test.v"}
	if runner := os.Getenv("FASTNOW_TEST_RUNNER"); runner != "" {
		args = append([]string{runner}, args...)
	}
	args = append(wrap, args...)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(append(os.Environ(), "FASTNOW_TEST_CHILD=1"), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err == nil && strings.Contains(string(out), "--- PASS: "+test)
}

func inChild(t *testing.T) {
	if os.Getenv("FASTNOW_TEST_CHILD") == "" {
		t.Skip("runs in a child process, started by another test")
	}
}

func TestOverrides(t *testing.T) {
	if runtime.GOARCH == "wasm" {
		t.Skip("this target cannot start processes")
	}
	if forcedTimePackage {
		t.Skip("with the fastnow_time tag every read goes through package time, whatever FASTNOW_CLOCK says")
	}
	for test, clock := range map[string]string{"TestChildOS": "os", "TestChildInvalid": "rdtsc please", "TestChildCounter": "counter"} {
		if out, ok := runChild(t, test, []string{"FASTNOW_CLOCK=" + clock}); !ok {
			t.Errorf("child %s with FASTNOW_CLOCK=%q:\n%s", test, clock, out)
		}
	}
}

// The FASTNOW_CLOCK cases in this process, on every target (wasm too,
// where TestOverrides cannot start a process): a fresh timekeeper on this
// machine's clocks, detecting with each value of the variable, then read.
func TestOverridesInProcess(t *testing.T) {
	if forcedTimePackage {
		t.Skip("with the fastnow_time tag every read goes through package time, whatever FASTNOW_CLOCK says")
	}
	hasCounter := probeCounter().counter != ""
	for _, c := range []struct {
		value    string
		env      EnvOverride
		fallback Fallback
		counter  bool // the counter is chosen
	}{
		{"os", EnvOS, FallbackForced, false},
		{" OS\n", EnvOS, FallbackForced, false},
		{"counter", EnvCounter, FallbackNone, hasCounter},
		{"rdtsc please", EnvInvalid, FallbackNone, false},
	} {
		t.Setenv("FASTNOW_CLOCK", c.value)
		tk := &timekeeper{clocks: &machine{}}
		tk.finishWarmUp()
		first := tk.read(false)
		sleepAtLeast(time.Millisecond) // by the OS clock: time.Sleep may end early by it on Windows
		second := tk.read(true)
		d := tk.k.decision
		if d.env != c.env {
			t.Errorf("FASTNOW_CLOCK=%q: read as %q, want %q", c.value, d.env, c.env)
		}
		if c.env == EnvInvalid {
			if d.raw != c.value {
				t.Errorf("FASTNOW_CLOCK=%q: raw value %q", c.value, d.raw)
			}
			continue // the default decision: this machine's
		}
		if !hasCounter && c.env != EnvOS {
			c.fallback = FallbackNoCounter
		}
		if d.fallback.why != c.fallback && !(c.env == EnvCounter && d.fallback.why == FallbackDisabled) {
			t.Errorf("FASTNOW_CLOCK=%q: fallback %q, want %q", c.value, d.fallback, c.fallback)
		}
		if chosen := tk.state.Load().mode == modeCounter; chosen != (c.counter && d.fallback.why == FallbackNone) {
			t.Errorf("FASTNOW_CLOCK=%q: counter in use %v", c.value, chosen)
		}
		if second < first+uint64(time.Millisecond) {
			t.Errorf("FASTNOW_CLOCK=%q: readings %d then %d, a millisecond apart", c.value, first, second)
		}
	}
}

func TestChildOS(t *testing.T) {
	inChild(t)
	a := Now()
	info := Source()
	if info.Source != SourceOS || info.Fallback != FallbackForced || info.EnvOverride != EnvOS || Supported() {
		t.Fatalf("%+v", info)
	}
	// Until the OS clock says 2 ms have passed: under Wine a sleep can end
	// early by it.
	sleepAtLeast(2 * time.Millisecond)
	if e := a.Elapsed(); e < 2*time.Millisecond || MonotonicNanotime() < a.Nanotime() || OrderedNanotime() < a.Nanotime() {
		t.Fatalf("OS fallback API: %v elapsed over a 2 ms sleep", e)
	}
	// Within a millisecond of the system clock read before and after it
	// (a thread preempted between the reads widens the bracket instead of
	// failing the test).
	before := systemWallNow()
	u := UnixNano()
	after := systemWallNow()
	if u < before-int64(time.Millisecond) || u > after+int64(time.Millisecond) {
		t.Fatalf("UnixNano %d outside [%d, %d] ± 1 ms", u, before, after)
	}
	// The ordered fast path reads the counter before the state once this
	// is set: on a source other than the counter it must never be.
	if proc.counterRead.Load() {
		t.Fatal("counterRead set although the counter was never the source")
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
	if info.Counter != "" && info.Fallback != FallbackDisabled && info.Source != SourceCounter {
		t.Fatalf("counter override not applied: %+v", info)
	}
}

// unshareMount runs a child test in a private mount namespace with a tmpfs
// over the kernel's clocksource directory, so that it cannot read
// current_clocksource; it skips, saying why, where that cannot be done.
func unshareMount(t *testing.T, test string, env ...string) {
	t.Helper()
	if kernelCounterName == "" || forcedTimePackage {
		t.Skip("the kernel's verdict is checked on Linux x86 only, and not with the fastnow_time tag")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("needs unshare(1):", err)
	}
	const dir = "/sys/devices/system/clocksource/clocksource0"
	wrap := []string{"unshare", "-m", "sh", "-c", `mount -t tmpfs none ` + dir + ` && exec "$0" "$@"`}
	out, ok := runChild(t, test, env, wrap...)
	if ok {
		return
	}
	if !strings.Contains(out, "=== RUN") {
		t.Skipf("cannot make a private mount namespace here (root and unshare -m needed): %s", strings.TrimSpace(out))
	}
	t.Fatalf("child %s:\n%s", test, out)
}

// Issue 9 item 9: a clocksource file that cannot be read means the OS
// clock: unknown is not verified.
func TestClocksourceUnreadableFallsBack(t *testing.T) {
	unshareMount(t, "TestChildClocksourceUnreadable")
}

func TestChildClocksourceUnreadable(t *testing.T) {
	inChild(t)
	info := Source()
	if info.Counter == "" || info.Fallback == FallbackDisabled {
		t.Skipf("no usable counter here: %+v", info)
	}
	if info.Source != SourceOS || info.Fallback != FallbackClocksourceUnknown || Supported() {
		t.Fatalf("the counter is used although the kernel's verdict could not be read: %+v", info)
	}
	a := Nanotime()
	time.Sleep(time.Millisecond)
	if Nanotime()-a < int64(time.Millisecond) {
		t.Fatal("the OS clock does not advance")
	}
}

// ... but FASTNOW_CLOCK=counter uses the counter anyway.
func TestClocksourceUnreadableWithOverride(t *testing.T) {
	unshareMount(t, "TestChildClocksourceUnreadableOverride", "FASTNOW_CLOCK=counter")
}

func TestChildClocksourceUnreadableOverride(t *testing.T) {
	inChild(t)
	if info := Source(); info.Counter != "" && info.Fallback != FallbackDisabled && info.Source != SourceCounter {
		t.Fatalf("%+v", info)
	}
}
