//go:build fastnow_time && go1.25

// testing/synctest's Test is new in Go 1.25. It needs Go 1.23's timer
// channels, which go.mod's go line (1.22) would otherwise turn off for
// this module's tests; a module whose go line is 1.23 or newer has them.
//go:debug asynctimerchan=0

package fastnow

import (
	"testing"
	"testing/synctest"
	"time"
)

// With -tags fastnow_time every reading goes through package time, so a
// synctest bubble's fake clock drives fastnow exactly.
func TestSynctestBubbleDrivesFastnow(t *testing.T) {
	if Supported() || Source().Fallback != FallbackTimeTag {
		t.Fatalf("the tag must route reads through package time: %+v", Source())
	}
	synctest.Test(t, func(t *testing.T) {
		start := Now()
		u0 := UnixNano()
		time.Sleep(90 * time.Second)
		if got := start.Elapsed(); got != 90*time.Second {
			t.Fatalf("Elapsed = %v, want exactly 90s of fake time", got)
		}
		if got := UnixNano() - u0; got != int64(90*time.Second) {
			t.Fatalf("UnixNano moved %v", time.Duration(got))
		}
	})
}

// A ManualClock in use (UseClock) still takes precedence inside a bubble,
// and the bubble's clock drives fastnow again once it is restored.
func TestSynctestWithUseClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := NewManualClock(time.Unix(1_000, 0))
		restore := UseClock(clock)
		time.Sleep(time.Hour)
		if UnixNano() != 1_000_000_000_000 || Nanotime() != int64(time.Second) {
			restore()
			t.Fatalf("the bubble's clock moved the mock: %d, %d", UnixNano(), Nanotime())
		}
		restore()
		start := Now()
		time.Sleep(time.Minute)
		if got := start.Elapsed(); got != time.Minute {
			t.Fatalf("Elapsed = %v after restore, want the bubble's minute", got)
		}
	})
}
