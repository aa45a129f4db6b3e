package fastnow

import (
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"strconv"
	"testing"
	"testing/quick"
)

// The shared vectors (spec/vectors/line.json): the Rust crate passes the
// same file. Each target reads the entry for its lineShift.
type lineVectors struct {
	Shifts []struct {
		LineShift   uint `json:"line_shift"`
		SlopeOfFreq []struct {
			FreqHz string  `json:"freq_hz"`
			Slope  *string `json:"slope"`
		} `json:"slope_of_freq"`
		Slope []struct {
			Nanos string  `json:"nanos"`
			Ticks string  `json:"ticks"`
			Slope *string `json:"slope"`
		} `json:"slope"`
		Lines []struct {
			Slope        string `json:"slope"`
			ThroughTicks string `json:"through_ticks"`
			ThroughValue string `json:"through_value"`
			Offset       string `json:"offset"`
			At           []struct {
				Ticks string `json:"ticks"`
				Value string `json:"value"`
			} `json:"at"`
		} `json:"lines"`
	} `json:"shifts"`
}

func u64(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("bad vector number %q: %v", s, err)
	}
	return v
}

func wantSlope(t *testing.T, what string, got uint64, ok bool, want *string) {
	t.Helper()
	switch {
	case want == nil && ok:
		t.Errorf("%s = %d, want none", what, got)
	case want != nil && (!ok || got != u64(t, *want)):
		t.Errorf("%s = %d (ok %v), want %s", what, got, ok, *want)
	}
}

func TestLineVectors(t *testing.T) {
	raw, err := os.ReadFile("../../spec/vectors/line.json")
	if err != nil {
		t.Fatal(err)
	}
	var v lineVectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	cases, found := 0, false
	for _, sh := range v.Shifts {
		if sh.LineShift != lineShift {
			continue
		}
		found = true
		for _, c := range sh.SlopeOfFreq {
			s, ok := slopeOfFreq(u64(t, c.FreqHz))
			wantSlope(t, "slopeOfFreq("+c.FreqHz+")", s, ok, c.Slope)
			cases++
		}
		for _, c := range sh.Slope {
			s, ok := slopeOf(u64(t, c.Nanos), u64(t, c.Ticks))
			wantSlope(t, "Slope("+c.Nanos+", "+c.Ticks+")", s, ok, c.Slope)
			cases++
		}
		for _, l := range sh.Lines {
			line := through(u64(t, l.ThroughTicks), u64(t, l.ThroughValue), u64(t, l.Slope))
			if line.Offset != u64(t, l.Offset) {
				t.Errorf("through(%s, %s, %s).Offset = %d, want %s", l.ThroughTicks, l.ThroughValue, l.Slope, line.Offset, l.Offset)
			}
			for _, a := range l.At {
				if got := line.At(u64(t, a.Ticks)); got != u64(t, a.Value) {
					t.Errorf("line through (%s, %s) at %s = %d, want %s", l.ThroughTicks, l.ThroughValue, a.Ticks, got, a.Value)
				}
				cases++
			}
		}
	}
	if !found || cases < 100 {
		t.Fatalf("no entry for lineShift %d, or only %d cases", lineShift, cases)
	}
}

