// Package fastnowzerolog stamps zerolog's events from fastnow's clocks: Now
// and Recent have the type of zerolog.TimestampFunc, the function zerolog
// calls for every timestamp it writes (Context.Timestamp, Event.Timestamp)
// and that its BurstSampler counts periods by. Install one at start-up,
// before any logging:
//
//	zerolog.TimestampFunc = fastnowzerolog.Now
//
// zerolog keeps that function in a package variable, so the choice is the
// whole program's, and assigning it while other goroutines log is a data
// race. Under fastnow.UseClock the stamps follow the test's
// fastnow.ManualClock, like every package-level fastnow clock.
//
// zerolog formats timestamps with TimeFieldFormat, whole seconds by default
// (time.RFC3339): set it to zerolog.TimeFormatUnixNano or
// time.RFC3339Nano to see the precision.
//
// The package is in the module github.com/fastnow/fastnow/go/adapters,
// apart from the core module so that the core depends on the standard
// library alone; a program gets it, and the core with it, with
//
//	go get github.com/fastnow/fastnow/go/adapters/fastnowzerolog
package fastnowzerolog

import (
	"time"

	"github.com/fastnow/fastnow/go/fastnow"
	"github.com/rs/zerolog"
)

// Now returns fastnow.WallTime(): the system clock's Unix time extrapolated
// from the CPU counter (it follows NTP and steps as time.Now does), as a
// local time.Time without a monotonic reading.
func Now() time.Time { return fastnow.WallTime() }

// Recent returns the Unix time of fastnow's last refresh, one atomic load
// (fastnow.RecentUnixNano), as a local time.Time without a monotonic
// reading. A stamp is up to the upkeep's resolution old
// (fastnow.DefaultResolution unless the program starts the upkeep itself),
// and events logged within one refresh share a stamp. The first call starts
// the upkeep goroutine, unless fastnow.SetAutoUpkeep(false) said not to
// (then the program refreshes with fastnow.Refresh).
func Recent() time.Time { return time.Unix(0, fastnow.RecentUnixNano()) }

// Now and Recent are of zerolog.TimestampFunc's type.
var _ = func() { zerolog.TimestampFunc, zerolog.TimestampFunc = Now, Recent }
