package fastnowzap_test

import (
	"bytes"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/fastnow/fastnow/go/adapters/fastnowzap"
	"github.com/fastnow/fastnow/go/fastnow"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// syncBuffer is a zapcore.WriteSyncer that the test reads while a flushing
// goroutine may write.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) Sync() error { return nil }

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// logger logs JSON with the time as Unix nanoseconds, through clock.
func logger(out zapcore.WriteSyncer, clock zapcore.Clock) *zap.Logger {
	cfg := zap.NewProductionEncoderConfig()
	cfg.EncodeTime = zapcore.EpochNanosTimeEncoder
	core := zapcore.NewCore(zapcore.NewJSONEncoder(cfg), out, zapcore.DebugLevel)
	return zap.New(core, zap.WithClock(clock))
}

// stamps returns the ts field of each line zap wrote.
func stamps(t *testing.T, out string) []int64 {
	t.Helper()
	var ts []int64
	dec := json.NewDecoder(bytes.NewBufferString(out))
	for dec.More() {
		var line struct{ Ts int64 }
		if err := dec.Decode(&line); err != nil {
			t.Fatalf("%v in %q", err, out)
		}
		ts = append(ts, line.Ts)
	}
	return ts
}

// zap stamps each entry with the clock given to zap.WithClock: under
// fastnow.UseClock, the ManualClock's time, moving as it is advanced.
func TestEntriesFollowAManualClock(t *testing.T) {
	for _, clock := range []zapcore.Clock{fastnowzap.Clock{}, fastnowzap.RecentClock{}} {
		mock := fastnow.NewManualClock(time.Unix(1_700_000_000, 123_456_789))
		restore := fastnow.UseClock(mock)
		var out syncBuffer
		log := logger(&out, clock)
		log.Info("first")
		mock.Advance(1500 * time.Millisecond)
		log.Info("second")
		restore()
		got := stamps(t, out.String())
		want := []int64{1_700_000_000_123_456_789, 1_700_000_001_623_456_789}
		if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("%T: stamps %v, want %v", clock, got, want)
		}
	}
}

// On the real clocks a stamp lies between time.Now readings taken around
// the entry: Clock's within the wall tier's error (a millisecond here is
// far beyond it), RecentClock's no later than the entry and no older than
// a second (the upkeep refreshes every millisecond by default).
func TestEntriesOnTheRealClocks(t *testing.T) {
	for _, c := range []struct {
		clock       zapcore.Clock
		early, late time.Duration
	}{
		{fastnowzap.Clock{}, time.Millisecond, time.Millisecond},
		{fastnowzap.RecentClock{}, time.Second, time.Millisecond},
	} {
		var out syncBuffer
		log := logger(&out, c.clock)
		for i := 0; i < 3; i++ {
			before := time.Now().UnixNano()
			log.Info("entry")
			after := time.Now().UnixNano()
			ts := stamps(t, out.String())
			if got := ts[len(ts)-1]; got < before-int64(c.early) || got > after+int64(c.late) {
				t.Errorf("%T: stamp %d, outside [%d, %d] widened by %v/%v", c.clock, got, before, after, c.early, c.late)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// zap's BufferedWriteSyncer flushes on the clock's ticker: it does, with
// the ticker NewTicker returns.
func TestBufferedWriteSyncerFlushesOnTheTicker(t *testing.T) {
	for _, clock := range []zapcore.Clock{fastnowzap.Clock{}, fastnowzap.RecentClock{}} {
		var out syncBuffer
		ws := &zapcore.BufferedWriteSyncer{WS: &out, FlushInterval: 10 * time.Millisecond, Clock: clock}
		log := logger(ws, clock)
		log.Info("buffered")
		deadline := time.Now().Add(10 * time.Second)
		for out.String() == "" && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if err := ws.Stop(); err != nil {
			t.Fatal(err)
		}
		if len(stamps(t, out.String())) != 1 {
			t.Errorf("%T: the ticker never flushed the entry (got %q)", clock, out.String())
		}
	}
}
