package fastnow_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fastnow/fastnow/go/fastnow"
)

// Two nodes exchange a message: the receipt is stamped above the send,
// whatever their wall clocks say.
func ExampleHLC() {
	a, b := fastnow.NewHLC(), fastnow.NewHLC()
	sent := a.Now()
	wire := uint64(sent) // eight bytes on the wire
	received, err := b.Update(fastnow.HLCTimestamp(wire))
	fmt.Println(err == nil, received > sent, b.Now() > received)
	// Output: true true true
}

func ExampleNewHLC() {
	clock := fastnow.NewManualClock(time.Unix(1_700_000_000, 0))
	defer fastnow.UseClock(clock)()
	h := fastnow.NewHLC()
	fmt.Println(h.Now())
	fmt.Println(h.Now())
	clock.Advance(time.Millisecond)
	fmt.Println(h.Now())
	// Output:
	// 2023-11-14T22:13:20.000000000Z,00000
	// 2023-11-14T22:13:20.000000000Z,00001
	// 2023-11-14T22:13:20.000991822Z,00000
}

// When the wall clock steps back, the stamps keep their physical part and
// count on.
func ExampleHLC_Now() {
	clock := fastnow.NewManualClock(time.Unix(1_700_000_000, 0))
	defer fastnow.UseClock(clock)()
	var h fastnow.HLC // the zero value is ready to use
	fmt.Println(h.Now())
	clock.Set(time.Unix(1_699_999_999, 0))
	fmt.Println(h.Now())
	// Output:
	// 2023-11-14T22:13:20.000000000Z,00000
	// 2023-11-14T22:13:20.000000000Z,00001
}

func ExampleHLC_Update() {
	clock := fastnow.NewManualClock(time.Unix(1_700_000_000, 0))
	defer fastnow.UseClock(clock)()
	h := fastnow.NewHLC()

	// A stamp 3 ms ahead (the sender's clock is fast): the receipt takes it.
	ahead := fastnow.NewHLCTimestamp(1_700_000_000_003_000_000, 4)
	got, err := h.Update(ahead)
	fmt.Println(got, err)

	// A stamp an hour ahead is refused, and the clock left as it was.
	_, err = h.Update(fastnow.NewHLCTimestamp(1_700_003_600_000_000_000, 0))
	var drift *fastnow.HLCDriftError
	fmt.Println(errors.As(err, &drift), drift.AheadBy)
	fmt.Println(h.Now())
	// Output:
	// 2023-11-14T22:13:20.002990723Z,00005 <nil>
	// true 1h0m0s
	// 2023-11-14T22:13:20.002990723Z,00006
}

func ExampleHLC_SetMaxDrift() {
	clock := fastnow.NewManualClock(time.Unix(1_700_000_000, 0))
	defer fastnow.UseClock(clock)()
	h := fastnow.NewHLC()
	h.SetMaxDrift(time.Millisecond)
	_, err := h.Update(fastnow.NewHLCTimestamp(1_700_000_000_003_000_000, 0))
	fmt.Println(err)
	// Output: remote HLC timestamp 2023-11-14T22:13:20.002990723Z,00000 is 2.990723ms ahead of the local wall clock (2023-11-14T22:13:20.000000000Z), more than the maximum drift of 1ms: refused, the clock left as it was
}

func ExampleHLC_MaxDrift() {
	var h fastnow.HLC
	fmt.Println(h.MaxDrift())
	h.SetMaxDrift(250 * time.Millisecond)
	fmt.Println(h.MaxDrift())
	// Output:
	// 500ms
	// 250ms
}

func ExampleHLCTimestamp() {
	t := fastnow.NewHLCTimestamp(1_709_210_096_123_456_789, 7)
	fmt.Println(t)
	fmt.Println(uint64(t))
	fmt.Println(t < fastnow.NewHLCTimestamp(1_709_210_096_123_456_789, 8))
	// Output:
	// 2024-02-29T12:34:56.123443604Z,00007
	// 7341001464843206663
	// true
}

