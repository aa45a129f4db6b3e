//go:build linux && (amd64 || 386)

package fastnow

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The clocksource file is kept open; when its descriptor is closed behind
// fastnow's back (daemons close every descriptor they did not open) and the
// number reused for another file, the next check reopens the file and
// leaves the other file's descriptor alone.
func TestClocksourceFileSurvivesClosedDescriptors(t *testing.T) {
	var f clocksourceFile
	kernel := f.read()
	if kernel.kind != verdictNamed {
		t.Skipf("the clocksource file cannot be read here: %+v", kernel)
	}
	defer func() {
		if f.open {
			syscall.Close(f.fd)
		}
	}()
	junk := filepath.Join(t.TempDir(), "junk")
	// A pid file's text looks like a clocksource name: only the file's
	// identity tells them apart (issue 19 item 2).
	for _, content := range []string{"Hello world\n", "\x7fELF\x02", "7905\n", "hpet\n", "tsc\n"} {
		if err := os.WriteFile(junk, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		// A daemon closes fastnow's descriptor and the number is reused for
		// another file (dup2 does both at once).
		tmp, err := syscall.Open(junk, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		other := f.fd
		if err := syscall.Dup2(tmp, other); err != nil {
			t.Fatal(err)
		}
		syscall.Close(tmp)
		// Another file's text is never the verdict, except that one that
		// reads as the counter's name changes nothing, and is found out
		// within verifyEvery reads.
		for i := 0; i < verifyEvery; i++ {
			v := f.read()
			if content == kernelCounterName+"\n" && v == (verdict{kind: verdictNamed, name: kernelCounterName}) {
				continue
			}
			if v != kernel {
				t.Fatalf("after the descriptor was reused for a file holding %q: %+v", content, v)
			}
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(other, &st); err != nil {
			t.Fatalf("fastnow closed a descriptor that was not its own: %v", err)
		}
		syscall.Close(other)
		if f.fd == other {
			t.Fatal("still reading the other file")
		}
	}
	// A descriptor closed and not reused: reopened.
	syscall.Close(f.fd)
	if v := f.read(); v.kind != verdictNamed {
		t.Fatalf("after a close: %+v", v)
	}
}

// Demotion with the real kernel interface, in a private mount namespace:
// the kernel's verdict changes to another clocksource (a tmpfs over sysfs
// says "hpet"; the descriptor fastnow keeps is closed as a daemon would,
// so it reopens the path), and the clocks move to the OS clock within the
// check period, without a reading stepping back.
func TestDemotionFromTheClocksourceFile(t *testing.T) {
	if kernelCounterName == "" || forcedTimePackage {
		t.Skip("the kernel's verdict is checked on Linux x86 only, and not with the fastnow_time tag")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("needs unshare(1):", err)
	}
	out, ok := runChild(t, "TestChildDemotion", nil, "unshare", "-m")
	if ok {
		return
	}
	if !strings.Contains(out, "=== RUN") {
		t.Skipf("cannot make a private mount namespace here: %s", strings.TrimSpace(out))
	}
	t.Fatalf("child:\n%s", out)
}

// readOrderedWhile reads OrderedNanotime in bursts, as a busy program
// would (so readers make the state updates), while more() holds and until
// deadline, failing the test if a reading is below the one before (last at
// first); it returns the last reading.
func readOrderedWhile(t *testing.T, last int64, deadline time.Time, more func() bool) int64 {
	t.Helper()
	for more() && time.Now().Before(deadline) {
		for i := 0; i < 1000; i++ {
			v := OrderedNanotime()
			if v < last {
				t.Fatalf("stepped back %d ns", last-v)
			}
			last = v
		}
		time.Sleep(time.Millisecond)
	}
	return last
}

// askingSource is more, with Source asked once a second, as a program that
// watches it does: readers read the kernel's verdict only where a reading
// showed cause, Source when a check is due.
func askingSource(more func() bool) func() bool {
	asked := time.Now()
	return func() bool {
		if time.Since(asked) >= time.Second {
			asked = time.Now()
			_ = Source()
		}
		return more()
	}
}

func TestChildDemotion(t *testing.T) {
	inChild(t)
	if info := Source(); info.Source != SourceCounter {
		t.Skipf("the counter is not in use here: %+v", info)
	}
	const dir = "/sys/devices/system/clocksource/clocksource0"
	if err := syscall.Mount("none", dir, "tmpfs", 0, ""); err != nil {
		t.Skipf("cannot mount over %s: %v", dir, err)
	}
	if err := os.WriteFile(dir+"/current_clocksource", []byte("hpet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	proc.mu.Lock()
	syscall.Close(theMachine.cs.fd) // a daemon closes every descriptor
	proc.mu.Unlock()
	a := bracket(OrderedNanotime)
	last := readOrderedWhile(t, a.v, time.Now().Add(3*time.Second), askingSource(func() bool {
		return proc.state.Load().mode == modeCounter
	}))
	b := bracket(OrderedNanotime)
	if b.v < last {
		t.Fatalf("stepped back %d ns", last-b.v)
	}
	info := Source()
	if info.Source != SourceOS || (info.Fallback != FallbackKernelClocksource || info.FallbackClocksource != "hpet") || info.DemotedAt.IsZero() {
		t.Fatalf("not demoted within the check period: %+v", info)
	}
	checkInterval(t, "an interval across the switch", a, b, 50*time.Microsecond)
	t.Logf("demoted: %s", info)
}

// The daemon pattern, whole (issue 19 item 2): the program closes the
// descriptor fastnow keeps (daemons close every one they did not open) and
// opens a read-write pid file, which gets the number, and writes its pid.
// fastnow's next checks must not take "7905" for the kernel's clocksource
// and drop the counter for good; they reopen the file, and leave the pid
// file's descriptor open and its text as it was.
func TestReusedDescriptorKeepsTheCounter(t *testing.T) {
	if kernelCounterName == "" || forcedTimePackage {
		t.Skip("the kernel's verdict is checked on Linux x86 only, and not with the fastnow_time tag")
	}
	pidFile := filepath.Join(t.TempDir(), "daemon.pid")
	if out, ok := runChild(t, "TestChildReusedDescriptor", []string{"FASTNOW_TEST_PIDFILE=" + pidFile}); !ok {
		t.Fatalf("child:\n%s", out)
	}
}

func TestChildReusedDescriptor(t *testing.T) {
	inChild(t)
	StopUpkeep()
	if info := Source(); info.Source != SourceCounter || info.Clocksource != kernelCounterName {
		t.Skipf("the counter is not in use here: %+v", info)
	}
	proc.mu.Lock()
	ours := theMachine.cs.fd
	syscall.Close(ours)
	pid, err := syscall.Open(os.Getenv("FASTNOW_TEST_PIDFILE"), syscall.O_RDWR|syscall.O_CREAT|syscall.O_TRUNC|syscall.O_CLOEXEC, 0o644)
	if err == nil && pid != ours {
		// Another number was free below it: the daemon's loop would have
		// closed that one too.
		err = syscall.Dup2(pid, ours)
		syscall.Close(pid)
		pid = ours
	}
	proc.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	const text = "7905\n"
	if _, err := syscall.Pwrite(pid, []byte(text), 0); err != nil {
		t.Fatal(err)
	}
	// Source re-checks the kernel's verdict once a second is past.
	readOrderedWhile(t, OrderedNanotime(), time.Now().Add(2*time.Duration(checkPeriodNs)+200*time.Millisecond),
		askingSource(func() bool { return true }))
	proc.mu.Lock()
	reopened, again := theMachine.cs.fd, proc.k.nextCheckMono
	proc.mu.Unlock()
	if info := Source(); info.Source != SourceCounter || info.Fallback != FallbackNone || !info.DemotedAt.IsZero() || info.Clocksource != kernelCounterName {
		t.Fatalf("a pid file on the descriptor's number was taken for the kernel's verdict: %+v", info)
	}
	if again <= uint64(checkPeriodNs) {
		t.Fatalf("the kernel's verdict was not read again (next check at %d)", again)
	}
	if reopened == pid {
		t.Fatal("still reading the pid file's descriptor")
	}
	buf := make([]byte, 16)
	n, err := syscall.Pread(pid, buf, 0)
	if err != nil || string(buf[:n]) != text {
		t.Fatalf("the pid file's descriptor was closed or changed: %q, %v", buf[:n], err)
	}
}

// exhaustDescriptors makes the process unable to open a descriptor, as when
// it has as many open as RLIMIT_NOFILE allows: the limit becomes the lowest
// free number. It returns the limit before, to restore.
func exhaustDescriptors(t *testing.T) syscall.Rlimit {
	t.Helper()
	startPoller()
	var before syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &before); err != nil {
		t.Fatal(err)
	}
	lowest, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Close(lowest)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: uint64(lowest), Max: before.Max}); err != nil {
		t.Fatal(err)
	}
	if _, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0); err != syscall.EMFILE {
		t.Fatalf("not out of descriptors: %v", err)
	}
	return before
}

// bracketed is a reading taken between two time.Now readings: a busy
// machine may deschedule the goroutine between two reads for longer than a
// test's bound, and the bracket then widens instead of failing the test.
type bracketed struct {
	v             int64
	before, after time.Time
}

func bracket(read func() int64) bracketed {
	before := time.Now()
	v := read()
	return bracketed{v, before, time.Now()}
}

// checkInterval fails t unless b.v − a.v is within bound of the interval
// time.Now measured between the two readings.
func checkInterval(t *testing.T, what string, a, b bracketed, bound time.Duration) {
	t.Helper()
	d := time.Duration(b.v - a.v)
	least, most := b.before.Sub(a.after), b.after.Sub(a.before)
	if d < least-bound || d > most+bound {
		t.Errorf("%s is %v, time.Now's [%v, %v] (± %v)", what, d, least, most, bound)
	}
}

// startPoller makes the runtime open its poller's two descriptors now. It
// opens them at the first timer of the process — a test's sleep, or the
// garbage collector's scavenger whenever it first rests, which comes late on
// a loaded machine — and dies if it cannot (a server out of descriptors has
// them already). A test that numbers descriptors starts it first, or the
// poller may take the numbers it freed.
func startPoller() {
	time.Sleep(time.Millisecond)
}

// tscOrSkip skips a child test unless the kernel's clocksource is tsc (the
// counter chosen because the kernel vouches for it).
func tscOrSkip(t *testing.T) {
	t.Helper()
	var f clocksourceFile
	v := f.read()
	if f.open {
		syscall.Close(f.fd)
	}
	if v.kind != verdictNamed || v.name != kernelCounterName {
		t.Skipf("the kernel's clocksource is not %s here: %+v", kernelCounterName, v)
	}
}

// A process that starts out of descriptors (a burst of connections) cannot
// open the clocksource file at its first reading. It reads the OS clock
// meanwhile, Source says the counter awaits the kernel's verdict and why,
// and the counter is used once descriptors are free again. (Before, the OS
// clock for good, blaming a sandbox.)
func TestOutOfDescriptorsAtTheFirstReading(t *testing.T) {
	if kernelCounterName == "" || forcedTimePackage {
		t.Skip("the kernel's verdict is checked on Linux x86 only, and not with the fastnow_time tag")
	}
	if out, ok := runChild(t, "TestChildOutOfDescriptorsFirst", nil); !ok {
		t.Fatalf("child:\n%s", out)
	}
}

func TestChildOutOfDescriptorsFirst(t *testing.T) {
	inChild(t)
	tscOrSkip(t)
	limit := exhaustDescriptors(t)
	a := bracket(Nanotime)
	info := Source()
	if info.Source != SourceOS || info.Fallback != FallbackNone || !errors.Is(info.ClocksourceErr, syscall.EMFILE) || info.ClocksourceLastRead != 0 {
		t.Fatalf("%+v", info)
	}
	if text := info.String(); !strings.Contains(text, "awaits the kernel's verdict") || !strings.Contains(text, "too many open files (EMFILE)") || strings.Contains(text, "fallback") {
		t.Fatal(text)
	}
	// A while out of descriptors: tried again, failing again.
	readOrderedWhile(t, OrderedNanotime(), time.Now().Add(50*time.Millisecond), func() bool { return true })
	if info := Source(); info.Source != SourceOS || info.ClocksourceFailures < 2 {
		t.Fatalf("not tried again: %+v", info)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &limit); err != nil {
		t.Fatal(err)
	}
	readOrderedWhile(t, OrderedNanotime(), time.Now().Add(3*time.Second), func() bool { return proc.state.Load().mode != modeCounter })
	info = Source()
	if info.Source != SourceCounter || info.Fallback != FallbackNone || info.ClocksourceErr != nil || info.Clocksource != kernelCounterName {
		t.Fatalf("the counter is not used once descriptors are free: %+v", info)
	}
	proc.mu.Lock()
	open := theMachine.cs.open
	proc.mu.Unlock()
	if !open {
		t.Error("the clocksource file is not kept open")
	}
	checkInterval(t, "an interval across it all", a, bracket(Nanotime), time.Millisecond)
	t.Log(info)
}

// A daemon closes fastnow's descriptor and is out of descriptors when the
// re-check must open the file again: "closed", the number stays free but
// above the limit (the pread gives EBADF); "reused", a file of the
// program's got the number (its text is not the kernel's); "upkeep", the
// same with the upkeep goroutine making the checks. The counter stays in
// use, Source says why the file could not be read, and once descriptors
// are free the file is opened again and followed. (Before, the counter was
// dropped for good, with a text that said both "could not be read" and
// "kernel clocksource tsc".)
func TestOutOfDescriptorsAtARecheck(t *testing.T) {
	if kernelCounterName == "" || forcedTimePackage {
		t.Skip("the kernel's verdict is checked on Linux x86 only, and not with the fastnow_time tag")
	}
	for _, mode := range []string{"closed", "reused", "upkeep"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			if out, ok := runChild(t, "TestChildOutOfDescriptorsRecheck", []string{"FASTNOW_TEST_MODE=" + mode}); !ok {
				t.Fatalf("child:\n%s", out)
			}
		})
	}
}

