package fastnow

import "testing"

// scripted is a machine whose monotonic readings are apart by the gaps
// given, in order; every other clock read advances time by 1 ns.
type scripted struct {
	now, monos              uint64
	gaps                    []uint64
	counterReads, realReads int
}

func (s *scripted) mono() uint64 {
	if s.monos > 0 {
		s.now += s.gaps[s.monos-1] - 1
	}
	s.monos++
	return s.now
}
func (s *scripted) counter() uint64        { s.counterReads++; s.now++; return s.now * 3 }
func (s *scripted) counterOrdered() uint64 { return s.counter() }
func (s *scripted) real() uint64           { s.realReads++; s.now++; return s.now + 7_000 }
func (s *scripted) boot() uint64           { s.now++; return s.now }
func (s *scripted) observe() decision      { return decision{} }
func (s *scripted) verdict() verdict       { return verdict{} }
func (s *scripted) waitMono(uint64)        {}

// The narrowest bracket wins; sampling stops at the first bracket no wider
// than goodWidth, or after bracketsOfEach of each kind (a reader's update
// takes one); the real-time brackets continue the chain.
func TestSampleTakesTheNarrowestBracketAndStopsAtAGoodOne(t *testing.T) {
	for _, c := range []struct {
		good                          uint64
		each                          int
		counterBrackets, realBrackets int
		width, realWidth              uint64
	}{
		{0, bracketsPerSample, 7, 3, 10, 8},
		{25, bracketsPerSample, 2, 2, 20, 10},
		{50, bracketsPerSample, 1, 1, 50, 20},
		{8, bracketsPerSample, 7, 2, 10, 8},
		{0, 1, 1, 1, 50, 40},
		{8, 1, 1, 1, 50, 40},
		{0, 2, 2, 2, 20, 8},
	} {
		// Bracket widths in order: up to 7 counter brackets, then up to 3
		// real ones, each taking the next.
		m := &scripted{now: 1_000, gaps: []uint64{50, 20, 30, 10, 60, 60, 60, 40, 8, 60}}
		if c.each < bracketsPerSample {
			// The real brackets follow the counter's last.
			m.gaps = append(m.gaps[:c.each:c.each], m.gaps[bracketsPerSample:]...)
		}
		s := takeSample(m, c.good, c.each)
		if m.counterReads != c.counterBrackets || m.realReads != c.realBrackets || s.width != c.width {
			t.Errorf("good %d, %d of each: %d counter and %d real brackets, width %d; want %+v",
				c.good, c.each, m.counterReads, m.realReads, s.width, c)
		}
		// The counter was read 1 ns into its bracket: the midpoint is within
		// half its width; the real time within half of both widths.
		if absDiff(s.ticks/3, s.mono) > c.width/2 || absDiff(s.real, s.mono+7_000) > c.realWidth/2+c.width/2 {
			t.Errorf("good %d: %+v", c.good, s)
		}
	}
}

// A window is about a second (at least 7/8 of one, not much more), keeps
// few samples, and is the last gap when samples come a little less than a
// second apart (an update a little early), not two gaps.
func TestWindowKeepsAboutASecond(t *testing.T) {
	at := func(mono, ticks uint64) sample { return sample{ticks: ticks, mono: mono, width: 40} }
	var w window
	for i := uint64(0); i < 40; i++ {
		w.push(at(i*100_000_000, i*250_000_000))
	}
	start, ok := w.startFor(&sample{mono: 40 * 100_000_000})
	if span := 40*100_000_000 - start.mono; !ok || span < minWindowNs || span > windowNs*5/4 || w.n > windowSlots {
		t.Fatalf("window of %d ns, %d samples kept", span, w.n)
	}
	var jittery window
	for i := uint64(0); i < 5; i++ {
		jittery.push(at(i*990_000_000, i*2_475_000_000))
	}
	if start, _ := jittery.startFor(&sample{mono: 5 * 990_000_000}); 5*990_000_000-start.mono != 990_000_000 {
		t.Fatalf("window of %d ns after samples 0.99 s apart", 5*990_000_000-start.mono)
	}
	var young window
	young.push(at(0, 0))
	young.push(at(1_000_000, 2_500_000))
	if start, ok := young.startFor(&sample{mono: 2_000_000}); !ok || start.mono != 0 {
		t.Fatal("the first samples of a process: the window is all there is")
	}
}