// At, Slope and TicksFor against exact big-integer arithmetic.
func TestLineMatchesExactArithmetic(t *testing.T) {
	two64 := new(big.Int).Lsh(big.NewInt(1), 64)
	b := func(x uint64) *big.Int { return new(big.Int).SetUint64(x) }
	prop := func(nanos, ticks, t0, v0, x uint64) bool {
		nanos >>= nanos % 64
		ticks >>= ticks % 64
		num := new(big.Int).Lsh(b(nanos), lineShift)
		if ticks == 0 {
			_, ok := slopeOf(nanos, ticks)
			return !ok
		}
		want := new(big.Int).Add(num, b(ticks>>1))
		want.Quo(want, b(ticks))
		slope, ok := slopeOf(nanos, ticks)
		if want.Sign() == 0 || want.Cmp(two64) >= 0 {
			return !ok
		}
		if !ok || slope != want.Uint64() {
			return false
		}
		l := through(t0, v0, slope)
		if l.At(t0) != v0 {
			return false
		}
		at := new(big.Int).Mul(b(x), b(slope))
		at.Rsh(at, lineShift).Add(at, b(l.Offset)).Mod(at, two64)
		if l.At(x) != at.Uint64() {
			return false
		}
		tf := new(big.Int).Lsh(b(x), lineShift)
		tf.Quo(tf, b(slope))
		if tf.Cmp(two64) >= 0 {
			return l.TicksFor(x) == ^uint64(0)
		}
		return l.TicksFor(x) == tf.Uint64()
	}
	if err := quick.Check(prop, &quick.Config{MaxCount: 20000}); err != nil {
		t.Fatal(err)
	}
}

// A line is non-decreasing between where it starts and where its value
// would wrap, and two lines through the same point meet there exactly.
func FuzzLine(f *testing.F) {
	f.Add(uint64(7543428930374729779), uint64(1<<40), uint64(1<<50), uint64(12345))
	f.Fuzz(func(t *testing.T, slope, t0, v0, d uint64) {
		if slope == 0 {
			return
		}
		l := through(t0, v0>>2, slope)
		a, b := l.At(t0), l.At(t0+d%(1<<32))
		if t0+d%(1<<32) >= t0 && b < a {
			t.Fatalf("decreasing: %d then %d", a, b)
		}
		m := through(t0, l.At(t0), slope/2+1)
		if m.At(t0) != l.At(t0) {
			t.Fatal("lines through one point do not meet there")
		}
	})
}

// The line's operations on round figures, each against its exact answer.
func TestLineOnRoundFigures(t *testing.T) {
	check := func(what string, got any, want string) {
		t.Helper()
		if s := fmt.Sprint(got); s != want {
			t.Errorf("%s = %s, want %s", what, s, want)
		}
	}
	// A 2 GHz counter: half a nanosecond per tick. (Slopes are fixed-point
	// fractions of a nanosecond per tick: on amd64 a counter must tick at
	// more than 1 GHz, elsewhere at more than about 1 MHz.)
	slope, ok := slopeOfFreq(2_000_000_000)
	half := line{Slope: slope}
	check("slopeOfFreq(2 GHz)", fmt.Sprint(ok, half.NanosFor(2_000_000_000), half.FreqHz()), "true 1000000000 2000000000")
	check("TicksFor(1000) at 2 GHz", half.TicksFor(1_000), "2000")
	check("through(10, 100) at 2 GHz", through(10, 100, slope), "Line(at(t) = 95 + t × 0.500000 ns, 2 GHz)")
	check("through(0, 7) at 2 GHz, at 6", through(0, 7, slope).At(6), "10")

	slope, ok = slopeOf(1_000, 2_000) // 1000 ns over 2000 ticks
	check("slopeOf(1000, 2000)", fmt.Sprint(ok, line{Slope: slope}.NanosFor(3_000_000)), "true 1500000")
	_, ok = slopeOf(1_000, 0)
	check("slopeOf(1000, 0) ok", ok, "false")

	quarter, _ := slopeOfFreq(4_000_000_000) // a quarter of a nanosecond per tick
	l := through(1_000, 50_000, quarter)
	check("through(1000, 50000) at 4 GHz", fmt.Sprint(l.At(1_000), l.At(1_040)), "50000 50010")
	check("NanosFor(4000) at 4 GHz", line{Slope: quarter}.NanosFor(4_000), "1000")
	check("line at 4 GHz", line{Slope: quarter}.String(), "Line(at(t) = 0 + t × 0.250000 ns, 4 GHz)")

	slope, _ = slopeOfFreq(2_500_000_000)
	check("FreqHz at 2.5 GHz", line{Slope: slope}.FreqHz(), "2500000000")
}
