package fastnow

import (
	"encoding/json"
	"math/big"
	"os"
	"strconv"
	"testing"
	"testing/quick"
)

type jsonScale struct {
	Mult  string `json:"mult"`
	Shift uint32 `json:"shift"`
}

type vectorFile struct {
	MaxShift    uint32 `json:"max_shift"`
	Frequencies []struct {
		FreqHz       string     `json:"freq_hz"`
		NanosPerTick *jsonScale `json:"nanos_per_tick"`
		TicksPerNano *jsonScale `json:"ticks_per_nano"`
		TicksToNanos []struct {
			Ticks string  `json:"ticks"`
			Nanos *string `json:"nanos"`
		} `json:"ticks_to_nanos"`
		NanosToTicks []struct {
			Nanos string  `json:"nanos"`
			Ticks *string `json:"ticks"`
		} `json:"nanos_to_ticks"`
	} `json:"frequencies"`
	Ratios []struct {
		Out   string     `json:"out"`
		In    string     `json:"in"`
		Scale *jsonScale `json:"scale"`
	} `json:"ratios"`
	WithShift []struct {
		Out   string     `json:"out"`
		In    string     `json:"in"`
		Shift uint32     `json:"shift"`
		Scale *jsonScale `json:"scale"`
	} `json:"with_shift"`
}

func u64(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("bad vector number %q: %v", s, err)
	}
	return v
}

func wantScale(t *testing.T, what string, got Scale, ok bool, want *jsonScale) {
	t.Helper()
	if want == nil {
		if ok {
			t.Errorf("%s = %+v, want none", what, got)
		}
		return
	}
	if !ok || got.Mult != u64(t, want.Mult) || got.Shift != want.Shift {
		t.Errorf("%s = %+v (ok=%v), want %s >> %d", what, got, ok, want.Mult, want.Shift)
	}
}

func wantApply(t *testing.T, what string, s Scale, ok bool, x uint64, want *string) {
	t.Helper()
	got, fits := uint64(0), false
	if ok {
		got, fits = s.Apply(x)
	}
	switch {
	case want == nil && fits:
		t.Errorf("%s = %d, want none", what, got)
	case want != nil && (!fits || got != u64(t, *want)):
		t.Errorf("%s = %d (fits=%v), want %s", what, got, fits, *want)
	}
}

