package fastnow

import (
	"testing"
	"time"

	"github.com/fastnow/fastnow/go/internal/osclock"
)

// withState publishes s in the process's timekeeper for the duration of f,
// holding the writers' lock so that no update replaces it (readers past
// trigger only try the lock), and restores the state after. Upkeep must not
// run: its refreshes would read the synthetic state.
func withState(t *testing.T, s state, f func()) {
	t.Helper()
	StopUpkeep()
	SetAutoUpkeep(false)
	defer SetAutoUpkeep(true)
	proc.published()
	proc.mu.Lock()
	defer proc.mu.Unlock()
	saved := proc.state.Load()
	defer func() { proc.state.Store(saved); proc.view.Store(viewOf(saved)) }()
	s.derive()
	proc.state.Store(&s)
	proc.view.Store(viewOf(&s))
	f()
}

// Issue item: the read fast paths (assembly on amd64) convert as the Go
// code does, for synthetic states that exercise every branch: the fast
// range, below the take-over point (prev), past trigger (slow path, lock
// held), the OS source (span 0), the boot and wall offsets, a wall offset
// of 0.
func TestFastPathsMatchGo(t *testing.T) {
	if !Supported() {
		t.Skip("the OS clock is in use")
	}
	slope, _ := slopeOfFreq(Source().FreqHz)
	check := func(name string, read func() int64, conv func(uint64) uint64, counterRead func() uint64) {
		t.Helper()
		for i := 0; i < 2000; i++ {
			lo := conv(counterRead())
			v := read()
			hi := conv(counterRead())
			if uint64(v) < lo || uint64(v) > hi {
				t.Fatalf("%s: %d outside [%d, %d]", name, v, lo, hi)
			}
		}
	}
	now := readCounter()
	ordered := func() uint64 { return readCounterOrdered(orderedAlt) }
	for _, c := range []struct {
		name                     string
		takeoverAhead, triggerIn int64
	}{
		{"fast range", -1 << 30, 1 << 40},
		{"below the take-over point", 1 << 40, 1 << 41},
		{"past trigger", -1 << 30, -1 << 20},
	} {
		s := state{
			mode:     modeCounter,
			takeover: uint64(int64(now) + c.takeoverAhead),
			trigger:  uint64(int64(now) + c.triggerIn),
			end:      never,
			line:     through(now, 5_000_000_000_000, slope+slope/3),
			prev:     through(now, 5_000_000_000_000, slope-slope/5),
		}
		s.trigger = max(s.trigger, s.takeover)
		conv := func(t uint64) uint64 { v, _, _ := s.convert(t); return v }
		withState(t, s, func() {
			check(c.name, Nanotime, conv, readCounter)
			check(c.name+", ordered", OrderedNanotime, conv, ordered)
		})
	}
	os := state{mode: modeOS, trigger: never, end: never, osOffset: 1 << 50}
	withState(t, os, func() {
		conv := func(m uint64) uint64 { return m + os.osOffset }
		mono := func() uint64 { return uint64(osclock.Mono()) }
		check("OS source", Nanotime, conv, mono)
		check("OS source, ordered", OrderedNanotime, conv, mono)
	})
	// The clocks kept as offsets: the precise reading plus the same
	// state's word; a wall offset of 0 reads the system clock.
	offsets := state{
		mode: modeCounter, takeover: now - 1<<30, trigger: now + 1<<40, end: never,
		line:       through(now, 7_000_000_000_000, slope),
		bootOffset: 3 << 40,
		wallOffset: 1_800_000_000_000_000_000,
	}
	withState(t, offsets, func() {
		check("wall offset", UnixNano, func(t uint64) uint64 { return offsets.line.At(t) + offsets.wallOffset }, readCounter)
		check("boot offset", BootNanotime, func(t uint64) uint64 { return offsets.line.At(t) + offsets.bootOffset }, readCounter)
	})
	offsets.wallOffset = 0
	withState(t, offsets, func() {
		check("wall without an offset", UnixNano, func(uint64) uint64 { return osclock.Real() }, func() uint64 { return 0 })
	})
	// A counter below the state's floor (it went back: a reset, a
	// migration) is never converted with the state: the precise readers
	// wait for a newer state (here the test holds the writers' lock, and
	// restores the real state after), the wall reader reads the system
	// clock rather than a line the value does not belong to.
	below := state{
		mode: modeCounter, takeover: now - 1<<30, floor: now + 1<<40, trigger: now + 1<<41, end: never,
		line:       through(now, 5_000_000_000_000, slope),
		wallOffset: 1_800_000_000_000_000_000,
	}
	var waiting []chan int64
	withState(t, below, func() {
		for _, read := range []func() int64{Nanotime, OrderedNanotime, BootNanotime} {
			got := make(chan int64, 1)
			go func() { got <- read() }()
			waiting = append(waiting, got)
		}
		check("wall below the floor", UnixNano, func(uint64) uint64 { return osclock.Real() }, func() uint64 { return 0 })
		time.Sleep(20 * time.Millisecond)
		for i, what := range []string{"a precise", "an ordered", "a boot"} {
			select {
			case v := <-waiting[i]:
				t.Errorf("%s reading below the floor returned %d", what, v)
				waiting[i] <- v
			default:
			}
		}
	})
	for _, got := range waiting {
		<-got // the real state again
	}
}
