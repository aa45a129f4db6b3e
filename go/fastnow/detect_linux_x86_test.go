//go:build linux && (amd64 || 386)

package fastnow

import (
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
	a, ta := OrderedNanotime(), time.Now()
	last := readOrderedWhile(t, a, time.Now().Add(3*time.Second), func() bool {
		return proc.state.Load().mode == modeCounter
	})
	b, tb := OrderedNanotime(), time.Now()
	if b < last {
		t.Fatalf("stepped back %d ns", last-b)
	}
	info := Source()
	if info.Source != SourceOS || (info.Fallback != FallbackKernelClocksource || info.FallbackClocksource != "hpet") || info.DemotedAt.IsZero() {
		t.Fatalf("not demoted within the check period: %+v", info)
	}
	if d := time.Duration(b-a) - tb.Sub(ta); d > 50*time.Microsecond || d < -50*time.Microsecond {
		t.Errorf("an interval across the switch is %v off time.Since's", d)
	}
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
	// Readers re-check the kernel's verdict every second.
	readOrderedWhile(t, OrderedNanotime(), time.Now().Add(2*time.Duration(checkPeriodNs)+200*time.Millisecond),
		func() bool { return true })
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
