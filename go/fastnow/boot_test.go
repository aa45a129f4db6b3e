package fastnow

import (
	"math"
	"math/rand"
	"runtime"
	"testing"
	"testing/quick"
	"time"

	"github.com/fastnow/fastnow/go/internal/osclock"
)

// readBoot is a boot reading through the clocks interface: BootNanotime's.
func (tk *timekeeper) readBoot() uint64 { return tk.readAs(clockBoot, false) }

// bootTruth is the simulated boot clock now, on mono's base: where a boot
// reading should be (the first state's readings are the monotonic clock).
func (sk *simKeeper) bootTruth() (v uint64) {
	sk.sim.with(func(w *world) { v = w.bootAt(w.tau) })
	return v
}

func onTheCounter(t *testing.T) *simKeeper {
	sk := newSimKeeper(t, 0)
	sk.settle(300, 10_000_000, false)
	if sk.state.Load().mode != modeCounter {
		t.Fatal("not on the counter")
	}
	return sk
}

// A resume is followed at the first update after it: CLOCK_BOOTTIME jumps
// by 30 s while CLOCK_MONOTONIC does not; once one state was published
// since, boot readings are 30 s further ahead of the precise ones, they
// never step back, and the precise readings go on as CLOCK_MONOTONIC does —
// whatever the counter did: stopped (it resumes where it was), counted on
// (an invariant TSC in suspend-to-idle), or restarted near zero (a TSC reset
// by suspend-to-RAM). A counter that counted the suspend may have the
// precise readings stand still for at most the piece it was in (it counted
// part of the suspend before anyone could tell), never count the suspend.
// (Before re-basing, Nanotime moved 30 s forward with a counting counter,
// and went back by the counter's value with a reset one.)
func TestAResumeIsFollowedWithinOneUpdate(t *testing.T) {
	const n = 30 * sec
	for _, c := range []suspendCounter{{kind: counterStopped}, {kind: counterCounting}, {kind: counterReset, resetTo: 1_000_000}} {
		sk := onTheCounter(t)
		i0, b0 := sk.read(false), sk.readBoot()
		if d := absDiff(b0, sk.bootTruth()); d >= 1_000 {
			t.Fatalf("%v: a boot reading is %d ns off the boot clock", c, d)
		}
		mono0 := sk.sim.mono()
		before := sk.state.Load()
		sk.sim.with(func(w *world) { w.suspendWith(n, c) })
		last, lastI := sk.readBoot(), sk.read(false)
		if last < b0 || lastI < i0 {
			t.Fatalf("%v: stepped back at the resume", c)
		}
		updated := false
		for i := 0; i < 200 && !updated; i++ {
			sk.sim.advance(10_000_000)
			b, v := sk.readBoot(), sk.read(false)
			if b < last || v < lastI {
				t.Fatalf("%v: stepped back: boot %d < %d, or %d < %d", c, b, last, v, lastI)
			}
			last, lastI = b, v
			updated = sk.state.Load() != before
		}
		if !updated {
			t.Fatalf("%v: no update within 2 s of reading", c)
		}
		// Right after: never more than one piece (half a second here, the
		// kernel's verdict being followed, and its grace) ahead.
		i1, b1 := sk.read(false), sk.readBoot()
		mono := sk.sim.mono() - mono0
		precise := i1 - i0
		if precise+100_000 < mono || precise > mono+readerPeriodNs+maxGraceNs {
			t.Errorf("%v: Nanotime moved %d, CLOCK_MONOTONIC %d", c, precise, mono)
		}
		if d := absDiff(b1-b0, mono+n); d >= 100_000+saturatingSub(precise, mono) {
			t.Errorf("%v: BootNanotime moved %d, want %d", c, b1-b0, mono+n)
		}
		// A second later, in step again: the precise readings moved as
		// CLOCK_MONOTONIC did, the boot readings as CLOCK_BOOTTIME.
		for i := 0; i < 100; i++ {
			sk.sim.advance(10_000_000)
			b, v := sk.readBoot(), sk.read(false)
			if b < last || v < lastI {
				t.Fatalf("%v: stepped back", c)
			}
			last, lastI = b, v
		}
		if mono := sk.sim.mono() - mono0; absDiff(lastI-i0, mono) >= 100_000 {
			t.Errorf("%v: Nanotime moved %d, CLOCK_MONOTONIC %d", c, lastI-i0, mono)
		}
		if d := absDiff(last, sk.bootTruth()); d >= 100_000 {
			t.Errorf("%v: BootNanotime %d ns off the boot clock", c, d)
		}
		if info := sk.info(); info.Source != SourceCounter {
			t.Errorf("%v: %v", c, info)
		}
	}
}

