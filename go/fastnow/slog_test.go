package fastnow

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"testing/slogtest"
	"time"
)

// The wrapper is a slog.Handler by the standard library's own conformance
// test (which also checks that a zero Record.Time is left out).
func TestSlogHandlerConforms(t *testing.T) {
	var buf bytes.Buffer
	h := NewSlogHandler(slog.NewJSONHandler(&buf, nil))
	results := func() []map[string]any {
		var ms []map[string]any
		for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				t.Fatal(err)
			}
			ms = append(ms, m)
		}
		return ms
	}
	if err := slogtest.TestHandler(h, results); err != nil {
		t.Error(err)
	}
}

// Records are stamped with WallTime, so under UseClock with the
// ManualClock's time, through the handlers derived with With and
// WithGroup too; disabled levels stay disabled; a zero time stays zero.
func TestSlogHandlerStampsFromTheClock(t *testing.T) {
	clock := NewManualClock(time.Unix(1_700_000_000, 123_456_789))
	defer UseClock(clock)()
	var buf bytes.Buffer
	logger := slog.New(NewSlogHandler(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	logger.Info("plain")
	clock.Advance(time.Second)
	logger.With("k", "v").Info("with")
	clock.Advance(time.Second)
	logger.WithGroup("g").Info("group", "k", "v")
	logger.Debug("disabled")
	if err := logger.Handler().Handle(context.Background(), slog.NewRecord(time.Time{}, slog.LevelInfo, "no time", 0)); err != nil {
		t.Fatal(err)
	}
	want := []int64{1_700_000_000_123_456_789, 1_700_000_001_123_456_789, 1_700_000_002_123_456_789, 0}
	dec := json.NewDecoder(&buf)
	for i := 0; dec.More(); i++ {
		var line struct {
			Time *time.Time
			Msg  string
		}
		if err := dec.Decode(&line); err != nil {
			t.Fatal(err)
		}
		got := int64(0)
		if line.Time != nil {
			got = line.Time.UnixNano()
		}
		if i >= len(want) || got != want[i] {
			t.Errorf("record %d (%s): time %d, want %v", i, line.Msg, got, want)
		}
	}
}
