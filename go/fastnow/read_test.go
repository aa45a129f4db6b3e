package fastnow

import "testing"

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
	defer func() { proc.state.Store(saved); proc.view.Store(saved) }()
	s.span = 0
	if s.mode == modeCounter {
		s.span = satSub(s.trigger, s.takeover)
	}
	proc.state.Store(&s)
	proc.view.Store(&s)
	f()
}

// Issue item: the read fast paths (assembly on amd64) convert as the Go
// code does, for synthetic states that exercise every branch: the fast
// range, below the take-over point (prev), past trigger (slow path, lock
// held), the OS source (span 0), a wall line and its deadline.
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
		mono := func() uint64 { return uint64(monoNow()) }
		check("OS source", Nanotime, conv, mono)
		check("OS source, ordered", OrderedNanotime, conv, mono)
	})
	wall := state{
		mode: modeCounter, takeover: now - 1<<30, trigger: now + 1<<40, end: never,
		line:         through(now, 7_000_000_000_000, slope),
		wall:         through(now, 1_800_000_000_000_000_000, slope+slope/7),
		wallDeadline: now + 1<<40,
	}
	withState(t, wall, func() {
		check("wall line", UnixNano, wall.wall.At, readCounter)
	})
	wall.wallDeadline = 0
	withState(t, wall, func() {
		check("wall without a line", UnixNano, func(uint64) uint64 { return realNow() }, func() uint64 { return 0 })
	})
}
