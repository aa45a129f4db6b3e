package fastnowzerolog_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/fastnow/fastnow/go/adapters/fastnowzerolog"
	"github.com/fastnow/fastnow/go/fastnow"
	"github.com/rs/zerolog"
)

// install sets zerolog's timestamp function and nanosecond times for one
// test, restoring both after it. zerolog keeps both in package variables:
// these tests do not run in parallel.
func install(t *testing.T, now func() time.Time) {
	t.Helper()
	oldFunc, oldFormat := zerolog.TimestampFunc, zerolog.TimeFieldFormat
	zerolog.TimestampFunc, zerolog.TimeFieldFormat = now, zerolog.TimeFormatUnixNano
	t.Cleanup(func() { zerolog.TimestampFunc, zerolog.TimeFieldFormat = oldFunc, oldFormat })
}

// stamps returns the time field of each event zerolog wrote.
func stamps(t *testing.T, out *bytes.Buffer) []int64 {
	t.Helper()
	var ts []int64
	dec := json.NewDecoder(bytes.NewReader(out.Bytes()))
	for dec.More() {
		var line struct{ Time int64 }
		if err := dec.Decode(&line); err != nil {
			t.Fatalf("%v in %q", err, out.String())
		}
		ts = append(ts, line.Time)
	}
	return ts
}

var stampers = map[string]func() time.Time{"Now": fastnowzerolog.Now, "Recent": fastnowzerolog.Recent}

// zerolog stamps each event (Context.Timestamp) through TimestampFunc:
// under fastnow.UseClock, the ManualClock's time, moving as it is advanced.
func TestEventsFollowAManualClock(t *testing.T) {
	for name, now := range stampers {
		install(t, now)
		mock := fastnow.NewManualClock(time.Unix(1_700_000_000, 123_456_789))
		restore := fastnow.UseClock(mock)
		var out bytes.Buffer
		log := zerolog.New(&out).With().Timestamp().Logger()
		log.Info().Msg("first")
		mock.Advance(1500 * time.Millisecond)
		log.Info().Msg("second")
		restore()
		got := stamps(t, &out)
		want := []int64{1_700_000_000_123_456_789, 1_700_000_001_623_456_789}
		if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("%s: stamps %v, want %v", name, got, want)
		}
	}
}

// On the real clocks a stamp lies between time.Now readings taken around
// the event: Now's within the wall tier's error (a millisecond here is far
// beyond it), Recent's no later than the event and no older than a second
// (the upkeep refreshes every millisecond by default).
func TestEventsOnTheRealClocks(t *testing.T) {
	for name, early := range map[string]time.Duration{"Now": time.Millisecond, "Recent": time.Second} {
		install(t, stampers[name])
		var out bytes.Buffer
		log := zerolog.New(&out).With().Timestamp().Logger()
		for i := 0; i < 3; i++ {
			before := time.Now().UnixNano()
			log.Info().Msg("event")
			after := time.Now().UnixNano()
			ts := stamps(t, &out)
			if got := ts[len(ts)-1]; got < before-int64(early) || got > after+int64(time.Millisecond) {
				t.Errorf("%s: stamp %d, outside [%d, %d] widened by %v/1ms", name, got, before, after, early)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// zerolog's BurstSampler counts its periods by TimestampFunc: with a
// ManualClock, a burst of 2 per second lets 2 events through, then none
// until the clock has moved a second.
func TestBurstSamplerCountsByTheClock(t *testing.T) {
	install(t, fastnowzerolog.Now)
	mock := fastnow.NewManualClock(time.Unix(1_700_000_000, 0))
	defer fastnow.UseClock(mock)()
	var out bytes.Buffer
	log := zerolog.New(&out).Sample(&zerolog.BurstSampler{Burst: 2, Period: time.Second})
	for i := 0; i < 5; i++ {
		log.Info().Msg("burst")
	}
	mock.Advance(time.Second)
	log.Info().Msg("next period")
	if n := bytes.Count(out.Bytes(), []byte("\n")); n != 3 {
		t.Errorf("%d events logged, want 2 of the burst and 1 a period later:\n%s", n, out.String())
	}
}
