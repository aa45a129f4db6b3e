package fastnow

import (
	"encoding/json"
	"math"
	"math/big"
	"os"
	"strconv"
	"testing"
	"testing/quick"
	"time"
)

// Instant arithmetic saturates at the ends of the int64 range, as package
// time's does, never wraps (issue 19 items 5 and 6): the shared vectors
// (spec/vectors/arith.json, generated with exact integers) and properties
// over random values.

type arithCase struct {
	A, B, D, Now, Want string
}

func (c arithCase) i64(t *testing.T, s string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%+v: %v", c, err)
	}
	return v
}

func TestArithVectors(t *testing.T) {
	raw, err := os.ReadFile("../../spec/vectors/arith.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Sub, Add, Elapsed, Advance []arithCase
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Sub) == 0 || len(v.Add) == 0 || len(v.Elapsed) == 0 || len(v.Advance) == 0 {
		t.Fatalf("a section is missing: %+v", v)
	}
	for _, c := range v.Sub {
		a, b, want := c.i64(t, c.A), c.i64(t, c.B), c.i64(t, c.Want)
		if got := InstantOf(a).Sub(InstantOf(b)); int64(got) != want {
			t.Errorf("InstantOf(%d).Sub(InstantOf(%d)) = %d, want %d", a, b, got, want)
		}
		clock := &ManualClock{mono: a}
		if got := clock.Since(InstantOf(b)); int64(got) != want {
			t.Errorf("ManualClock at %d: Since(%d) = %d, want %d", a, b, got, want)
		}
		restore := UseClock(clock)
		got := System.Since(InstantOf(b))
		restore()
		if int64(got) != want {
			t.Errorf("under a ManualClock at %d: System.Since(%d) = %d, want %d", a, b, got, want)
		}
	}
	for _, c := range v.Add {
		a, d, want := c.i64(t, c.A), c.i64(t, c.D), c.i64(t, c.Want)
		got := InstantOf(a).Add(time.Duration(d))
		if got.Nanotime() != want {
			t.Errorf("InstantOf(%d).Add(%d) = %d, want %d", a, d, got.Nanotime(), want)
		}
		if (d > 0 && !InstantOf(a).Before(got) && a != math.MaxInt64) || (d < 0 && !got.Before(InstantOf(a)) && a != math.MinInt64) {
			t.Errorf("InstantOf(%d).Add(%d) = %d is on the wrong side", a, d, got.Nanotime())
		}
	}
	for _, c := range v.Elapsed {
		a, now, want := c.i64(t, c.A), c.i64(t, c.Now), c.i64(t, c.Want)
		restore := UseClock(&ManualClock{mono: now})
		got := InstantOf(a).Elapsed()
		restore()
		if int64(got) != want {
			t.Errorf("at %d: InstantOf(%d).Elapsed() = %d, want %d", now, a, got, want)
		}
	}
	for _, c := range v.Advance {
		a, d, want := c.i64(t, c.A), c.i64(t, c.D), c.i64(t, c.Want)
		clock := &ManualClock{mono: a, unix: a}
		clock.Advance(time.Duration(d))
		if got := clock.Now().Nanotime(); got != want {
			t.Errorf("a ManualClock at %d advanced by %d reads %d, want %d", a, d, got, want)
		}
		if got := clock.UnixNano(); got != want {
			t.Errorf("a ManualClock at Unix %d advanced by %d reads Unix %d, want %d", a, d, got, want)
		}
	}
}

// The examples of the issue, as a user writes them.
func TestArithEdgesAsUsed(t *testing.T) {
	now := Now()
	if noDeadline := Now().Add(math.MaxInt64); !now.Before(noDeadline) || noDeadline.Sub(now) <= 0 {
		t.Errorf("Now().Add(math.MaxInt64) = %v is not after Now() = %v", noDeadline, now)
	}
	if got := InstantOf(math.MaxInt64 - 1).Sub(InstantOf(-10)); got != math.MaxInt64 {
		t.Errorf("InstantOf(MaxInt64-1).Sub(InstantOf(-10)) = %v", got)
	}
	if got := Now().Add(math.MinInt64).Elapsed(); got != math.MaxInt64 {
		t.Errorf("Now().Add(math.MinInt64).Elapsed() = %v, time.Since would give %v", got, time.Duration(math.MaxInt64))
	}
	// Package time agrees on the same monotonic readings.
	t0 := time.Now()
	if got := t0.Sub(t0.Add(math.MinInt64)); got != math.MaxInt64 {
		t.Errorf("package time: %v", got)
	}
}

