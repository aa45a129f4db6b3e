package fastnowzerolog_test

import (
	"os"
	"time"

	"github.com/fastnow/fastnow/go/adapters/fastnowzerolog"
	"github.com/fastnow/fastnow/go/fastnow"
	"github.com/rs/zerolog"
)

// zerolog stamped by fastnow's wall tier, installed once at start-up. The
// example runs under a ManualClock so that its output is the same on every
// run.
func ExampleNow() {
	defer fastnow.UseClock(fastnow.NewManualClock(time.Unix(1_700_000_000, 5_000)))()
	zerolog.TimestampFunc = fastnowzerolog.Now
	zerolog.TimeFieldFormat = zerolog.TimeFormatUnixNano

	log := zerolog.New(os.Stdout).With().Timestamp().Logger()
	log.Info().Int("status", 200).Msg("served")
	// Output: {"level":"info","status":200,"time":1700000000000005000,"message":"served"}
}

// Stamps of one atomic load each, as fresh as the upkeep keeps them.
func ExampleRecent() {
	clock := fastnow.NewManualClock(time.Unix(1_700_000_000, 0))
	defer fastnow.UseClock(clock)()
	zerolog.TimestampFunc = fastnowzerolog.Recent
	zerolog.TimeFieldFormat = zerolog.TimeFormatUnixMs

	log := zerolog.New(os.Stdout).With().Timestamp().Logger()
	log.Info().Msg("start")
	clock.Advance(250 * time.Millisecond)
	log.Info().Msg("done")
	// Output:
	// {"level":"info","time":1700000000000,"message":"start"}
	// {"level":"info","time":1700000000250,"message":"done"}
}
