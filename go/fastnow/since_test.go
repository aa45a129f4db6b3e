package fastnow

import (
	"math"
	"math/big"
	"testing"
	"testing/quick"
	"time"
)

// Since and Until are the exact differences with now, saturated to the
// Duration range as package time's are, whatever now and t are (edgy
// values reach both ends). Now is a ManualClock set to each case's value.
func TestSinceUntilProperties(t *testing.T) {
	clock := &ManualClock{}
	defer UseClock(clock)()
	at := func(now int64) {
		clock.mu.Lock()
		clock.mono = now
		clock.mu.Unlock()
	}
	cfg := &quick.Config{MaxCount: 20_000}
	prop := func(now, ti int64, pn, pt uint8) bool {
		now, ti = edgy(now, pn), edgy(ti, pt)
		at(now)
		since, until := Since(InstantOf(ti)), Until(InstantOf(ti))
		n, x := big.NewInt(now), big.NewInt(ti)
		if int64(since) != exactSat(new(big.Int).Sub(n, x)) || int64(until) != exactSat(new(big.Int).Sub(x, n)) {
			return false
		}
		// The sign is never wrong, and where nothing saturates each is the
		// other's negation.
		signs := (ti < now) == (since > 0) && (ti > now) == (until > 0) && (ti == now) == (since == 0 && until == 0)
		if since != math.MinInt64 && since != math.MaxInt64 && until != -since {
			return false
		}
		// Since is Now().Sub(t), and Until is t.Sub(Now()), as in package time.
		return signs && since == Now().Sub(InstantOf(ti)) && until == InstantOf(ti).Sub(Now())
	}
	if err := quick.Check(prop, cfg); err != nil {
		t.Error(err)
	}
	// Both ends, named.
	for _, c := range []struct {
		now, t       int64
		since, until time.Duration
	}{
		{0, math.MinInt64, math.MaxInt64, math.MinInt64},
		{1, math.MinInt64, math.MaxInt64, math.MinInt64},
		{-1, math.MaxInt64, math.MinInt64, math.MaxInt64},
		{-1, math.MinInt64, math.MaxInt64, math.MinInt64 + 1},
		{math.MaxInt64, 0, math.MaxInt64, -math.MaxInt64},
		{int64(time.Second), int64(time.Second), 0, 0},
	} {
		at(c.now)
		if got := Since(InstantOf(c.t)); got != c.since {
			t.Errorf("at %d: Since(%d) = %d, want %d", c.now, c.t, got, c.since)
		}
		if got := Until(InstantOf(c.t)); got != c.until {
			t.Errorf("at %d: Until(%d) = %d, want %d", c.now, c.t, got, c.until)
		}
	}
}

// On the real clocks Since and Until behave as time.Since and time.Until do
// for times taken beside them: a past reading is behind by at least the
// time slept, a later one (Add) gives a negative Since and a positive Until
// no longer than the time added, where Elapsed says 0.
func TestSinceUntilMirrorPackageTime(t *testing.T) {
	const slept = 2 * time.Millisecond
	start, tStart := Now(), time.Now()
	// Until both clocks say so: on Windows package time's clock moves in
	// steps of the timer interrupt, and a sleep may end early by the OS
	// clock fastnow follows (sleepAtLeast).
	sleepAtLeast(slept)
	for time.Since(tStart) < slept {
		time.Sleep(slept - time.Since(tStart))
	}
	// fastnow's interval holds the OS clock's to its rate's tolerance (1/64).
	least := slept - slept/64
	if d, td := Since(start), time.Since(tStart); d < least || td < slept {
		t.Errorf("after sleeping %v: Since = %v, time.Since = %v", slept, d, td)
	}
	if d, td := Until(start), time.Until(tStart); d > -least || td > -slept {
		t.Errorf("after sleeping %v: Until = %v, time.Until = %v", slept, d, td)
	}
	later, tLater := Now().Add(time.Hour), time.Now().Add(time.Hour)
	if d, td := Since(later), time.Since(tLater); d >= 0 || d < -time.Hour || td >= 0 || td < -time.Hour {
		t.Errorf("an hour ahead: Since = %v, time.Since = %v, want both in [-1h, 0)", d, td)
	}
	if d, td := Until(later), time.Until(tLater); d <= 0 || d > time.Hour || td <= 0 || td > time.Hour {
		t.Errorf("an hour ahead: Until = %v, time.Until = %v, want both in (0, 1h]", d, td)
	}
	if e := later.Elapsed(); e != 0 {
		t.Errorf("an hour ahead: Elapsed = %v, want 0", e)
	}
	if d := Since(InstantOf(math.MinInt64)); d != math.MaxInt64 {
		t.Errorf("Since(the earliest Instant) = %v, want the largest Duration", d)
	}
	if d := Until(InstantOf(math.MinInt64)); d != math.MinInt64 {
		t.Errorf("Until(the earliest Instant) = %v, want the smallest Duration", d)
	}
}