// The shared vectors: the Rust crate passes the same file.
func TestConversionVectors(t *testing.T) {
	raw, err := os.ReadFile("../spec/vectors/conversion.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectorFile
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if v.MaxShift != MaxShift || len(v.Frequencies) < 10 {
		t.Fatalf("unexpected vector file: max_shift %d, %d frequencies", v.MaxShift, len(v.Frequencies))
	}
	cases := 0
	for _, f := range v.Frequencies {
		hz := u64(t, f.FreqHz)
		ns, okNs := NanosPerTick(hz)
		tk, okTk := TicksPerNano(hz)
		wantScale(t, "NanosPerTick("+f.FreqHz+")", ns, okNs, f.NanosPerTick)
		wantScale(t, "TicksPerNano("+f.FreqHz+")", tk, okTk, f.TicksPerNano)
		for _, c := range f.TicksToNanos {
			wantApply(t, f.FreqHz+" Hz, ticks "+c.Ticks, ns, okNs, u64(t, c.Ticks), c.Nanos)
			cases++
		}
		for _, c := range f.NanosToTicks {
			wantApply(t, f.FreqHz+" Hz, nanos "+c.Nanos, tk, okTk, u64(t, c.Nanos), c.Ticks)
			cases++
		}
	}
	for _, r := range v.Ratios {
		s, ok := FromRatio(u64(t, r.Out), u64(t, r.In))
		wantScale(t, "FromRatio("+r.Out+", "+r.In+")", s, ok, r.Scale)
	}
	for _, r := range v.WithShift {
		s, ok := WithShift(u64(t, r.Out), u64(t, r.In), r.Shift)
		wantScale(t, "WithShift("+r.Out+", "+r.In+")", s, ok, r.Scale)
	}
	if cases < 300 {
		t.Fatalf("only %d conversion cases", cases)
	}
}

// Apply against an exact big-integer reference: never below floor(x*out/in),
// above it by at most x>>shift + 1.
func TestApplyMatchesExactReference(t *testing.T) {
	prop := func(out, in, x uint64) bool {
		if out == 0 || in == 0 {
			return true
		}
		s, ok := FromRatio(out, in)
		if !ok {
			return out/in >= 1<<63-1
		}
		ref := new(big.Int).Mul(new(big.Int).SetUint64(x), new(big.Int).SetUint64(out))
		ref.Quo(ref, new(big.Int).SetUint64(in))
		wide := new(big.Int).Mul(new(big.Int).SetUint64(x), new(big.Int).SetUint64(s.Mult))
		wide.Rsh(wide, uint(s.Shift))
		diff := new(big.Int).Sub(wide, ref)
		bound := new(big.Int).Rsh(new(big.Int).SetUint64(x), uint(s.Shift))
		bound.Add(bound, big.NewInt(1))
		if diff.Sign() < 0 || diff.Cmp(bound) > 0 || s.Mult >= 1<<63 {
			return false
		}
		got, fits := s.Apply(x)
		return fits == wide.IsUint64() && (!fits || got == wide.Uint64())
	}
	if err := quick.Check(prop, &quick.Config{MaxCount: 20000}); err != nil {
		t.Fatal(err)
	}
}

// Whole results come out exactly: k seconds of ticks are k*1e9 ns.
func TestExactRatiosAreExact(t *testing.T) {
	prop := func(hz uint64, k uint32) bool {
		hz = hz%10_000_000_000 + 1
		s, _ := NanosPerTick(hz)
		ticks := new(big.Int).Mul(new(big.Int).SetUint64(hz), big.NewInt(int64(k)))
		if !ticks.IsUint64() || (s.Shift < 64 && ticks.Uint64() >= 1<<s.Shift) {
			return true
		}
		got, ok := s.Apply(ticks.Uint64())
		return ok && got == uint64(k)*1_000_000_000
	}
	if err := quick.Check(prop, &quick.Config{MaxCount: 20000}); err != nil {
		t.Fatal(err)
	}
}

func FuzzScale(f *testing.F) {
	f.Add(uint64(1_000_000_000), uint64(2_445_405_696), uint64(1<<40))
	f.Fuzz(func(t *testing.T, out, in, x uint64) {
		s, ok := FromRatio(out, in)
		if !ok {
			return
		}
		a, fa := s.Apply(x)
		b, fb := s.Apply(x + 1)
		if x != ^uint64(0) && fa && fb && b < a {
			t.Fatalf("not monotone at %d: %d then %d", x, a, b)
		}
	})
}

// The read path's inRange (one compare, no overflow check) must agree with
// the general conversion params.at wherever it accepts a counter value, and
// accept exactly [baseTicks, nextCheck) when that range converts in 64 bits.
func TestInRangeMatchesGeneralConversion(t *testing.T) {
	f := func(freq uint64, base uint64, baseNs int64, spanTicks uint64, off uint64) bool {
		freq = freq%6_000_000_000 + 1_000
		s, ok := NanosPerTick(freq)
		if !ok {
			return false
		}
		p := &params{baseTicks: base, baseNs: baseNs >> 2, scale: s}
		spanTicks >>= off % 64 // spans of every size, most of them short
		p.setNextCheck(base + spanTicks)
		for _, d := range []uint64{0, off % (spanTicks + 1), spanTicks - 1, spanTicks, spanTicks + 1, -off} {
			tk := base + d
			v, got := p.inRange(tk)
			inside := p.nextCheck > base && tk >= base && tk < p.nextCheck
			if _, fits := s.Apply(p.nextCheck - base); !fits {
				inside = false
			}
			if got != inside || (got && v != p.at(tk)) {
				t.Logf("freq=%d base=%d next=%d t=%d: inRange=(%d,%v), want in=%v at=%d", freq, base, p.nextCheck, tk, v, got, inside, p.at(tk))
				return false
			}
		}
		return true
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 20000}); err != nil {
		t.Error(err)
	}
}