// With the upkeep running, the kernel's wake-up at resume (its clock-set
// timerfd fires then) makes its turn update at once.
func TestTheUpkeepFollowsAResumeWhenWoken(t *testing.T) {
	sk := onTheCounter(t)
	sk.setUpkeep(true)
	sk.upkeepTurn(false)
	b0 := sk.readBoot()
	sk.sim.with(func(w *world) { w.suspend(30*sec, false) })
	sk.upkeepTurn(true)
	if b1 := sk.readBoot(); b1-b0 < 30*sec || absDiff(b1, sk.bootTruth()) >= 100_000 {
		t.Fatalf("moved %d ns; %d ns off the boot clock", b1-b0, absDiff(b1, sk.bootTruth()))
	}
}

// Before the first state and across the warm-up, boot readings start at the
// boot clock (the time suspended before the process started included) and
// never step back while the counter takes over.
func TestBootReadingsFromTheFirstOn(t *testing.T) {
	sk := newSimKeeper(t, 0)
	sk.sim.with(func(w *world) { w.suspended = 3_600 * sec })
	last := sk.readBoot()
	if d := absDiff(last, sk.bootTruth()); d >= 1_000 {
		t.Fatalf("the first boot reading is %d ns off", d)
	}
	for i := 0; i < 300; i++ {
		sk.sim.advance(100_000)
		b := sk.readBoot()
		if b < last {
			t.Fatalf("stepped back %d ns", last-b)
		}
		last = b
	}
	if sk.state.Load().mode != modeCounter || absDiff(last, sk.bootTruth()) >= 10_000 {
		t.Fatalf("mode %d, %d ns off", sk.state.Load().mode, absDiff(last, sk.bootTruth()))
	}
}

// On the OS clock for good boot readers read the boot clock themselves: a
// resume shows at the next reading. A demotion from the counter never steps
// boot readings back, and a suspend not yet measured is counted.
func TestOnTheOSClockBootReadingsReadTheBootClock(t *testing.T) {
	sk := newSimKeeper(t, 0)
	sk.sim.with(func(w *world) { w.verdict = verdict{kind: verdictNamed, name: "kvm-clock"} })
	b0 := sk.readBoot()
	if s := sk.state.Load(); s.mode != modeOS || s.trigger != never {
		t.Fatalf("not on the OS clock for good: %+v", *s)
	}
	sk.sim.with(func(w *world) { w.suspend(30*sec, false) })
	if b1 := sk.readBoot(); absDiff(b1-b0, 30*sec) >= 1_000 {
		t.Fatalf("moved %d", b1-b0)
	}

	sk = onTheCounter(t)
	sk.sim.with(func(w *world) { w.suspend(10*sec, false) })
	last := sk.readBoot()
	sk.sim.with(func(w *world) { w.verdict = verdict{kind: verdictNamed, name: "kvm-clock"} })
	_ = sk.info() // reads the kernel's verdict (readers do not)
	for i := 0; i < 300; i++ {
		sk.sim.advance(10_000_000)
		b := sk.readBoot()
		if b < last {
			t.Fatalf("stepped back %d ns", last-b)
		}
		last = b
	}
	if s := sk.state.Load(); s.mode != modeOS || s.trigger != never {
		t.Fatal("not demoted")
	}
	if d := absDiff(last, sk.bootTruth()); d >= 100_000 {
		t.Fatalf("%d ns off the boot clock", d)
	}
}

// The boot reader whose update completes a demotion (it arrives past the
// counter piece's end, and converts with the OS state it published) reads
// the boot clock: that state's boot offset is to the boot clock, not to the
// precise reading. (Before, it added the offset to the precise reading:
// that one reading lacked the time suspended, and stepped back by it.)
func TestTheBootReaderThatCompletesADemotionReadsTheBootClock(t *testing.T) {
	sk := onTheCounter(t)
	sk.sim.with(func(w *world) { w.suspend(10*sec, false) })
	last := sk.readBoot()
	sk.sim.with(func(w *world) { w.verdict = verdict{kind: verdictNamed, name: "kvm-clock"} })
	sk.mu.Lock()
	sk.checkKernel() // the piece in use runs out, then the OS clock
	end := sk.k.state.end
	sk.mu.Unlock()
	for sk.state.Load().mode == modeCounter {
		sk.sim.advance(sk.state.Load().line.NanosFor(end-min(sk.sim.counter(), end)) + 10_000)
		b := sk.readBoot()
		if b < last {
			t.Fatalf("stepped back %d ns", last-b)
		}
		if d := absDiff(b, sk.bootTruth()); d >= 100_000 {
			t.Fatalf("%d ns off the boot clock (mode %d)", d, sk.state.Load().mode)
		}
		last = b
	}
}

