// Package fastnowzap stamps zap's log entries from fastnow's clocks: Clock
// and RecentClock are zapcore.Clock values, for zap.WithClock.
//
//	logger := zap.New(core, zap.WithClock(fastnowzap.Clock{}))
//
// zap reads the clock once per entry it logs (Entry.Time, which the
// encoders format and the sampler counts by), so the stamp costs fastnow's
// read instead of time.Now's. Under fastnow.UseClock the stamps follow the
// test's fastnow.ManualClock, like every package-level fastnow clock.
//
// The package is in the module github.com/fastnow/fastnow/go/adapters,
// apart from the core module so that the core depends on the standard
// library alone; a program gets it, and the core with it, with
//
//	go get github.com/fastnow/fastnow/go/adapters/fastnowzap
package fastnowzap

import (
	"time"

	"github.com/fastnow/fastnow/go/fastnow"
	"go.uber.org/zap/zapcore"
)

// Clock is a zapcore.Clock on fastnow's wall tier: Now is fastnow.WallTime,
// the system clock's Unix time extrapolated from the CPU counter (it follows
// NTP and steps as time.Now does). The zero Clock is ready to use.
type Clock struct{}

var _ zapcore.Clock = Clock{}

// Now returns fastnow.WallTime(): the local time, without a monotonic
// reading (zap stamps entries with it; it measures no intervals).
func (Clock) Now() time.Time { return fastnow.WallTime() }

// NewTicker returns time.NewTicker(d): fastnow keeps no timers, so the
// tickers zap asks for (BufferedWriteSyncer's flush interval) run on the
// runtime's, and a ManualClock does not move them.
func (Clock) NewTicker(d time.Duration) *time.Ticker { return time.NewTicker(d) }

// RecentClock is a zapcore.Clock on fastnow's coarse tier: Now is the Unix
// time of the last refresh, one atomic load (fastnow.RecentUnixNano). A
// stamp is up to the upkeep's resolution old (fastnow.DefaultResolution
// unless the program starts the upkeep itself), and entries logged within
// one refresh share a stamp. The first Now starts the upkeep goroutine,
// unless fastnow.SetAutoUpkeep(false) said not to (then the program
// refreshes with fastnow.Refresh). The zero RecentClock is ready to use.
type RecentClock struct{}

var _ zapcore.Clock = RecentClock{}

// Now returns the Unix time of the last refresh as a local time.Time,
// without a monotonic reading.
func (RecentClock) Now() time.Time { return time.Unix(0, fastnow.RecentUnixNano()) }

// NewTicker returns time.NewTicker(d), as Clock.NewTicker does.
func (RecentClock) NewTicker(d time.Duration) *time.Ticker { return time.NewTicker(d) }
