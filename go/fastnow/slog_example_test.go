package fastnow_test

import (
	"log/slog"
	"os"
	"time"

	"github.com/fastnow/fastnow/go/fastnow"
)

// A logger whose records carry fastnow's wall time, here a ManualClock's
// (UseClock) so that the output is the same on every run.
func ExampleNewSlogHandler() {
	clock := fastnow.NewManualClock(time.Unix(1_700_000_000, 0))
	defer fastnow.UseClock(clock)()
	utc := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			a.Value = slog.TimeValue(a.Value.Time().UTC())
		}
		return a
	}
	logger := slog.New(fastnow.NewSlogHandler(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: utc})))
	logger.Info("start")
	clock.Advance(1500 * time.Millisecond)
	logger.With("status", 200).Info("served")
	// Output:
	// time=2023-11-14T22:13:20.000Z level=INFO msg=start
	// time=2023-11-14T22:13:21.500Z level=INFO msg=served status=200
}