// A ManualClock advanced past its largest reading stays there: never a
// wrap, never a step back, never a panic (issue 19 item 6).
func TestManualClockAdvanceSaturates(t *testing.T) {
	c := NewManualClock(time.Unix(1_700_000_000, 0))
	before, unixBefore := c.Now(), c.UnixNano()
	c.Advance(math.MaxInt64)
	after := c.Now()
	if after.Before(before) || after.Nanotime() != math.MaxInt64 || c.UnixNano() != math.MaxInt64 {
		t.Fatalf("advanced by MaxInt64 from %v (Unix %d): %v (Unix %d)", before, unixBefore, after, c.UnixNano())
	}
	c.Advance(time.Hour)
	if c.Now() != after || c.UnixNano() != math.MaxInt64 {
		t.Fatalf("advanced past the end: %v", c)
	}
	if got := c.Since(before); got != math.MaxInt64-before.Sub(InstantOf(0)) {
		t.Fatalf("Since after saturating: %v", got)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Advance(-1) did not panic")
			}
		}()
		c.Advance(-1)
	}()
	if c.Now() != after {
		t.Fatal("a refused Advance moved the clock")
	}
}

func exactSat(x *big.Int) int64 {
	lo, hi := big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)
	switch {
	case x.Cmp(lo) < 0:
		return math.MinInt64
	case x.Cmp(hi) > 0:
		return math.MaxInt64
	}
	return x.Int64()
}

// edgy maps a random value near one of the interesting points (0, the ends)
// half of the time, so that quick exercises the edges, not only the middle.
func edgy(v int64, pick uint8) int64 {
	switch pick % 4 {
	case 0:
		return math.MaxInt64 - v&0xffff
	case 1:
		return math.MinInt64 + v&0xffff
	case 2:
		return v >> 40
	}
	return v
}

func TestArithProperties(t *testing.T) {
	cfg := &quick.Config{MaxCount: 20_000}
	// Sub is the exact difference, saturated; so its sign is never wrong.
	sub := func(a, b int64, pa, pb uint8) bool {
		a, b = edgy(a, pa), edgy(b, pb)
		got := InstantOf(a).Sub(InstantOf(b))
		want := exactSat(new(big.Int).Sub(big.NewInt(a), big.NewInt(b)))
		sign := (a > b && got > 0) || (a < b && got < 0) || (a == b && got == 0)
		return int64(got) == want && sign && InstantOf(b).Sub(InstantOf(a)) == subSat(b, a)
	}
	if err := quick.Check(sub, cfg); err != nil {
		t.Error("Sub:", err)
	}
	// Add is the exact sum, saturated; a.Add(d).Sub(a) == d unless the sum
	// saturated, and Add never moves an instant the wrong way.
	add := func(a, d int64, pa, pd uint8) bool {
		a, d = edgy(a, pa), edgy(d, pd)
		exact := new(big.Int).Add(big.NewInt(a), big.NewInt(d))
		got := InstantOf(a).Add(time.Duration(d))
		if got.Nanotime() != exactSat(exact) {
			return false
		}
		if exact.IsInt64() && got.Sub(InstantOf(a)) != time.Duration(d) {
			return false
		}
		return !(d > 0 && got.Before(InstantOf(a))) && !(d < 0 && got.After(InstantOf(a)))
	}
	if err := quick.Check(add, cfg); err != nil {
		t.Error("Add:", err)
	}
	// Advance never steps either time back, and adds exactly until the end.
	advance := func(start, d int64, ps, pd uint8) bool {
		start, d = edgy(start, ps), edgy(d, pd)
		if d < 0 {
			d = -(d + 1)
		}
		c := &ManualClock{mono: start, unix: start}
		c.Advance(time.Duration(d))
		want := exactSat(new(big.Int).Add(big.NewInt(start), big.NewInt(d)))
		return c.mono == want && c.unix == want && c.mono >= start
	}
	if err := quick.Check(advance, cfg); err != nil {
		t.Error("Advance:", err)
	}
}

// A ManualClock set to a time whose Unix nanoseconds do not fit in an
// int64 reads the nearer end of the range, not a wrapped value (time.Time's
// UnixNano is undefined there): a sibling of the wraps above.
func TestManualClockSetSaturates(t *testing.T) {
	for _, c := range []struct {
		at   time.Time
		want int64
	}{
		{time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), math.MaxInt64},
		{time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC), math.MinInt64},
		{time.Unix(0, math.MaxInt64), math.MaxInt64},
		{time.Unix(0, math.MaxInt64).Add(1), math.MaxInt64},
		{time.Unix(0, math.MinInt64), math.MinInt64},
		{time.Unix(0, math.MinInt64).Add(-1), math.MinInt64},
		{time.Unix(-1, 0), -1_000_000_000},
		{time.Unix(1_700_000_000, 5), 1_700_000_000_000_000_005},
	} {
		if got := NewManualClock(c.at).UnixNano(); got != c.want {
			t.Errorf("NewManualClock(%v).UnixNano() = %d, want %d", c.at, got, c.want)
		}
		clock := NewManualClock(time.Unix(0, 0))
		clock.Set(c.at)
		if got := clock.UnixNano(); got != c.want {
			t.Errorf("Set(%v): UnixNano() = %d, want %d", c.at, got, c.want)
		}
	}
}