// Whatever the noise of the boot clock's reads, the suspends (counter
// stopped or counting), the rate changes and the upkeep: the published
// offset never decreases but where a re-base moved the precise readings
// forward, boot readings never step back, and after a last update without
// noise they are within a few microseconds of the boot clock, plus however
// far the precise timeline ran ahead of it meanwhile.
func TestTheBootOffsetIsLoweredOnlyByARebase(t *testing.T) {
	f := func(seed int64, noisy, upkeep bool) bool {
		rng := rand.New(rand.NewSource(seed))
		sk := onTheCounter(t)
		if noisy {
			sk.sim.with(func(w *world) { w.bootJitter = uint64(rng.Int63n(100_000)) })
		}
		sk.setUpkeep(upkeep)
		ahead := func() int64 { return int64(sk.read(false) - sk.bootTruth()) }
		least := ahead()
		offset, last, rebases := sk.state.Load().bootOffset, sk.readBoot(), sk.k.rebases
		for i := 0; i < 400; i++ {
			sk.sim.with(func(w *world) {
				w.tau += uint64(rng.Int63n(50_000_000)) + 1_000
				switch rng.Intn(40) {
				case 0:
					w.suspend(uint64(rng.Int63n(int64(100*sec)))+1_000, rng.Intn(2) == 0)
				case 1:
					w.setRate(rng.Int63n(400_001) - 200_000)
				}
			})
			if upkeep {
				sk.upkeepTurn(rng.Intn(4) == 0)
			}
			b := sk.readBoot()
			if b < last {
				t.Logf("seed %d: stepped back %d ns", seed, last-b)
				return false
			}
			last = b
			s := sk.state.Load()
			sk.mu.Lock()
			rebased := sk.k.rebases > rebases
			rebases = sk.k.rebases
			sk.mu.Unlock()
			if int64(s.bootOffset) < int64(offset) && !rebased {
				t.Logf("seed %d: lowered from %d to %d", seed, int64(offset), int64(s.bootOffset))
				return false
			}
			offset = s.bootOffset
			least = min(least, ahead())
		}
		sk.sim.with(func(w *world) { w.bootJitter = 0 })
		sk.forceUpdate()
		least = min(least, ahead())
		off := int64(sk.readBoot() - sk.bootTruth())
		if most := ahead() - least; off < -20_000 || off > most+20_000 {
			t.Logf("seed %d: %d ns off the boot clock; the precise timeline drifted %d ns", seed, off, most)
			return false
		}
		return true
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 64}); err != nil {
		t.Fatal(err)
	}
}

// The offset is compared as a signed number (a time namespace may put the
// boot clock behind the monotonic one), and the first offset agreed is
// never the "none yet" value.
func TestLaterOffsetIsSigned(t *testing.T) {
	f := func(a, b int64) bool {
		got := int64(laterOffset(uint64(a), uint64(b)))
		return got == max(a, b)
	}
	if err := quick.Check(f, nil); err != nil {
		t.Fatal(err)
	}
	if laterOffset(uint64(math.MaxInt64), 1<<63) != math.MaxInt64 {
		t.Fatal("-2^63 compared as unsigned")
	}
}

// The mock's suspend moves the boot clock and the Unix time, not the
// monotonic clock.
func TestManualClockSuspend(t *testing.T) {
	c := NewManualClock(time.Unix(1_700_000_000, 0))
	defer UseClock(c)()
	start, bootStart, unix := Now(), BootNow(), UnixNano()
	c.Advance(time.Second)
	c.Suspend(time.Minute)
	if got := start.Elapsed(); got != time.Second {
		t.Errorf("Now moved %v", got)
	}
	if got := bootStart.Elapsed(); got != time.Second+time.Minute {
		t.Errorf("BootNow moved %v", got)
	}
	if got := c.BootNow().Sub(bootStart); got != time.Second+time.Minute {
		t.Errorf("the clock's BootNow moved %v", got)
	}
	if got := time.Duration(UnixNano() - unix); got != time.Second+time.Minute {
		t.Errorf("UnixNano moved %v", got)
	}
	c.Suspend(math.MaxInt64)
	if BootNanotime() != math.MaxInt64 {
		t.Error("a suspend past the end did not saturate")
	}
	defer func() {
		if recover() == nil {
			t.Error("a negative suspend did not panic")
		}
	}()
	c.Suspend(-1)
}

