//go:build fastnow_time

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
