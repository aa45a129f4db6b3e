//go:build linux

package fastnow

import (
	"os"
	"strings"
	"testing"
	"time"
)

// A program fastnow runs in starts others through os/exec (fork and exec,
// with no Go code in between): the new program must inherit none of
// fastnow's descriptors (the clocksource file, the upkeep's timerfd).
func TestChildrenInheritNoDescriptors(t *testing.T) {
	if os.Getenv("FASTNOW_TEST_RUNNER") != "" {
		t.Skip("under an emulator /proc/self/fd describes the emulator")
	}
	StopUpkeep()
	if err := StartUpkeep(time.Millisecond); err != nil {
		t.Fatal(err)
	}
	defer StopUpkeep()
	Source()
	ResyncWall()
	if out, ok := runChild(t, "TestChildInheritsNoDescriptors", nil); !ok {
		t.Fatalf("child:\n%s", out)
	}
}

func TestChildInheritsNoDescriptors(t *testing.T) {
	inChild(t)
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	for _, e := range entries {
		link, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil {
			continue
		}
		if strings.Contains(link, "timerfd") || strings.Contains(link, "clocksource") {
			t.Errorf("inherited descriptor %s -> %s", e.Name(), link)
		}
	}
}
