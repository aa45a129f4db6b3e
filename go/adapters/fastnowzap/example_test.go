package fastnowzap_test

import (
	"os"
	"time"

	"github.com/fastnow/fastnow/go/adapters/fastnowzap"
	"github.com/fastnow/fastnow/go/fastnow"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// utc formats entry times in UTC, so that the examples' output does not
// depend on the zone they run in.
func utc(t time.Time, enc zapcore.PrimitiveArrayEncoder) {
	enc.AppendString(t.UTC().Format(time.RFC3339Nano))
}

// A JSON logger stamped by fastnow's wall tier. The example runs under a
// ManualClock so that its output is the same on every run.
func ExampleClock() {
	defer fastnow.UseClock(fastnow.NewManualClock(time.Unix(1_700_000_000, 5_000)))()

	cfg := zap.NewProductionEncoderConfig()
	cfg.EncodeTime = utc
	core := zapcore.NewCore(zapcore.NewJSONEncoder(cfg), os.Stdout, zapcore.InfoLevel)
	logger := zap.New(core, zap.WithClock(fastnowzap.Clock{}))
	logger.Info("served", zap.Int("status", 200))
	// Output: {"level":"info","ts":"2023-11-14T22:13:20.000005Z","msg":"served","status":200}
}

// A logger whose stamps are one atomic load each, as fresh as the upkeep
// keeps them.
func ExampleRecentClock() {
	clock := fastnow.NewManualClock(time.Unix(1_700_000_000, 0))
	defer fastnow.UseClock(clock)()

	cfg := zap.NewProductionEncoderConfig()
	cfg.EncodeTime = utc
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(cfg), os.Stdout, zapcore.InfoLevel)
	logger := zap.New(core, zap.WithClock(fastnowzap.RecentClock{}))
	logger.Info("start")
	clock.Advance(250 * time.Millisecond)
	logger.Info("done")
	// Output:
	// 2023-11-14T22:13:20Z	info	start
	// 2023-11-14T22:13:20.25Z	info	done
}