// The physical part keeps the unit (2^-16 s) that contains the time.
func ExampleNewHLCTimestamp() {
	fmt.Println(fastnow.NewHLCTimestamp(1_500_000_000, 3))
	fmt.Println(fastnow.NewHLCTimestamp(15_258, 0).UnixNano(), fastnow.NewHLCTimestamp(15_259, 0).UnixNano())
	// Output:
	// 1970-01-01T00:00:01.500000000Z,00003
	// 0 15259
}

func ExampleHLCTimestamp_UnixNano() {
	t := fastnow.NewHLCTimestamp(1_709_210_096_123_456_789, 0)
	fmt.Println(t.UnixNano()) // the first nanosecond of its unit
	// Output: 1709210096123443604
}

func ExampleHLCTimestamp_Logical() {
	fmt.Println(fastnow.HLCTimestamp(1<<32 + 2).Logical())
	// Output: 2
}

func ExampleHLCTimestamp_Time() {
	fmt.Println(fastnow.HLCTimestamp(3 << 32).Time())
	// Output: 1970-01-01 00:00:03 +0000 UTC
}

func ExampleHLCTimestamp_String() {
	fmt.Println(fastnow.HLCTimestamp(1<<32 + 42).String())
	// Output: 1970-01-01T00:00:01.000000000Z,00042
}

// Stamps are text in JSON: their words are above 2^53, which a reader that
// parses numbers as doubles would round.
func ExampleHLCTimestamp_MarshalText() {
	b, _ := json.Marshal(map[string]fastnow.HLCTimestamp{"at": fastnow.NewHLCTimestamp(1_500_000_000, 7)})
	fmt.Println(string(b))
	// Output: {"at":"1970-01-01T00:00:01.500000000Z,00007"}
}

func ExampleHLCTimestamp_UnmarshalText() {
	var v struct{ At fastnow.HLCTimestamp }
	err := json.Unmarshal([]byte(`{"At":"1970-01-01T01:00:01.5+01:00,7"}`), &v)
	fmt.Println(v.At, err)
	// Output: 1970-01-01T00:00:01.500000000Z,00007 <nil>
}

func ExampleParseHLCTimestamp() {
	t, err := fastnow.ParseHLCTimestamp("2024-02-29T13:34:56.5+01:00,7")
	fmt.Println(t, err)
	_, err = fastnow.ParseHLCTimestamp("2024-02-29T12:34:56Z")
	fmt.Println(err)
	_, err = fastnow.ParseHLCTimestamp("2024-02-29T12:34:56Z,65536")
	fmt.Println(err)
	// Output:
	// 2024-02-29T12:34:56.500000000Z,00007 <nil>
	// not an HLC timestamp (e.g. 2024-02-29T12:34:56.123443604Z,00007): expected one to five digits of counter at byte 20
	// not an HLC timestamp (e.g. 2024-02-29T12:34:56.123443604Z,00007): the counter 65536 is above 65535
}

func ExampleHLCDriftError() {
	clock := fastnow.NewManualClock(time.Unix(1_700_000_000, 0))
	defer fastnow.UseClock(clock)()
	var h fastnow.HLC
	_, err := h.Update(fastnow.NewHLCTimestamp(1_700_000_010_000_000_000, 0))
	if drift, ok := err.(*fastnow.HLCDriftError); ok {
		fmt.Println(drift.AheadBy, drift.MaxDrift, drift.Remote.Logical())
	}
	// Output: 10s 500ms 0
}

func ExampleHLCDriftError_Error() {
	err := &fastnow.HLCDriftError{
		Remote: fastnow.NewHLCTimestamp(2_000_000_000, 0), Wall: 1_000_000_000,
		AheadBy: time.Second, MaxDrift: 500 * time.Millisecond,
	}
	fmt.Println(err)
	// Output: remote HLC timestamp 1970-01-01T00:00:02.000000000Z,00000 is 1s ahead of the local wall clock (1970-01-01T00:00:01.000000000Z), more than the maximum drift of 500ms: refused, the clock left as it was
}