func TestBootInstantArithmetic(t *testing.T) {
	f := func(a, b int64, d time.Duration) bool {
		i, j := BootInstantOf(a), BootInstantOf(b)
		return i.Sub(j) == InstantOf(a).Sub(InstantOf(b)) &&
			i.Add(d).Nanotime() == InstantOf(a).Add(d).Nanotime() &&
			i.Compare(j) == InstantOf(a).Compare(InstantOf(b)) &&
			i.Before(j) == (a < b) && i.After(j) == (a > b) &&
			i.String() == InstantOf(a).String()+bootSuffix
	}
	if err := quick.Check(f, nil); err != nil {
		t.Fatal(err)
	}
}

// On the real clocks nothing suspends the machine: BootNanotime never goes
// back within a goroutine and advances as Nanotime does.
func TestBootNanotimeAdvancesAsNanotime(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// Each BootNanotime between two Nanotimes: a goroutine preempted
	// between the reads widens the bracket instead of failing the test.
	i0, b0, i0after := Nanotime(), BootNanotime(), Nanotime()
	last := b0
	for i := 0; i < 1_000_000; i++ {
		b := BootNanotime()
		if b < last {
			t.Fatalf("stepped back %d ns", last-b)
		}
		last = b
	}
	time.Sleep(10 * time.Millisecond)
	i1, b1, i1after := Nanotime(), BootNanotime(), Nanotime()
	if d := b1 - b0; d < i1-i0after-1_000_000 || d > i1after-i0+1_000_000 {
		t.Fatalf("Nanotime moved %d to %d ns, BootNanotime %d ns", i1-i0after, i1after-i0, d)
	}
}

func BenchmarkBootNanotime(b *testing.B) {
	for i := 0; i < b.N; i++ {
		BootNanotime()
	}
}

// BootNanotime's fast path (assembly on amd64) converts as the Go code does,
// plus the state's boot offset, for synthetic states that exercise every
// branch: the fast range, below the take-over point, past trigger (slow
// path, lock held), and the OS source for good (the boot clock plus the
// offset).
func TestBootFastPathMatchesGo(t *testing.T) {
	if !Supported() {
		t.Skip("the OS clock is in use")
	}
	slope, _ := slopeOfFreq(Source().FreqHz)
	check := func(name string, conv func(uint64) uint64, read func() uint64) {
		t.Helper()
		for i := 0; i < 2000; i++ {
			lo := conv(read())
			v := BootNanotime()
			hi := conv(read())
			if uint64(v) < lo || uint64(v) > hi {
				t.Fatalf("%s: %d outside [%d, %d]", name, v, lo, hi)
			}
		}
	}
	now := readCounter()
	const offset = 1<<63 + 12_345 // wraps: the addition is mod 2^64
	for _, c := range []struct {
		name                     string
		takeoverAhead, triggerIn int64
	}{
		{"fast range", -1 << 30, 1 << 40},
		{"below the take-over point", 1 << 40, 1 << 41},
		{"past trigger", -1 << 30, -1 << 20},
	} {
		s := state{
			mode:       modeCounter,
			takeover:   uint64(int64(now) + c.takeoverAhead),
			trigger:    uint64(int64(now) + c.triggerIn),
			end:        never,
			line:       through(now, 5_000_000_000_000, slope+slope/3),
			prev:       through(now, 5_000_000_000_000, slope-slope/5),
			bootOffset: offset,
		}
		s.trigger = max(s.trigger, s.takeover)
		conv := func(t uint64) uint64 { v, _, _ := s.convert(t); return v + offset }
		withState(t, s, func() { check(c.name, conv, readCounter) })
	}
	os := state{mode: modeOS, trigger: never, end: never, osOffset: 1 << 50, bootOffset: 1 << 40}
	withState(t, os, func() {
		_, bound := proc.bootMinusMonoNow(bootSamplePairs)
		conv := func(m uint64) uint64 { return m + bound + os.bootOffset }
		check("OS source", conv, func() uint64 { return uint64(osclock.Mono()) })
	})
}