func TestChildOutOfDescriptorsRecheck(t *testing.T) {
	inChild(t)
	tscOrSkip(t)
	mode := os.Getenv("FASTNOW_TEST_MODE")
	StopUpkeep()
	startPoller()
	// Descriptors below the one fastnow takes, so that a limit can be set
	// below it, or just above it.
	for i := 0; i < 4; i++ {
		if _, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0); err != nil {
			t.Fatal(err)
		}
	}
	if info := Source(); info.Source != SourceCounter {
		t.Skipf("the counter is not in use here: %+v", info)
	}
	if mode == "upkeep" {
		if err := StartUpkeep(time.Millisecond); err != nil {
			t.Fatal(err)
		}
		defer StopUpkeep()
		// Its goroutine opens its clock-set watch before its first refresh:
		// after it, no descriptor of fastnow's comes to take the numbers
		// this test frees.
		if !recentAdvancesPast(RecentNanotime()) {
			t.Fatal("the upkeep does not refresh")
		}
	}
	proc.mu.Lock()
	held := theMachine.cs.fd
	syscall.Close(held) // a daemon closes every descriptor it did not open
	proc.mu.Unlock()
	reused := -1
	if mode != "closed" {
		fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil || fd != held {
			t.Fatalf("the lowest free number is not fastnow's %d: %d, %v", held, fd, err)
		}
		reused = fd
	}
	limit := exhaustDescriptors(t)
	if mode == "closed" {
		var now syscall.Rlimit
		if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &now) != nil || now.Cur > uint64(held) {
			t.Fatalf("fastnow's number %d is not above the limit %d", held, now.Cur)
		}
	}
	start := time.Now()
	// Source (or the upkeep) re-checks the kernel's verdict every second:
	// until two re-checks failed, or four seconds.
	readOrderedWhile(t, OrderedNanotime(), start.Add(4*time.Duration(checkPeriodNs)), func() bool {
		return Source().ClocksourceFailures < 2
	})
	info := Source()
	if info.Source != SourceCounter || info.Fallback != FallbackNone || !info.DemotedAt.IsZero() || info.Clocksource != kernelCounterName {
		t.Fatalf("out of descriptors at a re-check: %+v", info)
	}
	if !errors.Is(info.ClocksourceErr, syscall.EMFILE) || info.ClocksourceFailures < 2 || info.ClocksourceLastRead < time.Since(start)/2 {
		t.Fatalf("the failure is not reported: %v, %d, %v", info.ClocksourceErr, info.ClocksourceFailures, info.ClocksourceLastRead)
	}
	if text := info.String(); !strings.Contains(text, "too many open files (EMFILE)") || !strings.Contains(text, "stays in use") || strings.Contains(text, "fallback") {
		t.Fatal(text)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &limit); err != nil {
		t.Fatal(err)
	}
	readOrderedWhile(t, OrderedNanotime(), time.Now().Add(2*time.Duration(checkPeriodNs)+200*time.Millisecond), func() bool {
		return Source().ClocksourceErr != nil
	})
	info = Source()
	if info.Source != SourceCounter || info.ClocksourceErr != nil || info.Clocksource != kernelCounterName {
		t.Fatalf("descriptors free again: %+v", info)
	}
	proc.mu.Lock()
	open, fd := theMachine.cs.open, theMachine.cs.fd
	proc.mu.Unlock()
	if !open || fd == reused {
		t.Fatalf("the file is not open again (open %v, descriptor %d)", open, fd)
	}
	if reused >= 0 {
		var st syscall.Stat_t
		if err := syscall.Fstat(reused, &st); err != nil {
			t.Fatalf("fastnow closed the program's descriptor: %v", err)
		}
	}
	t.Log(info)
}
